package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The analytics tests share one generated history: four weeks of observations every six hours,
// ending at the current hour (the dashboard's "now" is the real clock's), for three GPU models at
// three providers. Prices follow rules simple enough to recompute by hand in the tests, and
// move at known steps.

const (
	anWeeks = 4
	anStep  = 6 * time.Hour
)

// anOffer is one offer of the generated history with its price at every step.
type anOffer struct {
	provider, id, model string
	pt                  schema.PriceType
	count               uint16
	price               func(step int) decimal.Decimal
}

// anFixture is the generated history as stored.
type anFixture struct {
	dsn    string
	store  *store.Store
	start  time.Time // first observation
	end    time.Time // one step after the last observation
	offers []schema.Offer
	moves  []schema.PriceChange // every price move, in generation order
}

func cents(c int) decimal.Decimal { return decimal.New(int64(c), -2) }

func anOffers() []anOffer {
	return []anOffer{
		// Vast: marketplace prices that step every 5 observations, in a 4-step cycle.
		{"vastai", "ask-101", "H100-SXM-80GB", schema.OnDemand, 1, func(s int) decimal.Decimal { return cents(180 + 10*((s/5)%4)) }},
		{"vastai", "ask-102", "H100-SXM-80GB", schema.OnDemand, 8, func(s int) decimal.Decimal { return cents(195 + 5*((s/7)%3)) }},
		{"vastai", "ask-201", "RTX-4090-24GB", schema.OnDemand, 1, func(s int) decimal.Decimal { return cents(35 + ((s/9)%2)*4) }},
		// RunPod: a steady on-demand price and a spot price that flips every 10 observations.
		{"runpod", "NVIDIA H100 80GB HBM3/secure", "H100-SXM-80GB", schema.OnDemand, 1, func(int) decimal.Decimal { return cents(269) }},
		{"runpod", "NVIDIA H100 80GB HBM3/secure", "H100-SXM-80GB", schema.Spot, 1, func(s int) decimal.Decimal { return cents(150 + 25*((s/10)%2)) }},
		{"runpod", "NVIDIA A100 80GB/secure", "A100-SXM-80GB", schema.OnDemand, 1, func(int) decimal.Decimal { return cents(139) }},
		// Lambda: list prices with one cut each, at known steps.
		{"lambda", "gpu_8x_h100_sxm5", "H100-SXM-80GB", schema.OnDemand, 8, func(s int) decimal.Decimal {
			if s < 60 {
				return cents(299)
			}
			return cents(249)
		}},
		{"lambda", "gpu_8x_a100_80gb_sxm4", "A100-SXM-80GB", schema.OnDemand, 8, func(s int) decimal.Decimal {
			if s < 90 {
				return cents(179)
			}
			return cents(129)
		}},
	}
}

// genAnFixture generates the history ending at now's six-hour slot and records its moves.
func genAnFixture(now time.Time) *anFixture {
	steps := anWeeks * 7 * 4
	// The last observation is in the current six-hour slot, so it counts as "now".
	last := now.UTC().Truncate(anStep)
	start := last.Add(-time.Duration(steps-1) * anStep)
	fx := &anFixture{start: start}
	defs := anOffers()
	for step := 0; step < steps; step++ {
		at := start.Add(time.Duration(step) * anStep)
		runID := fmt.Sprintf("gen-%03d", step)
		var batch []schema.Offer
		for _, d := range defs {
			p := d.price(step)
			o := schema.Offer{ObservedAt: at, RunID: runID, SourceURL: "https://example.test/" + d.provider,
				Provider: d.provider, OfferID: d.id, Tier: schema.TierSecure, Region: "US-TX-3", Country: "US",
				GPUModel: d.model, GPUNameRaw: "NVIDIA " + d.model, GPUCount: d.count, VRAMGB: 80,
				PriceType: d.pt, PriceUSDPerHour: p.Mul(decimal.NewFromInt(int64(d.count))), PriceUSDPerGPUHour: p,
				IntraNode: schema.IntraNVSwitch, InterNode: schema.InterInfiniBand, Stock: schema.StockHigh}
			if d.model == "RTX-4090-24GB" {
				o.VRAMGB = 24
			}
			batch = append(batch, o)
			if step > 0 && !d.price(step-1).Equal(p) {
				old := d.price(step - 1)
				fx.moves = append(fx.moves, schema.PriceChange{ChangedAt: at, PreviousAt: at.Add(-anStep), Provider: d.provider,
					PriceType: d.pt, OfferID: d.id, GPUModel: d.model, GPUCount: d.count, Tier: schema.TierSecure, Region: "US-TX-3",
					OldPrice: old, NewPrice: p, ChangeUSD: p.Sub(old), ChangePct: p.Sub(old).Mul(decimal.NewFromInt(100)).DivRound(old, 2), RunID: runID})
			}
		}
		fx.offers = append(fx.offers, batch...)
		fx.end = at.Add(anStep)
	}
	return fx
}

