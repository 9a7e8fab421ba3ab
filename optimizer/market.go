package optimizer

import (
	"cmp"
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
	idPrefix    uint64  // the first 8 bytes of OfferID: ordered as the ids are, where they differ
	available   int64   // AvailableCount, -1 when unknown
	continent   string  // Offer.Continent(): "" when the provider publishes no location
	inputIndex  int     // position in Input.Offers: the last tie-break
}

// bucket holds the offers of one class from one provider, cheapest first.
type bucket struct {
	provider string
	offers   []offerRef
	size     int // offers filed in it, counted before they are copied in
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
	buckets      []*bucket
	minPrice     float64
}

// classKey identifies a class: the canonical GPU model's index, VRAM, GPUs per offer, and
// the enum positions of the interconnects and price type.
type classKey struct {
	modelIndex                      int // dense index of the canonical GPU model
	vram                            float64
	gpusPerOffer                    int
	intraNode, interNode, priceType uint8
}

// currentKey is what a current placement is priced by: provider, canonical GPU model and
// price type.
type currentKey struct {
	provider, model string
	priceType       schema.PriceType
}

// market is the offer index Optimize builds once per plan, in time linear in the offers but
// for each bucket's sort. Every offer that can be planned on is filed under its class (what
// any workload judges alike, classKey) and, within the class, in its provider's bucket,
// cheapest first: the planner evaluates a workload once per class and walks a bucket's
// offers only until they cost more than the candidates it keeps, so it seldom reads past a
// bucket's head.
//
// buildMarket makes it in two passes over the offers: the first judges whether each price
// holds, finds each offer's class and bucket and counts the bucket's offers
// (classifyOffers); the second copies each offer, unpacked into an offerRef, into its bucket,
// every bucket a slice of one array of the considered offers, so that no offer costs an
// allocation (fileOffers). Each bucket is then sorted on integers, the price in
// micro-dollars and the offer id's first 8 bytes, its strings compared only between offers
// that tie on both (sortOffers); the classes, some hundreds, and their buckets, a handful
// each, are sorted by their keys.
type market struct {
	classes    []*class     // deterministic order (class.order)
	visitOrder []*class     // cheapest per GPU first: fills the top-k early so pruning bites
	models     []gpus.Model // GPU models with fresh offers, by name
	// forCurrent holds every catalog offer (stale providers and commitments too) by provider,
	// model and price type, to price current placements; sorted on first use.
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

// buildMarket indexes the offers once per plan. It judges which prices hold now and
// excludes the providers with none that does, keeps the offers the current placements in
// need are priced from, files every offer that can be planned on under its class and
// provider (counting the ones it leaves out in the summary), and orders classes and offers
// so that the same input always makes the same plan. Reserved and term prices are planned on
// only when commitments is true: Options.AllowCommitments, or a workload with commit_up_to.
func buildMarket(offers []schema.Offer, now time.Time, o *Options, need map[currentKey]bool, commitments bool) *market {
	m := &market{
		forCurrent:     make(map[currentKey][]*schema.Offer),
		currentSorted:  make(map[currentKey]bool),
		staleProviders: make(map[string]bool),
		providers:      make(map[string]bool),
		expired:        make(map[string]expiry),
		maxAge:         time.Duration(o.MaxOfferAgeHours * float64(time.Hour)),
	}
	m.summary.Offers = len(offers)
	fresh := newFreshness(now, m.maxAge)
	byKey, bucketOf := m.classifyOffers(offers, fresh, commitments, need)
	m.excludeStale(fresh)
	fileOffers(offers, bucketOf, m.summary.Considered)
	m.listModels(byKey)
	m.orderClasses(byKey)
	return m
}

// classifyOffers finds the class and provider bucket of each offer that can be planned on,
// and returns the classes by key and, per offer, its bucket (nil for the offers left out),
// each bucket's size counted. It judges every offer's price with fresh, which notes it under
// its provider, and keeps the offers a current placement may be priced from, whether or not
// their prices still hold. It counts in the summary what it leaves out: offers of GPU models
// the catalog lacks, offers without GPUs or a positive price, offers whose price no longer
// holds, and reserved and term prices when no workload may take them (commitments false).
func (m *market) classifyOffers(offers []schema.Offer, fresh *freshness, commitments bool, need map[currentKey]bool) (map[classKey]*class, []*bucket) {
	models := newModelLookup(need)
	byKey := make(map[classKey]*class)
	bucketOf := make([]*bucket, len(offers))
	for i := range offers {
		off := &offers[i]
		holds := fresh.holds(off)
		info := models.lookup(off.GPUModel)
		switch {
		case !info.ok:
			m.summary.UnknownGPU++
			continue
		case off.GPUCount == 0 || !off.PriceUSDPerHour.IsPositive():
			m.summary.Invalid++
			continue
		}
		if info.needed {
			m.keepForCurrent(off, info.model.Name, need)
		}
		switch {
		case !holds:
			m.summary.Stale++
			m.noteExpired(off, info.model.Name)
			continue
		case off.PriceType.Committed() && !commitments:
			m.summary.Commitments++
			continue
		}
		m.summary.Considered++
		b := classFor(byKey, off, info).bucketFor(off.Provider)
		b.size++
		bucketOf[i] = b
	}
	return byKey, bucketOf
}

// keepForCurrent keeps an offer of the canonical GPU model named model for pricing the
// current placements, when one of them (need) is of its provider, model and price type.
func (m *market) keepForCurrent(off *schema.Offer, model string, need map[currentKey]bool) {
	key := currentKey{off.Provider, model, off.PriceType}
	if need[key] {
		m.forCurrent[key] = append(m.forCurrent[key], off)
	}
}

// modelInfo is what the catalog says of one spelling of a GPU model.
type modelInfo struct {
	model  gpus.Model
	ok     bool // the catalog has the model
	index  int  // dense index of the canonical model, for class keys
	needed bool // some current placement is priced from this model's offers
}

// modelLookup looks each spelling of a GPU model up in the catalog once (gpus.Lookup
// allocates) and numbers the canonical models densely, in the order they are first seen.
type modelLookup struct {
	bySpelling map[string]*modelInfo
	index      map[string]int  // canonical name → dense index
	needed     map[string]bool // canonical names of the models current placements run on
}

// newModelLookup starts a lookup that knows which models the current placements in need run on.
func newModelLookup(need map[currentKey]bool) *modelLookup {
	l := &modelLookup{
		bySpelling: make(map[string]*modelInfo),
		index:      make(map[string]int),
		needed:     make(map[string]bool, len(need)),
	}
	for k := range need {
		l.needed[k.model] = true
	}
	return l
}

// lookup returns what the catalog says of a GPU model as an offer spells it.
func (l *modelLookup) lookup(spelling string) *modelInfo {
	if info := l.bySpelling[spelling]; info != nil {
		return info
	}
	info := &modelInfo{}
	info.model, info.ok = gpus.Lookup(spelling)
	if info.ok {
		index, ok := l.index[info.model.Name]
		if !ok {
			index = len(l.index)
			l.index[info.model.Name] = index
		}
		info.index, info.needed = index, l.needed[info.model.Name]
	}
	l.bySpelling[spelling] = info
	return info
}

// classFor returns the class of an offer, made on first sight. An offer that gives no VRAM
// has its catalog model's; one that names no interconnect has an unknown one.
func classFor(byKey map[classKey]*class, off *schema.Offer, info *modelInfo) *class {
	vram := off.VRAMGB
	if vram <= 0 {
		vram = info.model.VRAMGB
	}
	intra := off.IntraNode
	if intra == "" {
		intra = schema.IntraUnknown
	}
	inter := off.InterNode
	if inter == "" {
		inter = schema.InterUnknown
	}
	key := classKey{modelIndex: info.index, vram: vram, gpusPerOffer: int(off.GPUCount), intraNode: enumIndex(intra, schema.IntraNodes),
		interNode: enumIndex(inter, schema.InterNodes), priceType: enumIndex(off.PriceType, schema.PriceTypes)}
	c := byKey[key]
	if c == nil {
		c = &class{model: info.model, vram: vram, gpusPerOffer: int(off.GPUCount), intraNode: intra, interNode: inter, priceType: off.PriceType, minPrice: math.Inf(1)}
		byKey[key] = c
	}
	return c
}

// bucketFor returns the bucket of a provider's offers in class c, made on first sight.
func (c *class) bucketFor(provider string) *bucket {
	for _, b := range c.buckets { // a handful of providers: a scan beats a map
		if b.provider == provider {
			return b
		}
	}
	b := &bucket{provider: provider}
	c.buckets = append(c.buckets, b)
	return b
}

// fileOffers copies every offer that has a bucket (bucketOf, per offer; nil for the offers
// left out) into it. The considered offers' entries are one array, each bucket's offers a
// slice of it sized in advance: no offer costs an allocation.
func fileOffers(offers []schema.Offer, bucketOf []*bucket, considered int) {
	all := make([]offerRef, considered)
	for _, b := range bucketOf {
		if b != nil && b.offers == nil {
			b.offers, all = all[:0:b.size], all[b.size:]
		}
	}
	for i, b := range bucketOf {
		if b != nil {
			b.offers = append(b.offers, newOfferRef(&offers[i], i))
		}
	}
}

// newOfferRef unpacks what the planner's inner loop reads of an offer, the inputIndex-th of
// Input.Offers.
func newOfferRef(off *schema.Offer, inputIndex int) offerRef {
	ref := offerRef{offer: off, priceMicros: microDollars(off.PriceUSDPerHour), idPrefix: prefixKey(off.OfferID), available: -1, continent: off.Continent(), inputIndex: inputIndex}
	if ref.priceMicros >= 0 && ref.priceMicros <= 1<<53 {
		ref.price = float64(ref.priceMicros) / 1e6 // both exact, so rounded once, as InexactFloat64 is
	} else {
		ref.price = off.PriceUSDPerHour.InexactFloat64()
	}
	if off.AvailableCount != nil {
		ref.available = int64(*off.AvailableCount)
	}
	return ref
}

// listModels lists the GPU models that have classes, by name, in m.models, and gives each
// class the index of its model there.
func (m *market) listModels(byKey map[classKey]*class) {
	index := make(map[string]int)
	for _, c := range byKey {
		if _, ok := index[c.model.Name]; !ok {
			index[c.model.Name] = 0
			m.models = append(m.models, c.model)
		}
	}
	slices.SortFunc(m.models, func(a, b gpus.Model) int { return strings.Compare(a.Name, b.Name) })
	for i, md := range m.models {
		index[md.Name] = i
	}
	for _, c := range byKey {
		c.modelIndex = index[c.model.Name]
	}
}

// orderClasses lists the classes in their deterministic order (compareClasses), each one's
// buckets by provider and every bucket's offers cheapest first (sortOffers), noting each
// class's lowest price; and, for the planner, the same classes cheapest per GPU first: the
// kept candidates fill early, so pruning bites.
func (m *market) orderClasses(byKey map[classKey]*class) {
	for _, c := range byKey {
		slices.SortFunc(c.buckets, func(a, b *bucket) int { return strings.Compare(a.provider, b.provider) })
		for _, b := range c.buckets {
			sortOffers(b.offers)                            // cheapest first: a bucket is made with its first offer
			c.minPrice = min(c.minPrice, b.offers[0].price) // and price follows the order
		}
		m.classes = append(m.classes, c)
	}
	slices.SortFunc(m.classes, compareClasses)
	for i, c := range m.classes {
		c.order = i
	}
	m.visitOrder = slices.Clone(m.classes)
	slices.SortStableFunc(m.visitOrder, func(a, b *class) int {
		return cmp.Compare(a.minPrice/float64(a.gpusPerOffer), b.minPrice/float64(b.gpusPerOffer))
	})
}

// compareClasses orders classes by GPU model, VRAM, GPUs per offer, interconnects and price
// type: the fields of their key, so no two classes compare equal.
func compareClasses(a, b *class) int {
	return cmp.Or(
		strings.Compare(a.model.Name, b.model.Name),
		cmp.Compare(a.vram, b.vram),
		cmp.Compare(a.gpusPerOffer, b.gpusPerOffer),
		strings.Compare(string(a.intraNode), string(b.intraNode)),
		strings.Compare(string(a.interNode), string(b.interNode)),
		strings.Compare(string(a.priceType), string(b.priceType)),
	)
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

// sortOffers sorts one bucket's offers in the order of compareOfferRefs. All are of one
// provider, so that order is by price and then offer id first; when every price is a whole
// number of micro-dollars it compares integers first, the prices in micro-dollars and the
// offer ids' first 8 bytes, and the whole comparison only between offers that tie on both.
func sortOffers(offers []offerRef) {
	if slices.ContainsFunc(offers, func(ref offerRef) bool { return ref.priceMicros < 0 }) {
		slices.SortFunc(offers, compareOfferRefs)
		return
	}
	slices.SortFunc(offers, func(a, b offerRef) int {
		if a.priceMicros != b.priceMicros {
			return cmp.Compare(a.priceMicros, b.priceMicros)
		}
		if a.idPrefix != b.idPrefix {
			return cmp.Compare(a.idPrefix, b.idPrefix)
		}
		return compareOfferRefs(a, b)
	})
}

// prefixKey packs the first 8 bytes of s big-endian, zero-padded, into an integer: when two
// strings' keys differ, they compare as the strings do.
func prefixKey(s string) uint64 {
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
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

// perGPUPrice is an offer's price per GPU-hour: as published, else its hourly price over its
// GPUs.
func perGPUPrice(o *schema.Offer) decimal.Decimal {
	if o.PriceUSDPerGPUHour.IsPositive() {
		return o.PriceUSDPerGPUHour
	}
	return schema.PerGPU(o.PriceUSDPerHour, o.GPUCount)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
