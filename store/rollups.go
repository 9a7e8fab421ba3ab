package store

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpucost/gpucost/schema"
)

// Rollups consistent with offers, batch by batch.
//
// The daily rollups (offers_daily, offers_daily_sums) and offers_latest are kept by materialized
// views on offers. An insert into offers writes its part of offers first and the views' parts
// after it, each on its own, so a ClickHouse crash in between leaves rows in offers that a rollup
// never saw; a load that checks offers alone would then skip them for ever. So after its offers
// are stored, CompleteBatch checks each rollup against them and writes what is missing:
//
//   - offers_daily and offers_daily_sums carry, per row group (day × provider × GPU model × price
//     type) and run, a fingerprint of the observations they summarize: the sum modulo 2^64 of
//     cityHash64(offer_id, price_type) over them (the runs column, migration 0011). The batch's
//     stored offers give the same sum per row group. Equal: the group holds all of them. Short:
//     the observations of some insert parts are missing, and those parts' rows are rolled up
//     again with the view's own SELECT (from its migration, so the two cannot differ), restricted
//     to the run and to those parts, and inserted into the rollup.
//   - offers_latest is a ReplacingMergeTree: a row written twice is one row. Every offer of the
//     batch whose key has no row there as new as the offer is written again.
//
// What is a part: on one server, the rows of one insert in one monthly partition are written as
// one part per table, with one part per view, so a row group (one day) lies in one part, and its
// fingerprint is either all there or missing. On a cluster an insert also splits by shard (the
// Distributed table's sharding key, cityHash64(provider, offer_id, price_type), modulo the
// shards' total weight), and every shard writes its parts on its own; so the stored offers are
// summed per row group and slot (that key's remainder), and the slots whose sums add up to the
// rollup's fingerprint are the ones it holds. The missing slots are rolled up again. A
// fingerprint that no set of slots adds up to (the rollup holds more than the stored offers: a
// row counted twice) cannot be repaired by adding; it is logged as an error, and the batch loads.

// rollupView is one materialized view over offers whose rows carry the runs fingerprint.
type rollupView struct {
	name, table string
	// sel is the view's SELECT from its migration, with "FROM offers" on a line of its own.
	sel string
}

