package store_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// openLatestMarket returns a store on a fresh database holding a generated market of n offers
// (the latest-market benchmark's generator: many providers and models, tied prices, older
// versions, stale and imported offers), on the benchmark's clock.
func openLatestMarket(t *testing.T, n int) *store.Store {
	t.Helper()
	s := storetest.Open(t)
	ctx := context.Background()
	if err := generateBenchLatest(ctx, storetest.Conn(t, storetest.DatabaseDSN(t, s.Database())), n); err != nil {
		t.Fatal(err)
	}
	at, err := store.Open(ctx, storetest.DatabaseDSN(t, s.Database()), store.Options{Now: func() time.Time { return benchLatestNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { at.Close() })
	return at
}

// latestFilters are the filters of the latest-market tests: the default view and each filter.
func latestFilters() map[string]schema.OfferFilter {
	return map[string]schema.OfferFilter{
		"all":          {},
		"max age 6h":   {MaxAge: 6 * time.Hour},
		"planning":     {MaxAge: 8 * 24 * time.Hour, ExpiredWithin: 7 * 24 * time.Hour},
		"gpu":          {Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB", "RTX-4090-24GB"}}, MaxAge: 6 * time.Hour},
		"provider":     {Selection: schema.Selection{Providers: []string{"runpod", "vastai"}}},
		"price type":   {Selection: schema.Selection{PriceTypes: []schema.PriceType{schema.Spot}}, MaxAge: 24 * time.Hour},
		"min vram":     {MinVRAMGB: 80, MaxAge: 6 * time.Hour},
		"interconnect": {MinIntraNode: schema.IntraNVLink},
		"nothing":      {Selection: schema.Selection{Providers: []string{"nobody"}}},
		// A text no literal of the query may break out of, next to one that matches.
		"quoted gpu": {Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB", `it's "80GB" \' ü`}}},
		// The filters of gpucost offers, on the newest version of each offer: the generated market
		// holds older versions at other prices.
		"gpu specs": {GPUs: []schema.GPUSpec{{Models: []string{"H100-PCIE-80GB", "H100-SXM-80GB"}, MinCount: 2}, {MinVRAMGB: 90, MaxVRAMGB: 150}},
			MaxAge: 6 * time.Hour},
		"max price":    {MaxUSDPerGPUHour: decimal.RequireFromString("0.75"), MaxAge: 24 * time.Hour},
		"regions":      {Regions: []string{"us", "eu-west-1", `it's`}},
		"countries":    {Countries: []string{"DE", "JP"}, MaxAge: 6 * time.Hour},
		"host":         {MinVCPUs: 16, MinRAMGB: 128},
		"catalog GPUs": {KnownGPUs: true, MaxAge: 6 * time.Hour},
		"every filter": {GPUs: []schema.GPUSpec{{MaxCount: 4}}, MaxUSDPerGPUHour: decimal.RequireFromString("3"), Regions: []string{"us"}, Countries: []string{"US"}, MinVCPUs: 8, MinRAMGB: 64, KnownGPUs: true},
	}
}

// TestLatestOffersOrderInGoIsTheServers: without a limit the latest market is put in order in
// Go; with one, the server orders it. Both give the same offers in the same order, ties of
// price (many in the generated market) included.
func TestLatestOffersOrderInGoIsTheServers(t *testing.T) {
	s := openLatestMarket(t, 20_000)
	ctx := context.Background()
	for name, f := range latestFilters() {
		t.Run(name, func(t *testing.T) {
			inGo, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			f.Limit = 1_000_000
			onServer, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if name != "nothing" && len(inGo) == 0 {
				t.Fatal("no offers")
			}
			if diff := cmp.Diff(onServer, inGo, cmpOffers); diff != "" {
				t.Errorf("ordered in Go (+) and on the server (-):\n%s", diff)
			}
		})
	}
}

// TestLatestOffersToPlan: the offers planning reads are LatestOffers' with the columns it does
// not read left zero, in any order: the columnar read (on current servers) gives what the
// driver's rows give.
func TestLatestOffersToPlan(t *testing.T) {
	generated := openLatestMarket(t, 20_000)
	ctx := context.Background()
	// Blocks of at most 700 rows: the columnar read meets many dictionaries (a
	// market of 20k offers is needed for them to differ).
	dsn, err := url.Parse(storetest.DatabaseDSN(t, generated.Database()))
	if err != nil {
		t.Fatal(err)
	}
	q := dsn.Query()
	q.Set("max_block_size", "700")
	dsn.RawQuery = q.Encode()
	s, err := store.Open(ctx, dsn.String(), store.Options{Now: func() time.Time { return benchLatestNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for name, f := range latestFilters() {
		t.Run(name, func(t *testing.T) {
			all, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for i := range all {
				o := &all[i]
				o.RunID, o.SourceURL, o.GPUNameRaw, o.Stock, o.DQFlags = "", "", "", "", nil
				o.VCPUs, o.RAMGB, o.DiskGB, o.NVLinkGbps = nil, nil, nil, nil
			}
			got, err := s.LatestOffersToPlan(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			byKey := func(a, b schema.Offer) int {
				return strings.Compare(a.Provider+"\x00"+string(a.PriceType)+"\x00"+a.OfferID, b.Provider+"\x00"+string(b.PriceType)+"\x00"+b.OfferID)
			}
			slices.SortFunc(all, byKey)
			slices.SortFunc(got, byKey)
			if diff := cmp.Diff(all, got, cmpOffers); diff != "" {
				t.Errorf("LatestOffersToPlan (-LatestOffers without the columns +got):\n%s", diff)
			}
		})
	}
}

// TestColumnarReadOnTheServersItSpeaks: planning reads the market as columns on exactly the
// servers the columnar client speaks (all but 18.16), and there it reads every offer.
func TestColumnarReadOnTheServersItSpeaks(t *testing.T) {
	s := openLatestMarket(t, 2_000)
	ctx := context.Background()
	f := latestFilters()["planning"]
	want, err := s.LatestOffers(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	n, err := store.ReadPlanOffersColumnar(ctx, s, f)
	switch {
	case store.ReadsColumnar(s) && err != nil:
		t.Fatalf("ClickHouse %s: the columnar read, used on this server, fails: %v", s.ServerVersion(), err)
	case store.ReadsColumnar(s) && n != len(want):
		t.Fatalf("ClickHouse %s: the columnar read got %d offers, LatestOffers %d", s.ServerVersion(), n, len(want))
	case !store.ReadsColumnar(s) && err == nil:
		t.Fatalf("ClickHouse %s: the columnar read works on this server, where planning reads rows", s.ServerVersion())
	}
}

// TestLatestPerGPUIsPerGPUOfLatestOffers: the per-model summaries computed on the server are
// those market.PerGPU makes of the whole latest market, for every filter.
func TestLatestPerGPUIsPerGPUOfLatestOffers(t *testing.T) {
	s := openLatestMarket(t, 20_000)
	ctx := context.Background()
	for name, f := range latestFilters() {
		t.Run(name, func(t *testing.T) {
			offers, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			want := market.PerGPU(offers)
			got, err := s.LatestPerGPU(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if name != "nothing" && len(want) == 0 {
				t.Fatal("no GPU models")
			}
			if diff := cmp.Diff(want, got, cmpOffers); diff != "" {
				t.Errorf("LatestPerGPU (-PerGPU of LatestOffers +got):\n%s", diff)
			}
		})
	}
}

// TestLatestOffersInPages: the market read in pages, each starting after the last offer of the
// one before (OfferFilter.After), is the market read at once, every offer once and in order:
// ties of price and older versions not yet merged away (both in the generated market) included.
func TestLatestOffersInPages(t *testing.T) {
	s := openLatestMarket(t, 20_000)
	ctx := context.Background()
	for name, f := range latestFilters() {
		t.Run(name, func(t *testing.T) {
			whole, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			var paged []schema.Offer
			f.Limit = 997
			for pages := 0; ; pages++ {
				if pages > len(whole)/f.Limit+1 {
					t.Fatalf("more than %d pages of %d offers", pages, f.Limit)
				}
				page, err := s.LatestOffers(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page...)
				if len(page) < f.Limit {
					break
				}
				after := page[len(page)-1].Position()
				f.After = &after
			}
			if name == "all" && len(whole) < 10*f.Limit {
				t.Fatalf("%d offers: not many pages", len(whole))
			}
			if diff := cmp.Diff(whole, paged, cmpOffers); diff != "" {
				t.Errorf("read at once (-) and in pages (+):\n%s", diff)
			}
		})
	}
}

// TestLatestSummariesAreSummariesOfLatestOffers: the summaries per group computed on the server
// are those market.Summaries makes of the whole latest market, for every filter and grouping.
func TestLatestSummariesAreSummariesOfLatestOffers(t *testing.T) {
	s := openLatestMarket(t, 20_000)
	ctx := context.Background()
	groupings := [][]market.Dimension{{market.ByGPU}, {market.ByProvider, market.ByCount}, {market.ByCount, market.ByGPU, market.ByProvider}, nil}
	for name, f := range latestFilters() {
		t.Run(name, func(t *testing.T) {
			offers, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, by := range groupings {
				want := market.Summaries(offers, by)
				got, err := s.LatestSummaries(ctx, f, by)
				if err != nil {
					t.Fatal(err)
				}
				if name != "nothing" && len(want) == 0 {
					t.Fatalf("by %v: no groups", by)
				}
				if diff := cmp.Diff(want, got, cmpOffers); diff != "" {
					t.Errorf("by %v: LatestSummaries (-Summaries of LatestOffers +got):\n%s", by, diff)
				}
			}
		})
	}
}

// TestLatestOffersSortedInGoIsTheServers: each order of the latest offers is the same whether Go
// puts the market in it (no limit) or the server does (to cut at a limit).
func TestLatestOffersSortedInGoIsTheServers(t *testing.T) {
	s := openLatestMarket(t, 20_000)
	ctx := context.Background()
	for _, order := range schema.OfferSorts {
		t.Run(string(order), func(t *testing.T) {
			f := schema.OfferFilter{Sort: order, MaxAge: 24 * time.Hour}
			inGo, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			f.Limit = 1_000_000
			onServer, err := s.LatestOffers(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(inGo) < 1000 {
				t.Fatalf("%d offers", len(inGo))
			}
			if diff := cmp.Diff(onServer, inGo, cmpOffers); diff != "" {
				t.Errorf("ordered in Go (+) and on the server (-):\n%s", diff)
			}
		})
	}
}
