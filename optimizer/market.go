package optimizer

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// offerRef is an offer in the index, with what the hot loop reads unpacked.
type offerRef struct {
	offer       *schema.Offer
	price       float64 // PriceUSDPerHour, for pruning only
	priceMicros int64   // PriceUSDPerHour in micro-dollars, exact; -1 when it has more decimals
	available   int64   // AvailableCount, -1 when unknown
	continent   string  // Offer.Continent(): "" when the provider publishes no location
	inputIndex  int     // position in Input.Offers: the last tie-break
}

// bucket holds the offers of one class from one provider, cheapest first.
type bucket struct {
	provider string
	offers   []offerRef
}

// class groups offers that any workload judges alike: same GPU model and VRAM, GPUs per
// offer, interconnect and price type. Feasibility and the cost multiplier are computed once
// per workload and class; within a bucket the cost then follows the price.
type class struct {
	model        gpus.Model
	vram         float64
	gpusPerOffer int
	intraNode    schema.IntraNode // as the source published it: unknown is not linked
	interNode    schema.InterNode
	priceType    schema.PriceType
	modelIndex   int // index in market.models
	order        int // position in the deterministic class order
	buckets      []bucket
	minPrice     float64
}

type classKey struct {
	modelIndex                      int // dense index of the canonical GPU model
	vram                            float64
	gpusPerOffer                    int
	intraNode, interNode, priceType uint8
}

type currentKey struct {
	provider, model string
	priceType       schema.PriceType
}

// market is the offer index Optimize builds once per plan.
type market struct {
	classes    []*class     // deterministic order (class.order)
	visitOrder []*class     // cheapest per GPU first: fills the top-k early so pruning bites
	models     []gpus.Model // GPU models with fresh offers, by name
	// forCurrent holds every catalog offer (stale providers and commitments too) by provider,
	// model and price type, to price forCurrent placements; sorted on first use.
	forCurrent     map[currentKey][]*schema.Offer
	currentSorted  map[currentKey]bool
	staleProviders map[string]bool // providers excluded for freshness
	providers      map[string]bool // every provider seen
	excluded       []ExcludedProvider
	summary        MarketSummary
	// expired counts, per catalog GPU model, the offers left out because their prices no
	// longer hold, with the newest such observation: why nothing fits may be age.
	expired map[string]expiry
	maxAge  time.Duration
}

// expiry is what the market left out of one GPU model for age.
type expiry struct {
	offers int
	newest time.Time // the newest ObservedAt among them
}

