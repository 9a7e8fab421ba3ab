package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The ClickHouse fault test kills the ClickHouse server during loads, many times, and checks that
// nothing is lost or doubled and the rollups stay equal to offers. It needs a server of its own,
// which it starts, kills (SIGKILL to its process group) and starts again with
// deploy/clickhouse/local.sh: `make test-faults` sets GPUCOST_FAULTS=1 and the server's
// GPUCOST_CH_ENGINE, GPUCOST_CH_TCP_PORT, GPUCOST_CH_HTTP_PORT and GPUCOST_LOCAL_DIR (and
// GPUCOST_CHDB_DIR for the chDB engine). GPUCOST_FAULTS_KILLS sets the number of kills (40).

const localScript = "../../deploy/clickhouse/local.sh"

// faultServer is the killable ClickHouse of the fault test.
type faultServer struct {
	t        *testing.T
	tcpPort  string
	localDir string
}

func newFaultServer(t *testing.T) *faultServer {
	t.Helper()
	if os.Getenv("GPUCOST_FAULTS") != "1" {
		t.Skip("kills a ClickHouse server of its own: run make test-faults (GPUCOST_FAULTS=1 and the server's GPUCOST_CH_* settings)")
	}
	fs := &faultServer{t: t, tcpPort: os.Getenv("GPUCOST_CH_TCP_PORT"), localDir: os.Getenv("GPUCOST_LOCAL_DIR")}
	if fs.localDir == "" || os.Getenv("GPUCOST_CH_HTTP_PORT") == "" {
		t.Fatal("GPUCOST_FAULTS=1 needs GPUCOST_CH_TCP_PORT, GPUCOST_CH_HTTP_PORT and GPUCOST_LOCAL_DIR of a server this test may kill")
	}
	// Never the servers other tests and people share: the local one, the legacy leg's, the cluster.
	switch p, _ := strconv.Atoi(fs.tcpPort); {
	case p == 0, p == 19000, p == 19001, p >= 19100 && p <= 19129:
		t.Fatalf("GPUCOST_CH_TCP_PORT=%s is a shared server's port (or none): give the fault test a server of its own", fs.tcpPort)
	}
	fs.start()
	return fs
}

// start starts the server (local.sh start waits until it answers).
func (fs *faultServer) start() {
	fs.t.Helper()
	out, err := exec.Command(localScript, "start").CombinedOutput()
	if err != nil {
		fs.t.Fatalf("starting the fault test's ClickHouse: %v\n%s", err, out)
	}
}

