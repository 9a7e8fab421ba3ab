package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// offerColumns is the explicit column list of every offer insert and read, in schema.Offer's
// order. Batch inserts name their columns: `INSERT … VALUES` through the driver hangs on 18.16.
const offerColumns = `observed_at, valid_until, run_id, source_url, provider, offer_id, tier, region, country,
	gpu_model, gpu_name_raw, gpu_count, vram_gb, vcpus, ram_gb, disk_gb,
	price_type, price_usd_per_hour, price_usd_per_gpu_hour,
	intra_node, nvlink_gbps, inter_node, available_count, stock, reliability, dq_flags, parser_version`

// InsertOffers writes offers as one batch, tagged with the run id in system.query_log, as they
// are: nothing checks what is stored already (CompleteBatch does). An empty slice writes nothing.
func (s *Store) InsertOffers(ctx context.Context, runID string, offers []schema.Offer) error {
	return s.insertOffers(ctx, "offers", runID, offers)
}

// insertBlockBytes bounds a block of a payload insert: the driver holds a block's columns (a
// copy of every body) until it sends them, so the payloads of a large batch are sent as blocks
// of about this many bytes, in one INSERT query.
const insertBlockBytes = 8 << 20

// shareOffers is the most offers a load writes in one insert, but for a row group larger than
// that alone (packShares), unless a test sets Store.shareOffers.
const shareOffers = 200_000

// insertOffers writes offers into offers, or into another table with its columns
// (offers_latest), as one INSERT of one block.
func (s *Store) insertOffers(ctx context.Context, table, runID string, offers []schema.Offer) error {
	ins := s.newOfferInsert(table, runID)
	defer ins.close()
	if err := ins.add(ctx, offers); err != nil {
		return err
	}
	return ins.send()
}

// offerInsert is one INSERT of offers, added part by part and sent as one block. One block: on
// one server ClickHouse writes the rows of a block as one part per table and view, and the
// rollups' crash repair (rollups.go) needs each row group of a load in one part, all there or
// missing. The driver holds the block's columns, about 400 bytes per offer, until send: a load
// of more than shareOffers offers sends them in shares of the row groups (schema.Share), an
// insert each.
type offerInsert struct {
	s            *Store
	table, runID string
	batch        driver.Batch
	cols         offerBlock
	n            int
}

func (s *Store) newOfferInsert(table, runID string) *offerInsert {
	return &offerInsert{s: s, table: table, runID: runID}
}

// add appends offers to the insert, which it prepares with the first of them.
func (ins *offerInsert) add(ctx context.Context, offers []schema.Offer) error {
	if len(offers) == 0 {
		return nil
	}
	if ins.batch == nil {
		ctx = ins.s.ctx(ctx, clickhouse.WithQueryID(loadQueryID(ins.runID, offers[0].Provider, ins.table)))
		batch, err := ins.s.conn.PrepareBatch(ctx, "INSERT INTO "+ins.s.table(ins.table)+" ("+offerColumns+")")
		if err != nil {
			return ins.s.queryError("preparing the "+ins.table+" insert", err)
		}
		ins.batch = batch
	}
	for i, col := range ins.cols.fill(offers) {
		if err := ins.batch.Column(i).Append(col); err != nil {
			return fmt.Errorf("appending %s column %d for run %s: %w: %w", ins.table, i+1, ins.runID, schema.ErrRejected, err)
		}
	}
	ins.n += len(offers)
	return nil
}

// send writes what was added, if anything.
func (ins *offerInsert) send() error {
	if ins.batch == nil {
		return nil
	}
	if err := ins.batch.Send(); err != nil {
		return ins.s.queryError(fmt.Sprintf("inserting %d rows of run %s into %s", ins.n, ins.runID, ins.table), err)
	}
	return nil
}

// close releases an insert that was not sent.
func (ins *offerInsert) close() {
	if ins.batch != nil {
		ins.batch.Close()
	}
}

