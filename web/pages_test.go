package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// getEnvelope GETs path from ts and reads the answer as an envelope of T, failing on anything
// but a 200.
func getEnvelope[T any](t *testing.T, ts *httptest.Server, path string) export.Envelope[T] {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	var env export.Envelope[T]
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return env
}

// walk reads every page of a paged answer, from first, following next; it fails when the pages
// do not end.
func walk[T any](t *testing.T, ts *httptest.Server, first string, maxPages int) (items []T, pages []export.Envelope[T]) {
	t.Helper()
	path := first
	for {
		if len(pages) == maxPages {
			t.Fatalf("more than %d pages from %s", maxPages, first)
		}
		page := getEnvelope[T](t, ts, path)
		pages = append(pages, page)
		items = append(items, page.Items...)
		if page.Truncated != (page.Next != "") {
			t.Fatalf("page %d: truncated %v but next %q", len(pages), page.Truncated, page.Next)
		}
		if page.Next == "" {
			return items, pages
		}
		path = first[:len("/api/v1/")] + page.Schema.Resource + "?cursor=" + url.QueryEscape(page.Next)
	}
}

// pagedMarket returns a store holding a market larger than one page of the API: n offers now,
// their prices tied in groups across providers, price types and offer ids, and for every
// tenth an older, cheaper observation two hours ago (a price change, and a version of the
// offer that is no longer the latest).
func pagedMarket(t *testing.T, n int) *store.Store {
	t.Helper()
	s := storetest.Open(t)
	now := time.Now().UTC().Truncate(time.Second)
	models := []string{"H100-SXM-80GB", "A100-SXM-80GB", "RTX-4090-24GB", "L40S-48GB"}
	providers := []string{"vastai", "runpod", "lambda", "verda", "tensordock"}
	var offers, older []schema.Offer
	for i := range n {
		p := decimal.New(int64(50+(i*7)%37*10), -2) // 37 prices, each shared by many offers
		o := schema.Offer{ObservedAt: now.Add(-time.Duration(i%60) * time.Minute), RunID: "paged", Provider: providers[i%len(providers)],
			OfferID: fmt.Sprintf("offer-%05d", (i*7919)%n), Tier: schema.TierSecure, GPUModel: models[i%len(models)], GPUNameRaw: "x", GPUCount: 1, VRAMGB: 80,
			PriceType: []schema.PriceType{schema.OnDemand, schema.Spot}[i/len(providers)%2], PriceUSDPerHour: p, PriceUSDPerGPUHour: p,
			IntraNode: schema.IntraPCIe, InterNode: schema.InterNone, Stock: schema.StockHigh}
		offers = append(offers, o)
		if i%10 == 0 {
			old := o
			old.ObservedAt, old.RunID = now.Add(-2*time.Hour), "older"
			old.PriceUSDPerGPUHour, old.PriceUSDPerHour = decimal.New(1, -2), decimal.New(1, -2)
			older = append(older, old)
		}
	}
	ctx := context.Background()
	if err := s.InsertOffers(ctx, "older", older); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertOffers(ctx, "paged", offers); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAPIPagesWalkTheMarket: the market in pages of the API, next after next, is the market
// read at once, every offer once and in order, ties of price and older observations included;
// a filter holds on every page; price changes page the same way, over the range the first
// page resolved.
func TestAPIPagesWalkTheMarket(t *testing.T) {
	const n = 2345
	s := pagedMarket(t, n)
	ts := httptest.NewServer(testHandler(t, s))
	defer ts.Close()
	ctx := context.Background()
	key := func(o schema.Offer) string {
		return o.PriceUSDPerGPUHour.StringFixed(2) + " " + o.Provider + " " + o.OfferID + " " + string(o.PriceType)
	}
	for _, tt := range []struct {
		name, query string
		f           schema.OfferFilter
		limit       int
	}{
		{"the whole market in pages of 1000", "limit=1000", schema.OfferFilter{MaxAge: 6 * time.Hour}, 1000},
		{"the H100's spot offers in pages of 37", "gpu=h100-sxm-80gb&price_type=spot&limit=37",
			schema.OfferFilter{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}, PriceTypes: []schema.PriceType{schema.Spot}}, MaxAge: 6 * time.Hour}, 37},
	} {
		t.Run(tt.name, func(t *testing.T) {
			whole, err := s.LatestOffers(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if tt.name == "the whole market in pages of 1000" && len(whole) != n {
				t.Fatalf("the market holds %d offers, want %d", len(whole), n)
			}
			items, pages := walk[schema.Offer](t, ts, "/api/v1/offers?"+tt.query, 100)
			var want, got []string
			for _, o := range whole {
				want = append(want, key(o))
			}
			for _, o := range items {
				got = append(got, key(o))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("read at once (-) and in pages of the API (+):\n%s", diff)
			}
			if wantPages := (len(whole) + tt.limit - 1) / tt.limit; len(pages) != wantPages || len(pages) < 3 {
				t.Errorf("%d offers in %d pages of %d, want %d pages", len(whole), len(pages), tt.limit, wantPages)
			}
			first := queryOf[export.OffersQuery](t, pages[0].Query)
			for i, p := range pages {
				if q := queryOf[export.OffersQuery](t, p.Query); !cmp.Equal(q, first) || (i < len(pages)-1 && len(p.Items) != tt.limit) {
					t.Errorf("page %d: %d offers, query %+v; want %d and the first page's %+v", i+1, len(p.Items), q, tt.limit, first)
				}
			}
		})
	}
	t.Run("a smaller limit on the way", func(t *testing.T) {
		first := getEnvelope[schema.Offer](t, ts, "/api/v1/offers?limit=10")
		second := getEnvelope[schema.Offer](t, ts, "/api/v1/offers?limit=3&cursor="+url.QueryEscape(first.Next))
		whole := getEnvelope[schema.Offer](t, ts, "/api/v1/offers?limit=13")
		if len(second.Items) != 3 || key(second.Items[2]) != key(whole.Items[12]) || queryOf[export.OffersQuery](t, second.Query).Limit != 3 {
			t.Errorf("ten, then three more: %d offers ending at %s, want the 13th, %s", len(second.Items), key(second.Items[len(second.Items)-1]), key(whole.Items[12]))
		}
	})
	t.Run("changes", func(t *testing.T) {
		items, pages := walk[schema.PriceChange](t, ts, "/api/v1/changes?since=1d&limit=50", 100)
		first := queryOf[export.ChangesQuery](t, pages[0].Query)
		whole, err := s.Changes(ctx, schema.ChangesQuery{From: first.Since, To: first.Until})
		if err != nil {
			t.Fatal(err)
		}
		if len(whole) != (n+9)/10 || len(pages) != (len(whole)+49)/50 {
			t.Fatalf("%d changes in %d pages, want one per tenth offer (%d) in pages of 50", len(whole), len(pages), (n+9)/10)
		}
		if diff := cmp.Diff(whole, items, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("read at once (-) and in pages of the API (+):\n%s", diff)
		}
		for i, p := range pages {
			if q := queryOf[export.ChangesQuery](t, p.Query); !cmp.Equal(q, first) || first.Until.Sub(first.Since) != 24*time.Hour {
				t.Errorf("page %d covers %s to %s, want the first page's day, %s to %s", i+1, q.Since, q.Until, first.Since, first.Until)
			}
		}
	})
}

