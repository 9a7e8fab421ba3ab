package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Final daily rows (offers_daily_final, migration 0012).
//
// A daily history merged the aggregate states of offers_daily (the t-digest of the median, the
// uniq of the distinct offers) on every query, and that merge was most of its time. So once a
// UTC day is over, its figures per row group (day × provider × GPU model × price type) are merged
// once, with the same SQL History used to run, and stored as plain values with a version:
// finalizeDays does it after every load that stored offers (completeRollups) and at the end of
// every Migrate, for each completed day whose rows are missing or stale.
//
// The states stay the source of truth, and a final row stands for them only while it was made
// from exactly what they hold now: its observations and summed equal countMerge(observations)
// of offers_daily and of offers_daily_sums (finalCheck). Rollups only grow (observations are
// never taken out of offers), so a row group that received rows after its day was finalized (a
// spooled batch of yesterday loaded today, an import, a crash repair) counts more there than in
// its final row: History reads that row group from the states, and the next load or migrate
// finalizes the day again under a higher version. Readers take a row group's newest version by
// argMax, which needs neither FINAL nor the ReplacingMergeTree's merges, and holds across the
// shards of a cluster (where a row group's versions may lie on different shards). So a day is
// read exactly once, from its final row or from its states, whatever the state of the
// finalization.

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
			ifNull(sum_usd, toDecimal128(0, 6)) AS exact_sum, ifNull(summed, toUInt64(0)) AS exact_summed, avg_usd
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

// finalCheck is the SELECT, per row group of offers_daily within where, of the newest final row
// (zeros where there is none) and final_ok: 1 where that row was made from exactly the
// observations both rollups hold now. where filters the three tables (its arguments are needed
// three times). final_version is the group's highest version, 0 without one.
func (s *Store) finalCheck(where string) string {
	// 18.16 joins two tables per SELECT: the rollups' counts are joined first, the final rows to
	// them. ifNull covers the profiles that set join_use_nulls.
	return `SELECT day, provider, gpu_model, price_type,
			ifNull(f_min, toDecimal64(0, 6)) AS min_usd, ifNull(f_max, toDecimal64(0, 6)) AS max_usd,
			ifNull(f_median, toFloat64(0)) AS median_usd, ifNull(f_observed, toUInt64(0)) AS final_observed,
			ifNull(f_offers, toUInt64(0)) AS final_offers, ifNull(f_sum, toDecimal128(0, 6)) AS exact_sum,
			ifNull(f_summed, toUInt64(0)) AS exact_summed, ifNull(f_avg, toFloat64(0)) AS avg_usd,
			ifNull(f_top, toUInt64(0)) AS final_version,
			ifNull(f_observed = observed AND f_summed = summed_now, 0) AS final_ok
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
				argMax(min_price, version) AS f_min, argMax(max_price, version) AS f_max,
				argMax(median_price, version) AS f_median, argMax(observations, version) AS f_observed,
				argMax(distinct_offers, version) AS f_offers, argMax(sum_price, version) AS f_sum,
				argMax(summed, version) AS f_summed, argMax(avg_price, version) AS f_avg,
				max(version) AS f_top
			FROM ` + s.table("offers_daily_final") + `
			` + where + `
			GROUP BY day, provider, gpu_model, price_type
		) AS finalized USING (day, provider, gpu_model, price_type)`
}

// finalizeDays writes the final rows of every completed day (before the current UTC day of the
// store's clock) that has a row group without a final row made from what the rollups hold now,
// and returns how many days it wrote.
func (s *Store) finalizeDays(ctx context.Context) (int, error) {
	today := s.now().UTC().Truncate(24 * time.Hour)
	what := "finalizing the daily rollup of completed days"
	rows, err := s.conn.Query(s.ctx(ctx), `SELECT toYYYYMMDD(day) AS d, max(final_version)
		FROM (`+s.finalCheck("WHERE day < toDate(?)")+`)
		WHERE final_ok = 0
		GROUP BY d
		ORDER BY d`, today, today, today)
	if err != nil {
		return 0, s.queryError(what, err)
	}
	var days []uint32
	var top uint64 // the highest version of those days' final rows
	for rows.Next() {
		var d uint32
		var v uint64
		if err := rows.Scan(&d, &v); err != nil {
			rows.Close()
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		days = append(days, d)
		top = max(top, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, s.queryError(what, err)
	}
	// A new version is above every version the days have, whatever the clocks of the hosts
	// that wrote them.
	version := max(uint64(time.Now().UnixNano()), top+1)
	for from := 0; from < len(days); from += finalizeChunkDays {
		chunk := days[from:min(from+finalizeChunkDays, len(days))]
		if err := s.finalize(ctx, chunk, version); err != nil {
			return from, err
		}
	}
	if len(days) > 0 {
		s.logger.Info("Finalized the daily rollup of completed days", "days", len(days), "first", days[0], "last", days[len(days)-1])
	}
	return len(days), nil
}

// finalize writes the final rows of the given days (toYYYYMMDD, ascending) under version.
func (s *Store) finalize(ctx context.Context, days []uint32, version uint64) error {
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(days)), ", ")
	where := "WHERE day >= toDate(?) AND day <= toDate(?) AND toYYYYMMDD(day) IN (" + marks + ")"
	args := []any{dayOf(days[0]), dayOf(days[len(days)-1])}
	for _, d := range days {
		args = append(args, d)
	}
	q := `INSERT INTO ` + s.table("offers_daily_final") + ` (day, provider, gpu_model, price_type, min_price, max_price,
			median_price, observations, distinct_offers, sum_price, summed, avg_price, version)
		SELECT bucket, provider, gpu_model, price_type, min_usd, max_usd, median_usd, observed, offers,
			exact_sum, exact_summed, toFloat64(avg_usd), toUInt64(?)
		FROM (` + s.rollupFigures("day", where) + `)`
	all := append([]any{version}, args...)
	all = append(all, args...)
	if err := s.conn.Exec(s.ctx(ctx), q, all...); err != nil {
		return s.queryError(fmt.Sprintf("finalizing the daily rollup of %d to %d", days[0], days[len(days)-1]), err)
	}
	return nil
}

// dayOf is the UTC midnight of a toYYYYMMDD day.
func dayOf(yyyymmdd uint32) time.Time {
	return time.Date(int(yyyymmdd/10000), time.Month(yyyymmdd/100%100), int(yyyymmdd%100), 0, 0, 0, 0, time.UTC)
}