// offerBlock holds the columns of a part of offers, in offerColumns' order; fill reuses them
// from part to part.
type offerBlock struct {
	observedAt  []time.Time
	validUntil  []*time.Time
	runIDs      []string
	sourceURL   []string
	provider    []string
	offerID     []string
	tier        []string
	region      []string
	country     []string
	gpuModel    []string
	gpuNameRaw  []string
	gpuCount    []uint16
	vramGB      []float64
	vcpus       []*float64
	ramGB       []*float64
	diskGB      []*float64
	priceType   []string
	price       []decimal.Decimal
	pricePerGPU []decimal.Decimal
	intraNode   []string
	nvlinkGbps  []*float64
	interNode   []string
	available   []*uint32
	stock       []string
	reliability []*float64
	dqFlags     [][]string
	parser      []string
}

// fill sets the block to offers and returns its columns.
func (c *offerBlock) fill(offers []schema.Offer) []any {
	c.observedAt, c.validUntil, c.runIDs, c.sourceURL = c.observedAt[:0], c.validUntil[:0], c.runIDs[:0], c.sourceURL[:0]
	c.provider, c.offerID, c.tier, c.region, c.country = c.provider[:0], c.offerID[:0], c.tier[:0], c.region[:0], c.country[:0]
	c.gpuModel, c.gpuNameRaw, c.gpuCount, c.vramGB = c.gpuModel[:0], c.gpuNameRaw[:0], c.gpuCount[:0], c.vramGB[:0]
	c.vcpus, c.ramGB, c.diskGB, c.priceType = c.vcpus[:0], c.ramGB[:0], c.diskGB[:0], c.priceType[:0]
	c.price, c.pricePerGPU, c.intraNode, c.nvlinkGbps = c.price[:0], c.pricePerGPU[:0], c.intraNode[:0], c.nvlinkGbps[:0]
	c.interNode, c.available, c.stock, c.reliability, c.dqFlags = c.interNode[:0], c.available[:0], c.stock[:0], c.reliability[:0], c.dqFlags[:0]
	c.parser = c.parser[:0]
	for i := range offers {
		o := &offers[i]
		c.observedAt = append(c.observedAt, o.ObservedAt.UTC())
		var validUntil *time.Time
		if o.ValidUntil != nil {
			v := o.ValidUntil.UTC()
			validUntil = &v
		}
		c.validUntil = append(c.validUntil, validUntil)
		c.runIDs = append(c.runIDs, o.RunID)
		c.sourceURL = append(c.sourceURL, o.SourceURL)
		c.provider = append(c.provider, o.Provider)
		c.offerID = append(c.offerID, o.OfferID)
		c.tier = append(c.tier, string(o.Tier))
		c.region = append(c.region, o.Region)
		c.country = append(c.country, o.Country)
		c.gpuModel = append(c.gpuModel, o.GPUModel)
		c.gpuNameRaw = append(c.gpuNameRaw, o.GPUNameRaw)
		c.gpuCount = append(c.gpuCount, o.GPUCount)
		c.vramGB = append(c.vramGB, o.VRAMGB)
		c.vcpus = append(c.vcpus, o.VCPUs)
		c.ramGB = append(c.ramGB, o.RAMGB)
		c.diskGB = append(c.diskGB, o.DiskGB)
		c.priceType = append(c.priceType, string(o.PriceType))
		c.price = append(c.price, o.PriceUSDPerHour)
		c.pricePerGPU = append(c.pricePerGPU, o.PriceUSDPerGPUHour)
		c.intraNode = append(c.intraNode, or(string(o.IntraNode), string(schema.IntraUnknown)))
		c.nvlinkGbps = append(c.nvlinkGbps, o.NVLinkGbps)
		c.interNode = append(c.interNode, or(string(o.InterNode), string(schema.InterUnknown)))
		c.available = append(c.available, o.AvailableCount)
		c.stock = append(c.stock, or(string(o.Stock), string(schema.StockUnknown)))
		c.reliability = append(c.reliability, o.Reliability)
		flags := make([]string, len(o.DQFlags))
		for j, f := range o.DQFlags {
			flags[j] = string(f)
		}
		c.dqFlags = append(c.dqFlags, flags)
		c.parser = append(c.parser, o.ParserVersion)
	}
	return []any{c.observedAt, c.validUntil, c.runIDs, c.sourceURL, c.provider, c.offerID, c.tier, c.region, c.country,
		c.gpuModel, c.gpuNameRaw, c.gpuCount, c.vramGB, c.vcpus, c.ramGB, c.diskGB,
		c.priceType, c.price, c.pricePerGPU,
		c.intraNode, c.nvlinkGbps, c.interNode, c.available, c.stock, c.reliability, c.dqFlags, c.parser}
}

