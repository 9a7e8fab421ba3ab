package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Final daily rows (offers_daily_final, migration 0012).
//
// A daily history merged the aggregate states of offers_daily (the t-digest of the median, the
// uniq of the distinct offers) on every query, and that merge was most of its time. So once a
// UTC day is over, its figures per row group (day × provider × GPU model × price type) are merged
// once, with the SQL History runs on the states (rollupFigures), and stored as plain values under
// a version. History (history.go) reads a day from its final rows when it has any, the current
// day from offers, and another day without final rows from the states: each day from one
// source, once.
//
// A day is finalized by one INSERT … SELECT of all its row groups, which ClickHouse writes as
// one part (the table is not partitioned; on a cluster a day's rows go to one shard): a day has
// all its final rows of a version or none. Finalized again, a day gets a higher version, and
// readers take each row group's newest version, History with FINAL (exact on a cluster too, a
// day's versions lying on one shard), finalCheck with argMax: the old version counts until the
// new one is there, whole.
//
// Who finalizes what:
//   - every load that stored offers (completeRollups, after the rollups are complete): the
//     completed days it brought offers to (late rows: a spooled batch of yesterday loaded today,
//     an import; a load cut off before this step is completed by the next load of its batch),
//     and the completed days after the newest finalized day (the day that just ended);
//   - every Migrate: each completed day that has a row group whose newest final row does not
//     count the observations offers_daily and offers_daily_sums hold (finalCheck): the back-fill
//     of the days stored before migration 0012, and days that got rows from inserts into offers
//     outside gpucost's loads, which a load does not see.
// So a late row that a load brings is in the daily history once that load has finished, as every
// row of a load is; one inserted by hand, from the next migrate on.
//
// The crash repair of the rollups (rollups.go) holds for the states as before; the final rows
// need none of their own: they are derived, and a repaired day is finalized again by the load
// that repaired it.

// finalizeChunkDays is how many days one INSERT … SELECT finalizes: a back-fill of years goes
// in steps of bounded memory.
const finalizeChunkDays = 31

// rollupFigures is the SELECT of History's figures per bucket × provider × GPU model × price
// type, merged from the states of offers_daily and offers_daily_sums: bucket is the SQL of a
// bucket from the day; where filters both rollups (its arguments are needed twice).
func (s *Store) rollupFigures(bucket, where string) string {
	// A bucket without sums gets 0 for them from the join, or NULL where the server's profile
	// sets join_use_nulls: ifNull makes that 0 too.
	return `SELECT bucket, provider, gpu_model, price_type, min_usd, max_usd, median_usd, observed, offers,
			ifNull(sum_usd, toDecimal128(0, 6)) AS exact_sum, ifNull(summed, toUInt64(0)) AS exact_summed,
			toFloat64(avg_usd) AS engine_avg
		FROM (
			SELECT ` + bucket + ` AS bucket, provider, gpu_model, price_type,
				minMerge(min_price) AS min_usd, maxMerge(max_price) AS max_usd,
				toFloat64(quantilesTDigestMerge(0.1, 0.25, 0.5, 0.75, 0.9)(price_quantiles)[3]) AS median_usd,
				countMerge(observations) AS observed, uniqMerge(distinct_offers) AS offers, avgMerge(avg_price) AS avg_usd
			FROM ` + s.table("offers_daily") + `
			` + where + `
			GROUP BY bucket, provider, gpu_model, price_type
		) AS rollup ANY LEFT JOIN (
			SELECT ` + bucket + ` AS bucket, provider, gpu_model, price_type,
				sumMerge(sum_price) AS sum_usd, countMerge(observations) AS summed
			FROM ` + s.table("offers_daily_sums") + `
			` + where + `
			GROUP BY bucket, provider, gpu_model, price_type
		) AS sums USING (bucket, provider, gpu_model, price_type)`
}

// finalizeLoad finalizes, after a load of offers, the completed days among reached (the days
// the load's offers were observed on, as Unix days) and the completed days after the newest
// finalized day.
func (s *Store) finalizeLoad(ctx context.Context, reached map[int64]bool) error {
	today := s.now().UTC().Truncate(24 * time.Hour)
	newest, version, err := s.newestFinal(ctx)
	if err != nil {
		return err
	}
	var days []uint32
	for d := range reached {
		if day := time.Unix(d*86400, 0).UTC(); day.Before(today) {
			days = append(days, yyyymmdd(day))
		}
	}
	if after := newest.AddDate(0, 0, 1); after.Before(today) {
		ended, err := s.rollupDays(ctx, after, today)
		if err != nil {
			return err
		}
		days = append(days, ended...)
	}
	slices.Sort(days)
	return s.finalize(ctx, slices.Compact(days), version)
}

// newestFinal returns the newest finalized day (the Unix epoch without one) and the version to
// finalize under now: above every version of the table, whatever the clocks of the hosts that
// wrote them.
func (s *Store) newestFinal(ctx context.Context) (time.Time, uint64, error) {
	var day time.Time
	var top uint64
	if err := s.conn.QueryRow(s.ctx(ctx), `SELECT max(day), max(version) FROM `+s.table("offers_daily_final")).Scan(&day, &top); err != nil {
		return time.Time{}, 0, s.queryError("reading the newest final day", err)
	}
	return day.UTC(), max(uint64(time.Now().UnixNano()), top+1), nil
}

