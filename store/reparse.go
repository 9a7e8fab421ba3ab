package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// Re-derivation (gpucost reparse, package reparse): the offers of stored runs replaced by what
// today's parsers make of the runs' raw payloads, with the rollups, final rows and latest view
// derived from them.
//
// ClickHouse has no transaction over several tables, but it swaps a partition whole: ALTER TABLE
// t REPLACE PARTITION p FROM staging replaces the parts of p by copies of staging's, at once, for
// every reader. offers, offers_daily and offers_daily_sums are partitioned by month, so a month is
// re-derived in staging copies of the three (<table>_reparse, created AS the table):
//
//  1. BeginMonth copies the month's offers that are not re-derived into offers_reparse;
//  2. AddOffers inserts the re-derived offers beside them;
//  3. Commit rolls the staging offers up into the staging rollups, with each view's own SELECT
//     (rollups.go, from its migration), and swaps each table's month for its staging copy. A
//     reader sees the month old or new, never half of it; between the three swaps, which take
//     milliseconds, the rollups can lag offers.
//
// Then RebuildLatest rebuilds offers_latest from offers for the providers re-derived, and swaps
// its partitions the same way; and Refinalize finalizes the completed days of the
// range again under a new version, with an empty final row (no observations) for each row group
// the re-derivation removed, which History skips (history.go).
//
// A step writes staging tables only, or swaps a whole partition; and each month is computed from
// the raw payloads and the offers that are not re-derived, which no swap changes. So a
// re-derivation cut off anywhere is completed by running it again. Nothing may be loaded from a
// month's copy to its swap (the swap would drop the rows loaded in between), nor may two
// re-derivations share the staging tables: gpucost reparse, scrape and import take the run lock. It runs on a single server: on a cluster each shard's local tables would
// have to be swapped with staging rows of the same shards, which this does not do.

// stagingSuffix names the staging copy of a table.
const stagingSuffix = "_reparse"

// rederivedTables are the tables a month's re-derivation swaps, offers first.
var rederivedTables = []string{"offers", "offers_daily", "offers_daily_sums"}

// StoredRun is one provider's part of a stored run: what a re-derivation replaces.
type StoredRun struct {
	RunID, Provider string
	ObservedAt      time.Time // the run's observation time, every offer's (a scraped run's offers share it)
	Offers          int       // offers stored
}

// key is the run's key in the conditions on stored rows (runKeys).
func (r StoredRun) key() string { return r.Provider + "\t" + r.RunID }

// runKeyExpr is a row's run key in SQL, as StoredRun.key writes it.
const runKeyExpr = "concat(CAST(provider AS String), '\\t', run_id)"

// runKeysExpr is the condition that a row belongs to one of the runs runKeys lists.
const runKeysExpr = "has(?, " + runKeyExpr + ")"

func runKeys(runs []StoredRun) []string {
	keys := make([]string, len(runs))
	for i, r := range runs {
		keys[i] = r.key()
	}
	return keys
}

