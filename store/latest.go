package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

// offerChunk is how many offers offerChunks allocates at a time beyond what was reserved.
const offerChunk = 4096

// offerChunks collects the offers of a read in chunks, so that a market of a million offers is
// never copied as it grows (one growing slice copied 1.8 GB for 1M offers). A read that knows
// how many offers come reserves them: they fill one chunk, which all returns as it is.
type offerChunks struct {
	chunks [][]schema.Offer // each full but the last
	n      int
}

// reserve makes the first chunk hold n offers. It is a hint: more may come.
func (c *offerChunks) reserve(n int) {
	if len(c.chunks) == 0 && n > 0 {
		c.chunks = append(c.chunks, make([]schema.Offer, 0, n))
	}
}

// next returns the zero offer to scan the next row into.
func (c *offerChunks) next() *schema.Offer {
	last := len(c.chunks) - 1
	if last < 0 || len(c.chunks[last]) == cap(c.chunks[last]) {
		c.chunks = append(c.chunks, make([]schema.Offer, 0, offerChunk))
		last++
	}
	chunk := c.chunks[last][:len(c.chunks[last])+1]
	c.chunks[last] = chunk
	c.n++
	return &chunk[len(chunk)-1]
}

// each calls fn with each offer collected and its position, in the order read.
func (c *offerChunks) each(fn func(i int, o *schema.Offer)) {
	i := 0
	for _, chunk := range c.chunks {
		for j := range chunk {
			fn(i, &chunk[j])
			i++
		}
	}
}

// latestKey is an offer with what orders it in the latest market unpacked, so that sorting
// compares numbers and reads no offer: its price's coefficient and exponent, and the ranks of its
// provider and price type among those of the market (their order as strings).
type latestKey struct {
	coef     int64 // Decimal(18, 6) fits an int64
	offerID  string
	o        *schema.Offer
	index    int32 // in the order read
	provider int32
	exp      int32
	pt       int32
}

// all returns the offers collected, in the order read: the one chunk as it is, or a copy of
// them all.
func (c *offerChunks) all() []schema.Offer {
	if c.n == 0 {
		return nil
	}
	if len(c.chunks) == 1 {
		return c.chunks[0]
	}
	out := make([]schema.Offer, 0, c.n)
	for _, chunk := range c.chunks {
		out = append(out, chunk...)
	}
	return out
}

// cheapestFirst returns the offers collected in the order of the latest market: cheapest
// $/GPU-hour first, ties by provider, offer id and price type. It is the order of the ORDER BY of
// latestLimit, which sorts first on the float of the price: the float is monotonic in the
// exact price, which sorts next, so the exact price alone gives the same order. Offer keys are
// unique in the latest market, so the order is total. No offers is nil.
func (c *offerChunks) cheapestFirst() []schema.Offer {
	if c.n == 0 {
		return nil
	}
	providers, priceTypes := map[string]int32{}, map[schema.PriceType]int32{}
	keys := make([]latestKey, c.n)
	c.each(func(i int, o *schema.Offer) {
		providers[o.Provider] = 0
		priceTypes[o.PriceType] = 0
		keys[i] = latestKey{coef: o.PriceUSDPerGPUHour.CoefficientInt64(), exp: o.PriceUSDPerGPUHour.Exponent(), offerID: o.OfferID, o: o, index: int32(i)}
	})
	rank(providers)
	rank(priceTypes)
	for i := range keys {
		k := &keys[i]
		k.provider, k.pt = providers[k.o.Provider], priceTypes[k.o.PriceType]
	}
	slices.SortFunc(keys, compareLatest)
	// Each offer goes to its place in the order it was read: the chunks are read in sequence
	// (copying in the sorted order read them at random, twice as slow for 1M offers).
	place := make([]int32, c.n)
	for i, k := range keys {
		place[k.index] = int32(i)
	}
	out := make([]schema.Offer, c.n)
	c.each(func(i int, o *schema.Offer) { out[place[i]] = *o })
	return out
}

// rank sets each value of ranks to the position of its key among the keys in order.
func rank[K cmp.Ordered](ranks map[K]int32) {
	keys := make([]K, 0, len(ranks))
	for k := range ranks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		ranks[k] = int32(i)
	}
}

