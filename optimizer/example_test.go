package optimizer_test

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// Plan a 7B chat model that runs on a whole A100 today against three offers.
func ExampleOptimize() {
	file, err := optimizer.ParseWorkloads("workloads.yaml", []byte(`
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
	now := time.Date(2025, 11, 29, 13, 0, 0, 0, time.UTC)
	offer := func(provider string, tier schema.Tier, model string, vram float64, price string) schema.Offer {
		return schema.Offer{
			ObservedAt: now.Add(-time.Hour), Provider: provider, Tier: tier, OfferID: model, GPUModel: model,
			GPUCount: 1, VRAMGB: vram, PriceType: schema.OnDemand,
			PriceUSDPerHour: decimal.RequireFromString(price), PriceUSDPerGPUHour: decimal.RequireFromString(price),
			IntraNode: schema.IntraPCIe, InterNode: schema.InterNone,
		}
	}
	plan, err := optimizer.Optimize(optimizer.Input{
		Now:       now,
		Workloads: file,
		Offers: []schema.Offer{
			offer("runpod", schema.TierSecure, "A100-SXM-80GB", 80, "1.39"),
			offer("runpod", schema.TierSecure, "RTX-4090-24GB", 24, "0.34"),
			offer("vastai", schema.TierVerified, "RTX-3070-8GB", 8, "0.05"),
		},
	}, optimizer.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	w := plan.Teams[0].Workloads[0]
	fmt.Printf("needs %v GB on one GPU\n", w.Sizing[0].NeededGBOneGPU)
	fmt.Printf("current:     %s %s $%s/month\n", w.Current.Provider, w.Current.GPUModel, w.Current.CostUSDPerMonth)
	fmt.Printf("recommended: %s %s $%s/month\n", w.Recommended.Provider, w.Recommended.GPUModel, w.Recommended.CostUSDPerMonth)
	fmt.Printf("saves $%s/month (%s%%)\n", w.Savings.USDPerMonth, w.Savings.Percent)
	for _, r := range w.Rejected {
		fmt.Println("rejected:", r.Reason)
	}
	// Output:
	// needs 21.67 GB on one GPU
	// current:     runpod A100-SXM-80GB $1014.7/month
	// recommended: runpod RTX-4090-24GB $248.2/month
	// saves $766.5/month (75.5%)
	// rejected: RTX-3070-8GB ×1: 8 GB < 21.7 GB needed
}
