package store

import (
	"context"
	"fmt"
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
	intra_node, nvlink_gbps, inter_node, available_count, stock, reliability, dq_flags`

// InsertOffers writes offers as one batch, tagged with the run id in system.query_log, as they
// are: nothing checks what is stored already (CompleteBatch does). An empty slice writes nothing.
func (s *Store) InsertOffers(ctx context.Context, runID string, offers []schema.Offer) error {
	return s.insertOffers(ctx, "offers", runID, offers)
}

// insertOffers writes offers into offers, or into another table with its columns
// (offers_latest).
func (s *Store) insertOffers(ctx context.Context, table, runID string, offers []schema.Offer) error {
	if len(offers) == 0 {
		return nil
	}
	n := len(offers)
	var (
		observedAt  = make([]time.Time, n)
		validUntil  = make([]*time.Time, n)
		runIDs      = make([]string, n)
		sourceURL   = make([]string, n)
		provider    = make([]string, n)
		offerID     = make([]string, n)
		tier        = make([]string, n)
		region      = make([]string, n)
		country     = make([]string, n)
		gpuModel    = make([]string, n)
		gpuNameRaw  = make([]string, n)
		gpuCount    = make([]uint16, n)
		vramGB      = make([]float64, n)
		vcpus       = make([]*float64, n)
		ramGB       = make([]*float64, n)
		diskGB      = make([]*float64, n)
		priceType   = make([]string, n)
		price       = make([]decimal.Decimal, n)
		pricePerGPU = make([]decimal.Decimal, n)
		intraNode   = make([]string, n)
		nvlinkGbps  = make([]*float64, n)
		interNode   = make([]string, n)
		available   = make([]*uint32, n)
		stock       = make([]string, n)
		reliability = make([]*float64, n)
		dqFlags     = make([][]string, n)
	)
	for i := range offers {
		o := &offers[i]
		observedAt[i] = o.ObservedAt.UTC()
		if o.ValidUntil != nil {
			v := o.ValidUntil.UTC()
			validUntil[i] = &v
		}
		runIDs[i] = o.RunID
		sourceURL[i] = o.SourceURL
		provider[i] = o.Provider
		offerID[i] = o.OfferID
		tier[i] = string(o.Tier)
		region[i] = o.Region
		country[i] = o.Country
		gpuModel[i] = o.GPUModel
		gpuNameRaw[i] = o.GPUNameRaw
		gpuCount[i] = o.GPUCount
		vramGB[i] = o.VRAMGB
		vcpus[i] = o.VCPUs
		ramGB[i] = o.RAMGB
		diskGB[i] = o.DiskGB
		priceType[i] = string(o.PriceType)
		price[i] = o.PriceUSDPerHour
		pricePerGPU[i] = o.PriceUSDPerGPUHour
		intraNode[i] = string(or(string(o.IntraNode), string(schema.IntraUnknown)))
		nvlinkGbps[i] = o.NVLinkGbps
		interNode[i] = or(string(o.InterNode), string(schema.InterUnknown))
		available[i] = o.AvailableCount
		stock[i] = or(string(o.Stock), string(schema.StockUnknown))
		reliability[i] = o.Reliability
		flags := make([]string, len(o.DQFlags))
		for j, f := range o.DQFlags {
			flags[j] = string(f)
		}
		dqFlags[i] = flags
	}
	columns := []any{observedAt, validUntil, runIDs, sourceURL, provider, offerID, tier, region, country,
		gpuModel, gpuNameRaw, gpuCount, vramGB, vcpus, ramGB, diskGB,
		priceType, price, pricePerGPU,
		intraNode, nvlinkGbps, interNode, available, stock, reliability, dqFlags}

	ctx = s.ctx(ctx, clickhouse.WithQueryID(loadQueryID(runID, offers[0].Provider, table)))
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.table(table)+" ("+offerColumns+")")
	if err != nil {
		return s.queryError("preparing the "+table+" insert", err)
	}
	defer batch.Close()
	for i, col := range columns {
		if err := batch.Column(i).Append(col); err != nil {
			return fmt.Errorf("appending %s column %d for run %s: %w: %w", table, i+1, runID, schema.ErrRejected, err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.queryError(fmt.Sprintf("inserting %d rows of run %s into %s", n, runID, table), err)
	}
	return nil
}

// LatestOffers returns the newest observation of every offer that matches f, cheapest per GPU-hour
// first (ties by provider, offer id and price type, so the order is stable).
func (s *Store) LatestOffers(ctx context.Context, f schema.OfferFilter) ([]schema.Offer, error) {
	q, args := s.latestOffersQuery(f, offerColumns)
	var got offerChunks
	var sc offerScanner
	if err := s.readOffers(ctx, "reading latest offers", q, args, sc.scanOffer, got.next); err != nil {
		return nil, err
	}
	return got.cheapestFirst(), nil
}

// latestOffersQuery selects columns of the latest offers that match f.
func (s *Store) latestOffersQuery(f schema.OfferFilter, columns string) (string, []any) {
	where, args := s.latestWhere(f)
	q := "SELECT " + columns + " FROM " + s.table("offers_latest") + " FINAL"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	// The server sorts only to cut at a limit: LatestOffers puts the rows in order in Go
	// (cheapestFirst, the same order). A whole market sorted on the server is slow, as every
	// column of every row is moved: 2.7 s of a 3.1 s read of 1M offers on the current engine.
	// The float of the price sorts first: ClickHouse 18.16 sorts a Decimal first key hundreds of
	// times slower than a float one (23 s against 0.07 s for the same 100k offers), and
	// the exact price after it keeps the order exact where two prices share a float.
	if f.Limit > 0 {
		q += fmt.Sprintf(" ORDER BY toFloat64(price_usd_per_gpu_hour), price_usd_per_gpu_hour, provider, offer_id, price_type LIMIT %d", f.Limit)
	}
	return q, args
}

// latestWhere is the condition of f on offers_latest, without its limit.
func (s *Store) latestWhere(f schema.OfferFilter) ([]string, []any) {
	where, args := selection(nil, nil, f.Selection)
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

func or(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
