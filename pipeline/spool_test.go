package pipeline_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	vanish := fakeSource{"p", func(context.Context, pipeline.Run) (pipeline.Extract, error) {
		if err := os.RemoveAll(spoolDir); err != nil {
			t.Error(err)
		}
		return pipeline.Extract{Offers: []schema.Offer{offer("a", "H100-SXM-80GB", 1, "2")}}, nil
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

func TestUnreadableSpoolFileStaysAndTheRunGoesOn(t *testing.T) {
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
	if len(rep.Replayed) != 1 || !strings.Contains(rep.Replayed[0].Error, "20261101T000000Z-aaaaaa.p.json") {
		t.Errorf("replay report %+v, want the unreadable file named", rep.Replayed)
	}
	if _, err := os.Stat(filepath.Join(spoolDir, "20261101T000000Z-aaaaaa.p.json")); err != nil {
		t.Errorf("the unreadable batch left the spool: %v", err)
	}
	if rep.Status != schema.RunOK || st.offers() != 1 {
		t.Errorf("the run did not go on: %s, %d offers stored", rep.Status, st.offers())
	}
}