// compareLatest orders two offers of the latest market.
func compareLatest(a, b latestKey) int {
	if a.exp != b.exp {
		if c := a.o.PriceUSDPerGPUHour.Cmp(b.o.PriceUSDPerGPUHour); c != 0 {
			return c
		}
	} else if a.coef != b.coef {
		return cmp.Compare(a.coef, b.coef)
	}
	if a.provider != b.provider {
		return cmp.Compare(a.provider, b.provider)
	}
	if c := cmp.Compare(a.offerID, b.offerID); c != 0 {
		return c
	}
	return cmp.Compare(a.pt, b.pt)
}

// toPlanColumns are the columns of the offers that planning reads (package optimizer) and the
// report's market section with it: LatestOffersToPlan leaves the other fields of its offers zero.
const toPlanColumns = `observed_at, valid_until, provider, offer_id, tier, region, country,
	gpu_model, gpu_count, vram_gb, price_type, price_usd_per_hour, price_usd_per_gpu_hour,
	intra_node, inter_node, available_count, reliability`

// LatestOffersToPlan returns the latest offers that match f as LatestOffers does, in no
// particular order (a plan does not depend on the order of its offers: the optimizer's
// TestDeterministic; nor does the report's market), with the fields of toPlanColumns only:
// run_id, source_url, gpu_name_raw, vcpus, ram_gb, disk_gb, nvlink_gbps, stock and dq_flags are
// left zero. Planning reads the whole market: a third of the time of reading 1M offers went on
// columns it never looks at, more than half of what was left on putting them in order, and
// half of what was left then on copying them out of the chunks they were read into, so the
// offers are counted first and read into one slice of that size. On servers ch-go speaks they
// are read as columns (columnar.go).
func (s *Store) LatestOffersToPlan(ctx context.Context, f schema.OfferFilter) ([]schema.Offer, error) {
	const what = "reading the latest offers to plan on"
	from, args := s.latestMarket(f)
	var n uint64
	if err := s.conn.QueryRow(s.ctx(ctx), "SELECT count() FROM "+from, args...).Scan(&n); err != nil {
		return nil, s.queryError(what, err)
	}
	q := "SELECT " + toPlanColumns + " FROM " + from + latestLimit(f)
	if f.Limit > 0 {
		n = min(n, uint64(f.Limit))
	}
	var got offerChunks
	got.reserve(int(n))
	if s.readsColumnar() {
		if err := s.readPlanOffers(ctx, what, q, args, got.next); err != nil {
			return nil, err
		}
		return got.all(), nil
	}
	var sc offerScanner
	if err := s.readOffers(ctx, what, q, args, sc.scanPlanOffer, got.next); err != nil {
		return nil, err
	}
	return got.all(), nil
}

// LatestPerGPU summarises the latest offers that match f (its Limit aside) per GPU model, as
// market.PerGPU summarises what LatestOffers returns for f, without reading the market into Go:
// the server finds the cheapest offer of every GPU model and price type and counts the offers,
// providers and newest observation of each (one query on the columns it needs), and only those
// cheapest offers are read whole (a second query, by key). An offer observed again between the
// two is read as it is then.
func (s *Store) LatestPerGPU(ctx context.Context, f schema.OfferFilter) ([]market.GPU, error) {
	const what = "reading the latest offers per GPU model"
	f.KnownGPUs = true
	latest, args := s.latestMarket(f)
	// Every offer at its group's lowest price joins the group's figures; the first of them in
	// the cheapest-first order (ties by provider and offer id) is the group's cheapest.
	q := `SELECT provider, price_type, offer_id, offers, seen_at, providers
		FROM (SELECT gpu_model, price_type, price_usd_per_gpu_hour, provider, offer_id FROM ` + latest + `) AS market
		ALL INNER JOIN (
			SELECT gpu_model, price_type, min(price_usd_per_gpu_hour) AS price_usd_per_gpu_hour,
				count() AS offers, max(observed_at) AS seen_at, groupUniqArray(provider) AS providers
			FROM ` + latest + `
			GROUP BY gpu_model, price_type) AS groups
		USING (gpu_model, price_type, price_usd_per_gpu_hour)
		ORDER BY gpu_model, price_type, provider, offer_id
		LIMIT 1 BY gpu_model, price_type`
	rows, err := s.conn.Query(s.ctx(ctx), q, append(args, args...)...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	groups := map[schema.Key]*market.Group{}
	var keys []any
	for rows.Next() {
		var (
			k      schema.Key
			pt     string
			offers uint64
			g      market.Group
		)
		if err := rows.Scan(&k.Provider, &pt, &k.OfferID, &offers, &g.SeenAt, &g.Providers); err != nil {
			return nil, fmt.Errorf("%s: scanning a row: %w", what, err)
		}
		k.PriceType = schema.PriceType(pt)
		g.Offers, g.SeenAt = int(offers), g.SeenAt.UTC()
		groups[k] = &g
		keys = append(keys, k.Provider, pt, k.OfferID)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	if len(groups) == 0 {
		return nil, nil
	}
	q = "SELECT " + offerColumns + " FROM " + s.table("offers_latest") + " FINAL WHERE (provider, price_type, offer_id) IN (" +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(groups)), ", ") + ")"
	var got offerChunks
	var sc offerScanner
	if err := s.readOffers(ctx, what, q, keys, sc.scanOffer, got.next); err != nil {
		return nil, err
	}
	out := make([]market.Group, 0, len(groups))
	for _, o := range got.cheapestFirst() {
		if g := groups[o.Key()]; g != nil {
			g.Cheapest = o
			out = append(out, *g)
		}
	}
	return market.Summarize(out), nil
}