// kill SIGKILLs the server's process group and waits until it is gone.
func (fs *faultServer) kill() {
	fs.t.Helper()
	data, err := os.ReadFile(filepath.Join(fs.localDir, "clickhouse.pid"))
	if err != nil {
		fs.t.Fatalf("the fault test's ClickHouse has no pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		fs.t.Fatalf("pid file of the fault test's ClickHouse: %q", data)
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		fs.t.Fatalf("killing the fault test's ClickHouse (process group %d): %v", pid, err)
	}
	for i := 0; syscall.Kill(pid, 0) == nil; i++ {
		if i > 200 {
			fs.t.Fatalf("ClickHouse %d still runs 10 s after SIGKILL", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dsn is a DSN for a new database on the server, dropped when the test ends.
func (fs *faultServer) dsn() string {
	var b [6]byte
	rand.Read(b[:])
	db := "gpucost_faults_" + hex.EncodeToString(b[:])
	server := "clickhouse://default@127.0.0.1:" + fs.tcpPort
	fs.t.Cleanup(func() {
		if err := storetest.Conn(fs.t, server+"/default").Exec(context.Background(), "DROP DATABASE IF EXISTS "+db); err != nil {
			fs.t.Errorf("dropping %s: %v", db, err)
		}
	})
	return server + "/" + db + "?dial_timeout=2s"
}

// TestKillClickHouseDuringLoads runs live scrapes of the fake providers into the fault test's
// server and SIGKILLs the server during each run's load: at every step of the store's load (after
// a statement, before the next) and then at times spread over the load, which land inside
// inserts too, between an insert's part of offers and its views' parts. ClickHouse is started
// again after each kill, and the next run completes what the killed one left. At the end every
// run's batches are stored once and whole, and the rollups equal a recomputation from offers.
func TestKillClickHouseDuringLoads(t *testing.T) {
	fs := newFaultServer(t)
	kills := 40
	if n, err := strconv.Atoi(os.Getenv("GPUCOST_FAULTS_KILLS")); err == nil && n > 0 {
		kills = n
	}
	start := time.Now()
	x := newE2EOn(t, fs.dsn(), nil)
	var version string
	if v, err := store.Open(context.Background(), x.directDSN, store.Options{}); err == nil {
		version = v.ServerVersion()
		v.Close()
	}
	steps := store.LoadSteps()
	runs, killed, completedEarlier, repairs := 0, 0, 0, 0
	for i := range kills {
		// The first kills stop the server after one step of the store's load each (the first
		// batch to reach it); the others at a delay after the first batch of the run is spooled.
		var at string
		var delay time.Duration
		if i < len(steps) {
			at = steps[i]
		} else {
			delay = time.Duration((i-len(steps))*7%120) * time.Millisecond
		}
		waiting, _ := filepath.Glob(filepath.Join(x.spool, "*.json"))
		var (
			mu      sync.Mutex
			spooled int // batches that reached the spool: the first len(waiting) are earlier runs'
			timer   *time.Timer
			once    sync.Once
		)
		doKill := func() { once.Do(func() { fs.kill(); killed++ }) }
		// The spooled batches of earlier runs are loaded first: kill during this run's own load.
		hooks := scrapeHooks{
			onStage: func(stage string) {
				if stage != pipeline.StageSpooled {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if spooled++; at == "" && spooled == len(waiting)+1 {
					timer = time.AfterFunc(delay, doKill)
				}
			},
			onLoadStep: func(step string) {
				mu.Lock()
				own := spooled > len(waiting)
				mu.Unlock()
				if step == at && own {
					doKill()
				}
			},
		}
		var stdout, stderr bytes.Buffer
		e := env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), nil)}
		code := execute(context.Background(), e, []string{"scrape", "--config", x.configPath}, hooks)
		runs++
		completedEarlier += strings.Count(stdout.String(), "loaded spooled batch")
		repairs += strings.Count(stderr.String(), "Rolled up offers a crash had kept from a rollup") +
			strings.Count(stderr.String(), "Wrote offers again that a crash had kept from offers_latest")
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		doKill() // the run ended before its kill: kill between this run and the next
		if code != exitOK && code != exitPartial {
			t.Fatalf("run %d (kill at %q, %v): exit %d\n%s\n%s", runs, at, delay, code, stdout.String(), stderr.String())
		}
		fs.start()
	}
	// A last run with ClickHouse up throughout loads what the spool still holds.
	if code, out := x.run("scrape"); code != exitOK {
		t.Fatalf("last run: exit %d\n%s", code, out)
	}
	runs++
	offers, logged, _ := checkExactlyOnce(t, x, map[string]int{"coreweave": 1, "digitalocean": 1, "hyperstack": 1, "lambda": 1, "nebius": 1,
		"runpod": 1, "oci": 2, "vastai": 21, "verda": 1, "vultr": 3})
	if providers := defaultProviders(t); logged != providers*runs {
		t.Errorf("%d run-log rows, want %d (%d providers × %d runs: nothing lost)", logged, providers*runs, providers, runs)
	}
	if want := 580 * runs; offers != want {
		t.Errorf("%d offers, want %d (580 × %d runs)", offers, want, runs)
	}
	t.Logf("ClickHouse %s killed %d times during %d runs (%d at a load step, the rest 0-119 ms into the load); %d batches completed by a later run, %d rollup or offers_latest repairs; %d offers, %d run-log rows; %s",
		version, killed, runs, min(kills, len(steps)), completedEarlier, repairs, offers, logged, time.Since(start).Round(time.Second))
}