// TestAPIPlans: /api/v1/plans serves the rows of the newest stored plan only, by team and
// workload, of the teams asked for; with no plan stored, an empty list.
func TestAPIPlans(t *testing.T) {
	s := storetest.Open(t)
	ts := httptest.NewServer(testHandler(t, s))
	defer ts.Close()
	if none := getEnvelope[schema.PlanRow](t, ts, "/api/v1/plans"); len(none.Items) != 0 || none.Schema.String() != "gpucost.plans/v1" {
		t.Errorf("no plan stored: %+v", none)
	}
	d := func(v string) *decimal.Decimal { x := decimal.RequireFromString(v); return &x }
	at := time.Date(2026, 11, 20, 2, 30, 0, 0, time.UTC)
	row := func(run string, at time.Time, team, workload, saving string) schema.PlanRow {
		return schema.PlanRow{RunID: run, GeneratedAt: at, Team: team, Workload: workload, Kind: "inference", Status: "ok", Reason: "cheapest fit",
			CurrentProvider: "lambda", CurrentGPUModel: "H100-SXM-80GB", CurrentGPUCount: 2, CurrentPriceType: schema.OnDemand, CurrentPriceSource: "market",
			CurrentUSDPerHour: d("6.58"), CurrentUSDPerMonth: d("4803.4"), RecProvider: "runpod", RecGPUModel: "H100-SXM-80GB", RecGPUCount: 2, RecNodes: 1,
			RecPriceType: schema.OnDemand, RecPrecision: "fp16", RecUSDPerHour: d("5.38"), RecHoursPerMonth: d("730"), RecUSDPerMonth: d("3927.4"),
			SavingsUSDPerMonth: d(saving), SavingsPercent: d("18.236909")}
	}
	ctx := context.Background()
	old := []schema.PlanRow{row("night-1", at, "search", "ranker", "100"), row("night-1", at, "gone", "old-job", "5")}
	newest := []schema.PlanRow{row("night-2", at.Add(24*time.Hour), "search", "ranker", "876"), row("night-2", at.Add(24*time.Hour), "research", "llama-70b", "1200.5"),
		row("night-2", at.Add(24*time.Hour), "search", "embedder", "0")}
	newest[2].Status, newest[2].Reason, newest[2].RecUSDPerMonth, newest[2].SavingsUSDPerMonth = "no_fit", "nothing has 4 TB in one node", nil, nil
	for _, p := range [][]schema.PlanRow{old, newest} {
		if err := s.InsertPlan(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	decEq := cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })
	for _, tt := range []struct {
		query string
		want  []schema.PlanRow
		teams []string
	}{
		{"", []schema.PlanRow{newest[1], newest[2], newest[0]}, []string{}}, // by team, then workload
		{"?team=search", []schema.PlanRow{newest[2], newest[0]}, []string{"search"}},
		{"?team=research,+search", []schema.PlanRow{newest[1], newest[2], newest[0]}, []string{"research", "search"}},
		{"?team=gone", nil, []string{"gone"}}, // only in an older plan
	} {
		got := getEnvelope[schema.PlanRow](t, ts, "/api/v1/plans"+tt.query)
		if diff := cmp.Diff(tt.want, got.Items, decEq, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.query, diff)
		}
		if q := queryOf[export.PlansQuery](t, got.Query); !cmp.Equal(q.Team, tt.teams) || got.Truncated || got.Next != "" {
			t.Errorf("%s: query %+v, truncated %v, next %q", tt.query, q, got.Truncated, got.Next)
		}
	}
}

