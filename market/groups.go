package market

import (
	"cmp"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Dimension is what `gpucost offers --group-by` groups the market by.
type Dimension string

// Dimensions of a grouping.
const (
	// ByGPU groups by GPU model; offers of a GPU outside the catalog by the provider's name for
	// it and its VRAM.
	ByGPU      Dimension = "gpu"
	ByProvider Dimension = "provider"
	ByCount    Dimension = "count" // GPUs per offer
)

// Dimensions lists every dimension, in the order a grouping by all of them takes.
var Dimensions = []Dimension{ByGPU, ByProvider, ByCount}

// GroupKey is what the offers of one group have in common: the fields of the dimensions they
// are grouped by, the others zero.
type GroupKey struct {
	GPUModel   string
	GPUNameRaw string  // a GPU outside the catalog (no GPUModel): the provider's name for it
	VRAMGB     float64 // a GPU outside the catalog: its VRAM per GPU
	Provider   string
	GPUCount   uint16
}

// keyOf returns the key of the group of o when the market is grouped by the dimensions by.
func keyOf(o *schema.Offer, by []Dimension) GroupKey {
	var k GroupKey
	for _, d := range by {
		switch d {
		case ByGPU:
			k.GPUModel = o.GPUModel
			if o.GPUModel == "" {
				k.GPUNameRaw, k.VRAMGB = o.GPUNameRaw, o.VRAMGB
			}
		case ByProvider:
			k.Provider = o.Provider
		case ByCount:
			k.GPUCount = o.GPUCount
		}
	}
	return k
}

// Tally is what the offers of one group at one price type come to: the store's LatestSummaries
// counts them on the server, and Combine makes a group's summary of its tallies.
type Tally struct {
	Key       GroupKey
	PriceType schema.PriceType
	Min, Max  decimal.Decimal // $/GPU-hour
	Offers    int
	Providers []string // distinct, in any order
}

// Summary is the market of one group of offers (`gpucost offers --group-by`): what they have
// in common, how many there are, the range of their prices per GPU-hour, and the cheapest
// on-demand, spot, commitment and serverless prices side by side. Fields of the dimensions not
// grouped by are zero. Its JSON names are its CSV columns (package export).
type Summary struct {
	GPUModel   string `json:"gpu_model"`    // "" when not grouped by GPU, or for a GPU outside the catalog
	GPUNameRaw string `json:"gpu_name_raw"` // a GPU outside the catalog: the provider's name for it
	// VRAMGB is per GPU, when grouped by GPU: the catalog's, or the offers' for a GPU outside it.
	VRAMGB    float64 `json:"vram_gb"`
	Provider  string  `json:"provider"`  // "" when not grouped by provider
	GPUCount  uint16  `json:"gpu_count"` // 0 when not grouped by count
	Offers    int     `json:"offers"`
	Providers int     `json:"providers"` // distinct providers among the offers
	// The range of every offer's $/GPU-hour, whatever its price type.
	MinUSDPerGPUHour decimal.Decimal `json:"min_usd_per_gpu_hour"`
	MaxUSDPerGPUHour decimal.Decimal `json:"max_usd_per_gpu_hour"`
	// The cheapest $/GPU-hour of each kind of price; null when the group has none.
	OnDemand *decimal.Decimal `json:"on_demand_usd_per_gpu_hour"`
	Spot     *decimal.Decimal `json:"spot_usd_per_gpu_hour"`
	// Commitment is the cheapest reserved or term price, CommitmentType its price type ("" when
	// none; of equal prices the first in schema.PriceTypes).
	Commitment     *decimal.Decimal `json:"commitment_usd_per_gpu_hour"`
	CommitmentType schema.PriceType `json:"commitment_price_type"`
	Serverless     *decimal.Decimal `json:"serverless_usd_per_gpu_hour"`
}

// Summaries summarises offers (the latest market) per group of by: the definition of what the
// store's LatestSummaries and Combine compute without reading the market, in the order of
// SortSummaries with the zero order.
func Summaries(offers []schema.Offer, by []Dimension) []Summary {
	type at struct {
		key GroupKey
		pt  schema.PriceType
	}
	index := map[at]int{}
	var tallies []Tally
	for i := range offers {
		o := &offers[i]
		k := at{keyOf(o, by), o.PriceType}
		j, ok := index[k]
		if !ok {
			j = len(tallies)
			index[k] = j
			tallies = append(tallies, Tally{Key: k.key, PriceType: o.PriceType, Min: o.PriceUSDPerGPUHour, Max: o.PriceUSDPerGPUHour})
		}
		t := &tallies[j]
		t.Offers++
		if !slices.Contains(t.Providers, o.Provider) {
			t.Providers = append(t.Providers, o.Provider)
		}
		if o.PriceUSDPerGPUHour.LessThan(t.Min) {
			t.Min = o.PriceUSDPerGPUHour
		}
		if o.PriceUSDPerGPUHour.GreaterThan(t.Max) {
			t.Max = o.PriceUSDPerGPUHour
		}
	}
	s := Combine(tallies)
	SortSummaries(s, by, "")
	return s
}

// Combine makes one summary of the tallies of each group, in the order the groups first come.
func Combine(tallies []Tally) []Summary {
	index := map[GroupKey]int{}
	var out []Summary
	var providers [][]string // of out[j], distinct
	for _, t := range tallies {
		j, ok := index[t.Key]
		if !ok {
			j = len(out)
			index[t.Key] = j
			providers = append(providers, nil)
			k := t.Key
			out = append(out, Summary{GPUModel: k.GPUModel, GPUNameRaw: k.GPUNameRaw, VRAMGB: k.VRAMGB, Provider: k.Provider, GPUCount: k.GPUCount,
				MinUSDPerGPUHour: t.Min, MaxUSDPerGPUHour: t.Max})
			if m, ok := gpus.Lookup(k.GPUModel); ok {
				out[j].VRAMGB = m.VRAMGB
			}
		}
		s := &out[j]
		s.Offers += t.Offers
		for _, p := range t.Providers {
			if !slices.Contains(providers[j], p) {
				providers[j] = append(providers[j], p)
			}
		}
		s.Providers = len(providers[j])
		if t.Min.LessThan(s.MinUSDPerGPUHour) {
			s.MinUSDPerGPUHour = t.Min
		}
		if t.Max.GreaterThan(s.MaxUSDPerGPUHour) {
			s.MaxUSDPerGPUHour = t.Max
		}
		price := t.Min
		switch {
		case t.PriceType == schema.OnDemand:
			s.OnDemand = &price
		case t.PriceType == schema.Spot:
			s.Spot = &price
		case t.PriceType == schema.Serverless:
			s.Serverless = &price
		case t.PriceType.Committed():
			if s.Commitment == nil || price.LessThan(*s.Commitment) ||
				price.Equal(*s.Commitment) && slices.Index(schema.PriceTypes, t.PriceType) < slices.Index(schema.PriceTypes, s.CommitmentType) {
				s.Commitment, s.CommitmentType = &price, t.PriceType
			}
		}
	}
	return out
}

// SortSummaries puts summaries grouped by dims in order: with the zero order by their keys, in
// the order of by (GPU models and providers by name, a GPU outside the catalog after them by
// its provider's name and VRAM, counts from the fewest); else as the order says (schema.OfferSort:
// the cheapest first, by GPU, the most VRAM first, by provider), ties the cheapest first and
// then by their keys. Equal keys are equal summaries.
func SortSummaries(s []Summary, by []Dimension, order schema.OfferSort) {
	byKeys := func(a, b *Summary) int {
		for _, d := range by {
			var c int
			switch d {
			case ByGPU:
				c = cmp.Or(compareGPU(a, b), cmp.Compare(a.VRAMGB, b.VRAMGB))
			case ByProvider:
				c = cmp.Compare(a.Provider, b.Provider)
			case ByCount:
				c = cmp.Compare(a.GPUCount, b.GPUCount)
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	slices.SortStableFunc(s, func(a, b Summary) int {
		var c int
		switch order {
		case schema.SortPrice:
			c = a.MinUSDPerGPUHour.Cmp(b.MinUSDPerGPUHour)
		case schema.SortGPU:
			c = compareGPU(&a, &b)
		case schema.SortVRAM:
			c = cmp.Compare(b.VRAMGB, a.VRAMGB)
		case schema.SortProvider:
			c = cmp.Compare(a.Provider, b.Provider)
		}
		if c != 0 {
			return c
		}
		if order != "" && order != schema.SortPrice {
			if c := a.MinUSDPerGPUHour.Cmp(b.MinUSDPerGPUHour); c != 0 {
				return c
			}
		}
		return byKeys(&a, &b)
	})
}

// compareGPU orders catalog GPU models by name, then GPUs outside the catalog by the
// provider's name for them.
func compareGPU(a, b *Summary) int {
	outside := func(s *Summary) int {
		if s.GPUModel == "" {
			return 1
		}
		return 0
	}
	if c := cmp.Compare(outside(a), outside(b)); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.GPUModel, b.GPUModel), cmp.Compare(a.GPUNameRaw, b.GPUNameRaw))
}