// rollupDays returns the days in [from, to) that offers_daily holds, as toYYYYMMDD.
func (s *Store) rollupDays(ctx context.Context, from, to time.Time) ([]uint32, error) {
	return s.dayList(ctx, "reading the days of offers_daily", `SELECT DISTINCT toYYYYMMDD(day) FROM `+s.table("offers_daily")+`
		WHERE day >= toDate(?) AND day < toDate(?)`, from, to)
}

// dayList runs query, which selects one column of days as toYYYYMMDD, and returns them.
func (s *Store) dayList(ctx context.Context, what, query string, args ...any) ([]uint32, error) {
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	var days []uint32
	for rows.Next() {
		var d uint32
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		days = append(days, d)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return days, nil
}

// daysIn is the condition that a row's day is one of days (toYYYYMMDD), and its arguments.
func daysIn(days []uint32) (string, []any) {
	args := make([]any, len(days))
	for i, d := range days {
		args[i] = d
	}
	return "toYYYYMMDD(day) IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(days)), ", ") + ")", args
}

// finalCheck is the SELECT, per row group of offers_daily within where, of final_ok: 1 where the
// group's newest final row counts the observations both rollups hold now. where filters the
// three tables (its arguments are needed three times).
func (s *Store) finalCheck(where string) string {
	// 18.16 joins two tables per SELECT: the rollups' counts are joined first, the final rows to
	// them. ifNull covers the profiles that set join_use_nulls.
	return `SELECT day, provider, gpu_model, price_type,
			ifNull(final_observed = observed AND final_summed = summed_now, 0) AS final_ok
		FROM (
			SELECT day, provider, gpu_model, price_type, observed, ifNull(summed, toUInt64(0)) AS summed_now
			FROM (
				SELECT day, provider, gpu_model, price_type, countMerge(observations) AS observed
				FROM ` + s.table("offers_daily") + `
				` + where + `
				GROUP BY day, provider, gpu_model, price_type
			) AS rollup ANY LEFT JOIN (
				SELECT day, provider, gpu_model, price_type, countMerge(observations) AS summed
				FROM ` + s.table("offers_daily_sums") + `
				` + where + `
				GROUP BY day, provider, gpu_model, price_type
			) AS sums USING (day, provider, gpu_model, price_type)
		) AS held ANY LEFT JOIN (
			SELECT day, provider, gpu_model, price_type,
				argMax(observations, version) AS final_observed, argMax(summed, version) AS final_summed
			FROM ` + s.table("offers_daily_final") + `
			` + where + `
			GROUP BY day, provider, gpu_model, price_type
		) AS finalized USING (day, provider, gpu_model, price_type)`
}

// finalizeStale finalizes every completed day that has a row group without a final row counting
// what the rollups hold (finalCheck), and returns how many days it finalized.
func (s *Store) finalizeStale(ctx context.Context) (int, error) {
	today := s.now().UTC().Truncate(24 * time.Hour)
	days, err := s.dayList(ctx, "checking the final rows of the daily rollup", `SELECT DISTINCT toYYYYMMDD(day) AS d
		FROM (`+s.finalCheck("WHERE day < toDate(?)")+`)
		WHERE final_ok = 0
		ORDER BY d`, today, today, today)
	if err != nil {
		return 0, err
	}
	_, version, err := s.newestFinal(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.finalize(ctx, days, version); err != nil {
		return 0, err
	}
	return len(days), nil
}

// finalize writes the final rows of the given days (toYYYYMMDD, ascending) under version, one
// INSERT … SELECT per chunk of days.
func (s *Store) finalize(ctx context.Context, days []uint32, version uint64) error {
	for len(days) > 0 {
		chunk := days[:min(finalizeChunkDays, len(days))]
		days = days[len(chunk):]
		in, inArgs := daysIn(chunk)
		where := "WHERE day >= toDate(?) AND day <= toDate(?) AND " + in
		args := append([]any{dayOf(chunk[0]), dayOf(chunk[len(chunk)-1])}, inArgs...)
		q := `INSERT INTO ` + s.table("offers_daily_final") + ` (day, provider, gpu_model, price_type, min_price, max_price,
				median_price, observations, distinct_offers, sum_price, summed, avg_price, version)
			SELECT bucket, provider, gpu_model, price_type, min_usd, max_usd, median_usd, observed, offers,
				exact_sum, exact_summed, engine_avg, toUInt64(?)
			FROM (` + s.rollupFigures("day", where) + `)`
		all := append(append([]any{version}, args...), args...)
		if err := s.conn.Exec(s.ctx(ctx), q, all...); err != nil {
			return s.queryError(fmt.Sprintf("finalizing the daily rollup of %d to %d", chunk[0], chunk[len(chunk)-1]), err)
		}
		s.logger.Debug("Finalized the daily rollup", "days", len(chunk), "first", chunk[0], "last", chunk[len(chunk)-1])
	}
	return nil
}

// yyyymmdd is toYYYYMMDD of t's UTC day.
func yyyymmdd(t time.Time) uint32 {
	t = t.UTC()
	return uint32(t.Year()*10000 + int(t.Month())*100 + t.Day())
}

// dayOf is the UTC midnight of a toYYYYMMDD day.
func dayOf(yyyymmdd uint32) time.Time {
	return time.Date(int(yyyymmdd/10000), time.Month(yyyymmdd/100%100), int(yyyymmdd%100), 0, 0, 0, 0, time.UTC)
}
