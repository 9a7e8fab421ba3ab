package pipeline

import (
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Reasons an offer is rejected, counted per provider in the run report and metrics.
const (
	RejectNonPositivePrice = "non_positive_price"
	RejectAbsurdPrice      = "absurd_price"
	RejectZeroGPUs         = "zero_gpus"
	RejectZeroVRAM         = "zero_vram"
	RejectNoOfferID        = "no_offer_id"
	RejectBadPriceType     = "bad_price_type"
	RejectDuplicate        = "duplicate" // the same offer key twice in one run: the first is kept
	// RejectUnroundedPrice: a price with more decimals than are stored (schema.PriceDecimals).
	// A price is rounded once, where it is priced: by its source, or by normalize for an offer
	// priced by the whole offer only. Rounding a source's price again here would hide a source
	// that skipped it, and the store would cut the digits off.
	RejectUnroundedPrice = "unrounded_price"
)

// validator normalizes and validates one provider's offers of one run, page after page.
type validator struct {
	maxPrice      decimal.Decimal
	outlierFactor float64
	factor        decimal.Decimal                // outlierFactor as a decimal, set on first use
	prev          map[schema.Key]decimal.Decimal // last known $/GPU-hour per offer
	seen          map[schema.Key]bool            // the keys kept so far in the run
}

// apply returns the offers of in to load, counting rejects and flags by reason.
func (v *validator) apply(run schema.Run, provider string, in []schema.Offer, rejected, flagged map[string]int) []schema.Offer {
	if v.seen == nil {
		v.seen = map[schema.Key]bool{}
	}
	seen := v.seen
	out := make([]schema.Offer, 0, len(in))
	for _, o := range in {
		normalize(&o, run, provider)
		if reason := v.reject(o); reason != "" {
			rejected[reason]++
			continue
		}
		if seen[o.Key()] {
			rejected[RejectDuplicate]++
			continue
		}
		// A key of its own: the offer's strings may share memory with the page it came from.
		seen[schema.Key{Provider: o.Provider, OfferID: strings.Clone(o.OfferID), PriceType: o.PriceType}] = true
		if v.outlier(o) {
			o.AddFlag(schema.FlagPriceOutlier)
		}
		for _, f := range o.DQFlags {
			flagged[string(f)]++
		}
		out = append(out, o)
	}
	return out
}

// normalize stamps the run and provider on the offer (whatever the source put there: a batch
// holds its own run's rows only) and settles what a source may leave implicit: unknown classes,
// the per-GPU price, the canonical GPU model. It rounds no price the source set.
func normalize(o *schema.Offer, run schema.Run, provider string) {
	run.Stamp(o)
	o.Provider = provider
	o.Region = strings.TrimSpace(o.Region)
	o.OfferID = strings.TrimSpace(o.OfferID)
	if o.IntraNode == "" {
		o.IntraNode = schema.IntraUnknown
	}
	if o.InterNode == "" {
		o.InterNode = schema.InterUnknown
	}
	if o.Stock == "" {
		o.Stock = schema.StockUnknown
	}
	if o.PriceUSDPerGPUHour.IsZero() && o.GPUCount > 0 {
		// Priced by the whole offer only: both prices from it, each rounded once.
		o.SetPrice(o.PriceUSDPerHour)
	}
	if o.GPUModel == "" && !o.HasFlag(schema.FlagUnknownGPU) {
		m := gpus.Resolve(provider, o.GPUNameRaw, o.VRAMGB)
		if !m.Known {
			o.AddFlag(schema.FlagUnknownGPU)
			if m.Snapped { // to the market's label, as scrapers/normalize.go's setGPU records it
				o.AddFlag(schema.FlagVRAMSnapped)
				o.VRAMGB = m.VRAMGB
			}
		} else {
			o.GPUModel = m.Model.Name
			if m.Snapped {
				o.AddFlag(schema.FlagVRAMSnapped)
			}
			if o.VRAMGB <= 0 {
				o.AddFlag(schema.FlagVRAMMissing) // as scrapers/normalize.go's applyGPU flags it
			}
			o.VRAMGB = m.VRAMGB
		}
	}
	if o.VRAMGB == 0 && o.GPUModel != "" {
		if m, ok := gpus.Lookup(o.GPUModel); ok {
			o.VRAMGB = m.VRAMGB
			o.AddFlag(schema.FlagVRAMMissing)
		}
	}
}

func (v validator) reject(o schema.Offer) string {
	switch {
	case o.OfferID == "":
		return RejectNoOfferID
	case !slices.Contains(schema.PriceTypes, o.PriceType):
		return RejectBadPriceType
	case o.GPUCount == 0:
		return RejectZeroGPUs
	case o.VRAMGB <= 0:
		return RejectZeroVRAM
	case !o.PriceUSDPerGPUHour.IsPositive() || !o.PriceUSDPerHour.IsPositive():
		return RejectNonPositivePrice
	case o.PriceUSDPerGPUHour.GreaterThan(v.maxPrice):
		return RejectAbsurdPrice
	case !stored(o.PriceUSDPerHour) || !stored(o.PriceUSDPerGPUHour):
		return RejectUnroundedPrice
	}
	return ""
}

// outlier reports whether the offer's price moved by more than the factor since its last
// observation: above prev × factor or below prev / factor, compared exactly as products (a
// division per offer took most of a large run's validation).
func (v *validator) outlier(o schema.Offer) bool {
	if v.outlierFactor <= 0 {
		return false
	}
	prev, ok := v.prev[o.Key()]
	if !ok || !prev.IsPositive() {
		return false
	}
	if v.factor.IsZero() {
		v.factor = decimal.NewFromFloat(v.outlierFactor)
	}
	cur := o.PriceUSDPerGPUHour
	return cur.GreaterThan(prev.Mul(v.factor)) || cur.Mul(v.factor).LessThan(prev)
}

// stored reports whether a price has no more decimals than are stored (schema.PriceDecimals).
func stored(price decimal.Decimal) bool {
	return price.Equal(price.Round(schema.PriceDecimals))
}
