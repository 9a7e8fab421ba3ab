package optimizer

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/gpucost/gpucost/schema"
	"github.com/shopspring/decimal"
)

type placementKey struct {
	provider, model string
	gpus            int
	priceType       schema.PriceType
	vi              int
}

type candidate struct {
	cost  float64 // float monthly cost: pruning only
	cents int64   // the monthly cost reported, in cents: the ranking key
	off   offerRef
	c     *class
	ev    eval
	vi    int
	pkey  placementKey
}

// pruneMargin covers the difference between a float ranking cost and its decimal, which is
// rounded to cents from hours rounded the same way: half a cent each side and float noise.
const pruneMargin = 0.011

func (p *planner) placementKey(off *schema.Offer, c *class, ev eval, vi int) placementKey {
	if !p.opts.DistinctAlternatives {
		// Every offer is its own placement.
		return placementKey{provider: off.Provider + "\x00" + off.OfferID + "\x00" + off.Region, model: c.model.Name, gpus: c.gpus * ev.k, priceType: c.priceType, vi: vi}
	}
	return placementKey{provider: off.Provider, model: c.model.Name, gpus: c.gpus * ev.k, priceType: c.priceType, vi: vi}
}

// insert adds a candidate to the kept top-k, which is ordered by the monthly cost in cents and
// then the stable key, and holds at most one candidate per placement key. k is small (1 +
// alternatives), so linear scans beat anything cleverer.
func (p *planner) insert(cand *candidate) {
	cand.cents = monthlyCents(cand.off, cand.ev.k, cand.ev.hoursMonth)
	if len(p.top) == p.k && cand.cents > p.top[p.k-1].cents {
		return
	}
	cand.pkey = p.placementKey(cand.off.o, cand.c, cand.ev, cand.vi)
	for i := range p.top {
		if p.top[i].pkey == cand.pkey {
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
	if i >= p.k {
		return
	}
	if len(p.top) < p.k {
		p.top = append(p.top, candidate{})
	}
	copy(p.top[i+1:], p.top[i:len(p.top)-1])
	p.top[i] = *cand
}

func compareCandidates(a, b *candidate) int {
	if c := cmp.Compare(a.cents, b.cents); c != 0 {
		return c
	}
	if c := cmp.Compare(b.ev.work, a.ev.work); c != 0 { // at one price, the most work wins
		return c
	}
	if c := compareOfferKeys(a.off.o, b.off.o); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.vi, b.vi), cmp.Compare(a.off.seq, b.off.seq))
}

// monthlyCents = hourly offer price × offers rented × hours billed per month, rounded to the
// cent (half away from zero, as decimal.Round): exact integer arithmetic on micro-dollars and
// hundredths of hours, with decimals when the product does not fit 64 bits.
func monthlyCents(ref offerRef, k int, hoursMonth float64) int64 {
	centiHours := int64(math.Round(hoursMonth * 100))
	if ref.micros >= 0 && centiHours >= 0 {
		hi, lo := bits.Mul64(uint64(ref.micros), uint64(k)*uint64(centiHours))
		if hi == 0 && lo < 1<<62 {
			return int64((lo + 500_000) / 1_000_000) // 1e-8 dollars → cents
		}
	}
	d := ref.o.PriceUSDPerHour.Mul(decimal.NewFromInt(int64(k))).Mul(decimal.New(centiHours, -2)).Round(2)
	return d.Shift(2).IntPart()
}
