// Package tooltest finds the programs tests run (Chromium, promtool, systemd-analyze, a C
// compiler, make, kubectl): the one place that decides whether a missing program skips a test
// or fails it. Without GPUCOST_INTEGRATION=1 (a plain `go test ./...`) a test whose program is
// missing is skipped and says how to install it; with it (`make test`, CI, which install what
// the tests need through deploy/need.sh) a missing program is a failure, so a check never
// passes by not running.
package tooltest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Find returns the path of the first of names on PATH. When none is installed it skips the
// test, or fails it under GPUCOST_INTEGRATION=1; debianPackage says what to install.
func Find(tb testing.TB, debianPackage string, names ...string) string {
	tb.Helper()
	if p, ok := lookPath(names); ok {
		return p
	}
	msg := strings.Join(names, " or ") + " is not installed (Debian: apt-get install " + debianPackage + ")"
	if os.Getenv("GPUCOST_INTEGRATION") == "1" {
		tb.Fatal(msg + "; GPUCOST_INTEGRATION=1 needs it")
	}
	tb.Skip(msg + "; GPUCOST_INTEGRATION=1 makes this a failure")
	return ""
}

// Optional returns the path of the first of names on PATH, or skips the test when none is
// installed, also under GPUCOST_INTEGRATION=1: for checks that add to others that always run
// (kubectl's rendering of manifests the tests also render offline), which make test does not
// install.
func Optional(tb testing.TB, why string, names ...string) string {
	tb.Helper()
	if p, ok := lookPath(names); ok {
		return p
	}
	tb.Skip(strings.Join(names, " or ") + " is not installed: " + why)
	return ""
}

func lookPath(names []string) (string, bool) {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}
