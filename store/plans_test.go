package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

func TestPlansRoundTripAndOncePerRun(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 2, 30, 0, 0, time.UTC)
	d := func(v string) *decimal.Decimal { x := dec(v); return &x }
	full := schema.PlanRow{RunID: "p1", GeneratedAt: at, Team: "search", Workload: "llama-70b-serving", Kind: "inference", Status: "ok",
		Reason:          "cheapest fit: 2×H100-SXM-80GB «tensor parallel»",
		CurrentProvider: "lambda", CurrentGPUModel: "H100-SXM-80GB", CurrentGPUCount: 2, CurrentPriceType: schema.OnDemand, CurrentPriceSource: "market",
		CurrentUSDPerHour: d("6.58"), CurrentUSDPerMonth: d("4803.4"),
		RecProvider: "runpod", RecRegion: "US-TX-3", RecOfferID: "H100 SXM/secure", RecGPUModel: "H100-SXM-80GB", RecGPUCount: 2, RecNodes: 1,
		RecPriceType: schema.OnDemand, RecPrecision: "fp16", RecUSDPerHour: d("5.38"), RecHoursPerMonth: d("730"), RecUSDPerMonth: d("3927.4"),
		SavingsUSDPerMonth: d("876"), SavingsPercent: d("18.236909"), Alternatives: 3, RejectedModels: 7}
	noFit := schema.PlanRow{RunID: "p1", GeneratedAt: at, Team: "search", Workload: "giant", Kind: "custom", Status: "no_fit", Reason: "nothing has 4 TB in one node"}
	if err := s.InsertPlan(ctx, []schema.PlanRow{full, noFit}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertPlan(ctx, []schema.PlanRow{full, noFit}); err != nil { // a retried job
		t.Fatal(err)
	}
	got, err := s.LatestPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]schema.PlanRow{noFit, full}, got, cmpOffers); diff != "" {
		t.Errorf("latest plan (-want +got):\n%s", diff)
	}
	later := full
	later.RunID, later.GeneratedAt = "p2", at.Add(24*time.Hour)
	if err := s.InsertPlan(ctx, []schema.PlanRow{later}); err != nil {
		t.Fatal(err)
	}
	got, err = s.LatestPlan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].RunID != "p2" {
		t.Errorf("latest plan after a second run = %+v, want only p2", got)
	}
	// The plan as of a time is the newest made by then: what the weekly email compares with.
	for _, tc := range []struct {
		asOf time.Time
		want []schema.PlanRow
	}{
		{at.Add(-time.Second), nil},
		{at, []schema.PlanRow{noFit, full}},
		{later.GeneratedAt.Add(-time.Second), []schema.PlanRow{noFit, full}},
		{later.GeneratedAt, []schema.PlanRow{later}},
		{later.GeneratedAt.AddDate(0, 0, 7), []schema.PlanRow{later}},
	} {
		got, err := s.PlanAsOf(ctx, tc.asOf)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got, cmpOffers); diff != "" {
			t.Errorf("plan as of %s (-want +got):\n%s", tc.asOf, diff)
		}
	}
}
