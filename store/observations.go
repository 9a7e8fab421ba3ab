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
	n := 0
	for rows.Next() {
		o, err := scanOffer(rows)
		if err != nil {
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

// scanOffer reads one row of offerColumns.
func scanOffer(rows driver.Rows) (schema.Offer, error) {
	var (
		o                                    schema.Offer
		tier, priceType, intra, inter, stock string
		flags                                []string
	)
	if err := rows.Scan(&o.ObservedAt, &o.ValidUntil, &o.RunID, &o.SourceURL, &o.Provider, &o.OfferID, &tier, &o.Region, &o.Country,
		&o.GPUModel, &o.GPUNameRaw, &o.GPUCount, &o.VRAMGB, &o.VCPUs, &o.RAMGB, &o.DiskGB,
		&priceType, &o.PriceUSDPerHour, &o.PriceUSDPerGPUHour,
		&intra, &o.NVLinkGbps, &inter, &o.AvailableCount, &stock, &o.Reliability, &flags); err != nil {
		return o, fmt.Errorf("scanning a row: %w", err)
	}
	o.ObservedAt = o.ObservedAt.UTC()
	if o.ValidUntil != nil {
		v := o.ValidUntil.UTC()
		o.ValidUntil = &v
	}
	o.Tier = schema.Tier(tier)
	o.PriceType = schema.PriceType(priceType)
	o.IntraNode = schema.IntraNode(intra)
	o.InterNode = schema.InterNode(inter)
	o.Stock = schema.Stock(stock)
	for _, f := range flags {
		o.DQFlags = append(o.DQFlags, schema.DQFlag(f))
	}
	return o, nil
}
