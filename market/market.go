// Package market summarises the market now, the newest observation of every offer (the
// store's LatestOffers), per GPU model: what the cheapest offer of each price type asks, and how
// many offers and providers sell the model. `gpucost offers --cheapest-per-gpu` prints the
// cheapest of each summary; the dashboard shows the cheapest on-demand and spot offers.
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

// PerGPU summarises offers, which come cheapest $/GPU-hour first (as LatestOffers returns
// them), per GPU model, in model order. Offers of GPUs not in the catalog (no gpu_model) are
// left out.
func PerGPU(offers []schema.Offer) []GPU {
	index := map[string]int{}
	providers := map[string]map[string]bool{}
	var out []GPU
	for i := range offers {
		o := &offers[i]
		if o.GPUModel == "" {
			continue
		}
		j, ok := index[o.GPUModel]
		if !ok {
			j = len(out)
			index[o.GPUModel] = j
			g := GPU{GPUModel: o.GPUModel, VRAMGB: o.VRAMGB}
			if m, ok := gpus.Lookup(o.GPUModel); ok {
				g.VRAMGB = m.VRAMGB
			}
			out = append(out, g)
			providers[o.GPUModel] = map[string]bool{}
		}
		g := &out[j]
		g.Offers++
		providers[o.GPUModel][o.Provider] = true
		if o.ObservedAt.After(g.SeenAt) {
			g.SeenAt = o.ObservedAt
		}
		switch c := g.Of(o.PriceType); {
		case c == nil:
			g.Cheapest = append(g.Cheapest, *o)
		case o.PriceUSDPerGPUHour.LessThan(c.PriceUSDPerGPUHour):
			*c = *o
		}
	}
	for i := range out {
		g := &out[i]
		g.Providers = len(providers[g.GPUModel])
		slices.SortStableFunc(g.Cheapest, func(a, b schema.Offer) int { return a.PriceUSDPerGPUHour.Cmp(b.PriceUSDPerGPUHour) })
	}
	slices.SortFunc(out, func(a, b GPU) int { return cmp.Compare(a.GPUModel, b.GPUModel) })
	return out
}
