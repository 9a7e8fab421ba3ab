package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// Changes returns the price changes q selects, newest first (ties by provider, price type and
// offer id). It computes them from the offers table as the price_changes view does, but bounds
// the time range first: it reads the observations in [q.From, q.To) and, per offer, the last
// observation before q.From, so a move right at q.From is found too.
func (s *Store) Changes(ctx context.Context, q schema.ChangesQuery) ([]schema.PriceChange, error) {
	query, args, err := s.changesQuery(q)
	if err != nil {
		return nil, err
	}
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return nil, s.queryError("reading price changes", err)
	}
	defer rows.Close()
	var out []schema.PriceChange
	for rows.Next() {
		var c schema.PriceChange
		var priceType, tier string
		if err := rows.Scan(&c.ChangedAt, &c.PreviousAt, &c.Provider, &priceType, &c.OfferID, &c.GPUModel, &c.GPUCount,
			&tier, &c.Region, &c.OldPrice, &c.NewPrice, &c.RunID); err != nil {
			return nil, fmt.Errorf("reading price changes: scanning a row: %w", err)
		}
		c.ChangedAt, c.PreviousAt = c.ChangedAt.UTC(), c.PreviousAt.UTC()
		c.PriceType, c.Tier = schema.PriceType(priceType), schema.Tier(tier)
		c.ChangeUSD = c.NewPrice.Sub(c.OldPrice)
		if !c.OldPrice.IsZero() {
			c.ChangePct = c.ChangeUSD.Mul(decimal.NewFromInt(100)).DivRound(c.OldPrice, 2)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading price changes", err)
	}
	return out, nil
}

// CountChanges counts the price changes q selects, whatever its limit: how many a limited
// Changes left out.
func (s *Store) CountChanges(ctx context.Context, q schema.ChangesQuery) (int, error) {
	q.Limit = 0
	query, args, err := s.changesQuery(q)
	if err != nil {
		return 0, err
	}
	var n uint64
	if err := s.conn.QueryRow(s.ctx(ctx), "SELECT count() FROM ("+query+")", args...).Scan(&n); err != nil {
		return 0, s.queryError("counting price changes", err)
	}
	return int(n), nil
}

// changesQuery validates q and builds its SQL. Each offer's observations (the last one before
// From, then those in the range) are gathered into a sorted array, which is array-joined side by
// side with itself shifted by one: each observation meets the one before it (18.16 has no
// window functions; a lambda indexing the array would copy it per element, O(n²)). The two halves of the UNION ALL cast the LowCardinality columns to
// String (toString keeps LowCardinality on 18.16): 18.16 finds no common type for a LowCardinality column and a String one.
func (s *Store) changesQuery(q schema.ChangesQuery) (string, []any, error) {
	if q.From.IsZero() || q.To.IsZero() {
		return "", nil, fmt.Errorf("price changes: a start and an end are required")
	}
	if !q.To.After(q.From) {
		return "", nil, fmt.Errorf("price changes: the end %s is not after the start %s", q.To.UTC().Format(time.RFC3339), q.From.UTC().Format(time.RFC3339))
	}
	if q.MinChangePct < 0 {
		return "", nil, fmt.Errorf("price changes: the minimum change %g%% is negative", q.MinChangePct)
	}
	if q.Limit < 0 {
		return "", nil, fmt.Errorf("price changes: the limit %d is negative", q.Limit)
	}
	filters, fargs := selection(nil, nil, q.Selection)
	extra := ""
	if len(filters) > 0 {
		extra = " AND " + strings.Join(filters, " AND ")
	}
	// observed_at has whole seconds, and the driver binds times to the second.
	from, to := ceilSecond(q.From), ceilSecond(q.To)
	var args []any
	args = append(args, from, to)
	args = append(args, fargs...)
	args = append(args, from)
	args = append(args, fargs...)
	args = append(args, from)
	query := `SELECT cur.1 AS changed_at, prev.1 AS previous_at, provider, price_type, offer_id,
			cur.3 AS gpu_model, cur.4 AS gpu_count, cur.5 AS tier, cur.6 AS region,
			prev.2 AS old_price, cur.2 AS new_price, cur.7 AS run_id
		FROM (
			SELECT provider, price_type, offer_id, arraySort(groupArray((observed_at, price, gpu_model, gpu_count, tier, region, run_id))) AS obs
			FROM (
				SELECT CAST(provider AS String) AS provider, CAST(price_type AS String) AS price_type, offer_id, observed_at, price_usd_per_gpu_hour AS price,
					CAST(gpu_model AS String) AS gpu_model, gpu_count, CAST(tier AS String) AS tier, CAST(region AS String) AS region, run_id
				FROM ` + s.table("offers") + `
				WHERE observed_at >= ? AND observed_at < ?` + extra + `
				UNION ALL
				SELECT CAST(provider AS String), CAST(price_type AS String), offer_id, max(observed_at), argMax(price_usd_per_gpu_hour, observed_at),
					argMax(CAST(gpu_model AS String), observed_at), argMax(gpu_count, observed_at), argMax(CAST(tier AS String), observed_at),
					argMax(CAST(region AS String), observed_at), argMax(run_id, observed_at)
				FROM ` + s.table("offers") + `
				WHERE observed_at < ?` + extra + `
				GROUP BY CAST(provider AS String), CAST(price_type AS String), offer_id
			)
			GROUP BY provider, price_type, offer_id
		)
		ARRAY JOIN obs AS cur, arrayPushFront(arrayPopBack(obs), obs[1]) AS prev
		WHERE new_price != old_price AND changed_at >= ?`
	if q.MinChangePct > 0 {
		query += ` AND abs(toFloat64(new_price) - toFloat64(old_price)) * 100 >= ? * toFloat64(old_price)`
		args = append(args, q.MinChangePct)
	}
	if a := q.After; a != nil {
		// The changes after a position in the order below.
		at := a.ChangedAt.UTC()
		query += ` AND (changed_at < ? OR (changed_at = ? AND (provider > ? OR (provider = ? AND
			(price_type > ? OR (price_type = ? AND offer_id > ?))))))`
		args = append(args, at, at, a.Provider, a.Provider, string(a.PriceType), string(a.PriceType), a.OfferID)
	}
	query += `
		ORDER BY changed_at DESC, provider, price_type, offer_id`
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	return query, args, nil
}

// ceilSecond rounds t up to a whole second, in UTC: for a time column of whole seconds,
// "x >= t" and "x >= ceilSecond(t)" select the same rows, and so do "x < t" and
// "x < ceilSecond(t)".
func ceilSecond(t time.Time) time.Time {
	t = t.UTC()
	if c := t.Truncate(time.Second); !c.Equal(t) {
		return c.Add(time.Second)
	}
	return t
}
