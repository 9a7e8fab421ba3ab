package pipeline_test

import (
	"context"
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
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

// fakeSource is a Source whose Fetch is a function.
type fakeSource struct {
	name  string
	fetch func(ctx context.Context, run schema.Run) (schema.Extract, error)
}

var _ pipeline.Source = fakeSource{}

func (f fakeSource) Name() string { return f.name }
func (f fakeSource) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	return f.fetch(ctx, run)
}

// returning is a source that always returns offers.
func returning(name string, offers ...schema.Offer) fakeSource {
	return fakeSource{name, func(context.Context, schema.Run) (schema.Extract, error) {
		return schema.Extract{Offers: offers, Attempts: 1, Payloads: []schema.RawPayload{{URL: "https://" + name + ".test/", Status: 200, Body: []byte("{}")}}}, nil
	}}
}

// memStore is an in-memory Sink and History that can be switched off, standing in for
// ClickHouse where the test is about the pipeline's own logic. The end-to-end tests in
// cmd/gpucost run the same paths against the real server.
type memStore struct {
	mu      sync.Mutex
	down    bool
	fail    func(schema.Batch) error // when set, a batch it returns an error for is not stored
	during  func(schema.Batch)       // when set, called inside LoadBatch
	batches map[string]schema.Batch  // by run/provider
	good    []schema.ScrapeRun
	prices  map[schema.Key]decimal.Decimal
}

var (
	_ pipeline.Sink    = (*memStore)(nil)
	_ pipeline.History = (*memStore)(nil)
)

func newMemStore() *memStore { return &memStore{batches: map[string]schema.Batch{}} }

func (m *memStore) LoadBatch(_ context.Context, b schema.Batch) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return false, fmt.Errorf("%w: dial tcp 127.0.0.1:19000: connection refused", schema.ErrUnavailable)
	}
	// As a real sink, it reads the batch while it loads it: a spooled batch's parts are read
	// from its file, which leaves the spool once loaded.
	b, err := whole(b)
	if err != nil {
		return false, err
	}
	if m.during != nil {
		m.during(b)
	}
	if m.fail != nil {
		if err := m.fail(b); err != nil {
			return false, err
		}
	}
	k := b.Run.RunID + "/" + b.Run.Provider
	if _, ok := m.batches[k]; ok {
		return true, nil
	}
	m.batches[k] = b
	return false, nil
}

// whole returns b with every part of it read into its Offers and Payloads.
func whole(b schema.Batch) (schema.Batch, error) {
	out := schema.Batch{Run: b.Run}
	if err := b.EachOffers(schema.Share{}, func(os []schema.Offer) error { out.Offers = append(out.Offers, os...); return nil }); err != nil {
		return out, err
	}
	err := b.EachPayloads(func(ps []schema.RawPayload) error { out.Payloads = append(out.Payloads, ps...); return nil })
	return out, err
}

// loaded returns the batch of one run and provider the store holds.
func (m *memStore) loaded(runID, provider string) schema.Batch {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.batches[runID+"/"+provider]
}

func (m *memStore) LastGoodRuns(context.Context) ([]schema.ScrapeRun, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, errors.New("connection refused")
	}
	return m.good, nil
}

func (m *memStore) LatestPrices(_ context.Context, provider string) (map[schema.Key]decimal.Decimal, error) {
	return m.prices, nil
}

func (m *memStore) offers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, b := range m.batches {
		n += len(b.Offers)
	}
	return n
}

func offer(id, model string, count uint16, perGPU string) schema.Offer {
	p := decimal.RequireFromString(perGPU)
	return schema.Offer{OfferID: id, GPUModel: model, GPUNameRaw: model, GPUCount: count, VRAMGB: 80, PriceType: schema.OnDemand,
		PriceUSDPerHour: p.Mul(decimal.NewFromInt(int64(count))), PriceUSDPerGPUHour: p}
}

// rawGPU is an offer that leaves its GPU model to the pipeline: only the raw name and the VRAM
// the provider reported.
func rawGPU(id, name string, vram float64) schema.Offer {
	o := offer(id, "", 8, "2.5")
	o.GPUNameRaw, o.VRAMGB = name, vram
	return o
}

