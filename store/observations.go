package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpucost/gpucost/schema"
)

// Observations streams every observation f selects to fn, oldest first (ties by provider,
// price type and offer id), without holding them all in memory: exports of months of history
// go through here. It stops at the first error fn returns and returns it, with the number of
// observations fn accepted.
func (s *Store) Observations(ctx context.Context, f schema.ObservationFilter, fn func(*schema.Offer) error) (int, error) {
	query, args, err := s.observationsQuery(f)
	if err != nil {
		return 0, err
	}
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return 0, s.queryError("reading observations", err)
	}
	defer rows.Close()
	var sc offerScanner
	n := 0
	for rows.Next() {
		var o schema.Offer
		if err := sc.scanOffer(rows, &o); err != nil {
			return n, fmt.Errorf("reading observations: %w", err)
		}
		if err := fn(&o); err != nil {
			return n, err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, s.queryError("reading observations", err)
	}
	return n, nil
}

func (s *Store) observationsQuery(f schema.ObservationFilter) (string, []any, error) {
	if f.From.IsZero() || f.To.IsZero() {
		return "", nil, fmt.Errorf("observations: a start and an end are required")
	}
	if !f.To.After(f.From) {
		return "", nil, fmt.Errorf("observations: the end %s is not after the start %s", f.To.UTC().Format(time.RFC3339), f.From.UTC().Format(time.RFC3339))
	}
	if f.Limit < 0 {
		return "", nil, fmt.Errorf("observations: the limit %d is negative", f.Limit)
	}
	where := []string{"observed_at >= ?", "observed_at < ?"}
	args := []any{ceilSecond(f.From), ceilSecond(f.To)}
	where, args = selection(where, args, f.Selection)
	q := "SELECT " + offerColumns + " FROM " + s.table("offers") +
		" WHERE " + strings.Join(where, " AND ") +
		" ORDER BY observed_at, provider, price_type, offer_id"
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	return q, args, nil
}

// offerScanner reads rows of offerColumns or toPlanColumns. Its destinations live as long as the read: a pointer
// to a variable of scanOffer's own would escape through Scan's ...any and cost an allocation per
// column and row.
type offerScanner struct {
	dest                                 []any
	tier, priceType, intra, inter, stock string
	flags                                []string
}

// scanOffer reads one row of offerColumns into o, a zero Offer.
func (sc *offerScanner) scanOffer(rows driver.Rows, o *schema.Offer) error {
	sc.dest = append(sc.dest[:0], &o.ObservedAt, &o.ValidUntil, &o.RunID, &o.SourceURL, &o.Provider, &o.OfferID, &sc.tier, &o.Region, &o.Country,
		&o.GPUModel, &o.GPUNameRaw, &o.GPUCount, &o.VRAMGB, &o.VCPUs, &o.RAMGB, &o.DiskGB,
		&sc.priceType, &o.PriceUSDPerHour, &o.PriceUSDPerGPUHour,
		&sc.intra, &o.NVLinkGbps, &sc.inter, &o.AvailableCount, &sc.stock, &o.Reliability, &sc.flags, &o.ParserVersion)
	if err := rows.Scan(sc.dest...); err != nil {
		return fmt.Errorf("scanning a row: %w", err)
	}
	sc.finish(o)
	o.Stock = schema.Stock(sc.stock)
	for _, f := range sc.flags {
		o.DQFlags = append(o.DQFlags, schema.DQFlag(f))
	}
	return nil
}

// scanPlanOffer reads one row of toPlanColumns into o, a zero Offer.
func (sc *offerScanner) scanPlanOffer(rows driver.Rows, o *schema.Offer) error {
	sc.dest = append(sc.dest[:0], &o.ObservedAt, &o.ValidUntil, &o.Provider, &o.OfferID, &sc.tier, &o.Region, &o.Country,
		&o.GPUModel, &o.GPUCount, &o.VRAMGB, &sc.priceType, &o.PriceUSDPerHour, &o.PriceUSDPerGPUHour,
		&sc.intra, &sc.inter, &o.AvailableCount, &o.Reliability)
	if err := rows.Scan(sc.dest...); err != nil {
		return fmt.Errorf("scanning a row: %w", err)
	}
	sc.finish(o)
	return nil
}

// finish sets what the columns of both scans give o beyond its own fields: times in UTC and
// the enums.
func (sc *offerScanner) finish(o *schema.Offer) {
	o.ObservedAt = o.ObservedAt.UTC()
	if o.ValidUntil != nil {
		v := o.ValidUntil.UTC()
		o.ValidUntil = &v
	}
	o.Tier = schema.Tier(sc.tier)
	o.PriceType = schema.PriceType(sc.priceType)
	o.IntraNode = schema.IntraNode(sc.intra)
	o.InterNode = schema.InterNode(sc.inter)
}
