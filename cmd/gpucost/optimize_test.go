package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// optimizeJSON runs gpucost optimize --output json with the config file and decodes its plan.
func optimizeJSON(t *testing.T, cfg string) optimizer.Plan {
	t.Helper()
	code, out := runCLI("optimize", "--output", "json", "--config", cfg)
	if code != exitOK {
		t.Fatalf("optimize: exit %d\n%s", code, out)
	}
	var plan optimizer.Plan
	if err := json.Unmarshal([]byte(stdoutOf(out)), &plan); err != nil {
		t.Fatalf("decoding the plan: %v\n%s", err, out)
	}
	return plan
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
	plan := optimizeJSON(t, cfg)
	offers, err := x.store.LatestOffers(context.Background(), schema.OfferFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[schema.Key]schema.Offer{}
	for _, o := range offers {
		byKey[o.Key()] = o
	}
	checked := 0
	for _, team := range plan.Teams {
		for _, w := range team.Workloads {
			rec := w.Recommended
			if w.Status != optimizer.StatusOK || rec == nil {
				if w.Reason == "" {
					t.Errorf("%s/%s: no recommendation and no reason", team.Name, w.Name)
				}
				continue
			}
			o, ok := byKey[schema.Key{Provider: rec.Provider, OfferID: rec.OfferID, PriceType: rec.PriceType}]
			if !ok {
				t.Errorf("%s/%s: recommended offer %s/%s/%s is not in the store", team.Name, w.Name, rec.Provider, rec.OfferID, rec.PriceType)
				continue
			}
			if o.GPUModel != rec.GPUModel || !o.PriceUSDPerGPUHour.Equal(rec.PriceUSDPerGPUHour) {
				t.Errorf("%s/%s: plan says %s at $%s/GPU-h, the offer is %s at $%s", team.Name, w.Name, rec.GPUModel, rec.PriceUSDPerGPUHour, o.GPUModel, o.PriceUSDPerGPUHour)
			}
			if rec.GPUsPerNode != int(o.GPUCount) && rec.GPUsPerNode > int(o.GPUCount) {
				t.Errorf("%s/%s: %d GPUs per node on an offer of %d", team.Name, w.Name, rec.GPUsPerNode, o.GPUCount)
			}
			perHour := o.PriceUSDPerGPUHour.Mul(decimal.NewFromInt(int64(rec.GPUCount)))
			if !perHour.Round(2).Equal(rec.PriceUSDPerHour.Round(2)) {
				t.Errorf("%s/%s: $%s/h for %d GPUs, want %s", team.Name, w.Name, rec.PriceUSDPerHour, rec.GPUCount, perHour)
			}
			month := rec.PriceUSDPerHour.Mul(rec.HoursPerMonth).Round(2)
			if !month.Sub(rec.CostUSDPerMonth).Abs().LessThanOrEqual(decimal.New(1, -2)) {
				t.Errorf("%s/%s: $%s/month, but $%s/h × %s h = %s", team.Name, w.Name, rec.CostUSDPerMonth, rec.PriceUSDPerHour, rec.HoursPerMonth, month)
			}
			if w.Savings != nil && w.Current != nil && !w.Current.CostUSDPerMonth.Sub(rec.CostUSDPerMonth).Equal(w.Savings.USDPerMonth) {
				t.Errorf("%s/%s: savings %s ≠ %s − %s", team.Name, w.Name, w.Savings.USDPerMonth, w.Current.CostUSDPerMonth, rec.CostUSDPerMonth)
			}
			checked++
		}
	}
	if checked < 6 {
		t.Errorf("only %d workloads got a recommendation; the sample should mostly fit the snapshot", checked)
	}
	if got := x.count("plans", ""); got != plan.Totals.Workloads {
		t.Errorf("plans table holds %d rows, want one per workload (%d)", got, plan.Totals.Workloads)
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
