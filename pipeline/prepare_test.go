package pipeline_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

// TestPrepareIsARunsNormalizeAndValidate hands the same offers to a run (dry) and to Prepare:
// Prepare keeps what the run keeps, normalized and flagged alike, and rejects the rest for the
// run's reasons.
func TestPrepareIsARunsNormalizeAndValidate(t *testing.T) {
	noType := offer("notype", "H100-SXM-80GB", 1, "1")
	noType.PriceType = "hourly"
	noVRAM := offer("novram", "", 1, "1")
	noVRAM.VRAMGB = 0
	perHourOnly := offer("perhour", "H100-SXM-80GB", 4, "0")
	perHourOnly.PriceUSDPerHour = decimal.RequireFromString("10.0000004")
	offers := []schema.Offer{
		offer("ok", "H100-SXM-80GB", 8, "2.5"),
		rawGPU("snapped", "H100 SXM", 85.52), // Vast's 81559 MiB
		rawGPU("missing", "H100 (80 GB SXM5)", 0),
		rawGPU("unknown", "H1000", 80),
		perHourOnly,
		offer("free", "H100-SXM-80GB", 1, "0"),
		offer("absurd", "H100-SXM-80GB", 1, "250"),
		offer("nogpus", "H100-SXM-80GB", 0, "1"),
		offer("", "H100-SXM-80GB", 1, "1"),
		noType,
		noVRAM,
	}
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	cfg := pipeline.Config{MaxPricePerGPUHour: decimal.NewFromInt(200)}
	r := newRunner(t, cfg, nil, pipeline.Options{DryRun: true, RunID: "run-1", Now: func() time.Time { return now }}, returning("p", offers...))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	var kept []schema.Offer
	rejected := map[string]int{}
	for _, o := range offers {
		o.RunID, o.ObservedAt, o.Provider = "run-1", now, "p"
		if reason := pipeline.Prepare(cfg, &o); reason != "" {
			rejected[reason]++
			continue
		}
		kept = append(kept, o)
	}
	if diff := cmp.Diff(rep.Batches[0].Offers, kept, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("offers kept (-run +Prepare):\n%s", diff)
	}
	if diff := cmp.Diff(rep.Providers[0].Rejected, rejected); diff != "" {
		t.Errorf("rejected (-run +Prepare):\n%s", diff)
	}
	if len(kept) != 5 || len(rejected) != 6 {
		t.Errorf("Prepare kept %d offers and rejected for %d reasons, want 5 and 6", len(kept), len(rejected))
	}
}

// TestPrepareStampsNothing: an offer keeps its own run, time and provider.
func TestPrepareStampsNothing(t *testing.T) {
	at := time.Date(2025, 11, 3, 0, 0, 0, 0, time.UTC)
	o := offer("a", "H100-SXM-80GB", 8, "2.5")
	o.RunID, o.ObservedAt, o.Provider = "import-1", at, "aws"
	if reason := pipeline.Prepare(pipeline.Config{}, &o); reason != "" {
		t.Fatalf("rejected: %s", reason)
	}
	if o.RunID != "import-1" || !o.ObservedAt.Equal(at) || o.Provider != "aws" {
		t.Errorf("Prepare stamped the offer: %s %s %s", o.RunID, o.ObservedAt, o.Provider)
	}
	o = offer("b", "H100-SXM-80GB", 1, "250")
	if reason := pipeline.Prepare(pipeline.Config{}, &o); reason != pipeline.RejectAbsurdPrice {
		t.Errorf("a zero MaxPricePerGPUHour takes the run's default: reason %q, want %q", reason, pipeline.RejectAbsurdPrice)
	}
}