// LatestOffers returns the newest observation of every offer that matches f, in f.Sort's order:
// cheapest per GPU-hour first (ties by provider, offer id and price type, so the order is
// stable), or by the sort's key first and then so.
func (s *Store) LatestOffers(ctx context.Context, f schema.OfferFilter) ([]schema.Offer, error) {
	const what = "reading latest offers"
	if f.After != nil && f.Sort != "" && f.Sort != schema.SortPrice {
		return nil, fmt.Errorf("%s: a page after an offer is read in price order only, not by %s", what, f.Sort)
	}
	q, args := s.latestOffersQuery(f, offerColumns)
	var got offerChunks
	var sc offerScanner
	if err := s.readOffers(ctx, what, q, args, sc.scanOffer, got.next); err != nil {
		return nil, err
	}
	offers := got.cheapestFirst()
	if key := sortKey(f.Sort); key != nil {
		slices.SortStableFunc(offers, func(a, b schema.Offer) int { return key(&a, &b) })
	}
	return offers, nil
}

// latestOffersQuery selects columns of the latest offers that match f, after f.After when set.
// The position is a condition on the market read with FINAL, not inside it: a condition on the
// price inside could pick an older version of an offer, not yet merged away, whose price passes
// where the newest one's does not.
func (s *Store) latestOffersQuery(f schema.OfferFilter, columns string) (string, []any) {
	from, args := s.latestMarket(f)
	if a := f.After; a != nil {
		from = "(SELECT " + columns + " FROM " + from + ") WHERE " + afterOffer
		price := a.PriceUSDPerGPUHour.StringFixed(schema.PriceDecimals)
		args = append(args, price, price, a.Provider, a.Provider, a.OfferID, a.OfferID, string(a.PriceType))
	}
	return "SELECT " + columns + " FROM " + from + latestLimit(f), args
}

// afterOffer keeps the offers after a position in latestLimit's order. The price is bound as
// text and read as the column's type, so the comparison is exact.
const afterOffer = `(price_usd_per_gpu_hour > toDecimal64(?, 6) OR (price_usd_per_gpu_hour = toDecimal64(?, 6) AND
	(provider > ? OR (provider = ? AND (offer_id > ? OR (offer_id = ? AND price_type > ?))))))`

// latestLimit orders and cuts the latest offers at f's limit, if it has one. The server sorts
// only to cut at a limit: LatestOffers puts the rows in order in Go (cheapestFirst, the same
// order, then sortKey's). A whole market sorted on the server is slow, as every column of every
// row is moved: 2.7 s of a 3.1 s read of 1M offers on the current engine. The float of the
// price sorts first after the sort's key: ClickHouse 18.16 sorts a Decimal first key hundreds of
// times slower than a float one (23 s against 0.07 s for the same 100k offers), and the exact
// price after it keeps the order exact where two prices share a float.
func latestLimit(f schema.OfferFilter) string {
	if f.Limit <= 0 {
		return ""
	}
	return fmt.Sprintf(" ORDER BY %stoFloat64(price_usd_per_gpu_hour), price_usd_per_gpu_hour, provider, offer_id, price_type LIMIT %d",
		sortColumns[f.Sort], f.Limit)
}

