package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The kill tests stop gpucost with SIGKILL at every stage of a load and run it again: whatever
// the instant, every row ends in offers, raw_payloads and scrape_runs once, and the rollups
// equal a recomputation from offers. The process killed is this test binary itself, run again
// as a helper (TestKillHelper) that does a real `gpucost scrape` with a hook at each stage, which
// sends the process SIGKILL when it reaches the stage named in its environment.

// killPoints are the stages a load passes, in order: the pipeline's (the spool, the write-ahead
// log) around the store's steps (store.LoadSteps).
func killPoints() []string {
	var out []string
	stages := pipeline.Stages()
	out = append(out, "pipeline:"+stages[0])
	for _, s := range store.LoadSteps() {
		out = append(out, "store:"+s)
	}
	for _, s := range stages[1:] {
		out = append(out, "pipeline:"+s)
	}
	return out
}

// TestKillHelper is the process the kill tests kill: `gpucost scrape` with the arguments of
// GPUCOST_KILL_ARGS, SIGKILLed the first time any batch reaches the stage GPUCOST_KILL_AT. It
// skips unless run so.
func TestKillHelper(t *testing.T) {
	at := os.Getenv("GPUCOST_KILL_AT")
	if at == "" {
		t.Skip("the kill tests' helper process (GPUCOST_KILL_AT unset)")
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv("GPUCOST_KILL_ARGS")), &args); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func(point string) {
		if point == at {
			once.Do(func() {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way; nothing else runs
			})
		}
	}
	hooks := scrapeHooks{
		onStage:    func(s string) { kill("pipeline:" + s) },
		onLoadStep: func(s string) { kill("store:" + s) },
	}
	e := env{stdout: os.Stdout, stderr: os.Stderr, getenv: isolated(t.TempDir(), nil)}
	code := execute(context.Background(), e, args, hooks) // args[0] is "scrape"
	fmt.Printf("gpucost scrape exited %d without reaching %s\n", code, at)
	os.Exit(100)
}

// runKilled runs the helper with args and kill point at, and reports whether it was killed there
// (false: the scrape finished without reaching it).
func runKilled(t *testing.T, at string, args ...string) bool {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GPUCOST_KILL_AT="+at, "GPUCOST_KILL_ARGS="+string(a))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
	}
	if strings.Contains(string(out), "without reaching") {
		t.Logf("helper, not killed at %s:\n%s", at, out)
		return false
	}
	t.Fatalf("helper killed at %s: %v\n%s", at, err, out)
	return false
}

// checkExactlyOnce checks the database and spool of x after a clean run: no row twice, no batch
// in part (the rows of every run and provider with its run-log row, as many offers as it says
// and, when payloads is set, as many raw payloads as payloads says of its provider), rollups
// equal to a recomputation from offers, nothing left in the spool. It returns the numbers of
// offers and run-log rows, and of payloads per provider of the newest run.
func checkExactlyOnce(t *testing.T, x *e2e, payloads map[string]int) (offers, runs int, perProvider map[string]int) {
	t.Helper()
	zero := map[string]string{
		"offers stored twice": `SELECT count() FROM (SELECT run_id, provider, offer_id, price_type, observed_at, count() AS n
			FROM offers GROUP BY run_id, provider, offer_id, price_type, observed_at HAVING n > 1)`,
		"run-log rows stored twice": `SELECT count() FROM (SELECT run_id, provider, count() AS n FROM scrape_runs GROUP BY run_id, provider HAVING n > 1)`,
		"batches whose offers are not what their run-log row says (a batch stored in part)": `SELECT count() FROM
			(SELECT run_id, provider, count() AS n FROM offers GROUP BY run_id, provider) AS o
			FULL OUTER JOIN (SELECT run_id, provider, any(offers_loaded) AS loaded FROM scrape_runs GROUP BY run_id, provider) AS r
			USING (run_id, provider) WHERE o.n != r.loaded`,
		"payloads of a batch without its run-log row": `SELECT count() FROM raw_payloads
			WHERE (run_id, provider) NOT IN (SELECT run_id, provider FROM scrape_runs)`,
	}
	for what, q := range zero {
		n, err := countRows(x.directDSN, "", q)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n != 0 {
			t.Errorf("%s: %d", what, n)
		}
	}
	if diff := storetest.RollupDiff(t, x.directDSN); diff != "" {
		t.Errorf("rollups differ from a recomputation from offers:\n%s", diff)
	}
	for _, dir := range []string{x.spool, filepath.Join(x.spool, "quarantine")} {
		if files, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(files) > 0 {
			t.Errorf("%s still holds %v", dir, files)
		}
	}
	// A provider's responses may repeat (two Vast slices answer alike), so payloads are counted
	// per batch against a run that was not killed.
	perProvider = map[string]int{}
	for _, r := range payloadCounts(t, x) {
		if payloads != nil && r.n != payloads[r.provider] {
			t.Errorf("batch %s/%s has %d raw payloads, want %d", r.runID, r.provider, r.n, payloads[r.provider])
		}
		perProvider[r.provider] = r.n
	}
	return x.count("offers", ""), x.count("scrape_runs", ""), perProvider
}

