package report_test

import (
	"fmt"
	"os"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
)

// Build a report from a plan and the price history, and print one team's summary as CSV.
func ExampleBuild() {
	now := time.Date(2025, 11, 29, 13, 0, 0, 0, time.UTC)
	workloads, err := optimizer.ParseWorkloads("workloads.yaml", []byte(`
teams:
  - name: search
    email: search-ml@example.com
    workloads:
      - name: chat-7b
        kind: inference
        params_b: 7
        precision: fp16
        context_tokens: 4096
        concurrency: 8
        current: {provider: runpod, gpu_model: A100-SXM-80GB}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	offer := func(provider, model string, vram float64, price string) schema.Offer {
		p := decimal.RequireFromString(price)
		return schema.Offer{ObservedAt: now.Add(-time.Hour), Provider: provider, Tier: schema.TierSecure, OfferID: model, GPUModel: model, GPUCount: 1,
			VRAMGB: vram, PriceType: schema.OnDemand, PriceUSDPerHour: p, PriceUSDPerGPUHour: p,
			IntraNode: schema.IntraPCIe, InterNode: schema.InterNone}
	}
	offers := []schema.Offer{offer("runpod", "A100-SXM-80GB", 80, "1.39"), offer("runpod", "RTX-4090-24GB", 24, "0.34")}
	plan, err := optimizer.Optimize(optimizer.Input{Now: now, Workloads: workloads, Offers: offers}, optimizer.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	// A week ago the RTX 4090 cost $0.39 an hour at runpod.
	history := []schema.HistoryPoint{{Bucket: now.AddDate(0, 0, -7), Provider: "runpod", GPUModel: "RTX-4090-24GB",
		PriceType: schema.OnDemand, Min: decimal.RequireFromString("0.39")}}
	r, err := report.Build(report.Input{Plan: plan, Offers: offers, History: history}, report.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	team := r.Teams[0]
	fmt.Println(r.Week.ID, team.Name, "saves", team.Totals.SavingsUSDPerMonth, "a month")
	fmt.Println(team.Workloads[0].Why)
	for _, m := range team.Market.Moves {
		fmt.Println("move:", m.GPUModel, m.Provider, m.ChangePercent.String()+"%")
	}
	if err := report.WriteCSV(os.Stdout, r); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2025-W48 search saves 766.5 a month
	// RTX-4090-24GB ×1 holds the 21.7 GB it needs at fp16 for $0.34/h, against $1.39/h for A100-SXM-80GB ×1 at runpod: $0.216 per 1M output tokens against $0.436
	// move: RTX-4090-24GB runpod -12.8%
	// week,team,team_email,workload,kind,status,current_provider,current_region,current_gpu_model,current_gpu_count,current_price_type,current_price_source,current_usd_per_hour,current_hours_per_month,current_usd_per_month,recommended_provider,recommended_region,recommended_gpu_model,recommended_gpu_count,recommended_nodes,recommended_price_type,recommended_precision,recommended_usd_per_hour,recommended_hours_per_month,recommended_usd_per_month,savings_usd_per_month,savings_percent,why
	// 2025-W48,search,search-ml@example.com,chat-7b,inference,ok,runpod,,A100-SXM-80GB,1,on_demand,market,1.39,730,1014.7,runpod,,RTX-4090-24GB,1,1,on_demand,fp16,0.34,730,248.2,766.5,75.5,"RTX-4090-24GB ×1 holds the 21.7 GB it needs at fp16 for $0.34/h, against $1.39/h for A100-SXM-80GB ×1 at runpod: $0.216 per 1M output tokens against $0.436"
}

// Weeks are ISO weeks starting on Monday, UTC; a date names the week it falls in.
func ExampleParseWeek() {
	for _, s := range []string{"2025-W48", "2025-11-30", "2021-01-01"} {
		w, err := report.ParseWeek(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s, "→", w.ID, w.Start.Format("Mon 2006-01-02"))
	}
	// Output:
	// 2025-W48 → 2025-W48 Mon 2025-11-24
	// 2025-11-30 → 2025-W48 Mon 2025-11-24
	// 2021-01-01 → 2020-W53 Mon 2020-12-28
}
