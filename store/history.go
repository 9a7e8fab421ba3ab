package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// History returns the price history of one GPU model, ordered by bucket, provider and price
// type. Day buckets come from the final rows of completed days (offers_daily_final, final.go)
// and from the offers_daily rollup for the days without a current one; week buckets from the
// rollup, hour buckets from offers.
func (s *Store) History(ctx context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error) {
	h, err := newHistoryRange(q)
	if err != nil {
		return nil, err
	}
	switch h.interval {
	case schema.Day:
		return s.dailyHistory(ctx, h)
	case schema.Hour:
		return s.historyPoints(ctx, h, s.hourlyQuery(h), h.hourlyArgs())
	default:
		query, args := s.rollupQuery(h, "toMonday(day)", "", nil)
		return s.historyPoints(ctx, h, query, args)
	}
}

// historyRange is a validated history query: its interval, the conditions that follow
// gpu_model = ? with their values (the model first), and the bounds of its buckets.
type historyRange struct {
	model    string
	interval schema.Interval
	filter   string // " AND …" of the providers and price types, or ""
	args     []any  // the model and the filter's values
	from, to time.Time
}

// newHistoryRange validates q: one GPU model, a known interval (default a day), an end after
// the start. Its bounds are those of the buckets that hold From and the instant before To.
func newHistoryRange(q schema.HistoryQuery) (historyRange, error) {
	if q.Model() == "" {
		return historyRange{}, fmt.Errorf("history: exactly one GPU model is required")
	}
	if q.Interval == "" {
		q.Interval = schema.Day
	}
	if _, err := schema.ParseInterval(string(q.Interval)); err != nil {
		return historyRange{}, fmt.Errorf("history: %w", err)
	}
	if !q.To.After(q.From) {
		return historyRange{}, fmt.Errorf("history: the end %s is not after the start %s", q.To.UTC().Format(time.RFC3339), q.From.UTC().Format(time.RFC3339))
	}
	h := historyRange{model: q.Model(), interval: q.Interval, from: q.Interval.Truncate(q.From)}
	filters, args := selection(nil, []any{q.Model()}, schema.Selection{Providers: q.Providers, PriceTypes: q.PriceTypes})
	if len(filters) > 0 {
		h.filter = " AND " + strings.Join(filters, " AND ")
	}
	h.args = args
	if q.Interval == schema.Hour {
		h.to = q.To.UTC() // observations are compared as times
	} else {
		h.to = q.Interval.Truncate(q.To.Add(-time.Nanosecond)).Add(bucketWidth(q.Interval))
	}
	return h, nil
}

// Every history query's columns: bucket, provider, GPU model, price type, min, max, median,
// observations, distinct offers, then the exact sum and the number of observations it covers,
// and the server's own mean (see mean; an hour bucket's sum covers all its observations, so it
// needs none).

// hourlyQuery reads hour buckets from the raw table.
func (s *Store) hourlyQuery(h historyRange) string {
	return `SELECT toStartOfHour(observed_at) AS bucket, provider, gpu_model, price_type,
			min(price_usd_per_gpu_hour), max(price_usd_per_gpu_hour),
			toFloat64(quantileTDigest(0.5)(toFloat64(price_usd_per_gpu_hour))), count(), uniq(offer_id),
			sum(price_usd_per_gpu_hour), count(), toFloat64(0)
		FROM ` + s.table("offers") + `
		WHERE gpu_model = ?` + h.filter + ` AND observed_at >= ? AND observed_at < ?
		GROUP BY bucket, provider, gpu_model, price_type
		ORDER BY bucket, provider, price_type`
}

func (h historyRange) hourlyArgs() []any {
	return append(append([]any{}, h.args...), h.from, h.to)
}

// dayWhere is the condition on the rows of a daily table within h, with its values; extra
// (" AND …", with extraArgs) narrows it.
func (h historyRange) dayWhere(extra string, extraArgs []any) (string, []any) {
	// Bucket bounds are compared as dates: 18.16 cannot compare a Date with a DateTime, and a
	// bound value must be bound, not formatted, so convert on the server.
	where := `WHERE gpu_model = ?` + h.filter + ` AND day >= toDate(?) AND day < toDate(?)` + extra
	args := append(append([]any{}, h.args...), h.from, h.to)
	return where, append(args, extraArgs...)
}

// rollupQuery reads buckets (bucket: the SQL of a row's bucket from its day) merged from the
// states of the daily rollups, within h and extra.
func (s *Store) rollupQuery(h historyRange, bucket, extra string, extraArgs []any) (string, []any) {
	where, args := h.dayWhere(extra, extraArgs)
	query := s.rollupFigures("toDateTime("+bucket+", 'UTC')", where) + `
		ORDER BY bucket, provider, price_type`
	return query, append(args, args...)
}