// TestAPIGPUs: /api/v1/gpus serves the whole catalog, each model once with its purchase price
// where the catalog has one, without touching the store.
func TestAPIGPUs(t *testing.T) {
	ts := httptest.NewServer(testAnalytics(func(context.Context) (Reader, error) { return refusingStore{t}, nil }))
	defer ts.Close()
	got := getEnvelope[export.GPUListing](t, ts, "/api/v1/gpus")
	models := gpus.Models()
	if got.Schema.String() != "gpucost.gpus/v1" || len(got.Items) != len(models) || len(models) < 40 {
		t.Fatalf("%s with %d models, want the catalog's %d", got.Schema, len(got.Items), len(models))
	}
	priced := 0
	for i, l := range got.Items {
		if l.Name != models[i].Name || l.VRAMGB != models[i].VRAMGB || l.TFLOPS != models[i].TFLOPS {
			t.Errorf("item %d is %s (%g GB, %+v), want %s as the catalog has it", i, l.Name, l.VRAMGB, l.TFLOPS, models[i].Name)
		}
		p, ok := gpus.PurchaseOf(l.Name)
		if ok != (l.Purchase != nil) || (ok && !p.LowUSD.Equal(l.Purchase.LowUSD)) {
			t.Errorf("%s: purchase %+v, want %+v (%v)", l.Name, l.Purchase, p, ok)
		}
		if ok {
			priced++
		}
	}
	if priced == 0 {
		t.Error("no model has a purchase price")
	}
}
