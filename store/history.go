package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// History returns the price history of one GPU model, ordered by bucket, provider and price
// type. Day buckets come from the final rows of the finalized days (offers_daily_final, see
// final.go), from offers for the current day and after, and from the offers_daily rollup for the
// other days; week buckets from the rollup, hour buckets from offers.
func (s *Store) History(ctx context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error) {
	h, err := newHistoryRange(q)
	if err != nil {
		return nil, err
	}
	switch h.interval {
	case schema.Day:
		return s.dailyHistory(ctx, h)
	case schema.Hour:
		return s.historyPoints(ctx, h, s.rawFigures("toStartOfHour(observed_at)", h.filter)+`
		ORDER BY bucket, provider, price_type`, h.rawArgs(h.from, h.to))
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
// the start. Its bounds are those of the buckets that hold From and the instant before To (for
// hours, To itself).
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
// and the server's own mean (see mean; a bucket of the raw table has its sum over all its
// observations, so it needs none).

// rawFigures is the SELECT of buckets (bucket: the SQL of an observation's bucket) from the raw
// table, with filter after gpu_model = ?; its arguments are rawArgs.
func (s *Store) rawFigures(bucket, filter string) string {
	return `SELECT ` + bucket + ` AS bucket, provider, gpu_model, price_type,
			min(price_usd_per_gpu_hour), max(price_usd_per_gpu_hour),
			toFloat64(quantileTDigest(0.5)(toFloat64(price_usd_per_gpu_hour))), count(), uniq(offer_id),
			sum(price_usd_per_gpu_hour), count(), toFloat64(0)
		FROM ` + s.table("offers") + `
		WHERE gpu_model = ?` + filter + ` AND observed_at >= ? AND observed_at < ?
		GROUP BY bucket, provider, gpu_model, price_type`
}

// rawArgs are the arguments of rawFigures for the observations in [from, to).
func (h historyRange) rawArgs(from, to time.Time) []any {
	return append(append([]any{}, h.args...), from, to)
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
	var r historyRow
	dest := r.dest()
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("reading the price history of %s: %w", h.model, err)
		}
		out = append(out, r.historyPoint())
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the price history of "+h.model, err)
	}
	return out, nil
}

// historyRow is one row of a history query's columns, as scanned (each row of a query into the
// same one).
type historyRow struct {
	point             schema.HistoryPoint
	priceType         string
	median, engineAvg float64
	sum               decimal.Decimal
	summed            uint64
}

// dest is where rows.Scan puts a history query's columns.
func (r *historyRow) dest() []any {
	p := &r.point
	return []any{&p.Bucket, &p.Provider, &p.GPUModel, &r.priceType, &p.Min, &p.Max, &r.median, &p.Observations, &p.Offers,
		&r.sum, &r.summed, &r.engineAvg}
}

// historyPoint is the point of the scanned row.
func (r *historyRow) historyPoint() schema.HistoryPoint {
	p := r.point
	p.Bucket = p.Bucket.UTC()
	p.PriceType = schema.PriceType(r.priceType)
	p.Avg = mean(r.sum, r.summed, p.Observations, r.engineAvg)
	p.Median = decimal.NewFromFloat(r.median).Round(schema.PriceDecimals)
	return p
}

// dailyHistory reads day buckets, each day from one source: the finalized days (final.go) from
// their final rows, each row group's newest version (FINAL: on a cluster a day's versions lie on
// one shard); the current day of the store's clock and the days after it from offers, in a query
// of its own at the same time (they are not finalized, and their offers are a few index ranges
// of the raw table, where their states lie in granules shared with the rest of the month); the
// other days (finalized by no load or migrate yet) from the states of the daily rollups.
func (s *Store) dailyHistory(ctx context.Context, h historyRange) ([]schema.HistoryPoint, error) {
	today := s.now().UTC().Truncate(24 * time.Hour)
	var raw []schema.HistoryPoint
	rawDone := make(chan error, 1)
	if rawFrom := maxTime(h.from, today); rawFrom.Before(h.to) {
		go func() {
			var err error
			raw, err = s.historyPoints(ctx, h, s.rawFigures("toStartOfDay(observed_at)", h.filter)+`
				ORDER BY bucket, provider, price_type`, h.rawArgs(rawFrom, h.to))
			rawDone <- err
		}()
	} else {
		rawDone <- nil
	}
	out, finalized, err := s.finalPoints(ctx, h)
	if rawErr := <-rawDone; err == nil {
		err = rawErr
	}
	if err != nil {
		return nil, err
	}
	rest := unfinalized(h.from, minTime(h.to, today), finalized)
	if len(rest) > 0 {
		// Days without final rows of this selection may be finalized days it has no rows in.
		days, err := s.finalizedDays(ctx, dayOf(rest[0]), dayOf(rest[len(rest)-1]).AddDate(0, 0, 1))
		if err != nil {
			return nil, err
		}
		for d := range days {
			finalized[d] = true
		}
		rest = unfinalized(dayOf(rest[0]), dayOf(rest[len(rest)-1]).AddDate(0, 0, 1), finalized)
	}
	for _, p := range raw {
		// A day finalized by a host whose clock is ahead of this one's is read from its final rows.
		if !finalized[yyyymmdd(p.Bucket)] {
			out = append(out, p)
		}
	}
	if len(rest) > 0 {
		states := h
		states.from, states.to = dayOf(rest[0]), dayOf(rest[len(rest)-1]).AddDate(0, 0, 1)
		in, days := daysIn(rest)
		query, args := s.rollupQuery(states, "day", " AND "+in, days)
		points, err := s.historyPoints(ctx, h, query, args)
		if err != nil {
			return nil, err
		}
		out = append(out, points...)
	}
	// Each source is in order, and the final rows' days come before the current day's.
	order := func(a, b schema.HistoryPoint) int {
		return cmp.Or(a.Bucket.Compare(b.Bucket), strings.Compare(a.Provider, b.Provider), strings.Compare(string(a.PriceType), string(b.PriceType)))
	}
	if !slices.IsSortedFunc(out, order) {
		slices.SortFunc(out, order)
	}
	return out, nil
}

