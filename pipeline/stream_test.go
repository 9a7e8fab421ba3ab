package pipeline_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

// paging is a source that hands over its pages as it reads them (schema.Run.Keep), as Vast's
// does: pages of n offers each, each page with its response, the same ask twice across pages.
func paging(name string, pages, n int) fakeSource {
	return fakeSource{name, func(_ context.Context, run schema.Run) (schema.Extract, error) {
		var ex schema.Extract
		for p := range pages {
			body := fmt.Sprintf(`{"page": %d}`, p)
			if err := run.Keep(&ex, schema.Page{Payloads: []schema.RawPayload{{URL: fmt.Sprintf("https://%s.test/?page=%d", name, p), Status: 200, Body: []byte(body)}}}); err != nil {
				return ex, err
			}
			offers := make([]schema.Offer, n)
			for i := range offers {
				offers[i] = offer(fmt.Sprintf("ask-%d", p*n+i), "H100-SXM-80GB", 8, "2.5")
			}
			offers[0].OfferID = "ask-0" // seen on the first page already
			if err := run.Keep(&ex, schema.Page{Offers: offers}); err != nil {
				return ex, err
			}
		}
		ex.Attempts = pages
		return ex, nil
	}}
}

// TestPagesStreamToTheSpoolAndLoad: a source's pages go to its batch in the spool as it reads
// them, validated across pages (a key seen on an earlier page is a duplicate), and the sink
// loads every one of them from there, in order; the run holds none of them itself.
func TestPagesStreamToTheSpoolAndLoad(t *testing.T) {
	st := newMemStore()
	spool := t.TempDir()
	r := newRunner(t, pipeline.Config{SpoolDir: spool}, st, pipeline.Options{}, paging("p", 5, 30_000))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Providers[0]
	want := 5*30_000 - 4
	if p.Status != schema.RunOK || p.Parsed != 5*30_000 || p.Loaded != want || p.Rejected[pipeline.RejectDuplicate] != 4 {
		t.Errorf("provider report %+v, want ok, %d parsed, %d loaded, 4 duplicates", p, 5*30_000, want)
	}
	if b := rep.Batches[0]; len(b.Offers) != 0 || len(b.Payloads) != 0 || b.Run.OffersLoaded != uint32(want) {
		t.Errorf("the report holds %d offers and %d payloads of the batch (want none: they went through the spool), run row %+v", len(b.Offers), len(b.Payloads), b.Run)
	}
	got := st.loaded(rep.RunID, "p")
	if len(got.Offers) != want || len(got.Payloads) != 5 {
		t.Fatalf("the sink loaded %d offers and %d payloads, want %d and 5", len(got.Offers), len(got.Payloads), want)
	}
	if got.Offers[0].OfferID != "ask-0" || got.Offers[1].OfferID != "ask-1" || got.Offers[want-1].OfferID != fmt.Sprintf("ask-%d", 5*30_000-1) {
		t.Errorf("offers loaded out of order: %s, %s … %s", got.Offers[0].OfferID, got.Offers[1].OfferID, got.Offers[want-1].OfferID)
	}
	for i, pl := range got.Payloads {
		if pl.RunID != rep.RunID || pl.Provider != "p" || string(pl.Body) != fmt.Sprintf(`{"page": %d}`, i) {
			t.Errorf("payload %d loaded as %s/%s %q", i, pl.RunID, pl.Provider, pl.Body)
		}
	}
	if files := spoolFiles(t, spool); len(files) != 0 {
		t.Errorf("the spool still holds %v after the load", files)
	}
}

// TestStreamedBatchWaitsInTheSpool: with the sink down, a streamed batch waits in the spool,
// whole, and the next run loads it from there.
func TestStreamedBatchWaitsInTheSpool(t *testing.T) {
	st := newMemStore()
	st.down = true
	spool := t.TempDir()
	r := newRunner(t, pipeline.Config{SpoolDir: spool}, st, pipeline.Options{}, paging("p", 3, 20_000))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Providers[0].Spooled || len(spoolFiles(t, spool)) != 1 {
		t.Fatalf("provider report %+v, spool %v: want the batch spooled", rep.Providers[0], spoolFiles(t, spool))
	}
	st.down = false
	next, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Replayed) != 1 || next.Replayed[0].Error != "" {
		t.Fatalf("replay %+v, want the spooled batch loaded", next.Replayed)
	}
	if got := st.loaded(rep.RunID, "p"); len(got.Offers) != 3*20_000-2 || len(got.Payloads) != 3 {
		t.Errorf("the replay loaded %d offers and %d payloads, want %d and 3", len(got.Offers), len(got.Payloads), 3*20_000-2)
	}
}
