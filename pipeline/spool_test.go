package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBatchNeitherLoadedNorSpooledFailsItsProvider(t *testing.T) {
	st := newMemStore()
	st.down = true
	spoolDir := filepath.Join(t.TempDir(), "spool")
	// The spool disappears under the run (a disk pulled, a volume unmounted).
	vanish := fakeSource{"p", func(context.Context, schema.Run) (schema.Extract, error) {
		if err := os.RemoveAll(spoolDir); err != nil {
			t.Error(err)
		}
		return schema.Extract{Offers: []schema.Offer{offer("a", "H100-SXM-80GB", 1, "2")}}, nil
	}}
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{}, vanish)
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Providers[0]
	if p.Spooled || p.Status != schema.RunFailed || !strings.Contains(p.Error, "neither loaded nor spooled") {
		t.Errorf("provider report %+v, want failed, not spooled, saying the batch is lost", p)
	}
}

func TestUnreadableSpoolFileGoesToQuarantineAndTheRunGoesOn(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(spoolDir, "20261101T000000Z-aaaaaa.p.json"), []byte(`{"run": {"run_id": `), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{}, returning("p", offer("a", "H100-SXM-80GB", 1, "2")))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Replayed) != 1 || !strings.Contains(rep.Replayed[0].Error, "20261101T000000Z-aaaaaa.p.json") || !rep.Replayed[0].Quarantined {
		t.Errorf("replay report %+v, want the unreadable file named and quarantined", rep.Replayed)
	}
	for _, name := range []string{"20261101T000000Z-aaaaaa.p.json", "20261101T000000Z-aaaaaa.p.json.failures"} {
		if _, err := os.Stat(filepath.Join(spoolDir, "quarantine", name)); err != nil {
			t.Errorf("%s is not in quarantine: %v", name, err)
		}
	}
	if rep.Status != schema.RunOK || st.offers() != 1 || rep.Quarantined != 1 || rep.Waiting != 0 {
		t.Errorf("the run did not go on: %s, %d offers stored, %d quarantined, %d waiting", rep.Status, st.offers(), rep.Quarantined, rep.Waiting)
	}
}

// spoolFiles lists the batch files of a spool folder (or of its quarantine).
func spoolFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// TestEveryBatchIsInTheSpoolWhileItLoads: the spool is the write-ahead log of every load, so a
// process killed during a load leaves the batch there.
func TestEveryBatchIsInTheSpoolWhileItLoads(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	var missing []string
	st.during = func(b schema.Batch) {
		if _, err := os.Stat(filepath.Join(spoolDir, b.Run.RunID+"."+b.Run.Provider+".json")); err != nil {
			missing = append(missing, b.Run.Provider)
		}
	}
	var stages []string
	var mu sync.Mutex
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir, Parallelism: 1}, st, pipeline.Options{OnStage: func(s string) {
		mu.Lock()
		stages = append(stages, s)
		mu.Unlock()
	}}, returning("p", offer("a", "H100-SXM-80GB", 1, "2")), returning("q", offer("b", "L4-24GB", 1, "0.4")))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("batches of %v were loaded while not in the spool", missing)
	}
	if files := spoolFiles(t, spoolDir); len(files) != 0 || rep.Waiting != 0 {
		t.Errorf("spool after a good run: %v (%d waiting), want empty", files, rep.Waiting)
	}
	want := append(pipeline.Stages(), pipeline.Stages()...)
	if diff := cmp.Diff(want, stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}

// TestPoisonedBatchIsQuarantinedAndBlocksNothing: a spooled batch that always fails is tried
// MaxLoadAttempts times, in the runs where the batches behind it load, then moved to quarantine
// with the reasons, counted in the gauge.
func TestPoisonedBatchIsQuarantinedAndBlocksNothing(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	reg := prometheus.NewRegistry()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ids := []string{"20261201T080000Z-aaaaaa", "20261201T090000Z-bbbbbb", "20261201T093000Z-cccccc"}
	// Three earlier runs spooled their batches while the store was down.
	st.down = true
	for _, id := range ids {
		r := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{RunID: id, Now: clock}, returning("p", offer("a", "H100-SXM-80GB", 1, "2")))
		if _, err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	st.down = false
	poisoned := ids[0] + ".p.json"
	st.fail = func(b schema.Batch) error {
		if b.Run.RunID == ids[0] {
			return errors.New("code: 53, message: Type mismatch in VALUES section")
		}
		return nil
	}
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir, MaxLoadAttempts: 3}, st, pipeline.Options{Metrics: pipeline.NewMetrics(reg), Now: clock},
		returning("q", offer("b", "L4-24GB", 1, "0.4")))
	for run := 1; run <= 3; run++ {
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wantWaiting, wantQuarantined := 1, 0
		if run == 3 {
			wantWaiting, wantQuarantined = 0, 1
		}
		if rep.Waiting != wantWaiting || rep.Quarantined != wantQuarantined {
			t.Errorf("run %d: %d waiting, %d quarantined; want %d and %d", run, rep.Waiting, rep.Quarantined, wantWaiting, wantQuarantined)
		}
		if got := gauge(t, reg, "gpucost_spool_quarantined_batches"); got != float64(wantQuarantined) {
			t.Errorf("run %d: quarantine gauge %v, want %d", run, got, wantQuarantined)
		}
		if run == 1 && (len(rep.Replayed) != 3 || rep.Replayed[0].Error == "" || rep.Replayed[1].Error != "" || rep.Replayed[2].Error != "") {
			t.Errorf("run 1 replayed %+v: want the poisoned batch failed and the two behind it loaded", rep.Replayed)
		}
		if run == 3 && (len(rep.Replayed) != 1 || !rep.Replayed[0].Quarantined) {
			t.Errorf("run 3 replayed %+v: want the poisoned batch quarantined", rep.Replayed)
		}
	}
	if got := st.offers(); got != 2+3 {
		t.Errorf("%d offers stored, want the 2 healthy spooled ones and the 3 runs' own", got)
	}
	if diff := cmp.Diff([]string{poisoned}, spoolFiles(t, filepath.Join(spoolDir, "quarantine"))); diff != "" {
		t.Errorf("quarantine (-want +got):\n%s", diff)
	}
	failures, err := os.ReadFile(filepath.Join(spoolDir, "quarantine", poisoned+".failures"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(failures), "Type mismatch"); n != 3 {
		t.Errorf("the failures file holds %d reasons, want 3:\n%s", n, failures)
	}
	// The quarantine stays what it is: the next run neither loads nor counts it again.
	rep, err := r.Run(context.Background())
	if err != nil || len(rep.Replayed) != 0 || rep.Quarantined != 1 {
		t.Errorf("run after the quarantine: %+v, %v", rep, err)
	}
}