// StoredRuns returns the runs of the providers (every provider when none is given) with offers
// observed in [from, to), oldest first.
func (s *Store) StoredRuns(ctx context.Context, from, to time.Time, providers []string) ([]StoredRun, error) {
	// Only runs whose load is complete (their run-log row is there): a batch still in the spool
	// is the pipeline's to complete, and an import (no run-log row, its rows observed at the
	// times its table says) is loaded again from its table, not re-derived. DateTime arguments
	// are sent to the second: the bounds are rounded up, so `--to now` takes a run of this second.
	where := `observed_at >= ? AND observed_at < ?
		AND ` + runKeyExpr + ` IN (SELECT ` + runKeyExpr + ` FROM ` + s.table("scrape_runs") + `)`
	args := []any{ceilSecond(from), ceilSecond(to)}
	if len(providers) > 0 {
		where += " AND has(?, CAST(provider AS String))"
		args = append(args, providers)
	}
	const what = "reading the stored runs to re-derive"
	rows, err := s.conn.Query(s.ctx(ctx), `SELECT run_id, CAST(provider AS String) AS p, min(observed_at) AS at, count()
		FROM `+s.table("offers")+` WHERE `+where+`
		GROUP BY run_id, p ORDER BY at, p, run_id`, args...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	var out []StoredRun
	for rows.Next() {
		var r StoredRun
		var n uint64
		if err := rows.Scan(&r.RunID, &r.Provider, &r.ObservedAt, &n); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		r.ObservedAt, r.Offers = r.ObservedAt.UTC(), int(n)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}

// RunPayloads returns the raw payloads one provider stored in one run, in the order fetched.
func (s *Store) RunPayloads(ctx context.Context, runID, provider string) ([]schema.RawPayload, error) {
	return s.payloads(ctx, "reading the payloads of run "+runID+"/"+provider, "run_id = ? AND provider = ?", runID, provider)
}

// RunOffers returns the offers one provider stored in one run.
func (s *Store) RunOffers(ctx context.Context, runID, provider string) ([]schema.Offer, error) {
	q := "SELECT " + offerColumns + " FROM " + s.table("offers") + " WHERE run_id = ? AND provider = ?"
	var got offerChunks
	var sc offerScanner
	if err := s.readOffers(ctx, "reading the offers of run "+runID+"/"+provider, q, []any{runID, provider}, sc.scanOffer, got.next); err != nil {
		return nil, err
	}
	return got.all(), nil
}

// PricesBefore returns the newest $/GPU-hour of every offer of provider observed before at:
// what LatestPrices read for the outlier check when a run of that time was loaded.
func (s *Store) PricesBefore(ctx context.Context, provider string, at time.Time) (map[schema.Key]decimal.Decimal, error) {
	return s.prices(ctx, "reading the prices of "+provider+" before "+at.UTC().Format(time.RFC3339), provider,
		`SELECT offer_id, price_type, argMax(price_usd_per_gpu_hour, observed_at)
		FROM `+s.table("offers")+` WHERE provider = ? AND observed_at < ?
		GROUP BY offer_id, price_type`, provider, at.UTC())
}

// PrepareRederivation creates the staging tables afresh, as copies of today's tables.
func (s *Store) PrepareRederivation(ctx context.Context) error {
	// A cluster's tables are Distributed over local ones, whatever the configuration says.
	var engine string
	if err := s.conn.QueryRow(s.ctx(ctx), "SELECT engine FROM system.tables WHERE database = ? AND name = 'offers'", s.database).Scan(&engine); err != nil {
		return s.queryError("reading the engine of offers", err)
	}
	if s.cluster != "" || engine == "Distributed" {
		return fmt.Errorf("re-deriving offers on a cluster is not supported (offers is %s): run it against a single server", engine)
	}
	for _, t := range append(slices.Clone(rederivedTables), "offers_latest") {
		for _, q := range []string{
			"DROP TABLE IF EXISTS " + s.table(t+stagingSuffix),
			"CREATE TABLE " + s.table(t+stagingSuffix) + " AS " + s.table(t),
		} {
			if err := s.conn.Exec(s.ctx(ctx), q); err != nil {
				return s.queryError("creating the staging table "+t+stagingSuffix, err)
			}
		}
	}
	return nil
}

// EndRederivation drops the staging tables.
func (s *Store) EndRederivation(ctx context.Context) error {
	for _, t := range append(slices.Clone(rederivedTables), "offers_latest") {
		if err := s.conn.Exec(s.ctx(ctx), "DROP TABLE IF EXISTS "+s.table(t+stagingSuffix)); err != nil {
			return s.queryError("dropping the staging table "+t+stagingSuffix, err)
		}
	}
	return nil
}

// MonthRederivation is the re-derivation of one month: see the top of this file.
type MonthRederivation struct {
	s     *Store
	month uint32 // toYYYYMM
	runs  map[string]bool
}

// BeginMonth starts the re-derivation of the month that starts at month (UTC) for runs, which
// must all be of that month: the staging tables are emptied and offers_reparse gets the month's
// offers of every other run.
func (s *Store) BeginMonth(ctx context.Context, month time.Time, runs []StoredRun) (*MonthRederivation, error) {
	month = time.Date(month.Year(), month.Month(), 1, 0, 0, 0, 0, time.UTC)
	m := &MonthRederivation{s: s, month: uint32(month.Year()*100 + int(month.Month())), runs: map[string]bool{}}
	for _, r := range runs {
		if at := r.ObservedAt.UTC(); at.Year() != month.Year() || at.Month() != month.Month() {
			return nil, fmt.Errorf("re-deriving %d: run %s/%s was observed in another month (%s)", m.month, r.RunID, r.Provider, at.Format(time.RFC3339))
		}
		m.runs[r.key()] = true
	}
	for _, t := range rederivedTables {
		if err := s.conn.Exec(s.ctx(ctx), "TRUNCATE TABLE "+s.table(t+stagingSuffix)); err != nil {
			return nil, s.queryError("emptying the staging table "+t+stagingSuffix, err)
		}
	}
	q := "INSERT INTO " + s.table("offers"+stagingSuffix) + " SELECT * FROM " + s.table("offers") + `
		WHERE observed_at >= ? AND observed_at < ? AND NOT ` + runKeysExpr
	if err := s.conn.Exec(s.ctx(ctx), q, month, month.AddDate(0, 1, 0), runKeys(runs)); err != nil {
		return nil, s.queryError(fmt.Sprintf("copying the offers of %d that stay", m.month), err)
	}
	return m, nil
}

// AddOffers adds the re-derived offers of one of the month's runs, in one insert.
func (m *MonthRederivation) AddOffers(ctx context.Context, run StoredRun, offers []schema.Offer) error {
	if !m.runs[run.key()] {
		return fmt.Errorf("re-deriving %d: run %s/%s is not one of the month's", m.month, run.RunID, run.Provider)
	}
	for _, o := range offers {
		if o.RunID != run.RunID || o.Provider != run.Provider || !o.ObservedAt.Equal(run.ObservedAt) {
			return fmt.Errorf("re-deriving %d: an offer of %s/%s at %s among those of run %s/%s at %s",
				m.month, o.RunID, o.Provider, o.ObservedAt.Format(time.RFC3339), run.RunID, run.Provider, run.ObservedAt.Format(time.RFC3339))
		}
	}
	return m.s.insertOffers(ctx, "offers"+stagingSuffix, run.RunID, offers)
}

// Commit rolls the staging offers up and swaps the month of offers and of each rollup for its
// staging copy.
func (m *MonthRederivation) Commit(ctx context.Context) error {
	s := m.s
	views, err := fingerprinted()
	if err != nil {
		return err
	}
	for _, v := range views {
		cols, err := s.columns(ctx, v.table)
		if err != nil {
			return err
		}
		sel := strings.Replace(v.sel, "\nFROM offers\n", "\nFROM "+s.table("offers"+stagingSuffix)+"\n", 1)
		list := strings.Join(cols, ", ")
		q := "INSERT INTO " + s.table(v.table+stagingSuffix) + " (" + list + ") SELECT " + list + " FROM (" + sel + ")"
		if err := s.conn.Exec(s.ctx(ctx), q); err != nil {
			return s.queryError(fmt.Sprintf("rolling up the re-derived offers of %d into %s", m.month, v.table+stagingSuffix), err)
		}
	}
	for _, t := range rederivedTables {
		if err := s.swap(ctx, t, fmt.Sprint(m.month)); err != nil {
			return err
		}
	}
	return nil
}

// swap replaces a partition of table (as system.parts names it) by its staging copy's, at once:
// a REPLACE PARTITION, or a DROP PARTITION when the copy has no rows in it (current servers
// refuse to replace from an empty partition).
func (s *Store) swap(ctx context.Context, table, partition string) error {
	staged, err := s.partitions(ctx, table+stagingSuffix)
	if err != nil {
		return err
	}
	q := "ALTER TABLE " + s.table(table) + " DROP PARTITION " + partition
	if slices.Contains(staged, partition) {
		q = "ALTER TABLE " + s.table(table) + " REPLACE PARTITION " + partition + " FROM " + s.table(table+stagingSuffix)
	}
	if err := s.conn.Exec(s.ctx(ctx), q); err != nil {
		return s.queryError(fmt.Sprintf("swapping partition %s of %s for its re-derivation", partition, table), err)
	}
	return nil
}

// RebuildLatest rebuilds offers_latest from offers for the given providers (the other
// providers' rows stay as they are) and swaps it whole.
func (s *Store) RebuildLatest(ctx context.Context, providers []string) error {
	staging := s.table("offers_latest" + stagingSuffix)
	for _, q := range []struct {
		what, sql string
		args      []any
	}{
		{"emptying " + staging, "TRUNCATE TABLE " + staging, nil},
		{"copying the latest offers that stay", "INSERT INTO " + staging + " SELECT * FROM " + s.table("offers_latest") + " FINAL WHERE NOT has(?, CAST(provider AS String))", []any{providers}},
		// The newest row of each key: found by a GROUP BY on the keys (memory by keys, not rows),
		// not by sorting the providers' whole history.
		{"rebuilding the latest offers of " + strings.Join(providers, ", "), "INSERT INTO " + staging + " SELECT * FROM " + s.table("offers") + `
			WHERE has(?, CAST(provider AS String))
				AND (provider, price_type, offer_id, observed_at) IN (
					SELECT provider, price_type, offer_id, max(observed_at) FROM ` + s.table("offers") + `
					WHERE has(?, CAST(provider AS String)) GROUP BY provider, price_type, offer_id)`, []any{providers, providers}},
	} {
		if err := s.conn.Exec(s.ctx(ctx), q.sql, q.args...); err != nil {
			return s.queryError(q.what, err)
		}
	}
	// Every partition either table has is swapped, whatever the table's layout (current servers
	// give offers_latest offers' monthly partitions): a reader can see one partition rebuilt and
	// another not yet, for the milliseconds between.
	parts, err := s.partitions(ctx, "offers_latest", "offers_latest"+stagingSuffix)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := s.swap(ctx, "offers_latest", p); err != nil {
			return err
		}
	}
	return nil
}

// partitions returns the partitions (as ALTER … PARTITION takes them) with active parts in any
// of the tables.
func (s *Store) partitions(ctx context.Context, tables ...string) ([]string, error) {
	what := "reading the partitions of " + strings.Join(tables, ", ")
	rows, err := s.conn.Query(s.ctx(ctx), `SELECT DISTINCT partition FROM system.parts
		WHERE database = ? AND has(?, table) AND active ORDER BY partition`, s.database, tables)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}

// Refinalize finalizes again the completed days in [from, to) that have rollup or final rows,
// under a new version, writing an empty final row for every row group with final rows that the
// rollups no longer have.
func (s *Store) Refinalize(ctx context.Context, from, to time.Time) error {
	today := s.now().UTC().Truncate(24 * time.Hour)
	if to.After(today) {
		to = today
	}
	if !from.Before(to) {
		return nil
	}
	days, err := s.dayList(ctx, "reading the days to finalize again", `SELECT DISTINCT d FROM (
			SELECT toYYYYMMDD(day) AS d FROM `+s.table("offers_daily")+` WHERE day >= toDate(?) AND day < toDate(?)
			UNION ALL
			SELECT toYYYYMMDD(day) AS d FROM `+s.table("offers_daily_final")+` WHERE day >= toDate(?) AND day < toDate(?)
		) ORDER BY d`, from, to, from, to)
	if err != nil || len(days) == 0 {
		return err
	}
	_, version, err := s.newestFinal(ctx)
	if err != nil {
		return err
	}
	// The empty rows first: stopped between the two inserts, a removed row group is hidden
	// already and the others show their former final rows, which the next run (or migrate's
	// check of the final rows) writes again.
	q := `INSERT INTO ` + s.table("offers_daily_final") + ` (day, provider, gpu_model, price_type, min_price, max_price,
			median_price, observations, distinct_offers, sum_price, summed, avg_price, version)
		SELECT day, provider, gpu_model, price_type, toDecimal64(0, 6), toDecimal64(0, 6), 0, toUInt64(0), toUInt64(0),
			toDecimal128(0, 6), toUInt64(0), 0, toUInt64(?)
		FROM (
			SELECT day, provider, gpu_model, price_type, observations FROM ` + s.table("offers_daily_final") + ` FINAL
			WHERE day >= toDate(?) AND day < toDate(?)
		)
		WHERE observations > 0 AND (day, provider, gpu_model, price_type) NOT IN (
			SELECT day, provider, gpu_model, price_type FROM ` + s.table("offers_daily") + `
			WHERE day >= toDate(?) AND day < toDate(?)
			GROUP BY day, provider, gpu_model, price_type
		)`
	if err := s.conn.Exec(s.ctx(ctx), q, version, from, to, from, to); err != nil {
		return s.queryError("writing empty final rows for the row groups re-derivation removed", err)
	}
	return s.finalize(ctx, days, version)
}
