package main

import (
	"bytes"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/store/storetest"
)

// anFixture is the generated history the analytics tests share (storetest.History), with the
// command environment that points at its database.
type anFixture struct{ *storetest.History }

// genAnFixture generates the history ending at now's six-hour slot, without storing it.
func genAnFixture(now time.Time) *anFixture { return &anFixture{storetest.GenHistory(now)} }

// newAnFixture generates the history and stores it in a fresh database of the test server.
func newAnFixture(t *testing.T) *anFixture { return &anFixture{storetest.NewHistory(t)} }

// handler returns gpucost serve's own HTTP handler on the fixture's store.
func (fx *anFixture) handler(t *testing.T) http.Handler {
	t.Helper()
	e, _, _ := fx.env()
	cfg, err := config.Load("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(cfg, e, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.close)
	return srv.handler()
}

// env returns a command environment whose config points at the fixture's database.
func (fx *anFixture) env() (env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "GPUCOST_CLICKHOUSE_DSN" {
			return fx.DSN
		}
		return ""
	}}, &stdout, &stderr
}