// newAnFixture generates the history and stores it in a fresh database of the test server.
func newAnFixture(t *testing.T) *anFixture {
	t.Helper()
	dsn := storetest.DSN(t)
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	fx := genAnFixture(time.Now())
	fx.dsn, fx.store = dsn, st
	defs := anOffers()
	// One insert per day of runs keeps the test quick; the order is scrambled on purpose.
	perDay := 4 * len(defs)
	var days [][]schema.Offer
	for i := 0; i < len(fx.offers); i += perDay {
		days = append(days, fx.offers[i:min(i+perDay, len(fx.offers))])
	}
	for i := len(days) - 1; i >= 0; i -= 2 {
		if err := st.InsertOffers(ctx, days[i][0].RunID, days[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(days) - 2; i >= 0; i -= 2 {
		if err := st.InsertOffers(ctx, days[i][0].RunID, days[i]); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// env returns a command environment whose config points at the fixture's database.
// handler returns gpucost serve's own HTTP handler on the fixture's store.
func (fx *anFixture) handler(t *testing.T) http.Handler {
	t.Helper()
	e, _, _ := fx.env()
	cfg, err := config.Load("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(cfg, e, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.close)
	return srv.handler()
}

func (fx *anFixture) env() (env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "GPUCOST_CLICKHOUSE_DSN" {
			return fx.dsn
		}
		return ""
	}}, &stdout, &stderr
}

// handHistory computes the history of model in [from, to) by interval from the generated
// offers, as docs/analysts.md defines it: per bucket, provider and price type. The average is
// the exact mean rounded half up to 6 decimals, as store.History computes it on every server
// version.
func (fx *anFixture) handHistory(model string, providers []string, interval schema.Interval, from, to time.Time) []handPoint {
	type key struct {
		bucket   time.Time
		provider string
		pt       schema.PriceType
	}
	prices := map[key][]decimal.Decimal{}
	offers := map[key]map[string]bool{}
	for _, o := range fx.offers {
		if o.GPUModel != model || (len(providers) > 0 && !slices.Contains(providers, o.Provider)) {
			continue
		}
		b := handBucket(interval, o.ObservedAt)
		if b.Before(handBucket(interval, from)) || !b.Before(to) {
			continue
		}
		k := key{b, o.Provider, o.PriceType}
		prices[k] = append(prices[k], o.PriceUSDPerGPUHour)
		if offers[k] == nil {
			offers[k] = map[string]bool{}
		}
		offers[k][o.OfferID] = true
	}
	var out []handPoint
	for k, ps := range prices {
		sort.Slice(ps, func(i, j int) bool { return ps[i].LessThan(ps[j]) })
		sum := decimal.Zero
		for _, p := range ps {
			sum = sum.Add(p)
		}
		n := len(ps)
		out = append(out, handPoint{schema.HistoryPoint{Bucket: k.bucket, Provider: k.provider, GPUModel: model, PriceType: k.pt,
			Min: ps[0], Max: ps[n-1], Avg: sum.DivRound(decimal.NewFromInt(int64(n)), 6), // the mean, rounded half up
			Median:       ps[(n-1)/2], // the lower middle value
			Observations: uint64(n), Offers: uint64(len(offers[k]))}, ps[n/2]})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].HistoryPoint, out[j].HistoryPoint
		if !a.Bucket.Equal(b.Bucket) {
			return a.Bucket.Before(b.Bucket)
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		return a.PriceType < b.PriceType
	})
	return out
}

// handPoint is a hand-computed history point; its Median is the lower middle value and
// MedianHi the upper one (equal for an odd count).
type handPoint struct {
	schema.HistoryPoint
	MedianHi decimal.Decimal
}

// handBucket is the start of t's bucket, computed without the store's helper: hours, UTC days,
// and weeks from Monday.
func handBucket(i schema.Interval, t time.Time) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch i {
	case schema.Hour:
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, time.UTC)
	case schema.Week:
		for day.Weekday() != time.Monday {
			day = day.AddDate(0, 0, -1)
		}
		return day
	}
	return day
}

// historyMatches compares a history to the hand computation: exact for everything but the
// median, a t-digest estimate that must lie between the two middle values.
func historyMatches(t *testing.T, hand []handPoint, got []schema.HistoryPoint) {
	t.Helper()
	if len(hand) == 0 {
		t.Fatal("the hand computation selected nothing: the test is wrong")
	}
	want := make([]schema.HistoryPoint, len(hand))
	for i, h := range hand {
		want[i] = h.HistoryPoint
	}
	opts := cmp.Options{
		cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) }),
		cmp.Transformer("median", func(p schema.HistoryPoint) schema.HistoryPoint {
			p.Median = decimal.Zero
			return p
		}),
	}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("history (-hand +got):\n%s", diff)
		return
	}
	for i, p := range got {
		lo, hi := hand[i].Median, hand[i].MedianHi
		if p.Median.LessThan(lo) || p.Median.GreaterThan(hi) {
			t.Errorf("%s %s %s: median %s is not between the middle values %s and %s", p.Bucket, p.Provider, p.PriceType, p.Median, lo, hi)
		}
	}
}

// sortNewestFirst orders changes as the store returns them: newest first, then by provider,
// price type and offer id.
func sortNewestFirst(changes []schema.PriceChange) {
	sort.SliceStable(changes, func(i, j int) bool {
		a, b := changes[i], changes[j]
		if !a.ChangedAt.Equal(b.ChangedAt) {
			return a.ChangedAt.After(b.ChangedAt)
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.PriceType != b.PriceType {
			return a.PriceType < b.PriceType
		}
		return a.OfferID < b.OfferID
	})
}
