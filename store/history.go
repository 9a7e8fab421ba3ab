package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// History returns the price history of one GPU model, ordered by bucket, provider and price
// type. Day and week buckets come from the offers_daily rollup, hour buckets from offers.
func (s *Store) History(ctx context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error) {
	query, args, err := s.historyQuery(q)
	if err != nil {
		return nil, err
	}
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return nil, s.queryError("reading the price history of "+q.Model(), err)
	}
	defer rows.Close()
	var out []schema.HistoryPoint
	for rows.Next() {
		var p schema.HistoryPoint
		var priceType string
		var median float64
		var sum, engineAvg decimal.Decimal
		var summed uint64
		if err := rows.Scan(&p.Bucket, &p.Provider, &p.GPUModel, &priceType, &p.Min, &p.Max, &median, &p.Observations, &p.Offers,
			&sum, &summed, &engineAvg); err != nil {
			return nil, fmt.Errorf("reading the price history of %s: %w", q.Model(), err)
		}
		p.Bucket = p.Bucket.UTC()
		p.PriceType = schema.PriceType(priceType)
		p.Avg = mean(sum, summed, p.Observations, engineAvg)
		p.Median = decimal.NewFromFloat(median).Round(schema.PriceDecimals)
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the price history of "+q.Model(), err)
	}
	return out, nil
}

// historyQuery validates q and builds its SQL: day and week buckets from the rollup, hour
// buckets from the raw table.
func (s *Store) historyQuery(q schema.HistoryQuery) (string, []any, error) {
	if q.Model() == "" {
		return "", nil, fmt.Errorf("history: exactly one GPU model is required")
	}
	if q.Interval == "" {
		q.Interval = schema.Day
	}
	if _, err := schema.ParseInterval(string(q.Interval)); err != nil {
		return "", nil, fmt.Errorf("history: %w", err)
	}
	if !q.To.After(q.From) {
		return "", nil, fmt.Errorf("history: the end %s is not after the start %s", q.To.UTC().Format(time.RFC3339), q.From.UTC().Format(time.RFC3339))
	}
	from := q.Interval.Truncate(q.From)
	var query string
	filters, args := selection(nil, []any{q.Model()}, schema.Selection{Providers: q.Providers, PriceTypes: q.PriceTypes})
	extra := ""
	if len(filters) > 0 {
		extra = " AND " + strings.Join(filters, " AND ")
	}
	// Every bucket's columns: min, max, median, observations, distinct offers, then the exact
	// sum and the number of observations it covers, and the server's own mean (see mean; an hour
	// bucket's sum covers all its observations, so it needs none).
	switch q.Interval {
	case schema.Hour:
		query = `SELECT toStartOfHour(observed_at) AS bucket, provider, gpu_model, price_type,
			min(price_usd_per_gpu_hour), max(price_usd_per_gpu_hour),
			toFloat64(quantileTDigest(0.5)(toFloat64(price_usd_per_gpu_hour))), count(), uniq(offer_id),
			sum(price_usd_per_gpu_hour), count(), toFloat64(0)
		FROM ` + s.table("offers") + `
		WHERE gpu_model = ?` + extra + ` AND observed_at >= ? AND observed_at < ?
		GROUP BY bucket, provider, gpu_model, price_type
		ORDER BY bucket, provider, price_type`
		args = append(args, from, q.To.UTC())
	default:
		bucket := "day"
		if q.Interval == schema.Week {
			bucket = "toMonday(day)"
		}
		// Bucket bounds are compared as dates: 18.16 cannot compare a Date with a DateTime, and
		// a bound value must be bound, not formatted, so convert on the server.
		where := `WHERE gpu_model = ?` + extra + ` AND day >= toDate(?) AND day < toDate(?)`
		to := q.Interval.Truncate(q.To.Add(-time.Nanosecond)).Add(bucketWidth(q.Interval))
		// A bucket without sums gets 0 for them from the join, or NULL where the server's profile
		// sets join_use_nulls: ifNull makes that 0 too.
		query = `SELECT bucket, provider, gpu_model, price_type, min_usd, max_usd, median_usd, observed, offers,
			ifNull(sum_usd, toDecimal128(0, 6)), ifNull(summed, toUInt64(0)), avg_usd
		FROM (
			SELECT toDateTime(` + bucket + `, 'UTC') AS bucket, provider, gpu_model, price_type,
				minMerge(min_price) AS min_usd, maxMerge(max_price) AS max_usd,
				toFloat64(quantilesTDigestMerge(0.1, 0.25, 0.5, 0.75, 0.9)(price_quantiles)[3]) AS median_usd,
				countMerge(observations) AS observed, uniqMerge(distinct_offers) AS offers, avgMerge(avg_price) AS avg_usd
			FROM ` + s.table("offers_daily") + `
			` + where + `
			GROUP BY bucket, provider, gpu_model, price_type
		) AS rollup ANY LEFT JOIN (
			SELECT toDateTime(` + bucket + `, 'UTC') AS bucket, provider, gpu_model, price_type,
				sumMerge(sum_price) AS sum_usd, countMerge(observations) AS summed
			FROM ` + s.table("offers_daily_sums") + `
			` + where + `
			GROUP BY bucket, provider, gpu_model, price_type
		) AS sums USING (bucket, provider, gpu_model, price_type)
		ORDER BY bucket, provider, price_type`
		args = append(args, from, to)
		args = append(args, args...)
	}
	return query, args, nil
}

// mean is a bucket's mean price: the exact sum over the observations, rounded half up to the
// stored precision, so every ClickHouse version gives the same decimal. ClickHouse's own avg of a
// Decimal is a Decimal truncated to 6 places on 18.x and a Float64 on current versions; it is
// used only for a bucket whose sum does not cover all its observations (days rolled up before
// migration 0009 added offers_daily_sums).
func mean(sum decimal.Decimal, summed, observations uint64, engineAvg decimal.Decimal) decimal.Decimal {
	if summed != observations {
		return engineAvg.Round(schema.PriceDecimals)
	}
	return sum.DivRound(decimal.NewFromUint64(summed), schema.PriceDecimals)
}

func bucketWidth(i schema.Interval) time.Duration {
	switch i {
	case schema.Hour:
		return time.Hour
	case schema.Week:
		return 7 * 24 * time.Hour
	default:
		return 24 * time.Hour
	}
}