func newRunner(t *testing.T, cfg pipeline.Config, st *memStore, opts pipeline.Options, sources ...pipeline.Source) *pipeline.Runner {
	t.Helper()
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = t.TempDir()
	}
	var sink pipeline.Sink
	var hist pipeline.History
	if st != nil {
		sink, hist = st, st
	}
	r, err := pipeline.New(cfg, sources, sink, hist, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestValidationRejectsAndFlags(t *testing.T) {
	st := newMemStore()
	// Outliers move by more than the factor (3) either way since their last observation; a move
	// of exactly the factor is not one.
	st.prices = map[schema.Key]decimal.Decimal{}
	for _, id := range []string{"jump", "drop", "edge"} {
		st.prices[schema.Key{Provider: "p", OfferID: id, PriceType: schema.OnDemand}] = decimal.RequireFromString("1.00")
	}
	zeroVRAM := offer("novram", "", 1, "1")
	zeroVRAM.VRAMGB = 0
	noPerGPU := offer("derived", "H100-SXM-80GB", 4, "0")
	noPerGPU.PriceUSDPerHour = decimal.RequireFromString("10")
	src := returning("p",
		offer("ok", "H100-SXM-80GB", 8, "2.5"),
		offer("free", "H100-SXM-80GB", 1, "0"),
		offer("negative", "H100-SXM-80GB", 1, "-1"),
		offer("absurd", "H100-SXM-80GB", 1, "250"),
		offer("nogpus", "H100-SXM-80GB", 0, "1"),
		zeroVRAM,
		offer("", "H100-SXM-80GB", 1, "1"),
		offer("ok", "H100-SXM-80GB", 8, "2.6"), // same key again
		offer("jump", "H100-SXM-80GB", 1, "4.50"),
		noPerGPU,
		offer("drop", "H100-SXM-80GB", 1, "0.33"),
		offer("edge", "H100-SXM-80GB", 1, "3.00"),
	)
	reg := prometheus.NewRegistry()
	r := newRunner(t, pipeline.Config{MinOfferRatio: 0.5, OutlierFactor: 3}, st, pipeline.Options{Metrics: pipeline.NewMetrics(reg)}, src)
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Providers[0]
	wantRejected := map[string]int{"non_positive_price": 2, "absurd_price": 1, "zero_gpus": 1, "zero_vram": 1, "no_offer_id": 1, "duplicate": 1}
	if diff := cmp.Diff(wantRejected, p.Rejected); diff != "" {
		t.Errorf("rejected (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"price_outlier": 2}, p.Flagged); diff != "" {
		t.Errorf("flagged (-want +got):\n%s", diff)
	}
	if p.Status != schema.RunOK || p.Loaded != 5 || p.Parsed != 12 {
		t.Errorf("provider report %+v, want ok with 5 of 12 loaded", p)
	}
	b := st.loaded(rep.RunID, "p")
	if got := b.Offers[2]; got.OfferID != "derived" || got.PriceUSDPerGPUHour.String() != "2.5" {
		t.Errorf("per-GPU price not derived from the offer price: %+v", got)
	}
	for _, o := range b.Offers {
		if o.RunID != rep.RunID || !o.ObservedAt.Equal(rep.ObservedAt) || o.Provider != "p" {
			t.Errorf("offer %s not stamped with the run: %s %s %s", o.OfferID, o.RunID, o.ObservedAt, o.Provider)
		}
	}
	if b.Run.OffersParsed != 12 || b.Run.OffersLoaded != 5 || b.Run.OffersRejected != 7 {
		t.Errorf("run log row %+v", b.Run)
	}
	if got := counterValue(t, reg, "gpucost_scrape_offers_rejected_total", "absurd_price"); got != 1 {
		t.Errorf("rejected metric for absurd_price = %v, want 1", got)
	}
}

// counterValue reads the counter name{reason=reason} from reg.
func counterValue(t *testing.T, reg *prometheus.Registry, name, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s{reason=%q} not found", name, reason)
	return 0
}

func TestOneSourceFailingDoesNotStopTheOthers(t *testing.T) {
	st := newMemStore()
	down := fakeSource{"down", func(context.Context, schema.Run) (schema.Extract, error) {
		return schema.Extract{Attempts: 5}, errors.New("down: HTTP 503 after 5 attempts")
	}}
	panicky := fakeSource{"panicky", func(context.Context, schema.Run) (schema.Extract, error) { panic("boom") }}
	hanging := fakeSource{"hanging", func(ctx context.Context, _ schema.Run) (schema.Extract, error) {
		<-ctx.Done()
		return schema.Extract{}, fmt.Errorf("hanging: %w", ctx.Err())
	}}
	empty := returning("empty")
	r := newRunner(t, pipeline.Config{SourceTimeout: 200 * time.Millisecond}, st, pipeline.Options{},
		returning("good", offer("a", "H100-SXM-80GB", 1, "2")), down, panicky, hanging, empty)
	start := time.Now()
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("run took %v: the hanging source's deadline did not win", d)
	}
	if rep.Status != schema.RunPartial {
		t.Errorf("run status %s, want partial", rep.Status)
	}
	want := map[string]string{
		"down":    "HTTP 503 after 5 attempts",
		"empty":   "returned no offers",
		"good":    "",
		"hanging": "deadline passed",
		"panicky": "panicked: boom",
	}
	for _, p := range rep.Providers {
		if !strings.Contains(p.Error, want[p.Provider]) || (want[p.Provider] == "") != (p.Status == schema.RunOK) {
			t.Errorf("%s: status %s, error %q; want error containing %q", p.Provider, p.Status, p.Error, want[p.Provider])
		}
	}
	if st.offers() != 1 {
		t.Errorf("%d offers stored, want the good source's 1", st.offers())
	}
	if len(st.batches) != 5 {
		t.Errorf("%d run-log batches stored, want one per provider (5), failures included", len(st.batches))
	}
}

func TestShrinkingSourceIsFailedNotLoaded(t *testing.T) {
	st := newMemStore()
	st.good = []schema.ScrapeRun{{RunID: "earlier", Provider: "p", Status: schema.RunOK, OffersLoaded: 100}}
	var few []schema.Offer
	for i := range 30 {
		few = append(few, offer(fmt.Sprint(i), "H100-SXM-80GB", 1, "2"))
	}
	r := newRunner(t, pipeline.Config{MinOfferRatio: 0.5}, st, pipeline.Options{}, returning("p", few...))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Providers[0]
	if p.Status != schema.RunFailed || !strings.Contains(p.Error, "30 valid offers, fewer than 50% of the 100 loaded by its last good run earlier") {
		t.Errorf("provider report %+v, want failed by the shrink check", p)
	}
	if st.offers() != 0 {
		t.Errorf("%d offers loaded, want none", st.offers())
	}
	if rep.Status != schema.RunFailed {
		t.Errorf("run status %s, want failed", rep.Status)
	}
}

func TestSinkDownSpoolsThenNextRunLoadsOnce(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	src := returning("p", offer("a", "H100-SXM-80GB", 1, "2"), offer("b", "A100-SXM-80GB", 1, "1.2"))
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{}, src, returning("q", offer("c", "L4-24GB", 1, "0.4")))

	st.down = true
	rep1, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep1.Providers {
		if !p.Spooled {
			t.Errorf("%s not spooled while the store is down", p.Provider)
		}
	}
	files, _ := filepath.Glob(filepath.Join(spoolDir, "*.json"))
	if len(files) != 2 {
		t.Fatalf("spool holds %v, want 2 batches", files)
	}
	// Still down: the spool is kept, and grows with the second run's batches.
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	files, _ = filepath.Glob(filepath.Join(spoolDir, "*.json"))
	if len(files) != 4 {
		t.Fatalf("spool holds %d batches after two runs down, want 4", len(files))
	}

	st.down = false
	rep3, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep3.Replayed) != 4 {
		t.Errorf("replayed %d spooled batches, want 4", len(rep3.Replayed))
	}
	files, _ = filepath.Glob(filepath.Join(spoolDir, "*.json"))
	if len(files) != 0 {
		t.Errorf("spool still holds %v", files)
	}
	if got := st.offers(); got != 9 {
		t.Errorf("%d offers stored after three runs of 3, want 9 (each exactly once)", got)
	}
	// A spooled batch that the store already holds is skipped, not loaded again.
	if err := os.WriteFile(filepath.Join(spoolDir, "x.json"), mustJSON(t, st.batches[rep1.RunID+"/p"]), 0o600); err != nil {
		t.Fatal(err)
	}
	rep4, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep4.Replayed) != 1 || !rep4.Replayed[0].Skipped {
		t.Errorf("replay of an already stored batch: %+v, want skipped", rep4.Replayed)
	}
	if got := st.offers(); got != 12 {
		t.Errorf("%d offers stored, want 12", got)
	}
}