// TestRejectedBatchIsQuarantinedAtOnce: a batch the sink refuses as such goes to quarantine at
// its first failure, whether it was spooled by an earlier run or is this run's own.
func TestRejectedBatchIsQuarantinedAtOnce(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	st.fail = func(b schema.Batch) error {
		if b.Run.Provider == "bad" {
			return fmt.Errorf("%w: offer 1 belongs to another run", schema.ErrRejected)
		}
		return nil
	}
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{},
		returning("bad", offer("a", "H100-SXM-80GB", 1, "2")), returning("good", offer("b", "L4-24GB", 1, "0.4")))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bad := rep.Providers[0]
	if bad.Provider != "bad" || !bad.Quarantined || bad.Spooled || bad.Status != schema.RunFailed || !strings.Contains(bad.Error, "quarantine") {
		t.Errorf("rejected provider: %+v, want failed and quarantined", bad)
	}
	if rep.Providers[1].Status != schema.RunOK || rep.Quarantined != 1 || rep.Waiting != 0 || st.offers() != 1 {
		t.Errorf("report %+v, want good loaded and one batch in quarantine", rep)
	}
}

// TestUnavailableStoreCountsNoFailures: however many runs find the store unavailable, their
// batches wait; none is quarantined, and all load once it is back.
func TestUnavailableStoreCountsNoFailures(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir, MaxLoadAttempts: 2}, st, pipeline.Options{}, returning("p", offer("a", "H100-SXM-80GB", 1, "2")))
	st.down = true
	for range 4 {
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Quarantined != 0 || !rep.Providers[0].Spooled {
			t.Fatalf("run with the store down: %+v, want spooled, nothing quarantined", rep)
		}
	}
	st.down = false
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Replayed) != 4 || rep.Waiting != 0 || rep.Quarantined != 0 || st.offers() != 5 {
		t.Errorf("run with the store back: %d replayed, %d waiting, %d quarantined, %d offers; want 4, 0, 0, 5", len(rep.Replayed), rep.Waiting, rep.Quarantined, st.offers())
	}
}

// TestReplayAgainLoadsTheSpooledCopy: a recording replayed again (the same run id) while its
// first replay waits in the spool does not replace it, and a copy in quarantine stops it: the
// copy that may be partly stored is the one loaded, with its own timestamps.
func TestReplayAgainLoadsTheSpooledCopy(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	first := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := first
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{RunID: "replay-0123456789abcdef", Now: func() time.Time { return now }},
		returning("p", offer("a", "H100-SXM-80GB", 1, "2")))
	st.down = true
	for range 2 {
		if _, err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
	}
	if files := spoolFiles(t, spoolDir); len(files) != 1 {
		t.Fatalf("spool %v, want the one batch of the run", files)
	}
	st.down = false
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := st.batches["replay-0123456789abcdef/p"]
	if len(rep.Replayed) != 1 || !got.Offers[0].ObservedAt.Equal(first) {
		t.Errorf("stored the copy observed at %v (replayed %+v), want the first one's %v", got.Offers[0].ObservedAt, rep.Replayed, first)
	}
	// A copy in quarantine: the replay of the same recording is refused, not loaded beside it.
	q := filepath.Join(spoolDir, "quarantine", "replay-0123456789abcdef.q.json")
	if err := os.WriteFile(q, mustJSON(t, schema.Batch{Run: schema.ScrapeRun{RunID: "replay-0123456789abcdef", Provider: "q"}}), 0o600); err != nil {
		t.Fatal(err)
	}
	r2 := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{RunID: "replay-0123456789abcdef"}, returning("q", offer("b", "L4-24GB", 1, "0.4")))
	rep, err = r2.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Providers[0]; p.Status != schema.RunFailed || !strings.Contains(p.Error, "quarantine") || st.batches["replay-0123456789abcdef/q"].Run.RunID != "" {
		t.Errorf("replay with a copy in quarantine: %+v, want failed and nothing loaded", p)
	}
}
