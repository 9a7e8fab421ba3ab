package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// optimizeJSON runs gpucost optimize --output json with the config file and decodes the plan's
// items, one per workload.
func optimizeJSON(t *testing.T, cfg string) []optimizer.PlanItem {
	t.Helper()
	code, out := runCLI("optimize", "--output", "json", "--config", cfg)
	if code != exitOK {
		t.Fatalf("optimize: exit %d\n%s", code, out)
	}
	return itemsOf[optimizer.PlanItem](t, []byte(stdoutOf(out)))
}

// TestOptimizeSampleOnSnapshot plans the shipped sample workloads on the shipped snapshot, loaded
// into the local ClickHouse, and checks every recommended line against the stored offers the
// way a reader would: the offer exists, at that price, for that GPU, and the monthly cost is
// the hourly price times the hours.
func TestOptimizeSampleOnSnapshot(t *testing.T) {
	x := newE2E(t, nil)
	cfg := x.writeConfig("optimize:\n  workloads: ../../plans/workloads.sample.yaml\n")
	if code, out := runCLI("scrape", "--replay", snapshotDir, "--config", cfg); code != exitOK {
		t.Fatalf("scrape: exit %d\n%s", code, out)
	}
	items := optimizeJSON(t, cfg)
	offers, err := x.store.LatestOffers(context.Background(), schema.OfferFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[schema.Key]schema.Offer{}
	for _, o := range offers {
		byKey[o.Key()] = o
	}
	checked := 0
	for _, w := range items {
		rec := w.Recommended
		if w.Status != string(optimizer.StatusOK) || rec == nil {
			if w.Reason == "" {
				t.Errorf("%s/%s: no recommendation and no reason", w.Team, w.Workload)
			}
			continue
		}
		o, ok := byKey[schema.Key{Provider: rec.Provider, OfferID: rec.OfferID, PriceType: rec.PriceType}]
		if !ok {
			t.Errorf("%s/%s: recommended offer %s/%s/%s is not in the store", w.Team, w.Workload, rec.Provider, rec.OfferID, rec.PriceType)
			continue
		}
		if o.GPUModel != rec.GPUModel || !o.PriceUSDPerGPUHour.Equal(rec.PriceUSDPerGPUHour) {
			t.Errorf("%s/%s: plan says %s at $%s/GPU-h, the offer is %s at $%s", w.Team, w.Workload, rec.GPUModel, rec.PriceUSDPerGPUHour, o.GPUModel, o.PriceUSDPerGPUHour)
		}
		if rec.GPUsPerNode != int(o.GPUCount) && rec.GPUsPerNode > int(o.GPUCount) {
			t.Errorf("%s/%s: %d GPUs per node on an offer of %d", w.Team, w.Workload, rec.GPUsPerNode, o.GPUCount)
		}
		perHour := o.PriceUSDPerGPUHour.Mul(decimal.NewFromInt(int64(rec.GPUCount)))
		if !perHour.Round(2).Equal(rec.PriceUSDPerHour.Round(2)) {
			t.Errorf("%s/%s: $%s/h for %d GPUs, want %s", w.Team, w.Workload, rec.PriceUSDPerHour, rec.GPUCount, perHour)
		}
		month := rec.PriceUSDPerHour.Mul(rec.HoursPerMonth).Round(2)
		if !month.Sub(rec.CostUSDPerMonth).Abs().LessThanOrEqual(decimal.New(1, -2)) {
			t.Errorf("%s/%s: $%s/month, but $%s/h × %s h = %s", w.Team, w.Workload, rec.CostUSDPerMonth, rec.PriceUSDPerHour, rec.HoursPerMonth, month)
		}
		if w.SavingsUSDPerMonth != nil && w.Current != nil && !w.Current.CostUSDPerMonth.Sub(rec.CostUSDPerMonth).Equal(*w.SavingsUSDPerMonth) {
			t.Errorf("%s/%s: savings %s ≠ %s − %s", w.Team, w.Workload, w.SavingsUSDPerMonth, w.Current.CostUSDPerMonth, rec.CostUSDPerMonth)
		}
		checked++
	}
	if checked < 6 {
		t.Errorf("only %d workloads got a recommendation; the sample should mostly fit the snapshot", checked)
	}
	// The plan is stored as the items' rows: what /api/v1/plans serves is what optimize printed.
	stored, err := x.store.LatestPlan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var printed []schema.PlanRow
	for _, w := range items {
		printed = append(printed, w.PlanRow)
	}
	byWorkload := func(a, b schema.PlanRow) int { return strings.Compare(a.Team+"/"+a.Workload, b.Team+"/"+b.Workload) }
	slices.SortFunc(printed, byWorkload)
	slices.SortFunc(stored, byWorkload)
	if diff := cmp.Diff(printed, stored, cmpDecimal, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("the stored plan and the rows of the items printed differ (-printed +stored):\n%s", diff)
	}
}

// TestOptimizeBadWorkloadsNamesTheLine needs no ClickHouse: the workloads file is read and
// checked before the store is opened.
func TestOptimizeBadWorkloadsNamesTheLine(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "teams.yaml")
	src := "teams:\n  - name: search\n    email: search@example.com\n    workloads:\n      - name: chat\n        kind: inferense\n        params_b: 7\n"
	if err := os.WriteFile(bad, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLIEnv(map[string]string{"GPUCOST_CLICKHOUSE_DSN": "clickhouse://127.0.0.1:1/none"}, "optimize", "--workloads", bad)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, out)
	}
	if !strings.Contains(out, bad+":6") || !strings.Contains(out, "inferense") {
		t.Errorf("error does not name the file, line and bad kind:\n%s", out)
	}
}
