package store

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// LoadResult says which parts of a batch LoadBatch wrote and which it found already stored.
type LoadResult struct {
	OffersWritten, PayloadsWritten, RunWritten bool
}

// Skipped reports whether the whole batch was already stored (a replay of a loaded batch).
func (r LoadResult) Skipped() bool {
	return !r.OffersWritten && !r.PayloadsWritten && !r.RunWritten
}

// LoadBatch writes one provider's batch of one run — raw payloads, offers, then the run-log row —
// skipping every part that is already stored for that run and provider. Loading the same batch
// again (a spooled batch replayed after a partial failure, or a replay of a recorded run with the
// same run id) therefore writes each row once. The check reads the tables, so two processes
// loading the same batch at the same moment could both write it; the pipeline's run lock
// prevents that.
func (s *Store) LoadBatch(ctx context.Context, b schema.Batch) (LoadResult, error) {
	var res LoadResult
	runID, provider := b.Run.RunID, b.Run.Provider
	if runID == "" || provider == "" {
		return res, fmt.Errorf("loading a batch: run id and provider are required")
	}
	loaded, err := s.loadedCounts(ctx, runID, provider)
	if err != nil {
		return res, err
	}
	if loaded.payloads == 0 && len(b.Payloads) > 0 {
		if err := s.InsertPayloads(ctx, b.Payloads); err != nil {
			return res, err
		}
		res.PayloadsWritten = true
	}
	if loaded.offers == 0 && len(b.Offers) > 0 {
		if err := s.InsertOffers(ctx, runID, b.Offers); err != nil {
			return res, err
		}
		res.OffersWritten = true
	}
	if loaded.runs == 0 {
		if err := s.RecordRun(ctx, b.Run); err != nil {
			return res, err
		}
		res.RunWritten = true
	}
	return res, nil
}

type loadedCounts struct{ offers, payloads, runs uint64 }

// loadedCounts counts what is stored of one provider's part of a run. The offers count scans
// the run_id column (not in the sort key): fine for a check made once per batch.
func (s *Store) loadedCounts(ctx context.Context, runID, provider string) (loadedCounts, error) {
	var c loadedCounts
	err := s.conn.QueryRow(s.ctx(ctx), s.loadedCountsQuery(), runID, provider, runID, provider, runID, provider).
		Scan(&c.offers, &c.payloads, &c.runs)
	if err != nil {
		return c, s.queryError(fmt.Sprintf("checking what is stored of run %s/%s", runID, provider), err)
	}
	return c, nil
}

func (s *Store) loadedCountsQuery() string {
	return `SELECT
		(SELECT count() FROM ` + s.table("offers") + ` WHERE run_id = ? AND provider = ?),
		(SELECT count() FROM ` + s.table("raw_payloads") + ` WHERE run_id = ? AND provider = ?),
		(SELECT count() FROM ` + s.table("scrape_runs") + ` WHERE run_id = ? AND provider = ?)`
}

// LatestPrices returns the newest known $/GPU-hour of every offer of one provider, so the
// pipeline can flag a price that jumped since the last observation.
func (s *Store) LatestPrices(ctx context.Context, provider string) (map[schema.Key]decimal.Decimal, error) {
	rows, err := s.conn.Query(s.ctx(ctx), s.latestPricesQuery(), provider)
	if err != nil {
		return nil, s.queryError("reading the latest prices of "+provider, err)
	}
	defer rows.Close()
	out := map[schema.Key]decimal.Decimal{}
	for rows.Next() {
		var id, pt string
		var price decimal.Decimal
		if err := rows.Scan(&id, &pt, &price); err != nil {
			return nil, fmt.Errorf("reading the latest prices of %s: %w", provider, err)
		}
		out[schema.Key{Provider: provider, OfferID: id, PriceType: schema.PriceType(pt)}] = price
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the latest prices of "+provider, err)
	}
	return out, nil
}

func (s *Store) latestPricesQuery() string {
	return `SELECT offer_id, price_type, argMax(price_usd_per_gpu_hour, observed_at)
		FROM ` + s.table("offers_latest") + `
		WHERE provider = ?
		GROUP BY offer_id, price_type`
}
