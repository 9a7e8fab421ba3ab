package main

import (
	"bytes"
	"testing"

	"github.com/gpucost/gpucost/store/storetest"
)

// anFixture is the generated history the CLI's read tests share (storetest.History), with the
// command environment that points at its database.
type anFixture struct {
	*storetest.History
	spool string // the run lock's folder of commands that take it (import)
}

// newAnFixture generates the history and stores it in a fresh database of the test server.
func newAnFixture(t *testing.T) *anFixture {
	return &anFixture{History: storetest.NewHistory(t), spool: t.TempDir()}
}

// env returns a command environment whose config points at the fixture's database and a spool
// folder of its own (never the default, relative to the working directory).
func (fx *anFixture) env() (env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		switch k {
		case "GPUCOST_CLICKHOUSE_DSN":
			return fx.DSN
		case "GPUCOST_SCRAPE_SPOOL_DIR":
			return fx.spool
		}
		return ""
	}}, &stdout, &stderr
}
