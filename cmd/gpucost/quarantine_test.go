package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

func TestScrapeExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		status               schema.RunStatus
		waiting, quarantined int
		want                 int
		says                 string
	}{
		{"ok", schema.RunOK, 0, 0, exitOK, ""},
		{"ok but a batch waits in the spool", schema.RunOK, 1, 0, exitPartial, "1 batches wait in the spool"},
		{"partial", schema.RunPartial, 0, 0, exitPartial, ""},
		{"ok with a quarantine", schema.RunOK, 0, 2, exitQuarantined, "2 batches are in quarantine in /spool/quarantine"},
		{"partial with a quarantine", schema.RunPartial, 3, 1, exitQuarantined, "1 batches are in quarantine"},
		{"failed with a quarantine", schema.RunFailed, 0, 1, exitFailed, "1 batches are in quarantine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			rep := pipeline.Report{Status: tc.status, Waiting: tc.waiting, Quarantined: tc.quarantined, QuarantineDir: "/spool/quarantine"}
			err := rep.Err()
			printError(&w, "scrape", err)
			if got := exitCode(err); got != tc.want {
				t.Errorf("exit code %d, want %d", got, tc.want)
			}
			if !strings.Contains(w.String(), tc.says) || (tc.says == "") != (w.Len() == 0) {
				t.Errorf("says %q, want %q", w.String(), tc.says)
			}
		})
	}
}

func TestScrapeHelpDocumentsTheQuarantine(t *testing.T) {
	code, out := runCLI("scrape", "--help")
	if code != exitOK {
		t.Fatalf("scrape --help: exit %d\n%s", code, out)
	}
	for _, want := range []string{"quarantine/", "5 batches are in the spool's quarantine/ folder", "3 partial", "batches wait in the spool"} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape --help does not say %q:\n%s", want, out)
		}
	}
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, codes, _ := strings.Cut(string(doc), "## Exit codes")
	codes, _, _ = strings.Cut(codes, "\n## ")
	if !strings.Contains(codes, "| 5 |") || !strings.Contains(codes, "quarantine") {
		t.Errorf("docs/operations.md's exit codes do not describe 5 (quarantine):\n%s", codes)
	}
}

// TestScrapeQuarantinesAPoisonedBatchAndLoadsTheRest: a spooled batch ClickHouse refuses (its
// offers belong to another run) sits first in the spool; the batches behind it load, it goes to
// quarantine, and the run exits 5 until it is moved out.
func TestScrapeQuarantinesAPoisonedBatchAndLoadsTheRest(t *testing.T) {
	x := newE2E(t, nil)
	x.proxy.setDown(true)
	code, out := x.run("scrape")
	if code != exitPartial {
		t.Fatalf("scrape with ClickHouse down: exit %d, want %d\n%s", code, exitPartial, out)
	}
	spooled := spooledTotal(t, out)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	poisoned := schema.Batch{
		Run:    schema.ScrapeRun{RunID: "20000101T000000Z-poison", Provider: "vastai", StartedAt: at, FinishedAt: at, Status: schema.RunOK},
		Offers: []schema.Offer{{RunID: "another-run", Provider: "vastai", OfferID: "x", ObservedAt: at}},
	}
	data, err := json.Marshal(poisoned)
	if err != nil {
		t.Fatal(err)
	}
	name := "20000101T000000Z-poison.vastai.json"
	if err := os.WriteFile(filepath.Join(x.spool, name), data, 0o600); err != nil {
		t.Fatal(err)
	}
	x.proxy.setDown(false)
	code, out = x.run("scrape")
	if code != exitQuarantined {
		t.Fatalf("scrape with a poisoned batch first in the spool: exit %d, want %d\n%s", code, exitQuarantined, out)
	}
	if !strings.Contains(out, "spooled batch "+name+" moved to quarantine") || strings.Count(out, "loaded spooled batch") != defaultProviders(t) {
		t.Errorf("the summary does not say the poisoned batch was quarantined and the %d behind it loaded:\n%s", defaultProviders(t), out)
	}
	if got, want := x.count("offers", ""), spooled+storedTotal(t, out); got != want {
		t.Errorf("offers holds %d rows, want %d (the spooled run's and this run's)", got, want)
	}
	if got := x.count("offers", "run_id = 'another-run' OR run_id LIKE '%poison%'"); got != 0 {
		t.Errorf("%d rows of the poisoned batch stored", got)
	}
	for _, f := range []string{name, name + ".failures"} {
		if _, err := os.Stat(filepath.Join(x.spool, "quarantine", f)); err != nil {
			t.Errorf("%s not in quarantine: %v", f, err)
		}
	}
	// The next run still says so: nobody has looked at it yet.
	if code, out := x.run("scrape"); code != exitQuarantined || !strings.Contains(out, "1 batches are in quarantine") {
		t.Errorf("next scrape: exit %d, want %d naming the quarantine\n%s", code, exitQuarantined, out)
	}
	// Moved away by the operator: back to 0.
	if err := os.Rename(filepath.Join(x.spool, "quarantine", name), filepath.Join(t.TempDir(), name)); err != nil {
		t.Fatal(err)
	}
	if code, out := x.run("scrape"); code != exitOK {
		t.Errorf("scrape after the quarantine was emptied: exit %d, want 0\n%s", code, out)
	}
}