func buildMarket(offers []schema.Offer, now time.Time, o *Options, need map[currentKey]bool) *market {
	m := &market{
		forCurrent:     make(map[currentKey][]*schema.Offer),
		currentSorted:  make(map[currentKey]bool),
		staleProviders: make(map[string]bool),
		providers:      make(map[string]bool),
		expired:        make(map[string]expiry),
		maxAge:         time.Duration(o.MaxOfferAgeHours * float64(time.Hour)),
	}
	m.summary.Offers = len(offers)

	// Providers, interned: one map lookup per offer. A provider none of whose offers holds
	// any more is excluded, with its newest observation and latest validity.
	type provider struct {
		name      string
		newest    time.Time // newest ObservedAt
		validTill time.Time // latest ValidUntil given
		fresh     bool      // some offer holds now
	}
	var provs []provider
	provIdx := make(map[string]int)
	provOf := make([]int32, len(offers))
	fresh := make([]bool, len(offers))
	for i := range offers {
		off := &offers[i]
		pi, ok := provIdx[off.Provider]
		if !ok {
			pi = len(provs)
			provIdx[off.Provider] = pi
			provs = append(provs, provider{name: off.Provider})
			m.providers[off.Provider] = true
		}
		provOf[i] = int32(pi)
		pr := &provs[pi]
		if off.ObservedAt.After(pr.newest) {
			pr.newest = off.ObservedAt
		}
		if off.ValidUntil != nil && off.ValidUntil.After(pr.validTill) {
			pr.validTill = *off.ValidUntil
		}
		fresh[i] = off.Holds(now, m.maxAge)
		pr.fresh = pr.fresh || fresh[i]
	}
	for _, name := range sortedKeys(m.providers) {
		pr := &provs[provIdx[name]]
		if pr.fresh {
			continue
		}
		m.staleProviders[name] = true
		e := ExcludedProvider{Provider: name}
		switch {
		case pr.newest.IsZero():
			e.Reason = "offers carry no observation time"
		case !pr.validTill.IsZero() && !pr.validTill.Before(pr.newest):
			e.Reason = fmt.Sprintf("its prices held until %s, %s ago", pr.validTill.UTC().Format("2006-01-02 15:04 MST"), formatAge(now.Sub(pr.validTill)))
		default:
			e.Reason = fmt.Sprintf("newest price observed %s ago, older than the %s a price holds (max_offer_age_hours)", formatAge(now.Sub(pr.newest)), formatAge(m.maxAge))
		}
		if !pr.newest.IsZero() {
			t := pr.newest.UTC()
			e.LastObserved = &t
		}
		m.excluded = append(m.excluded, e)
	}

	// GPU models, looked up once per spelling (gpus.Lookup allocates).
	type modelInfo struct {
		m      gpus.Model
		ok     bool
		idx    int  // dense index of the canonical model, for class keys
		needed bool // some current placement is priced from this model's offers
	}
	neededModel := make(map[string]bool, len(need))
	for k := range need {
		neededModel[k.model] = true
	}
	catalog := make(map[string]*modelInfo)
	canon := make(map[string]int)
	byKey := make(map[classKey]*class)
	for i := range offers {
		off := &offers[i]
		mi := catalog[off.GPUModel]
		if mi == nil {
			mi = &modelInfo{}
			mi.m, mi.ok = gpus.Lookup(off.GPUModel)
			if mi.ok {
				idx, ok := canon[mi.m.Name]
				if !ok {
					idx = len(canon)
					canon[mi.m.Name] = idx
				}
				mi.idx, mi.needed = idx, neededModel[mi.m.Name]
			}
			catalog[off.GPUModel] = mi
		}
		switch {
		case !mi.ok:
			m.summary.UnknownGPU++
			continue
		case off.GPUCount == 0 || !off.PriceUSDPerHour.IsPositive():
			m.summary.Invalid++
			continue
		}
		if mi.needed {
			ck := currentKey{off.Provider, mi.m.Name, off.PriceType}
			if need[ck] {
				m.forCurrent[ck] = append(m.forCurrent[ck], off)
			}
		}
		switch {
		case !fresh[i]:
			m.summary.Stale++
			e := m.expired[mi.m.Name]
			e.offers++
			if off.ObservedAt.After(e.newest) {
				e.newest = off.ObservedAt
			}
			m.expired[mi.m.Name] = e
			continue
		case off.PriceType != schema.OnDemand && off.PriceType != schema.Spot && !o.AllowCommitments:
			m.summary.Commitments++
			continue
		}
		m.summary.Considered++
		vram := off.VRAMGB
		if vram <= 0 {
			vram = mi.m.VRAMGB
		}
		intra := off.IntraNode
		if intra == "" {
			intra = schema.IntraUnknown
		}
		inter := off.InterNode
		if inter == "" {
			inter = schema.InterUnknown
		}
		key := classKey{modelIndex: mi.idx, vram: vram, gpusPerOffer: int(off.GPUCount), intraNode: enumIndex(intra, schema.IntraNodes),
			interNode: enumIndex(inter, schema.InterNodes), priceType: enumIndex(off.PriceType, schema.PriceTypes)}
		c := byKey[key]
		if c == nil {
			c = &class{model: mi.m, vram: vram, gpusPerOffer: int(off.GPUCount), intraNode: intra, interNode: inter, priceType: off.PriceType, minPrice: math.Inf(1)}
			byKey[key] = c
		}
		bi := -1
		for j := range c.buckets { // a handful of providers: a scan beats a map
			if c.buckets[j].provider == off.Provider {
				bi = j
				break
			}
		}
		if bi < 0 {
			bi = len(c.buckets)
			c.buckets = append(c.buckets, bucket{provider: off.Provider})
		}
		ref := offerRef{offer: off, price: off.PriceUSDPerHour.InexactFloat64(), priceMicros: microDollars(off.PriceUSDPerHour), available: -1, continent: off.Continent(), inputIndex: i}
		if off.AvailableCount != nil {
			ref.available = int64(*off.AvailableCount)
		}
		c.buckets[bi].offers = append(c.buckets[bi].offers, ref)
		c.minPrice = min(c.minPrice, ref.price)
	}

	modelIdx := make(map[string]int)
	for _, c := range byKey {
		if _, ok := modelIdx[c.model.Name]; !ok {
			modelIdx[c.model.Name] = 0
			m.models = append(m.models, c.model)
		}
	}
	slices.SortFunc(m.models, func(a, b gpus.Model) int { return strings.Compare(a.Name, b.Name) })
	for i, md := range m.models {
		modelIdx[md.Name] = i
	}
	for _, c := range byKey {
		c.modelIndex = modelIdx[c.model.Name]
		slices.SortFunc(c.buckets, func(a, b bucket) int { return strings.Compare(a.provider, b.provider) })
		for bi := range c.buckets {
			slices.SortFunc(c.buckets[bi].offers, compareOfferRefs)
		}
		m.classes = append(m.classes, c)
	}
	slices.SortFunc(m.classes, func(a, b *class) int {
		return cmp.Or(
			strings.Compare(a.model.Name, b.model.Name),
			cmp.Compare(a.vram, b.vram),
			cmp.Compare(a.gpusPerOffer, b.gpusPerOffer),
			strings.Compare(string(a.intraNode), string(b.intraNode)),
			strings.Compare(string(a.interNode), string(b.interNode)),
			strings.Compare(string(a.priceType), string(b.priceType)),
		)
	})
	for i, c := range m.classes {
		c.order = i
	}
	m.visitOrder = slices.Clone(m.classes)
	slices.SortStableFunc(m.visitOrder, func(a, b *class) int {
		return cmp.Compare(a.minPrice/float64(a.gpusPerOffer), b.minPrice/float64(b.gpusPerOffer))
	})
	return m
}

