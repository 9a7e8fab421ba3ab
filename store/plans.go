package store

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// planColumns is the column list of plan inserts and reads, in schema.PlanRow's order.
const planColumns = `run_id, generated_at, team, workload, kind, status, reason,
	current_provider, current_gpu_model, current_gpu_count, current_price_type, current_price_source,
	current_usd_per_hour, current_usd_per_month,
	recommended_provider, recommended_region, recommended_offer_id, recommended_gpu_model, recommended_gpu_count,
	recommended_nodes, recommended_price_type, recommended_precision,
	recommended_usd_per_hour, recommended_hours_per_month, recommended_usd_per_month,
	savings_usd_per_month, savings_percent, alternatives, rejected_models`

// InsertPlan writes the rows of one optimization run. Rows of a run id already stored are not
// written again, so a retried nightly job does not double its plan.
func (s *Store) InsertPlan(ctx context.Context, rows []schema.PlanRow) error {
	if len(rows) == 0 {
		return nil
	}
	runID := rows[0].RunID
	var n uint64
	if err := s.conn.QueryRow(s.ctx(ctx), s.planStoredQuery(), runID).Scan(&n); err != nil {
		return s.queryError("checking plan "+runID, err)
	}
	if n > 0 {
		return nil
	}
	batch, err := s.conn.PrepareBatch(s.ctx(ctx, clickhouse.WithQueryID(queryID("plans", runID))), "INSERT INTO "+s.table("plans")+" ("+planColumns+")")
	if err != nil {
		return s.queryError("preparing the plan insert", err)
	}
	defer batch.Close()
	for _, r := range rows {
		if err := batch.Append(r.RunID, r.GeneratedAt.UTC(), r.Team, r.Workload, r.Kind, r.Status, r.Reason,
			r.CurrentProvider, r.CurrentGPUModel, uint16(r.CurrentGPUCount), string(r.CurrentPriceType), r.CurrentPriceSource,
			r.CurrentUSDPerHour, r.CurrentUSDPerMonth,
			r.RecProvider, r.RecRegion, r.RecOfferID, r.RecGPUModel, uint16(r.RecGPUCount),
			uint16(r.RecNodes), string(r.RecPriceType), r.RecPrecision,
			r.RecUSDPerHour, r.RecHoursPerMonth, r.RecUSDPerMonth,
			r.SavingsUSDPerMonth, r.SavingsPercent, uint16(r.Alternatives), uint16(r.RejectedModels)); err != nil {
			return fmt.Errorf("appending plan row %s/%s: %w", r.Team, r.Workload, err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.queryError(fmt.Sprintf("inserting plan %s", runID), err)
	}
	return nil
}

func (s *Store) planStoredQuery() string {
	return "SELECT count() FROM " + s.table("plans") + " WHERE run_id = ?"
}

// LatestPlan returns the rows of the newest stored plan, by team and workload; nil when none.
func (s *Store) LatestPlan(ctx context.Context) ([]schema.PlanRow, error) {
	return s.readPlan(ctx, "reading the latest plan", s.newestPlanQuery(""))
}

// newestPlanQuery selects the rows of the newest plan among those where the condition holds
// (every plan when it is ""), by team and workload.
func (s *Store) newestPlanQuery(where string) string {
	if where != "" {
		where = " WHERE " + where
	}
	return "SELECT " + planColumns + " FROM " + s.table("plans") +
		" WHERE run_id = (SELECT argMax(run_id, generated_at) FROM " + s.table("plans") + where + ")" +
		" ORDER BY team, workload"
}

// PlanAsOf returns the rows of the newest plan generated at or before t, by team and
// workload; nil when none is that old. The weekly email compares this week's plan with
// PlanAsOf(a week ago).
func (s *Store) PlanAsOf(ctx context.Context, t time.Time) ([]schema.PlanRow, error) {
	return s.readPlan(ctx, "reading the plan as of "+t.UTC().Format(time.RFC3339), s.newestPlanQuery("generated_at <= ?"), t.UTC())
}

// readPlan runs a query of planColumns and scans its rows; what names the read in errors.
func (s *Store) readPlan(ctx context.Context, what, query string, args ...any) ([]schema.PlanRow, error) {
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	var out []schema.PlanRow
	for rows.Next() {
		var r schema.PlanRow
		var curCount, recCount, nodes, alts, rejected uint16
		var curType, recType string
		var cur, curMonth, rec, recHours, recMonth, save, pct *decimal.Decimal
		if err := rows.Scan(&r.RunID, &r.GeneratedAt, &r.Team, &r.Workload, &r.Kind, &r.Status, &r.Reason,
			&r.CurrentProvider, &r.CurrentGPUModel, &curCount, &curType, &r.CurrentPriceSource, &cur, &curMonth,
			&r.RecProvider, &r.RecRegion, &r.RecOfferID, &r.RecGPUModel, &recCount, &nodes, &recType, &r.RecPrecision,
			&rec, &recHours, &recMonth, &save, &pct, &alts, &rejected); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		r.GeneratedAt = r.GeneratedAt.UTC()
		r.CurrentGPUCount, r.RecGPUCount, r.RecNodes, r.Alternatives, r.RejectedModels = int(curCount), int(recCount), int(nodes), int(alts), int(rejected)
		r.CurrentPriceType, r.RecPriceType = schema.PriceType(curType), schema.PriceType(recType)
		r.CurrentUSDPerHour, r.CurrentUSDPerMonth = cur, curMonth
		r.RecUSDPerHour, r.RecHoursPerMonth, r.RecUSDPerMonth = rec, recHours, recMonth
		r.SavingsUSDPerMonth, r.SavingsPercent = save, pct
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}
