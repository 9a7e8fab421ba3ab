package optimizer

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/gpucost/gpucost/schema"
	"github.com/shopspring/decimal"
)

// placementKey is what makes two candidates the same placement: at most one of each is
// kept. With Options.DistinctAlternatives that is the provider, GPU model, GPU count, price
// type and variant; without, every offer is its own placement.
type placementKey struct {
	provider, model string
	totalGPUs       int
	priceType       schema.PriceType
	variantIdx      int
}

// candidate is an offer that passed every check, costed: one of the cheapest so far.
type candidate struct {
	floatCost  float64 // float monthly cost: pruning only
	cents      int64   // the monthly cost reported, in cents: the ranking key
	ref        offerRef
	class      *class
	eval       eval
	variantIdx int
	key        placementKey
}

// pruneMargin covers the difference between a float ranking cost and its decimal, which is
// rounded to cents from hours rounded the same way: half a cent each side and float noise.
const pruneMargin = 0.011

// placementKey is the key of a candidate of offer off in class c, evaluated as ev, at the
// variantIdx-th variant.
func (p *planner) placementKey(off *schema.Offer, c *class, ev eval, variantIdx int) placementKey {
	if !p.opts.DistinctAlternatives {
		// Every offer is its own placement.
		return placementKey{provider: off.Provider + "\x00" + off.OfferID + "\x00" + off.Region, model: c.model.Name, totalGPUs: c.gpusPerOffer * ev.offersRented, priceType: c.priceType, variantIdx: variantIdx}
	}
	return placementKey{provider: off.Provider, model: c.model.Name, totalGPUs: c.gpusPerOffer * ev.offersRented, priceType: c.priceType, variantIdx: variantIdx}
}

// insert adds a candidate to the kept top-k, which is ordered by the monthly cost in cents and
// then the stable key, and holds at most one candidate per placement key. It keeps few (1 +
// alternatives), so linear scans beat anything cleverer.
func (p *planner) insert(cand *candidate) {
	if len(p.top) == p.keep && cand.cents > p.top[p.keep-1].cents {
		return
	}
	cand.key = p.placementKey(cand.ref.offer, cand.class, cand.eval, cand.variantIdx)
	for i := range p.top {
		if p.top[i].key == cand.key {
			if compareCandidates(cand, &p.top[i]) >= 0 {
				return
			}
			p.top = slices.Delete(p.top, i, i+1)
			break
		}
	}
	i := 0
	for i < len(p.top) && compareCandidates(&p.top[i], cand) < 0 {
		i++
	}
	if i >= p.keep {
		return
	}
	if len(p.top) < p.keep {
		p.top = append(p.top, candidate{})
	}
	copy(p.top[i+1:], p.top[i:len(p.top)-1])
	p.top[i] = *cand
}

// compareCandidates ranks candidates: by monthly cost in cents; at one cost, more work per
// hour first; then by provider, offer id, price type and region, variant, and position in
// Input.Offers.
func compareCandidates(a, b *candidate) int {
	if c := cmp.Compare(a.cents, b.cents); c != 0 {
		return c
	}
	if c := cmp.Compare(b.eval.workPerHour, a.eval.workPerHour); c != 0 { // at one price, the most work wins
		return c
	}
	if c := compareOfferKeys(a.ref.offer, b.ref.offer); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.variantIdx, b.variantIdx), cmp.Compare(a.ref.inputIndex, b.ref.inputIndex))
}

// monthlyCents = hourly offer price × offers rented × hours billed per month, rounded to the
// cent (half away from zero, as decimal.Round): exact integer arithmetic on micro-dollars and
// hundredths of hours, with decimals when the product does not fit 64 bits.
func monthlyCents(ref offerRef, offersRented int, hoursMonth float64) int64 {
	centiHours := int64(math.Round(hoursMonth * 100))
	if ref.priceMicros >= 0 && centiHours >= 0 {
		hi, lo := bits.Mul64(uint64(ref.priceMicros), uint64(offersRented)*uint64(centiHours))
		if hi == 0 && lo < 1<<62 {
			return int64((lo + 500_000) / 1_000_000) // 1e-8 dollars → cents
		}
	}
	d := ref.offer.PriceUSDPerHour.Mul(decimal.NewFromInt(int64(offersRented))).Mul(decimal.New(centiHours, -2)).Round(2)
	return d.Shift(2).IntPart()
}
