package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
)

func TestParseWeek(t *testing.T) {
	monday := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		in      string
		want    report.Week
		wantErr string
	}{
		{"2025-W48", report.Week{ID: "2025-W48", Start: monday(2025, 11, 24), End: monday(2025, 12, 1)}, ""},
		{"2025-11-30", report.Week{ID: "2025-W48", Start: monday(2025, 11, 24), End: monday(2025, 12, 1)}, ""},
		{"2025-11-24", report.Week{ID: "2025-W48", Start: monday(2025, 11, 24), End: monday(2025, 12, 1)}, ""},
		{"2026-W01", report.Week{ID: "2026-W01", Start: monday(2025, 12, 29), End: monday(2026, 1, 5)}, ""},
		{"2021-01-01", report.Week{ID: "2020-W53", Start: monday(2020, 12, 28), End: monday(2021, 1, 4)}, ""},
		{"2020-W53", report.Week{ID: "2020-W53", Start: monday(2020, 12, 28), End: monday(2021, 1, 4)}, ""},
		{"2025-W53", report.Week{}, "2025 has no week 53"},
		{"2025-W00", report.Week{}, "1 to 53"},
		{"last week", report.Week{}, "want an ISO week"},
		{"2025-13-01", report.Week{}, "want an ISO week"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := report.ParseWeek(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseWeek(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	opts := report.DefaultOptions()
	bad := opts
	bad.HistoryWeeks = 0
	tests := []struct {
		name    string
		in      report.Input
		opts    report.Options
		wantErr string
	}{
		{"no plan", report.Input{}, opts, "no plan"},
		{"bad options", report.Input{Plan: &optimizer.Plan{GeneratedAt: fixtureNow}}, bad, "HistoryWeeks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := report.Build(tt.in, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestSampleReportContent checks the sample report's model where a golden file would hide a
// wrong number in a sea of right ones.
func TestSampleReportContent(t *testing.T) {
	r := MustSampleReport(t, fixtureNow)
	if r.Week.ID != "2025-W48" || !r.AsOf.Equal(fixtureNow) {
		t.Errorf("week %s as of %v, want 2025-W48 as of the plan time", r.Week.ID, r.AsOf)
	}
	if got := r.TeamNames(); !cmp.Equal(got, []string{"search", "support", "research", "creative"}) {
		t.Errorf("teams %v", got)
	}
	// The organisation's totals are the sum of the teams'.
	var cur, rec decimal.Decimal
	for _, tt := range r.Org.Teams {
		cur = cur.Add(tt.Totals.CurrentUSDPerMonth)
		rec = rec.Add(tt.Totals.RecommendedUSDPerMonth)
	}
	if !cur.Equal(r.Org.Totals.CurrentUSDPerMonth) || !rec.Equal(r.Org.Totals.RecommendedUSDPerMonth) {
		t.Errorf("org totals %s → %s, teams add up to %s → %s", r.Org.Totals.CurrentUSDPerMonth, r.Org.Totals.RecommendedUSDPerMonth, cur, rec)
	}
	search := r.Teams[0]
	chat := search.Workloads[0]
	if chat.Name != "chat-7b" || chat.Recommended.GPUModel != "RTX-3090-24GB" || !chat.Savings.USDPerMonth.Equal(decimal.RequireFromString("868.7")) {
		t.Errorf("chat-7b: %+v", chat)
	}
	// Per 1M output tokens at 8 sequences: the 3090 decodes 936 GB/s ÷ 18.43 GB = 50.8 tokens/s
	// each, 1.46M tokens an hour for $0.20; the A100 2,039 GB/s → 110.6, 3.19M for $1.39.
	if want := "RTX-3090-24GB ×1 holds the 21.7 GB it needs at fp16 for $0.20/h, against $1.39/h for A100-SXM-80GB ×1 at runpod: $0.137 per 1M output tokens against $0.436"; chat.Why != want {
		t.Errorf("chat-7b why = %q, want %q", chat.Why, want)
	}
	kinds := map[report.CaveatKind]int{}
	for _, c := range search.Caveats {
		kinds[c.Kind]++
	}
	if want := map[report.CaveatKind]int{report.CaveatSpot: 1, report.CaveatFailedProvider: 1, report.CaveatStaleProvider: 1}; !cmp.Equal(kinds, want) {
		t.Errorf("search caveats by kind = %v, want %v: %+v", kinds, want, search.Caveats)
	}
	// The market: H100 on-demand at runpod fell from 2.39 to 1.99 this week.
	var h100 *report.MarketPrice
	for i, p := range search.Market.Prices {
		if p.GPUModel == "H100-SXM-80GB" && p.Provider == "runpod" && p.PriceType == schema.OnDemand {
			h100 = &search.Market.Prices[i]
		}
	}
	if h100 == nil || h100.NowUSDPerGPUHour.String() != "1.99" || h100.WeekAgoUSDPerGPUHour.String() != "2.39" || h100.ChangePercent.String() != "-16.7" || !h100.Cheapest {
		t.Errorf("H100 at runpod: %+v", h100)
	}
	if len(search.Market.Moves) != report.DefaultOptions().MaxMoves || search.Market.Moves[0].ChangePercent.String() != "-22.2" {
		t.Errorf("moves: %+v", search.Market.Moves)
	}
	// Charts: one per recommended GPU model, a line per provider and price type.
	var models []string
	for _, c := range search.Charts {
		models = append(models, c.GPUModel)
	}
	if !cmp.Equal(models, []string{"RTX-3090-24GB", "GH200-96GB"}) {
		t.Errorf("chart models %v", models)
	}
	if c := search.Charts[0]; len(c.Series) != 2 || c.Series[0].Provider != "vastai" || c.Series[1].PriceType != schema.Spot ||
		len(c.Series[0].Points) < 50 || !c.From.Equal(time.Date(2025, 10, 4, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("chart %s: %d series from %v, first of %d points", c.ID, len(c.Series), c.From, len(c.Series[0].Points))
	}
}

func TestMarket(t *testing.T) {
	d := decimal.RequireFromString
	now := fixtureNow
	day := func(back int) time.Time { return time.Date(2025, 11, 29, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -back) }
	point := func(back int, provider string, pt schema.PriceType, price string) schema.HistoryPoint {
		return schema.HistoryPoint{Bucket: day(back), Provider: provider, GPUModel: "H100-SXM-80GB", PriceType: pt, Min: d(price)}
	}
	offer := func(provider, id string, pt schema.PriceType, price string, age time.Duration) schema.Offer {
		return schema.Offer{ObservedAt: now.Add(-age), Provider: provider, OfferID: id, GPUModel: "H100-SXM-80GB", GPUCount: 1,
			PriceType: pt, PriceUSDPerHour: d(price), PriceUSDPerGPUHour: d(price), Region: "r1"}
	}
	plan := &optimizer.Plan{GeneratedAt: now, Options: optimizer.DefaultOptions(), Teams: []optimizer.TeamPlan{{
		Name: "t", Email: "t@example.com", Workloads: []optimizer.WorkloadPlan{{Name: "w", Status: optimizer.StatusOK,
			Recommended: &optimizer.Placement{Provider: "a", GPUModel: "H100-SXM-80GB", GPUCount: 1, PriceType: schema.OnDemand, PriceSource: optimizer.PriceMarket}}},
	}}}
	type price struct {
		Provider  string
		PriceType schema.PriceType
		Now, Ago  string
		Cheapest  bool
	}
	tests := []struct {
		name        string
		offers      []schema.Offer
		history     []schema.HistoryPoint
		wantPrices  []price
		wantNew     []string // provider of each new cheapest offer, "*" marking a new leader
		wantMoves   int
		wantOfferID string // of the first new cheapest offer
	}{
		{
			name:   "new leader and a price cut",
			offers: []schema.Offer{offer("a", "a1", schema.OnDemand, "2.00", time.Hour), offer("b", "b1", schema.OnDemand, "2.10", time.Hour), offer("a", "a2", schema.Spot, "1.00", time.Hour)},
			history: []schema.HistoryPoint{
				point(7, "a", schema.OnDemand, "2.50"), point(7, "b", schema.OnDemand, "2.20"), point(7, "a", schema.Spot, "1.20"),
			},
			wantPrices: []price{{"a", schema.OnDemand, "2", "2.5", true}, {"b", schema.OnDemand, "2.1", "2.2", false}, {"a", schema.Spot, "1", "1.2", true}},
			wantNew:    []string{"*a", "a"},
			wantMoves:  3, wantOfferID: "a1",
		},
		{
			name:       "small cut by the same leader is not news",
			offers:     []schema.Offer{offer("a", "a1", schema.OnDemand, "2.45", time.Hour)},
			history:    []schema.HistoryPoint{point(7, "a", schema.OnDemand, "2.50")},
			wantPrices: []price{{"a", schema.OnDemand, "2.45", "2.5", true}},
			wantMoves:  1,
		},
		{
			name:       "week ago falls back to an earlier day; stale offers and commitments are left out",
			offers:     []schema.Offer{offer("a", "a1", schema.OnDemand, "2.00", time.Hour), offer("c", "c1", schema.OnDemand, "1.00", 30*time.Hour), offer("a", "a3", schema.Reserved, "0.50", time.Hour)},
			history:    []schema.HistoryPoint{point(9, "a", schema.OnDemand, "2.40"), point(6, "a", schema.OnDemand, "9.99"), point(12, "c", schema.OnDemand, "1.00")},
			wantPrices: []price{{"a", schema.OnDemand, "2", "2.4", true}},
			wantNew:    []string{"a"},
			wantMoves:  1, wantOfferID: "a1",
		},
		{
			// A published table observed three days ago and valid for a year is today's price,
			// as it is in the plan; one whose valid_until has passed is not.
			name: "an imported price holds until its valid_until",
			offers: func() []schema.Offer {
				table, expired := offer("aws", "t1", schema.OnDemand, "1.90", 72*time.Hour), offer("azure", "t2", schema.OnDemand, "1.80", 72*time.Hour)
				nextYear, yesterday := now.AddDate(1, 0, 0), now.Add(-24*time.Hour)
				table.ValidUntil, expired.ValidUntil = &nextYear, &yesterday
				return []schema.Offer{offer("a", "a1", schema.OnDemand, "2.00", time.Hour), table, expired}
			}(),
			history:     []schema.HistoryPoint{point(7, "a", schema.OnDemand, "2.00")},
			wantPrices:  []price{{"aws", schema.OnDemand, "1.9", "", true}, {"a", schema.OnDemand, "2", "2", false}},
			wantNew:     []string{"*aws"},
			wantOfferID: "t1",
		},
		{
			name:       "no offers given: now from the newest history day",
			history:    []schema.HistoryPoint{point(0, "a", schema.OnDemand, "2.00"), point(7, "a", schema.OnDemand, "2.00"), point(7, "b", schema.OnDemand, "1.50")},
			wantPrices: []price{{"a", schema.OnDemand, "2", "2", true}, {"b", schema.OnDemand, "", "1.5", false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := report.Input{Plan: plan, History: tt.history}
			if tt.offers != nil {
				in.Offers = tt.offers
			}
			r, err := report.Build(in, report.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			m := r.Teams[0].Market
			var got []price
			str := func(d *decimal.Decimal) string {
				if d == nil {
					return ""
				}
				return d.String()
			}
			for _, p := range m.Prices {
				got = append(got, price{p.Provider, p.PriceType, str(p.NowUSDPerGPUHour), str(p.WeekAgoUSDPerGPUHour), p.Cheapest})
			}
			if diff := cmp.Diff(tt.wantPrices, got); diff != "" {
				t.Errorf("prices (-want +got):\n%s", diff)
			}
			var gotNew []string
			for _, n := range m.NewCheapest {
				s := n.Provider
				if n.NewLeader {
					s = "*" + s
				}
				gotNew = append(gotNew, s)
			}
			if diff := cmp.Diff(tt.wantNew, gotNew); diff != "" {
				t.Errorf("new cheapest (-want +got):\n%s", diff)
			}
			if len(m.Moves) != tt.wantMoves {
				t.Errorf("%d moves, want %d", len(m.Moves), tt.wantMoves)
			}
			if tt.wantOfferID != "" && m.NewCheapest[0].OfferID != tt.wantOfferID {
				t.Errorf("new cheapest offer id %q, want %q", m.NewCheapest[0].OfferID, tt.wantOfferID)
			}
		})
	}
}

func TestCaveatsAndWhy(t *testing.T) {
	d := decimal.RequireFromString
	hoursRun, costRun := d("10"), d("25")
	curHours, curCost := d("20"), d("80")
	tests := []struct {
		name     string
		w        optimizer.WorkloadPlan
		wantWhy  string
		wantKind []report.CaveatKind
	}{
		{
			name:     "no fit",
			w:        optimizer.WorkloadPlan{Name: "big", Status: optimizer.StatusNoFit, Reason: "needs 2 TB on one node"},
			wantWhy:  "Nothing on the market fits: needs 2 TB on one node",
			wantKind: []report.CaveatKind{report.CaveatNoFit},
		},
		{
			name: "runs nowhere yet",
			w: optimizer.WorkloadPlan{Name: "new", Status: optimizer.StatusOK,
				Recommended: &optimizer.Placement{Provider: "runpod", GPUModel: "L4-24GB", GPUCount: 1, PriceType: schema.OnDemand, PriceUSDPerHour: d("0.43")}},
			wantWhy: "L4-24GB ×1; $0.43/h at runpod is the cheapest fitting offer today",
		},
		{
			name: "current not priced",
			w: optimizer.WorkloadPlan{Name: "odd", Status: optimizer.StatusOK,
				Current:     &optimizer.Placement{Provider: "acme", GPUModel: "A10-24GB", GPUCount: 1, PriceType: schema.OnDemand, PriceSource: optimizer.PriceNone},
				Recommended: &optimizer.Placement{Provider: "runpod", GPUModel: "L4-24GB", GPUCount: 1, PriceType: schema.OnDemand, PriceUSDPerHour: d("0.43")}},
			wantWhy:  "L4-24GB ×1; $0.43/h at runpod is the cheapest fitting offer today",
			wantKind: []report.CaveatKind{report.CaveatUnpriced},
		},
		{
			name: "already cheapest",
			w: optimizer.WorkloadPlan{Name: "ok", Status: optimizer.StatusOK,
				Current:     &optimizer.Placement{Provider: "runpod", GPUModel: "L4-24GB", GPUCount: 1, PriceType: schema.OnDemand, PriceSource: optimizer.PriceMarket},
				Recommended: &optimizer.Placement{Provider: "runpod", GPUModel: "L4-24GB", GPUCount: 1, PriceType: schema.OnDemand},
				Savings:     &optimizer.Savings{USDPerMonth: d("0")}},
			wantWhy: "Already on the cheapest fitting placement",
		},
		{
			name: "paid less than the market",
			w: optimizer.WorkloadPlan{Name: "deal", Status: optimizer.StatusOK,
				Current:     &optimizer.Placement{Provider: "lambda", GPUModel: "H100-SXM-80GB", GPUCount: 8, PriceType: schema.OnDemand, PriceSource: optimizer.PricePaid, PriceUSDPerHour: d("8")},
				Recommended: &optimizer.Placement{Provider: "runpod", GPUModel: "H100-SXM-80GB", GPUCount: 8, PriceType: schema.OnDemand, PriceUSDPerHour: d("15.92")},
				Savings:     &optimizer.Savings{USDPerMonth: d("-5781.6")}},
			wantWhy: "Today's price ($8.00/h) is below every fitting offer on the market ($15.92/h at runpod); keep it",
		},
		{
			name: "cost of a unit of work",
			w: optimizer.WorkloadPlan{Name: "images", Status: optimizer.StatusOK,
				Current: &optimizer.Placement{Provider: "lambda", GPUModel: "A100-SXM-80GB", GPUCount: 1, PriceType: schema.OnDemand, PriceSource: optimizer.PriceMarket,
					PriceUSDPerHour: d("1.79"), UnitCost: &optimizer.UnitCost{Unit: "image", USD: d("0.000342857")}},
				Recommended: &optimizer.Placement{Provider: "vastai", GPUModel: "H100-SXM-80GB", GPUCount: 1, PriceType: schema.OnDemand,
					PriceUSDPerHour: d("2.1"), UnitCost: &optimizer.UnitCost{Unit: "image", USD: d("0.0000741")}},
				Savings: &optimizer.Savings{USDPerMonth: d("80")}},
			wantWhy: "H100-SXM-80GB ×1 for $2.10/h, against $1.79/h for A100-SXM-80GB ×1 at lambda: $0.0000741 per image against $0.000343",
		},
		{
			name: "spot job with the optimizer's caveat",
			w: optimizer.WorkloadPlan{Name: "lora", Status: optimizer.StatusOK, Caveats: []string{"the current placement misses the deadline"},
				Current:     &optimizer.Placement{Provider: "vastai", GPUModel: "RTX-4090-24GB", GPUCount: 1, PriceType: schema.OnDemand, PriceSource: optimizer.PriceMarket, HoursPerRun: &curHours, CostUSDPerRun: &curCost},
				Recommended: &optimizer.Placement{Provider: "runpod", GPUModel: "H100-SXM-80GB", GPUCount: 1, PriceType: schema.Spot, HoursPerRun: &hoursRun, CostUSDPerRun: &costRun},
				Savings:     &optimizer.Savings{USDPerMonth: d("55")}},
			wantWhy:  "On H100-SXM-80GB ×1 a run takes 10 h and costs $25.00, against 20 h and $80.00 on RTX-4090-24GB ×1 at vastai (spot: can be interrupted)",
			wantKind: []report.CaveatKind{report.CaveatSpot, report.CaveatPlan},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := &optimizer.Plan{GeneratedAt: fixtureNow, Options: optimizer.DefaultOptions(),
				Teams: []optimizer.TeamPlan{{Name: "t", Email: "t@example.com", Workloads: []optimizer.WorkloadPlan{tt.w}}}}
			r, err := report.Build(report.Input{Plan: plan}, report.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Teams[0].Workloads[0].Why; got != tt.wantWhy {
				t.Errorf("why = %q\nwant  %q", got, tt.wantWhy)
			}
			var kinds []report.CaveatKind
			for _, c := range r.Teams[0].Caveats {
				kinds = append(kinds, c.Kind)
			}
			if diff := cmp.Diff(tt.wantKind, kinds); diff != "" {
				t.Errorf("caveat kinds (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPastWeek reports a week that ended before the plan: the market and charts end with
// that week.
func TestPastWeek(t *testing.T) {
	offers := MustOffers(t)
	last, good := fixtureRuns()
	r, err := report.Build(report.Input{
		Plan: MustSamplePlan(t, offers, good), Week: time.Date(2025, 11, 12, 0, 0, 0, 0, time.UTC),
		History: fixtureHistory(offers), Runs: last, GoodRuns: good,
	}, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if r.Week.ID != "2025-W46" || !r.AsOf.Equal(time.Date(2025, 11, 16, 23, 59, 59, 0, time.UTC)) {
		t.Errorf("week %s as of %v", r.Week.ID, r.AsOf)
	}
	for _, c := range r.Teams[0].Charts {
		for _, s := range c.Series {
			if last := s.Points[len(s.Points)-1].Day; last.After(r.AsOf) {
				t.Errorf("chart %s has a point on %v, after the week", c.ID, last)
			}
		}
	}
}

// TestLongTextCapped checks that scraped text cannot blow up a report: names are capped at 80
// characters, sentences at 300, with an ellipsis.
func TestLongTextCapped(t *testing.T) {
	long := strings.Repeat("x", 5000)
	plan := &optimizer.Plan{GeneratedAt: fixtureNow, Options: optimizer.DefaultOptions(), Teams: []optimizer.TeamPlan{{
		Name: "t", Email: "t@example.com", Workloads: []optimizer.WorkloadPlan{{Name: "w", Status: optimizer.StatusNoFit, Reason: long,
			Current: &optimizer.Placement{Provider: long, Region: "eu\n" + long, GPUModel: "A10-24GB", GPUCount: 1, PriceSource: optimizer.PriceNone}}},
	}}}
	r, err := report.Build(report.Input{Plan: plan, Runs: []schema.ScrapeRun{{Provider: "p", Status: schema.RunFailed, FinishedAt: fixtureNow, Error: long}}}, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	cur := r.Teams[0].Workloads[0].Current
	if n := len([]rune(cur.Provider)); n != 81 || !strings.HasSuffix(cur.Provider, "…") {
		t.Errorf("provider of %d runes: %.20q…", n, cur.Provider)
	}
	if !strings.HasPrefix(cur.Region, "eu x") || len([]rune(cur.Region)) != 81 {
		t.Errorf("region %.20q… (%d runes)", cur.Region, len([]rune(cur.Region)))
	}
	for _, c := range r.Teams[0].Caveats {
		if n := len([]rune(c.Message)); n > 80+300+200 {
			t.Errorf("caveat of %d runes: %.60q…", n, c.Message)
		}
	}
	if n := len([]rune(r.Providers[0].Error)); n != 301 {
		t.Errorf("provider error of %d runes, want 300 and an ellipsis", n)
	}
}

// TestImportedProviderLeftOut: a provider whose prices come from an imported table has no
// scrape runs; when the plan leaves it out for age, the report says why in the plan's words and
// shows no "last good run" it never had.
func TestImportedProviderLeftOut(t *testing.T) {
	observed := fixtureNow.Add(-72 * time.Hour)
	plan := &optimizer.Plan{GeneratedAt: fixtureNow, Options: optimizer.DefaultOptions(),
		ExcludedProviders: []optimizer.ExcludedProvider{{Provider: "aws", LastObserved: &observed, Reason: "newest price observed 3d ago, older than the 24h a price holds (max_offer_age_hours)"}},
		Teams:             []optimizer.TeamPlan{{Name: "t", Email: "t@example.com", Workloads: []optimizer.WorkloadPlan{{Name: "w", Status: optimizer.StatusNoFit, Reason: "x"}}}}}
	r, err := report.Build(report.Input{Plan: plan}, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Providers) != 1 || r.Providers[0].Provider != "aws" || !r.Providers[0].Excluded || r.Providers[0].LastGoodAt != nil {
		t.Errorf("providers %+v, want aws excluded with no last good run", r.Providers)
	}
	var said []string
	for _, c := range r.Teams[0].Caveats {
		said = append(said, c.Message)
	}
	if want := "aws: left out of this plan (newest price observed 3d ago, older than the 24h a price holds (max_offer_age_hours))"; !strings.Contains(strings.Join(said, "\n"), want) {
		t.Errorf("caveats %q, want %q", said, want)
	}
}

// TestProviderCaveatsWhereTheyConcern: a provider's problem is a caveat of the teams it
// concerns: those it runs or is recommended for, and those whose GPU models it lists (in the
// offers or the history); a provider whose prices the report has never seen concerns every team.
func TestProviderCaveatsWhereTheyConcern(t *testing.T) {
	d := decimal.RequireFromString
	now := fixtureNow.Add(-time.Hour)
	place := func(provider, gpu string) *optimizer.Placement {
		return &optimizer.Placement{Provider: provider, GPUModel: gpu, GPUCount: 1, GPUsPerNode: 1, Nodes: 1, PriceType: schema.OnDemand,
			PriceUSDPerHour: d("1"), PriceUSDPerGPUHour: d("1"), PriceSource: optimizer.PriceMarket, HoursPerMonth: d("730"), CostUSDPerMonth: d("730")}
	}
	team := func(name, provider, gpu string) optimizer.TeamPlan {
		return optimizer.TeamPlan{Name: name, Email: name + "@example.com", Workloads: []optimizer.WorkloadPlan{
			{Name: name + "-w", Status: optimizer.StatusOK, Current: place(provider, gpu), Recommended: place(provider, gpu), Savings: &optimizer.Savings{USDPerMonth: d("0")}}}}
	}
	plan := &optimizer.Plan{GeneratedAt: fixtureNow, Options: optimizer.DefaultOptions(), Teams: []optimizer.TeamPlan{
		team("cards", "vastai", "RTX-3090-24GB"), // lambda and tensordock list no RTX-3090
		team("h100s", "runpod", "H100-SXM-80GB"), // lambda lists H100s now, tensordock did a week ago
		team("lambdas", "lambda", "A10-24GB"),    // runs at lambda
	}}
	offer := func(provider, gpu string) schema.Offer {
		return schema.Offer{ObservedAt: now, Provider: provider, GPUModel: gpu, GPUCount: 1, PriceType: schema.OnDemand, PriceUSDPerHour: d("1"), PriceUSDPerGPUHour: d("1")}
	}
	var history []schema.HistoryPoint
	for day := 1; day <= 9; day++ {
		history = append(history, schema.HistoryPoint{Bucket: fixtureNow.AddDate(0, 0, -day).Truncate(24 * time.Hour), Provider: "tensordock",
			GPUModel: "H100-SXM-80GB", PriceType: schema.OnDemand, Min: d("1.5")})
	}
	ok := func(p string) schema.ScrapeRun {
		return schema.ScrapeRun{Provider: p, FinishedAt: now, Status: schema.RunOK}
	}
	r, err := report.Build(report.Input{Plan: plan,
		Offers:  []schema.Offer{offer("vastai", "RTX-3090-24GB"), offer("runpod", "H100-SXM-80GB"), offer("lambda", "H100-SXM-80GB"), offer("lambda", "A10-24GB")},
		History: history,
		Runs: []schema.ScrapeRun{ok("vastai"), ok("runpod"),
			{Provider: "lambda", FinishedAt: now, Status: schema.RunPartial, Error: "one page failed"},
			{Provider: "tensordock", FinishedAt: now, Status: schema.RunFailed, Error: "layout changed"},
			{Provider: "newcloud", FinishedAt: now, Status: schema.RunFailed, Error: "no offers found"}},
		GoodRuns: []schema.ScrapeRun{ok("vastai"), ok("runpod"), ok("lambda"), {Provider: "tensordock", FinishedAt: now.AddDate(0, 0, -3), Status: schema.RunOK}},
	}, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, tm := range r.Teams {
		got[tm.Name] = []string{}
		for _, c := range tm.Caveats {
			got[tm.Name] = append(got[tm.Name], string(c.Kind)+" "+c.Provider)
		}
	}
	want := map[string][]string{
		"cards":   {"stale_provider newcloud"},
		"h100s":   {"failed_provider lambda", "stale_provider newcloud", "stale_provider tensordock"},
		"lambdas": {"failed_provider lambda", "stale_provider newcloud"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("provider caveats per team (-want +got):\n%s", diff)
	}
}
