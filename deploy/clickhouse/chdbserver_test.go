package localclickhouse_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpucost/gpucost/store/storetest"
	"github.com/gpucost/gpucost/tooltest"
)

// engine returns the launcher and chDB's engine library, as local.sh builds and fetches them
// (a 180 MB download the first time): an integration test's server.
func engine(t *testing.T) (launcher, lib string) {
	t.Helper()
	storetest.Enabled(t)
	out, err := exec.Command("./local.sh", "chdb").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("local.sh chdb: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("local.sh chdb: %v", err)
	}
	launcher, lib, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		t.Fatalf("local.sh chdb printed %q, want the launcher and the library", out)
	}
	return launcher, lib
}

// server is one chdb-server process on its own ports and data folder.
type server struct {
	cmd       *exec.Cmd
	tcp, http int
	log       *strings.Builder
	exited    chan error // the exit, once
	stopped   bool
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

// start runs the launcher on the engine with data in dir, and waits until it answers. The server
// is stopped when the test ends, before its data folder is removed.
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
		if !s.stopped {
			if err := s.stop(); err != nil {
				t.Errorf("stopping chdb-server at the end of the test: %v\n%s", err, s.log)
			}
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := s.version(); err == nil {
			return s
		}
		select {
		case err := <-s.exited:
			s.stopped = true
			t.Fatalf("chdb-server exited while starting (%v):\n%s", err, s.log)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("chdb-server did not answer within 30 s:\n%s", s.log)
		}
	}
}

// stop sends SIGTERM and returns the launcher's exit error (nil for status 0). A server still
// running 30 s later is killed and reported.
func (s *server) stop() error {
	s.stopped = true
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-s.exited:
		return err
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill() // a second signal kills the engine too
		<-s.exited
		return errors.New("still running 30 s after SIGTERM")
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

func TestServerOutlivesAFailedLoginAndAnUnknownDatabase(t *testing.T) {
	launcher, lib := engine(t)
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
		s.stopped = true
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
	launcher, lib := engine(t)
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
	if err := s.stop(); err != nil {
		t.Fatalf("after SIGTERM chdb-server exited with %v, want status 0:\n%s", err, s.log)
	}
	again := start(t, launcher, lib, dir)
	kept, err := again.open("default", "", "kept")
	if err != nil {
		t.Fatalf("the database is gone after a restart on the same folder: %v", err)
	}
	defer kept.Close()
	var sum string
	if err := kept.QueryRow(context.Background(), "SELECT toString(sum(usd)) FROM prices").Scan(&sum); err != nil || sum != "3.78" {
		t.Errorf("after a restart on the same folder the sum of the prices is %q (%v), want 3.78", sum, err)
	}
}

// build compiles a C or C++ source with the given arguments into dir/name, skipping the test when
// the compiler is missing (a failure with GPUCOST_INTEGRATION=1, where make test installs it).
func build(t *testing.T, compiler, name string, args ...string) string {
	t.Helper()
	tooltest.Find(t, compiler, compiler)
	out := filepath.Join(t.TempDir(), name)
	if msg, err := exec.Command(compiler, append([]string{"-o", out}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, msg)
	}
	return out
}

func TestLauncherRepairsTheErrorHandlerOrRefusesTheLibrary(t *testing.T) {
	// The launcher from its source, as local.sh builds it; the engine is a stand-in.
	launcher := build(t, "gcc", "chdb-server", "-O2", "-Wall", "-Wextra", "-Werror", "chdb-server/chdb-server.c", "-ldl")
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
			lib := build(t, "g++", "libfake.so", append([]string{"-O2", "-shared", "-fPIC", "testdata/fake_engine.cc"}, tt.defines...)...)
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
