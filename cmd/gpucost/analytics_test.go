package main

import (
	"bytes"
	"fmt"
	"os"
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

// env returns a command environment whose config points at the fixture's database, and whose
// spool and state folder are the fixture's own (never the machine's state folder).
func (fx *anFixture) env() (env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		switch k {
		case "GPUCOST_CLICKHOUSE_DSN":
			return fx.DSN
		case "GPUCOST_SCRAPE_SPOOL_DIR", "STATE_DIRECTORY":
			return fx.spool
		}
		return ""
	}}, &stdout, &stderr
}

// isolated returns getenv (nil: an empty environment) with gpucost's state folder,
// STATE_DIRECTORY, in dir unless getenv names one: what a command keeps there by default (the
// spool, reports) never lands in the machine's state folder (/var/lib/gpucost when the tests
// run as root), nor does loading the configuration fail for want of $HOME when they do not.
// dir is the test's own (t.TempDir()), or testState.
func isolated(dir string, getenv func(string) string) func(string) string {
	return func(k string) string {
		v := ""
		if getenv != nil {
			v = getenv(k)
		}
		if v == "" && k == "STATE_DIRECTORY" {
			return dir
		}
		return v
	}
}

// testState is the state folder of the commands run without a test's own folder at hand
// (runEnvOut): one for the package's run, removed after it.
var testState string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gpucost-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testState = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