// enumIndex is v's position in the list of valid values, or len(list) for anything else.
func enumIndex[T ~string](v T, list []T) uint8 {
	for i, x := range list {
		if x == v {
			return uint8(i)
		}
	}
	return uint8(len(list))
}

// currentOffers returns the offers of a provider, model and price type, cheapest per GPU first.
func (m *market) currentOffers(k currentKey) []*schema.Offer {
	list := m.forCurrent[k]
	if !m.currentSorted[k] {
		slices.SortFunc(list, func(a, b *schema.Offer) int {
			return cmp.Or(perGPUPrice(a).Cmp(perGPUPrice(b)), compareOfferKeys(a, b))
		})
		m.currentSorted[k] = true
	}
	return list
}

// microDollars is a price in micro-dollars, or -1 when it is not a whole number of them (or too big).
func microDollars(d decimal.Decimal) int64 {
	e := int(d.Exponent())
	if e < -schema.PriceDecimals || e > 0 || d.NumDigits() > 12 {
		if d.Exponent() > 0 || d.NumDigits() > 12 {
			return -1
		}
		// More decimals than micro-dollars: exact only if the extra digits are zeros.
		s := d.Shift(schema.PriceDecimals)
		if !s.IsInteger() {
			return -1
		}
		return s.IntPart()
	}
	c := d.CoefficientInt64()
	for ; e > -schema.PriceDecimals; e-- {
		c *= 10
	}
	return c
}

// compareOfferRefs orders offers by price, then by the stable key.
func compareOfferRefs(a, b offerRef) int {
	c := cmp.Compare(a.priceMicros, b.priceMicros)
	if a.priceMicros < 0 || b.priceMicros < 0 {
		c = a.offer.PriceUSDPerHour.Cmp(b.offer.PriceUSDPerHour)
	}
	if c != 0 {
		return c
	}
	if c := compareOfferKeys(a.offer, b.offer); c != 0 {
		return c
	}
	return cmp.Compare(a.inputIndex, b.inputIndex)
}

// compareOfferKeys is the stable tie-break: provider, offer id, price type, region. (No
// cmp.Or: it would evaluate every comparison.)
func compareOfferKeys(a, b *schema.Offer) int {
	if c := strings.Compare(a.Provider, b.Provider); c != 0 {
		return c
	}
	if c := strings.Compare(a.OfferID, b.OfferID); c != 0 {
		return c
	}
	if c := strings.Compare(string(a.PriceType), string(b.PriceType)); c != 0 {
		return c
	}
	return strings.Compare(a.Region, b.Region)
}

func perGPUPrice(o *schema.Offer) decimal.Decimal {
	if o.PriceUSDPerGPUHour.IsPositive() {
		return o.PriceUSDPerGPUHour
	}
	return schema.PerGPU(o.PriceUSDPerHour, o.GPUCount)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// formatAge formats a duration for people: 31h, 3d.
func formatAge(d time.Duration) string {
	h := d.Hours()
	if h >= 72 {
		return fmt.Sprintf("%.0fd", h/24)
	}
	return fmt.Sprintf("%.0fh", math.Floor(h))
}
