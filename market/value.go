package market

import (
	"cmp"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// ValueDecimals are the decimal places of the value figures: $0.00202224 per TFLOP-hour keeps
// six significant digits, and the cheapest FP4 figure (about $0.0001) four.
const ValueDecimals = 8

// Basis is the price a value is computed at: the cheapest offer of one price type, or of every
// commitment (Commitment).
type Basis string

// Commitment is the basis of the cheapest reserved or term price of a GPU model, whatever its
// term: Value.PriceType says which it is.
const Commitment Basis = "commitment"

// Bases lists every basis: each price type, then Commitment.
var Bases = func() []Basis {
	out := make([]Basis, 0, len(schema.PriceTypes)+1)
	for _, pt := range schema.PriceTypes {
		out = append(out, Basis(pt))
	}
	return append(out, Commitment)
}()

// PriceTypes are the price types of the offers a value at b is computed from.
func (b Basis) PriceTypes() []schema.PriceType {
	if b != Commitment {
		return []schema.PriceType{schema.PriceType(b)}
	}
	var out []schema.PriceType
	for _, pt := range schema.PriceTypes {
		if pt.Committed() {
			out = append(out, pt)
		}
	}
	return out
}

// Commitment returns the cheapest reserved or term offer of the model, whatever its term, or
// nil when the model has none.
func (g GPU) Commitment() *schema.Offer {
	for i := range g.Cheapest {
		if g.Cheapest[i].PriceType.Committed() {
			return &g.Cheapest[i]
		}
	}
	return nil
}

// At returns the offer a value at basis b is computed from (the cheapest of its price types),
// or nil when the model is not sold at it.
func (g GPU) At(b Basis) *schema.Offer {
	if b == Commitment {
		return g.Commitment()
	}
	return g.Of(schema.PriceType(b))
}

// RatedPrecisions are the precisions the catalog gives a dense rate for (gpus.Throughput), in
// its order: every value figure is at one of them.
var RatedPrecisions = []gpus.Precision{gpus.FP32, gpus.TF32, gpus.FP16, gpus.BF16, gpus.FP8, gpus.INT8, gpus.FP4}

// ValueQuery says which value figures to compute and how to rank them.
type ValueQuery struct {
	Basis     Basis          // the price
	Precision gpus.Precision // rank by $ per TFLOP-hour at this precision (one of RatedPrecisions)
}

// Value is what a dollar buys on one GPU model: the cheapest offer at a basis, and its price
// per GPU-hour over the catalog's dense throughput at each precision and over the GPU's memory
// bandwidth. Dense means without 2:4 sparsity, as the catalog's figures (docs/gpus.md). The
// JSON names are its CSV columns (package export).
type Value struct {
	GPUModel string `json:"gpu_model"`
	// The offer the figures come from. PriceType is its own: a term_* or reserved type for
	// Commitment.
	PriceType          schema.PriceType `json:"price_type"`
	Provider           string           `json:"provider"`
	OfferID            string           `json:"offer_id"`
	Region             string           `json:"region"`
	GPUCount           uint16           `json:"gpu_count"`
	ObservedAt         time.Time        `json:"observed_at"`
	PriceUSDPerGPUHour decimal.Decimal  `json:"price_usd_per_gpu_hour"`

	// Precision is the precision asked for; RunsAt the one USDPerTFLOPHour is computed at:
	// Precision, or where the GPU has no hardware path for it, the precision such work runs at
	// on it (gpus.Model.RunsAt: BF16 work in FP16 on a V100).
	Precision       gpus.Precision  `json:"precision"`
	RunsAt          gpus.Precision  `json:"runs_at"`
	USDPerTFLOPHour decimal.Decimal `json:"usd_per_tflop_hour"` // the ranking figure

	// The price per dense TFLOP-hour at each rated precision (per TOPS-hour for INT8); nil
	// where the GPU has no hardware path for the precision (the catalog's rate is 0).
	FP32 *decimal.Decimal `json:"fp32_usd_per_tflop_hour"`
	TF32 *decimal.Decimal `json:"tf32_usd_per_tflop_hour"`
	FP16 *decimal.Decimal `json:"fp16_usd_per_tflop_hour"`
	BF16 *decimal.Decimal `json:"bf16_usd_per_tflop_hour"`
	FP8  *decimal.Decimal `json:"fp8_usd_per_tflop_hour"`
	INT8 *decimal.Decimal `json:"int8_usd_per_tops_hour"`
	FP4  *decimal.Decimal `json:"fp4_usd_per_tflop_hour"`

	// USDPerTBpsHour is the price per hour of a terabyte per second of memory bandwidth: what
	// decode-bound inference, which reads every weight once per generated token, pays for.
	USDPerTBpsHour decimal.Decimal `json:"usd_per_tbps_hour"`
}

// Values computes what a dollar buys on each catalog GPU model of the market (the summaries of
// PerGPU, or of the store's LatestPerGPU) at q.Basis, from the model's cheapest offer at it.
// Models not sold at the basis, and models not in the catalog, have no value. Values come
// cheapest $/TFLOP-hour at q.Precision first (at the precision the GPU runs such work at where
// it has no path for q.Precision); equal figures in model order.
func Values(models []GPU, q ValueQuery) []Value {
	var out []Value
	for _, g := range models {
		o := g.At(q.Basis)
		m, ok := gpus.Lookup(g.GPUModel)
		if o == nil || !ok {
			continue
		}
		v := Value{GPUModel: m.Name, PriceType: o.PriceType, Provider: o.Provider, OfferID: o.OfferID, Region: o.Region,
			GPUCount: o.GPUCount, ObservedAt: o.ObservedAt, PriceUSDPerGPUHour: o.PriceUSDPerGPUHour,
			Precision: q.Precision, RunsAt: m.RunsAt(q.Precision)}
		per := func(p gpus.Precision) *decimal.Decimal { return perUnit(o.PriceUSDPerGPUHour, m.TFLOPS.Of(p)) }
		v.FP32, v.TF32, v.FP16, v.BF16, v.FP8, v.INT8, v.FP4 = per(gpus.FP32), per(gpus.TF32), per(gpus.FP16), per(gpus.BF16), per(gpus.FP8), per(gpus.INT8), per(gpus.FP4)
		rank := per(v.RunsAt)
		bandwidth := perUnit(o.PriceUSDPerGPUHour, m.MemBandwidthGBps/1000)
		if rank == nil || bandwidth == nil {
			continue // a row without an FP32 rate or a bandwidth, which the catalog's tests forbid
		}
		v.USDPerTFLOPHour, v.USDPerTBpsHour = *rank, *bandwidth
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(a, b Value) int {
		return cmp.Or(a.USDPerTFLOPHour.Cmp(b.USDPerTFLOPHour), cmp.Compare(a.GPUModel, b.GPUModel))
	})
	return out
}

// perUnit is price ÷ units to ValueDecimals places, or nil for no units.
func perUnit(price decimal.Decimal, units float64) *decimal.Decimal {
	if units <= 0 {
		return nil
	}
	d := price.DivRound(decimal.NewFromFloat(units), ValueDecimals)
	return &d
}
