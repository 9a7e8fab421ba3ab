package main

import (
	"bytes"
	"testing"

	"github.com/gpucost/gpucost/store/storetest"
)

// anFixture is the generated history the CLI's read tests share (storetest.History), with the
// command environment that points at its database.
type anFixture struct{ *storetest.History }

// newAnFixture generates the history and stores it in a fresh database of the test server.
func newAnFixture(t *testing.T) *anFixture { return &anFixture{storetest.NewHistory(t)} }

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
