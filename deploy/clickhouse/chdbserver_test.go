package localclickhouse_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpucost/gpucost/store/storetest"
)

// chdb returns the launcher and the engine library, as local.sh builds and fetches them.
func chdb(t *testing.T) (launcher, lib string) {
	t.Helper()
	storetest.Enabled(t)
	out, err := exec.Command("./local.sh", "chdb").Output()
	if err != nil {
		t.Fatalf("local.sh chdb: %v\n%s", err, stderrOf(err))
	}
	launcher, lib, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		t.Fatalf("local.sh chdb printed %q, want the launcher and the library", out)
	}
	return launcher, lib
}

func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}

// server is one chdb-server process on its own ports and data folder.
type server struct {
	cmd       *exec.Cmd
	tcp, http int
	log       *strings.Builder
	exited    chan error
}

// freePort returns a loopback port that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs the launcher on the engine with data in dir, and waits until it answers.
func start(t *testing.T, launcher, lib, dir string) *server {
	t.Helper()
	s := &server{tcp: freePort(t), http: freePort(t), log: &strings.Builder{}, exited: make(chan error, 1)}
	s.cmd = exec.Command(launcher, lib, "--path="+dir, "--listen_host=127.0.0.1",
		fmt.Sprintf("--tcp_port=%d", s.tcp), fmt.Sprintf("--http_port=%d", s.http), "--log-level=warning")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			<-s.exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := s.version(); err == nil {
			return s
		}
		select {
		case err := <-s.exited:
			t.Fatalf("chdb-server exited while starting (%v):\n%s", err, s.log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("chdb-server did not answer within 30 s:\n%s", s.log)
		}
	}
}

// open connects as user with password to database over the native protocol, and pings: a
// refused login or an unknown database is the ping's error. The caller closes the connection it
// gets (a server waits for its open connections when it stops).
func (s *server) open(user, password, database string) (driver.Conn, error) {
	conn, err := clickhouse.Open(&clickhouse.Options{
		Addr:        []string{fmt.Sprintf("127.0.0.1:%d", s.tcp)},
		Auth:        clickhouse.Auth{Username: user, Password: password, Database: database},
		DialTimeout: 2 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// version returns the server's version, through a new connection as the default user.
func (s *server) version() (string, error) {
	conn, err := s.open("default", "", "default")
	if err != nil {
		return "", err
	}
	defer conn.Close()
	var v string
	return v, conn.QueryRow(context.Background(), "SELECT version()").Scan(&v)
}

// stop sends SIGTERM and returns the exit error, or fails the test if the server lingers.
func (s *server) stop(t *testing.T) error {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("chdb-server still runs 30 s after SIGTERM:\n%s", s.log)
		return nil
	}
}

func TestServerOutlivesAFailedLoginAndAnUnknownDatabase(t *testing.T) {
	launcher, lib := chdb(t)
	s := start(t, launcher, lib, t.TempDir())
	var ex *clickhouse.Exception
	if _, err := s.open("default", "", "no_such_database"); !errors.As(err, &ex) || ex.Code != 81 {
		t.Errorf("connecting to a database that does not exist: %v, want ClickHouse error 81 (UNKNOWN_DATABASE)", err)
	}
	if _, err := s.open("nobody", "wrong", "default"); !errors.As(err, &ex) || ex.Code != 516 {
		t.Errorf("logging in as an unknown user: %v, want ClickHouse error 516 (AUTHENTICATION_FAILED)", err)
	}
	select {
	case err := <-s.exited:
		t.Fatalf("chdb-server exited (%v) after the failed connections:\n%s", err, s.log)
	case <-time.After(500 * time.Millisecond):
	}
	v, err := s.version()
	if err != nil {
		t.Fatalf("the server no longer answers after the failed connections: %v\n%s", err, s.log)
	}
	if !strings.HasPrefix(v, "26.") {
		t.Errorf("the engine is ClickHouse %s, want the 26.x of the pinned chDB package", v)
	}
}

func TestSIGTERMStopsTheServerCleanlyAndKeepsItsData(t *testing.T) {
	launcher, lib := chdb(t)
	dir := t.TempDir()
	s := start(t, launcher, lib, dir)
	conn, err := s.open("default", "", "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"CREATE DATABASE kept",
		"CREATE TABLE kept.prices (gpu String, usd Decimal(18, 6)) ENGINE = MergeTree ORDER BY gpu",
		"INSERT INTO kept.prices VALUES ('H100', 2.49), ('A100', 1.29)",
	} {
		if err := conn.Exec(context.Background(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	conn.Close()
	if err := s.stop(t); err != nil {
		t.Fatalf("after SIGTERM chdb-server exited with %v, want status 0:\n%s", err, s.log)
	}
	again := start(t, launcher, lib, dir)
	kept, err := again.open("default", "", "kept")
	if err != nil {
		t.Fatalf("the database is gone after a restart on the same folder: %v", err)
	}
	var sum string
	if err := kept.QueryRow(context.Background(), "SELECT toString(sum(usd)) FROM prices").Scan(&sum); err != nil || sum != "3.78" {
		t.Errorf("after a restart on the same folder the sum of the prices is %q (%v), want 3.78", sum, err)
	}
	kept.Close()
	if err := again.stop(t); err != nil {
		t.Errorf("the second stop: exit %v:\n%s", err, again.log)
	}
}

// fakeEngine builds testdata/fake_engine.cc with the given defines into a shared library.
func fakeEngine(t *testing.T, defines ...string) string {
	t.Helper()
	lib := filepath.Join(t.TempDir(), "libfake.so")
	args := append([]string{"-O2", "-shared", "-fPIC", "-o", lib}, defines...)
	if out, err := exec.Command("g++", append(args, "testdata/fake_engine.cc")...).CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in engine: %v\n%s", err, out)
	}
	return lib
}

func TestLauncherRepairsTheErrorHandlerOrRefusesTheLibrary(t *testing.T) {
	launcher, _ := chdb(t)
	tests := []struct {
		name    string
		defines []string
		status  int
		stderr  string
	}{
		{"the engine's layout: repaired, errors are logged", nil, 0, "logged: Poco::Exception\nlogged: std::exception\nlogged: unknown exception\n"},
		{"no KillingErrorHandler", []string{"-DNO_HANDLER"}, 1, "no type named 19KillingErrorHandler"},
		{"one more virtual function", []string{"-DSEVENTH_SLOT"}, 1, "has 7 virtual functions, expected 6"},
		{"another base class", []string{"-DOTHER_BASE"}, 1, "19KillingErrorHandler does not derive from N4Poco12ErrorHandlerE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := fakeEngine(t, tt.defines...)
			cmd := exec.Command(launcher, lib)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("chdb-server on the stand-in: status %d, stderr %q; want status %d and %q", status, stderr.String(), tt.status, tt.stderr)
			}
			if tt.status != 0 && !strings.Contains(stderr.String(), "not the engine layout this launcher knows") {
				t.Errorf("the refusal %q does not say the layout is unknown", stderr.String())
			}
		})
	}
}

func TestMain(m *testing.M) {
	// The tests run local.sh and the stand-in's source by relative path.
	if _, err := os.Stat("local.sh"); err != nil {
		fmt.Fprintln(os.Stderr, "run these tests from deploy/clickhouse (go test ./deploy/clickhouse/)")
		os.Exit(2)
	}
	os.Exit(m.Run())
}