// historyPoints runs a history query and reads its points.
func (s *Store) historyPoints(ctx context.Context, h historyRange, query string, args []any) ([]schema.HistoryPoint, error) {
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return nil, s.queryError("reading the price history of "+h.model, err)
	}
	defer rows.Close()
	var out []schema.HistoryPoint
	for rows.Next() {
		var r historyRow
		if err := r.scan(rows); err != nil {
			return nil, fmt.Errorf("reading the price history of %s: %w", h.model, err)
		}
		out = append(out, r.historyPoint())
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the price history of "+h.model, err)
	}
	return out, nil
}

// historyRow is one row of a history query's columns, as scanned.
type historyRow struct {
	point          schema.HistoryPoint
	priceType      string
	median         float64
	sum, engineAvg decimal.Decimal
	summed         uint64
}

// scan reads the row, then into extra the columns after the history query's.
func (r *historyRow) scan(rows driver.Rows, extra ...any) error {
	p := &r.point
	return rows.Scan(append([]any{&p.Bucket, &p.Provider, &p.GPUModel, &r.priceType, &p.Min, &p.Max, &r.median, &p.Observations, &p.Offers,
		&r.sum, &r.summed, &r.engineAvg}, extra...)...)
}

// historyPoint is the point of a scanned row.
func (r *historyRow) historyPoint() schema.HistoryPoint {
	p := r.point
	p.Bucket = p.Bucket.UTC()
	p.PriceType = schema.PriceType(r.priceType)
	p.Avg = mean(r.sum, r.summed, p.Observations, r.engineAvg)
	p.Median = decimal.NewFromFloat(r.median).Round(schema.PriceDecimals)
	return p
}

// dailyHistory reads day buckets: the final row of every row group that has a current one
// (finalCheck), and the other row groups (the current day's, a day that received rows after it
// was finalized, a day not finalized yet) from the states of their days. Each row group is read
// from one of the two.
func (s *Store) dailyHistory(ctx context.Context, h historyRange) ([]schema.HistoryPoint, error) {
	where, args := h.dayWhere("", nil)
	query := `SELECT toDateTime(day, 'UTC'), provider, gpu_model, price_type, min_usd, max_usd, median_usd,
			final_observed, final_offers, exact_sum, exact_summed, avg_usd, final_ok
		FROM (` + s.finalCheck(where) + `)
		ORDER BY day, provider, price_type`
	rows, err := s.conn.Query(s.ctx(ctx), query, append(append(append([]any{}, args...), args...), args...)...)
	if err != nil {
		return nil, s.queryError("reading the price history of "+h.model, err)
	}
	defer rows.Close()
	var out []schema.HistoryPoint
	final := map[historyGroup]bool{}
	var stale []uint32 // toYYYYMMDD of the days with a row group to read from the states
	for rows.Next() {
		var r historyRow
		var ok uint8
		if err := r.scan(rows, &ok); err != nil {
			return nil, fmt.Errorf("reading the price history of %s: %w", h.model, err)
		}
		if ok == 1 {
			p := r.historyPoint()
			out = append(out, p)
			final[groupOf(p)] = true
			continue
		}
		// Its columns hold zeros or a stale row: only the day counts.
		if d := yyyymmdd(r.point.Bucket.UTC()); len(stale) == 0 || stale[len(stale)-1] != d {
			stale = append(stale, d)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the price history of "+h.model, err)
	}
	if len(stale) == 0 {
		return out, nil
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(stale)), ", ")
	extraArgs := make([]any, len(stale))
	for i, d := range stale {
		extraArgs[i] = d
	}
	query, args = s.rollupQuery(h, "day", " AND toYYYYMMDD(day) IN ("+marks+")", extraArgs)
	states, err := s.historyPoints(ctx, h, query, args)
	if err != nil {
		return nil, err
	}
	for _, p := range states {
		if !final[groupOf(p)] {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Bucket.Equal(b.Bucket) {
			return a.Bucket.Before(b.Bucket)
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		return a.PriceType < b.PriceType
	})
	return out, nil
}

// historyGroup is a row group of one GPU model's history.
type historyGroup struct {
	bucket              int64 // Unix seconds
	provider, priceType string
}

func groupOf(p schema.HistoryPoint) historyGroup {
	return historyGroup{p.Bucket.Unix(), p.Provider, string(p.PriceType)}
}

// yyyymmdd is toYYYYMMDD of a UTC day.
func yyyymmdd(t time.Time) uint32 {
	return uint32(t.Year()*10000 + int(t.Month())*100 + t.Day())
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
