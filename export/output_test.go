package export

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutput: a file export appears whole at Commit, and a failed one (Close without Commit)
// leaves neither half a file nor a temporary one, and keeps the file it would have replaced.
func TestOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "offers.csv")
	entries := func() []string {
		des, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, de := range des {
			names = append(names, de.Name())
		}
		return names
	}
	write := func(text string, commit bool) {
		t.Helper()
		out, err := Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		if _, err := out.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); text == "first" && err == nil {
			t.Errorf("%s exists before Commit", path)
		}
		if commit {
			if err := out.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("first", true)
	write("second, failed", false)
	if got, err := os.ReadFile(path); err != nil || string(got) != "first" {
		t.Errorf("%s holds %q (%v), want the committed %q", path, got, err, "first")
	}
	if names := entries(); len(names) != 1 || names[0] != "offers.csv" {
		t.Errorf("the directory holds %v, want only offers.csv", names)
	}

	var stdout bytes.Buffer
	out, err := Create("-", &stdout)
	if err != nil {
		t.Fatal(err)
	}
	out.Write([]byte("to stdout"))
	if err := out.Commit(); err != nil || stdout.String() != "to stdout" {
		t.Errorf("standard output got %q (%v)", stdout.String(), err)
	}
	if err := out.Close(); err != nil {
		t.Errorf("Close after Commit: %v", err)
	}

	if _, err := Create(filepath.Join(dir, "missing", "x.csv"), nil); err == nil || !strings.Contains(err.Error(), "creating the output file") {
		t.Errorf("a file in a missing directory: %v", err)
	}
}