// finalPoints reads the final rows of h's selection, in order, and returns them with their days
// (toYYYYMMDD).
func (s *Store) finalPoints(ctx context.Context, h historyRange) ([]schema.HistoryPoint, map[uint32]bool, error) {
	where, args := h.dayWhere("", nil)
	// A row group's newest final row without observations is one a re-derivation removed
	// (Store.Refinalize): it is dropped after FINAL picks it, or the older row would show.
	out, err := s.historyPoints(ctx, h, `SELECT toDateTime(day, 'UTC') AS bucket, provider, gpu_model, price_type,
			min_price, max_price, median_price, observations, distinct_offers, sum_price, summed, avg_price
		FROM (
			SELECT * FROM `+s.table("offers_daily_final")+` FINAL
			`+where+`
		)
		WHERE observations > 0
		ORDER BY bucket, provider, price_type`, args)
	if err != nil {
		return nil, nil, err
	}
	days := map[uint32]bool{}
	for _, p := range out {
		days[yyyymmdd(p.Bucket)] = true
	}
	return out, days, nil
}

// unfinalized returns the days in [from, to) that finalized does not hold, as toYYYYMMDD.
func unfinalized(from, to time.Time, finalized map[uint32]bool) []uint32 {
	var days []uint32
	for day := from; day.Before(to); day = day.AddDate(0, 0, 1) {
		if d := yyyymmdd(day); !finalized[d] {
			days = append(days, d)
		}
	}
	return days
}

// finalizedDays returns the days in [from, to) that have final rows, of any row group.
func (s *Store) finalizedDays(ctx context.Context, from, to time.Time) (map[uint32]bool, error) {
	list, err := s.dayList(ctx, "reading the finalized days", `SELECT DISTINCT toYYYYMMDD(day) FROM `+s.table("offers_daily_final")+`
		WHERE day >= toDate(?) AND day < toDate(?)`, from, to)
	days := make(map[uint32]bool, len(list))
	for _, d := range list {
		days[d] = true
	}
	return days, err
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// mean is a bucket's mean price: the exact sum over the observations, rounded half up to the
// stored precision, so every ClickHouse version gives the same decimal. ClickHouse's own avg of a
// Decimal is a Decimal truncated to 6 places on 18.x and a Float64 on current versions (read as
// a Float64 from both: a price's few digits come back as they were); it is used only for a
// bucket whose sum does not cover all its observations (days rolled up before migration 0009
// added offers_daily_sums).
func mean(sum decimal.Decimal, summed, observations uint64, engineAvg float64) decimal.Decimal {
	if summed != observations {
		return decimal.NewFromFloat(engineAvg).Round(schema.PriceDecimals)
	}
	// A sum of the stored precision whose coefficient fits an int64 (any realistic one) is
	// divided as integers, rounded as DivRound rounds (half away from zero), without its
	// allocations: a year of daily history divides thousands of them.
	if sum.Exponent() == -schema.PriceDecimals && summed > 0 && summed < 1<<62 && sum.NumDigits() <= 18 {
		c, n := sum.CoefficientInt64(), int64(summed)
		q, r := c/n, c%n
		if 2*max(r, -r) >= n {
			if c < 0 {
				q--
			} else {
				q++
			}
		}
		return decimal.New(q, -schema.PriceDecimals)
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
