// Package market summarises the market now, the newest observation of every offer (the
// store's LatestOffers), per GPU model: what the cheapest offer of each price type asks, and how
// many offers and providers sell the model. The dashboard shows the cheapest on-demand, spot,
// commitment and serverless offers.
//
// `gpucost offers --group-by` summarises it per group of GPU model, provider and GPU count, in
// any combination (groups.go): the range of the prices per GPU-hour, the cheapest on-demand,
// spot, commitment and serverless prices side by side, and how many offers and providers.
//
// From the same summaries, Values computes what a dollar buys on each catalog GPU model at its
// cheapest price (value.go): dollars per dense TFLOP-hour at each precision and per TB/s of
// memory bandwidth per hour, ranked at one precision. `gpucost gpus --value`, the dashboard's
// Value section and /api/v1/value show them.
package market

import (
	"cmp"
	"slices"
	"time"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// GPU is one GPU model on the market.
type GPU struct {
	GPUModel string  // canonical catalog name
	VRAMGB   float64 // per GPU: the catalog's, else the first offer's
	// Cheapest holds the cheapest offer of each price type the model is sold at, cheapest
	// first, equal prices in the order the offers came: Cheapest[0] is the model's first offer
	// of a cheapest-first list.
	Cheapest  []schema.Offer
	Offers    int       // offers of the model
	Providers int       // distinct providers among them
	SeenAt    time.Time // the newest observed_at among them
}

// Of returns the cheapest offer of price type pt, or nil when the model is not sold at it.
func (g GPU) Of(pt schema.PriceType) *schema.Offer {
	for i := range g.Cheapest {
		if g.Cheapest[i].PriceType == pt {
			return &g.Cheapest[i]
		}
	}
	return nil
}

// OnDemand returns the cheapest on-demand offer, or nil.
func (g GPU) OnDemand() *schema.Offer { return g.Of(schema.OnDemand) }

// Spot returns the cheapest spot offer, or nil.
func (g GPU) Spot() *schema.Offer { return g.Of(schema.Spot) }

// Group is the market of one GPU model at one price type: its cheapest offer, how many offers
// it has, the providers among them and the newest observed_at.
type Group struct {
	Cheapest  schema.Offer
	Offers    int
	Providers []string // distinct
	SeenAt    time.Time
}

// PerGPU summarises offers, which come cheapest $/GPU-hour first (as LatestOffers returns
// them), per GPU model, in model order. Offers of GPUs not in the catalog (no gpu_model) are
// left out. It is the definition the store's LatestPerGPU computes on the server, without
// reading the market: its tests hold it to PerGPU, and stores in memory use PerGPU itself.
func PerGPU(offers []schema.Offer) []GPU {
	type key struct {
		model string
		pt    schema.PriceType
	}
	index := map[key]int{}
	providers := map[key]map[string]bool{}
	var groups []Group
	for i := range offers {
		o := &offers[i]
		if o.GPUModel == "" {
			continue
		}
		k := key{o.GPUModel, o.PriceType}
		j, ok := index[k]
		if !ok {
			j = len(groups)
			index[k] = j
			groups = append(groups, Group{Cheapest: *o})
			providers[k] = map[string]bool{}
		}
		g := &groups[j]
		g.Offers++
		if !providers[k][o.Provider] {
			providers[k][o.Provider] = true
			g.Providers = append(g.Providers, o.Provider)
		}
		if o.ObservedAt.After(g.SeenAt) {
			g.SeenAt = o.ObservedAt
		}
		if o.PriceUSDPerGPUHour.LessThan(g.Cheapest.PriceUSDPerGPUHour) {
			g.Cheapest = *o
		}
	}
	return Summarize(groups)
}

// Summarize makes the summaries of the GPU models of groups, in model order. Groups come in the
// order their cheapest offers come in the cheapest-first list of the market (that is the order
// of equal prices in GPU.Cheapest), one per GPU model and price type; the store's LatestPerGPU
// computes them on the server.
func Summarize(groups []Group) []GPU {
	index := map[string]int{}
	providers := map[string]map[string]bool{}
	var out []GPU
	for i := range groups {
		gr := &groups[i]
		model := gr.Cheapest.GPUModel
		j, ok := index[model]
		if !ok {
			j = len(out)
			index[model] = j
			out = append(out, GPU{GPUModel: model})
			providers[model] = map[string]bool{}
		}
		g := &out[j]
		g.Cheapest = append(g.Cheapest, gr.Cheapest)
		g.Offers += gr.Offers
		for _, p := range gr.Providers {
			providers[model][p] = true
		}
		if gr.SeenAt.After(g.SeenAt) {
			g.SeenAt = gr.SeenAt
		}
	}
	for i := range out {
		g := &out[i]
		g.Providers = len(providers[g.GPUModel])
		slices.SortStableFunc(g.Cheapest, func(a, b schema.Offer) int { return a.PriceUSDPerGPUHour.Cmp(b.PriceUSDPerGPUHour) })
		// The model's first offer in the cheapest-first list is its cheapest.
		g.VRAMGB = g.Cheapest[0].VRAMGB
		if m, ok := gpus.Lookup(g.GPUModel); ok {
			g.VRAMGB = m.VRAMGB
		}
	}
	slices.SortFunc(out, func(a, b GPU) int { return cmp.Compare(a.GPUModel, b.GPUModel) })
	return out
}
