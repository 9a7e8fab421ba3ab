package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The store is the pipeline's sink and history as it is, opened at once or on first use.
var (
	_ pipeline.Sink    = (*store.Store)(nil)
	_ pipeline.History = (*store.Store)(nil)
	_ pipeline.Sink    = (*store.Lazy)(nil)
	_ pipeline.History = (*store.Lazy)(nil)
)

// TestLazyUnreachableIsUnavailable: a store that cannot be opened makes a load fail as
// unavailable (the batch is not at fault, so the pipeline spools it and counts nothing), and
// closing a store never opened is fine.
func TestLazyUnreachableIsUnavailable(t *testing.T) {
	l := store.NewLazy("clickhouse://default@127.0.0.1:1/gpucost?dial_timeout=1s", store.Options{})
	ctx := context.Background()
	b := schema.Batch{Run: schema.ScrapeRun{RunID: "run-1", Provider: "p", Status: schema.RunOK}}
	if _, err := l.LoadBatch(ctx, b); !errors.Is(err, schema.ErrUnavailable) {
		t.Errorf("LoadBatch on a closed port: %v, want schema.ErrUnavailable", err)
	}
	if _, err := l.LastGoodRuns(ctx); err == nil {
		t.Error("LastGoodRuns on a closed port: no error")
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close of a store never opened: %v", err)
	}
}

// TestLazyOpensOnFirstUse loads a batch through a Lazy store, then again: the second load finds
// it stored whole.
func TestLazyOpensOnFirstUse(t *testing.T) {
	dsn := storetest.DSN(t)
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	l := store.NewLazy(dsn, store.Options{})
	defer l.Close()
	at := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	b := schema.Batch{Run: schema.ScrapeRun{RunID: "run-lazy", Provider: "p", StartedAt: at, FinishedAt: at, Status: schema.RunFailed, Error: "p: down"}}
	for i, want := range []bool{false, true} {
		skipped, err := l.LoadBatch(ctx, b)
		if err != nil || skipped != want {
			t.Fatalf("load %d: skipped %v, %v; want skipped %v", i+1, skipped, err, want)
		}
	}
	if runs, err := l.LastGoodRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("LastGoodRuns: %v, %v; want none (the run failed)", runs, err)
	}
}