// CountLatest counts the latest offers that match f (its Limit, order and position aside):
// offers is how many match, and unknown how many more would, were f.KnownGPUs not set (offers
// of GPUs outside the catalog; 0 when it is not set).
func (s *Store) CountLatest(ctx context.Context, f schema.OfferFilter) (offers, unknown int, err error) {
	known := f.KnownGPUs
	f.KnownGPUs = false
	from, args := s.latestMarket(f)
	var all, outside uint64
	if err := s.conn.QueryRow(s.ctx(ctx), "SELECT count(), countIf(gpu_model = '') FROM "+from, args...).Scan(&all, &outside); err != nil {
		return 0, 0, s.queryError("counting the latest offers", err)
	}
	if !known {
		return int(all), 0, nil
	}
	return int(all - outside), int(outside), nil
}

// summaryKeys are the key columns of LatestSummaries per dimension, in market.GroupKey's
// order: their names, the dimension's expressions, and a constant of each one's type for when
// the market is not grouped by it.
var summaryKeys = map[market.Dimension]struct{ names, exprs, none []string }{
	market.ByGPU: {[]string{"k_model", "k_raw", "k_vram"},
		[]string{"gpu_model", "if(gpu_model = '', gpu_name_raw, '')", "if(gpu_model = '', vram_gb, 0)"},
		[]string{"''", "''", "toFloat64(0)"}},
	market.ByProvider: {[]string{"k_provider"}, []string{"provider"}, []string{"''"}},
	market.ByCount:    {[]string{"k_count"}, []string{"gpu_count"}, []string{"toUInt16(0)"}},
}

// LatestSummaries summarises the latest offers that match f (its Limit, order and position
// aside) per group of by, as market.Summaries summarises what LatestOffers returns for f,
// without reading the market into Go: the server tallies each group at each price type (the
// least and most $/GPU-hour, the offers, the providers), and market.Combine joins a group's
// tallies.
func (s *Store) LatestSummaries(ctx context.Context, f schema.OfferFilter, by []market.Dimension) ([]market.Summary, error) {
	const what = "summarising the latest offers"
	from, args := s.latestMarket(f)
	var cols, group []string
	for _, d := range market.Dimensions {
		k := summaryKeys[d]
		exprs := k.none
		if slices.Contains(by, d) {
			exprs = k.exprs
			group = append(group, k.names...)
		}
		for i, e := range exprs {
			cols = append(cols, e+" AS "+k.names[i])
		}
	}
	q := "SELECT " + strings.Join(cols, ", ") + `, price_type, min(price_usd_per_gpu_hour), max(price_usd_per_gpu_hour), count(), groupUniqArray(provider)
		FROM ` + from + " GROUP BY " + strings.Join(append(group, "price_type"), ", ")
	rows, err := s.conn.Query(s.ctx(ctx), q, args...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	var tallies []market.Tally
	for rows.Next() {
		var (
			t      market.Tally
			pt     string
			offers uint64
		)
		k := &t.Key
		if err := rows.Scan(&k.GPUModel, &k.GPUNameRaw, &k.VRAMGB, &k.Provider, &k.GPUCount, &pt, &t.Min, &t.Max, &offers, &t.Providers); err != nil {
			return nil, fmt.Errorf("%s: scanning a row: %w", what, err)
		}
		t.PriceType, t.Offers = schema.PriceType(pt), int(offers)
		tallies = append(tallies, t)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	out := market.Combine(tallies)
	market.SortSummaries(out, by, "")
	return out, nil
}