var (
	reRollupView  = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\n(SELECT\n.*\nFROM offers\nGROUP BY .*)$`)
	rollupsOnce   sync.Once
	rollupViews   []rollupView
	rollupViewErr error
)

// fingerprinted returns the rollup views of the embedded migrations, each as its last migration
// creates it, that carry the runs fingerprint.
func fingerprinted() ([]rollupView, error) {
	rollupsOnce.Do(func() {
		ms, err := schema.LoadMigrations(schema.Migrations)
		if err != nil {
			rollupViewErr = err
			return
		}
		byName := map[string]rollupView{}
		for _, m := range ms {
			for _, stmt := range m.Statements {
				if sub := reRollupView.FindStringSubmatch(stmt); sub != nil {
					byName[sub[1]] = rollupView{name: sub[1], table: sub[2], sel: sub[3]}
				}
			}
		}
		for _, v := range byName {
			if strings.Contains(v.sel, " AS runs\n") {
				rollupViews = append(rollupViews, v)
			}
		}
		sort.Slice(rollupViews, func(i, j int) bool { return rollupViews[i].name < rollupViews[j].name })
		if len(rollupViews) == 0 {
			rollupViewErr = fmt.Errorf("no materialized view over offers with a runs column in the migrations")
		}
	})
	return rollupViews, rollupViewErr
}

// rollupGroup is one row group of a daily rollup, of one provider.
type rollupGroup struct {
	day                 uint32 // toYYYYMMDD
	gpuModel, priceType string
}

// slotSum is the fingerprint of a run's stored offers of one row group in one slot.
type slotSum struct {
	slot uint64
	sum  uint64
}

// completeRollups makes every fingerprinted rollup hold each stored offer of one run and
// provider observed within rows, then writes the final rows of the completed days the rows
// reached and of those that ended since the last load (finalizeLoad, final.go), and returns how
// many row groups of the rollups it had to write again.
func (s *Store) completeRollups(ctx context.Context, runID, provider string, rows span) (int, error) {
	repaired, err := s.repairRollups(ctx, runID, provider, rows)
	if err != nil || rows.n == 0 {
		return repaired, err
	}
	return repaired, s.finalizeLoad(ctx, rows.days)
}

// repairRollups makes every fingerprinted rollup hold each stored offer of one run and provider
// observed within rows, and returns how many row groups it had to write again.
func (s *Store) repairRollups(ctx context.Context, runID, provider string, rows span) (int, error) {
	if rows.n == 0 {
		return 0, nil
	}
	views, err := fingerprinted()
	if err != nil {
		return 0, err
	}
	slotExpr, err := s.slotExpr(ctx)
	if err != nil {
		return 0, err
	}
	from, to := rows.from, rows.to
	stored, err := s.storedFingerprints(ctx, runID, provider, from, to, slotExpr)
	if err != nil {
		return 0, err
	}
	repaired := 0
	for _, v := range views {
		held, err := s.rollupFingerprints(ctx, v.table, runID, provider, from, to)
		if err != nil {
			return repaired, err
		}
		var missing []any // day, gpu model, price type, slot of every missing part
		var parts int
		for g, slots := range stored {
			lack, ok := missingSlots(slots, held[g])
			if !ok {
				s.logger.Error("A rollup holds more of a run than offers does; rebuild it (docs/operations.md)",
					"rollup", v.table, "run", runID, "provider", provider, "day", g.day, "gpu_model", g.gpuModel, "price_type", g.priceType)
				continue
			}
			for _, slot := range lack {
				missing = append(missing, g.day, g.gpuModel, g.priceType, slot)
			}
			if len(lack) > 0 {
				parts++
			}
		}
		if len(missing) == 0 {
			continue
		}
		if err := s.rollUpAgain(ctx, v, runID, provider, from, to, slotExpr, missing); err != nil {
			return repaired, err
		}
		s.logger.Warn("Rolled up offers a crash had kept from a rollup", "rollup", v.table, "run", runID, "provider", provider, "row_groups", parts)
		repaired += parts
	}
	return repaired, nil
}

// missingSlots returns the slots whose fingerprints are missing from held: those outside the
// one set of slots whose sums add up to held. ok is false when no set does.
func missingSlots(slots []slotSum, held uint64) (lack []uint64, ok bool) {
	var all uint64
	for _, s := range slots {
		all += s.sum
	}
	if all == held {
		return nil, true
	}
	// A handful of slots (one per shard weight unit): try every subset.
	if len(slots) > 20 {
		return nil, false
	}
	for mask := 0; mask < 1<<len(slots); mask++ {
		var sum uint64
		for i, s := range slots {
			if mask&(1<<i) != 0 {
				sum += s.sum
			}
		}
		if sum != held {
			continue
		}
		for i, s := range slots {
			if mask&(1<<i) == 0 {
				lack = append(lack, s.slot)
			}
		}
		return lack, true
	}
	return nil, false
}

// storedFingerprints sums the fingerprints of a run's stored offers of one provider per row
// group and slot.
func (s *Store) storedFingerprints(ctx context.Context, runID, provider string, from, to time.Time, slotExpr string) (map[rollupGroup][]slotSum, error) {
	what := fmt.Sprintf("reading the fingerprints of run %s/%s", runID, provider)
	rows, err := s.conn.Query(s.ctx(ctx), `SELECT toYYYYMMDD(observed_at) AS d, gpu_model, price_type, `+slotExpr+` AS slot,
			sum(cityHash64(offer_id, price_type))
		FROM `+s.table("offers")+`
		WHERE run_id = ? AND provider = ? AND observed_at >= ? AND observed_at < ?
		GROUP BY d, gpu_model, price_type, slot`, runID, provider, from, to)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	out := map[rollupGroup][]slotSum{}
	for rows.Next() {
		var g rollupGroup
		var ss slotSum
		if err := rows.Scan(&g.day, &g.gpuModel, &g.priceType, &ss.slot, &ss.sum); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out[g] = append(out[g], ss)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}

// rollupFingerprints reads a rollup's fingerprint of one run per row group of one provider
// within [from, to).
func (s *Store) rollupFingerprints(ctx context.Context, table, runID, provider string, from, to time.Time) (map[rollupGroup]uint64, error) {
	what := fmt.Sprintf("reading the fingerprints of run %s/%s in %s", runID, provider, table)
	rows, err := s.conn.Query(s.ctx(ctx), `SELECT toYYYYMMDD(day), gpu_model, price_type, tupleElement(m, 2)[indexOf(tupleElement(m, 1), cityHash64(?))]
		FROM (
			SELECT day, gpu_model, price_type, sumMapMerge(runs) AS m
			FROM `+s.table(table)+`
			WHERE provider = ? AND day >= toDate(?) AND day <= toDate(?)
			GROUP BY day, gpu_model, price_type
		)`, runID, provider, from, to.Add(-time.Second))
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	out := map[rollupGroup]uint64{}
	for rows.Next() {
		var g rollupGroup
		var sum uint64
		if err := rows.Scan(&g.day, &g.gpuModel, &g.priceType, &sum); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out[g] = sum
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}

// rollUpAgain inserts into a rollup what its view makes of a run's stored offers in the given
// parts (day, GPU model, price type, slot: four values each).
func (s *Store) rollUpAgain(ctx context.Context, v rollupView, runID, provider string, from, to time.Time, slotExpr string, parts []any) error {
	cols, err := s.columns(ctx, v.table)
	if err != nil {
		return err
	}
	marks := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", len(parts)/4), ", ")
	where := "FROM " + s.table("offers") + "\nWHERE run_id = ? AND provider = ? AND observed_at >= ? AND observed_at < ?" +
		" AND (toYYYYMMDD(observed_at), gpu_model, price_type, " + slotExpr + ") IN (" + marks + ")\n"
	sel := strings.Replace(v.sel, "\nFROM offers\n", "\n"+where, 1)
	list := strings.Join(cols, ", ")
	q := "INSERT INTO " + s.table(v.table) + " (" + list + ") SELECT " + list + " FROM (" + sel + ")"
	args := append([]any{runID, provider, from, to}, parts...)
	if err := s.conn.Exec(s.ctx(ctx, clickhouse.WithQueryID(loadQueryID(runID, provider, v.table))), q, args...); err != nil {
		return s.queryError(fmt.Sprintf("rolling up run %s/%s into %s again", runID, provider, v.table), err)
	}
	return nil
}

// completeLatest writes again into offers_latest every stored offer of one run and provider
// observed within rows whose key has no row there observed at or after it, and returns how many
// it wrote. The comparison and the copy run on the server (INSERT … SELECT from offers, joined
// with the newest observation of each key in offers_latest), so a batch of any size costs the
// client nothing.
func (s *Store) completeLatest(ctx context.Context, runID, provider string, rows span) (int, error) {
	if rows.n == 0 {
		return 0, nil
	}
	join := "ANY LEFT JOIN"
	if s.cluster != "" {
		join = "GLOBAL ANY LEFT JOIN" // the newest rows are read from every shard once
	}
	// A key without a row in offers_latest joins the default newest, 1970 (or NULL, where a
	// profile sets join_use_nulls): older than any offer.
	missing := ` FROM ` + s.table("offers") + `
		` + join + ` (
			SELECT offer_id, price_type, max(observed_at) AS newest FROM ` + s.table("offers_latest") + `
			WHERE provider = ? AND observed_at >= ? GROUP BY offer_id, price_type
		) AS latest USING (offer_id, price_type)
		WHERE run_id = ? AND provider = ? AND observed_at >= ? AND observed_at < ?
			AND ifNull(newest, toDateTime(0, 'UTC')) < observed_at`
	args := []any{provider, rows.from, runID, provider, rows.from, rows.to}
	var n uint64
	what := fmt.Sprintf("checking offers_latest for run %s/%s", runID, provider)
	if err := s.conn.QueryRow(s.ctx(ctx), "SELECT count()"+missing, args...).Scan(&n); err != nil {
		return 0, s.queryError(what, err)
	}
	if n == 0 {
		return 0, nil
	}
	q := "INSERT INTO " + s.table("offers_latest") + " (" + offerColumns + ") SELECT " + offerColumns + missing
	if err := s.conn.Exec(s.ctx(ctx, clickhouse.WithQueryID(loadQueryID(runID, provider, "offers_latest"))), q, args...); err != nil {
		return 0, s.queryError(fmt.Sprintf("writing offers of run %s/%s into offers_latest again", runID, provider), err)
	}
	s.logger.Warn("Wrote offers again that a crash had kept from offers_latest", "provider", provider, "offers", n)
	return int(n), nil
}

// slotExpr is the SQL of an offer row's slot: on a cluster the remainder of the offers' sharding
// key by the shards' total weight, which decides the shard the row is stored on; on one server 0.
func (s *Store) slotExpr(ctx context.Context) (string, error) {
	if s.cluster == "" {
		return "toUInt64(0)", nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shardWeights == 0 {
		var w uint64
		if err := s.conn.QueryRow(s.ctx(ctx), `SELECT toUInt64(sum(shard_weight)) FROM system.clusters WHERE cluster = ? AND replica_num = 1`, s.cluster).Scan(&w); err != nil {
			return "", fmt.Errorf("reading the shard weights of cluster %s at %s: %w", s.cluster, s.addr, err)
		}
		if w == 0 {
			return "", fmt.Errorf("cluster %s is not in system.clusters of the server at %s", s.cluster, s.addr)
		}
		s.shardWeights = w
	}
	return fmt.Sprintf("toUInt64(%s %% %d)", shardingKeys["offers"], s.shardWeights), nil
}

// columns returns a table's column names, quoted.
func (s *Store) columns(ctx context.Context, table string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cols, ok := s.tableColumns[table]; ok {
		return cols, nil
	}
	// In any order (18.16 has no position column): the same list names the insert's and the
	// SELECT's columns.
	rows, err := s.conn.Query(s.ctx(ctx), `SELECT name FROM system.columns WHERE database = ? AND table = ?`, s.database, table)
	if err != nil {
		return nil, s.queryError("reading the columns of "+table, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
		}
		cols = append(cols, quoteIdent(c))
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the columns of "+table, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("table %s has no columns in database %s at %s (run gpucost migrate)", table, s.database, s.addr)
	}
	if s.tableColumns == nil {
		s.tableColumns = map[string][]string{}
	}
	s.tableColumns[table] = cols
	return cols, nil
}