func TestCancelledRunSpoolsInsteadOfLosing(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	src := fakeSource{"p", func(context.Context, schema.Run) (schema.Extract, error) {
		cancel() // SIGTERM arrives after the fetch finished
		return schema.Extract{Offers: []schema.Offer{offer("a", "H100-SXM-80GB", 1, "2")}}, nil
	}}
	r := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{}, src)
	rep, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Providers[0].Spooled {
		t.Fatalf("batch of a cancelled run neither loaded nor spooled: %+v", rep.Providers[0])
	}
	if files, _ := filepath.Glob(filepath.Join(spoolDir, "*.json")); len(files) != 1 {
		t.Errorf("spool holds %v, want the batch", files)
	}
}

func TestOverlappingRunsDoNotBothRun(t *testing.T) {
	st := newMemStore()
	spoolDir := t.TempDir()
	release := make(chan struct{})
	started := make(chan struct{})
	slow := fakeSource{"slow", func(ctx context.Context, _ schema.Run) (schema.Extract, error) {
		close(started)
		<-release
		return schema.Extract{Offers: []schema.Offer{offer("a", "H100-SXM-80GB", 1, "2")}}, nil
	}}
	first := newRunner(t, pipeline.Config{SpoolDir: spoolDir}, st, pipeline.Options{}, slow)
	second := newRunner(t, pipeline.Config{SpoolDir: spoolDir, LockWait: 100 * time.Millisecond}, st, pipeline.Options{}, returning("fast", offer("b", "L4-24GB", 1, "0.4")))
	done := make(chan error)
	go func() {
		_, err := first.Run(context.Background())
		done <- err
	}()
	<-started
	_, err := second.Run(context.Background())
	if !errors.Is(err, pipeline.ErrBusy) || !strings.Contains(err.Error(), "pid") {
		t.Errorf("second run: %v, want ErrBusy naming the holder", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Once the first finished, the lock is free again.
	if _, err := second.Run(context.Background()); err != nil {
		t.Errorf("run after the first finished: %v", err)
	}
}

func TestDryRunLoadsNothing(t *testing.T) {
	r, err := pipeline.New(pipeline.Config{}, []pipeline.Source{returning("p", offer("a", "H100-SXM-80GB", 1, "2"))}, nil, nil, pipeline.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Batches) != 1 || len(rep.Batches[0].Offers) != 1 || rep.Providers[0].Spooled {
		t.Errorf("dry run report %+v", rep)
	}
}

// versioned is a source that names its parser.
type versioned struct {
	fakeSource
	version string
}

func (v versioned) ParserVersion() string { return v.version }

// TestOffersRecordTheirParser: the offers of a source that names its parser carry its version,
// whatever the offer said; a source that names none leaves it empty.
func TestOffersRecordTheirParser(t *testing.T) {
	st := newMemStore()
	forged := offer("forged", "H100-SXM-80GB", 1, "2")
	forged.ParserVersion = "forged/1"
	r := newRunner(t, pipeline.Config{}, st, pipeline.Options{},
		versioned{returning("named", offer("a", "H100-SXM-80GB", 1, "2"), forged), "named/2026-12-01 gpus/0"},
		returning("anonymous", offer("b", "H100-SXM-80GB", 1, "2")))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for provider, want := range map[string]string{"named": "named/2026-12-01 gpus/0", "anonymous": ""} {
		b := st.loaded(rep.RunID, provider)
		if len(b.Offers) == 0 {
			t.Fatalf("%s: nothing loaded", provider)
		}
		for _, o := range b.Offers {
			if o.ParserVersion != want {
				t.Errorf("%s offer %s: parser version %q, want %q", provider, o.OfferID, o.ParserVersion, want)
			}
		}
	}
}
