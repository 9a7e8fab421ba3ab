package web

import (
	"sort"
	"time"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// The dashboard's market table: the current offers by GPU model. The page uses nothing of it
// but marketRows and marketRow's fields.

// marketRow is one GPU model in the dashboard's table.
type marketRow struct {
	GPUModel  string
	VRAMGB    float64
	OnDemand  *schema.Offer // cheapest on-demand offer now
	Spot      *schema.Offer // cheapest spot offer now
	Offers    int
	Providers int
	SeenAt    time.Time // newest observation of the model
}

// marketRows picks, per GPU model, the cheapest on-demand and spot offers among offers (which
// come cheapest first), in model order. Offers of unknown GPUs are left out.
func marketRows(offers []schema.Offer) []marketRow {
	byModel := map[string]*marketRow{}
	providers := map[string]map[string]bool{}
	for i := range offers {
		o := &offers[i]
		if o.GPUModel == "" {
			continue
		}
		row := byModel[o.GPUModel]
		if row == nil {
			row = &marketRow{GPUModel: o.GPUModel, VRAMGB: o.VRAMGB}
			if m, ok := gpus.Lookup(o.GPUModel); ok {
				row.VRAMGB = m.VRAMGB
			}
			byModel[o.GPUModel] = row
			providers[o.GPUModel] = map[string]bool{}
		}
		row.Offers++
		providers[o.GPUModel][o.Provider] = true
		if o.ObservedAt.After(row.SeenAt) {
			row.SeenAt = o.ObservedAt
		}
		switch {
		case o.PriceType == schema.OnDemand && (row.OnDemand == nil || o.PriceUSDPerGPUHour.LessThan(row.OnDemand.PriceUSDPerGPUHour)):
			row.OnDemand = o
		case o.PriceType == schema.Spot && (row.Spot == nil || o.PriceUSDPerGPUHour.LessThan(row.Spot.PriceUSDPerGPUHour)):
			row.Spot = o
		}
	}
	out := make([]marketRow, 0, len(byModel))
	for model, row := range byModel {
		row.Providers = len(providers[model])
		out = append(out, *row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GPUModel < out[j].GPUModel })
	return out
}