// sortColumns are the ORDER BY keys of each order of the latest offers before the price's.
var sortColumns = map[schema.OfferSort]string{schema.SortGPU: "gpu_model = '', gpu_model, ", schema.SortVRAM: "vram_gb DESC, ", schema.SortProvider: "provider, "}

// outsideCatalog is 1 for an offer of a GPU outside the catalog (no gpu_model), 0 else: the
// first key of the gpu order in sortColumns.
func outsideCatalog(o *schema.Offer) int {
	if o.GPUModel == "" {
		return 1
	}
	return 0
}

// sortKey compares two offers on the key of an order, the ORDER BY of sortColumns (strings as
// bytes, as ClickHouse does); nil for the cheapest-first order, which needs none.
func sortKey(order schema.OfferSort) func(a, b *schema.Offer) int {
	switch order {
	case schema.SortGPU:
		return func(a, b *schema.Offer) int {
			return cmp.Or(cmp.Compare(outsideCatalog(a), outsideCatalog(b)), strings.Compare(a.GPUModel, b.GPUModel))
		}
	case schema.SortVRAM:
		return func(a, b *schema.Offer) int { return cmp.Compare(b.VRAMGB, a.VRAMGB) }
	case schema.SortProvider:
		return func(a, b *schema.Offer) int { return strings.Compare(a.Provider, b.Provider) }
	}
	return nil
}

// latestMarket is the latest market that matches f (its limit, order and position aside), for
// a FROM. Conditions on what every version of an offer shares (its key, its GPU model as the
// catalog named it, its age) select inside FINAL, as latestWhere writes them; those on what a
// newer version may change (its price, its host, where it runs, its GPUs) apply to the newest
// version only (newestWhere), outside FINAL: inside, an older version not merged away yet whose
// price passes could stand in for a newer one whose price does not.
func (s *Store) latestMarket(f schema.OfferFilter) (string, []any) {
	where, args := s.latestWhere(f)
	from := s.latestFrom(where)
	if newest, more := newestWhere(f); len(newest) > 0 {
		// A subquery of its own, so that an alias of the query reading it (min(…) AS
		// price_usd_per_gpu_hour) is not what its conditions read.
		from = "(SELECT * FROM (SELECT * FROM " + from + ") WHERE " + strings.Join(newest, " AND ") + ")"
		args = append(args, more...)
	}
	return from, args
}

// latestFrom is the latest market where the conditions hold, for a FROM.
func (s *Store) latestFrom(where []string) string {
	from := s.table("offers_latest") + " FINAL"
	if len(where) > 0 {
		from += " WHERE " + strings.Join(where, " AND ")
	}
	return from
}

// newestWhere is the condition of f on the newest version of each offer: the GPU specs, the
// price cap, regions, countries and the host's least vCPUs and RAM.
func newestWhere(f schema.OfferFilter) ([]string, []any) {
	var where []string
	var args []any
	if len(f.GPUs) > 0 {
		var specs []string
		for _, g := range f.GPUs {
			var c []string
			c, args = in(c, args, "gpu_model", g.Models)
			for _, b := range []struct {
				cond  string
				value any
				set   bool
			}{
				{"gpu_count >= ?", int(g.MinCount), g.MinCount > 0}, {"gpu_count <= ?", int(g.MaxCount), g.MaxCount > 0},
				{"vram_gb >= ?", g.MinVRAMGB, g.MinVRAMGB > 0}, {"vram_gb <= ?", g.MaxVRAMGB, g.MaxVRAMGB > 0},
			} {
				if b.set {
					c, args = append(c, b.cond), append(args, b.value)
				}
			}
			if len(c) == 0 { // a spec of any GPU: every offer fits
				c = []string{"1"}
			}
			specs = append(specs, "("+strings.Join(c, " AND ")+")")
		}
		where = append(where, "("+strings.Join(specs, " OR ")+")")
	}
	if f.MaxUSDPerGPUHour.IsPositive() {
		where = append(where, "price_usd_per_gpu_hour <= toDecimal64(?, 6)")
		args = append(args, f.MaxUSDPerGPUHour.Truncate(schema.PriceDecimals).StringFixed(schema.PriceDecimals))
	}
	if len(f.Regions) > 0 {
		// A region, or one inside it: its name then a dash (us keeps us-texas). The regions are
		// ASCII (package selection checks them), so the prefix's bytes are the name's start.
		var regions []string
		for _, r := range f.Regions {
			regions = append(regions, "lowerUTF8(region) = ? OR substring(lowerUTF8(region), 1, ?) = ?")
			args = append(args, r, len(r)+1, r+"-")
		}
		where = append(where, "("+strings.Join(regions, " OR ")+")")
	}
	where, args = in(where, args, "country", f.Countries)
	if f.MinVCPUs > 0 {
		where, args = append(where, "vcpus >= ?"), append(args, f.MinVCPUs)
	}
	if f.MinRAMGB > 0 {
		where, args = append(where, "ram_gb >= ?"), append(args, f.MinRAMGB)
	}
	return where, args
}