type payloadCount struct {
	runID, provider string
	n               int
}

// payloadCounts counts the raw payloads of every run and provider.
func payloadCounts(t *testing.T, x *e2e) []payloadCount {
	t.Helper()
	conn := storetest.Conn(t, x.directDSN)
	rows, err := conn.Query(context.Background(), "SELECT run_id, provider, toInt64(count()) FROM raw_payloads GROUP BY run_id, provider ORDER BY run_id, provider")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []payloadCount
	for rows.Next() {
		var c payloadCount
		var n int64
		if err := rows.Scan(&c.runID, &c.provider, &n); err != nil {
			t.Fatal(err)
		}
		c.n = int(n)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKillGpucostAtEveryStageOfALoad replays the shipped snapshot, SIGKILLs gpucost at one stage
// of the first batch that reaches it (the other batches load beside it and are cut off wherever
// they are), optionally kills the next run at the same stage again (now while it completes the
// spooled batches), then replays the snapshot once more: the database holds the snapshot once.
// The same for live scrapes of the fake providers, whose runs each get their own run id.
func TestKillGpucostAtEveryStageOfALoad(t *testing.T) {
	if testing.Short() {
		t.Skip("kills gpucost some 30 times")
	}
	storetest.Enabled(t)
	start := time.Now()
	points, kills := killPoints(), 0
	// The snapshot's offers, run-log rows and payloads per provider, from a run not killed.
	var wantOffers, wantRuns int
	var wantPayloads map[string]int
	{
		x := newE2E(t, nil)
		if code, out := runCLI("scrape", "--replay", snapshotDir, "--config", x.writeConfig("")); code != exitOK {
			t.Fatalf("replay: exit %d\n%s", code, out)
		}
		wantOffers, wantRuns, wantPayloads = checkExactlyOnce(t, x, nil)
	}
	for _, point := range points {
		for _, twice := range []bool{false, true} {
			name := point
			if twice {
				name += "/and-again-on-recovery"
			}
			t.Run("replay/"+name, func(t *testing.T) {
				x := newE2E(t, nil)
				cfg := x.writeConfig("")
				args := []string{"scrape", "--replay", snapshotDir, "--config", cfg}
				if !runKilled(t, point, args...) {
					t.Fatalf("the first run did not reach %s", point)
				}
				kills++
				// Every run of the replay starts in a second of its own, so observes at a time of its
				// own: only the spooled copy of a batch matches what its killed load stored.
				nextSecond()
				if twice && runKilled(t, point, args...) {
					kills++
					nextSecond()
				}
				if code, out := runCLI(args...); code != exitOK {
					t.Fatalf("replay after the kill: exit %d, want 0\n%s", code, out)
				}
				offers, runs, _ := checkExactlyOnce(t, x, wantPayloads)
				if offers != wantOffers || runs != wantRuns {
					t.Errorf("%d offers and %d run-log rows, want the snapshot's %d and %d", offers, runs, wantOffers, wantRuns)
				}
			})
		}
		t.Run("live/"+point, func(t *testing.T) {
			x := newE2E(t, nil)
			if !runKilled(t, point, "scrape", "--config", x.configPath) {
				t.Fatalf("the run did not reach %s", point)
			}
			kills++
			if code, out := x.run("scrape"); code != exitOK {
				t.Fatalf("scrape after the kill: exit %d, want 0\n%s", code, out)
			}
			offers, runs, _ := checkExactlyOnce(t, x, wantPayloads)
			// The run after the kill is complete; of the killed run, every batch that reached the
			// spool is complete too, the others are not stored at all.
			if runs < wantRuns || offers < wantOffers {
				t.Errorf("%d offers and %d run-log rows, want at least one run's %d and %d", offers, runs, wantOffers, wantRuns)
			}
		})
	}
	t.Logf("%d kill points, %d kills, snapshot of %d offers, %v payloads, %d run-log rows; %s",
		3*len(points), kills, wantOffers, wantPayloads, wantRuns, time.Since(start).Round(time.Second))
}

// nextSecond sleeps until the clock's next second.
func nextSecond() { time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) }