// latestWhere is the condition of f on offers_latest, inside FINAL (latestMarket), without its
// limit.
func (s *Store) latestWhere(f schema.OfferFilter) ([]string, []any) {
	where, args := selection(nil, nil, f.Selection)
	if f.KnownGPUs {
		where = append(where, "gpu_model != ''")
	}
	if f.MinVRAMGB > 0 {
		where = append(where, "vram_gb >= ?")
		args = append(args, f.MinVRAMGB)
	}
	if f.MinIntraNode != "" {
		var linked []schema.IntraNode
		for _, c := range schema.IntraNodes {
			if c.AtLeast(f.MinIntraNode) {
				linked = append(linked, c)
			}
		}
		where, args = in(where, args, "intra_node", linked)
	}
	if f.MaxAge > 0 {
		now := s.now().UTC().Truncate(time.Second)
		where = append(where, "((valid_until IS NULL AND observed_at >= ?) OR valid_until > ?)")
		args = append(args, now.Add(-f.MaxAge), now.Add(-f.ExpiredWithin))
	}
	return where, args
}

// readOffers runs a query and scans each row with scan into the offer next returns.
func (s *Store) readOffers(ctx context.Context, what, query string, args []any, scan func(driver.Rows, *schema.Offer) error, next func() *schema.Offer) error {
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return s.queryError(what, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows, next()); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := rows.Err(); err != nil {
		return s.queryError(what, err)
	}
	return nil
}

// queryID names a query in system.query_log: the table, the run and a unique suffix (a run may
// retry an insert, and query ids must be unique among running queries).
func queryID(table, runID string) string {
	return fmt.Sprintf("gpucost-%s-%s-%d", table, runID, time.Now().UnixNano())
}

// loadQueryID names a write of a batch (CompleteBatch, LoadImport): gpucost-load/RUN/PROVIDER/TABLE/N,
// so that a later load of the batch can find those still running (endStrays).
func loadQueryID(runID, provider, table string) string {
	return fmt.Sprintf("gpucost-load/%s/%s/%s/%d", runID, provider, table, time.Now().UnixNano())
}

// selection adds the conditions on GPU models, providers and price types, for the lists that
// are not empty.
func selection(where []string, args []any, sel schema.Selection) ([]string, []any) {
	where, args = in(where, args, "gpu_model", sel.GPUModels)
	where, args = in(where, args, "provider", sel.Providers)
	return in(where, args, "price_type", sel.PriceTypes)
}

// in adds the condition "column IN (?, ?, …)", with one bound value per placeholder, when
// values is not empty: a bound slice becomes an array literal, which 18.16 does not accept on
// the right of IN.
func in[T ~string](where []string, args []any, column string, values []T) ([]string, []any) {
	if len(values) == 0 {
		return where, args
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(values)), ", ")
	for _, v := range values {
		args = append(args, string(v))
	}
	return append(where, column+" IN ("+marks+")"), args
}

// or is v, or fallback when v is its type's zero.
func or[T comparable](v, fallback T) T {
	var zero T
	if v == zero {
		return fallback
	}
	return v
}
