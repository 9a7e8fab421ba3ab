package store

import (
	"context"
	"fmt"
	"time"

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
	loaded, err := s.loadedCounts(ctx, b)
	if err != nil || loaded.runs > 0 {
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
	if err := s.RecordRun(ctx, b.Run); err != nil {
		return res, err
	}
	res.RunWritten = true
	return res, nil
}

type loadedCounts struct{ offers, payloads, runs uint64 }

// loadedCounts counts what is stored of one provider's part of a run. The run-log row is
// written last, so when it exists the whole batch is stored (this also covers a recorded run
// replayed again later, whose offers carry a new observation time). Otherwise the offers and
// payloads are counted within the batch's own time range: run_id is not in those tables' sort
// keys, and the range prunes partitions and parts by their min/max times, so the check reads
// only the parts the batch could be in, however long the history grows.
func (s *Store) loadedCounts(ctx context.Context, b schema.Batch) (loadedCounts, error) {
	var c loadedCounts
	runID, provider := b.Run.RunID, b.Run.Provider
	err := s.conn.QueryRow(s.ctx(ctx), s.runRowsQuery(), runID, provider).Scan(&c.runs)
	if err != nil {
		return c, s.queryError(fmt.Sprintf("checking what is stored of run %s/%s", runID, provider), err)
	}
	if c.runs > 0 {
		return c, nil // the whole batch is stored: LoadBatch skips it
	}
	oFrom, oTo := timeRange(len(b.Offers), func(i int) time.Time { return b.Offers[i].ObservedAt })
	pFrom, pTo := timeRange(len(b.Payloads), func(i int) time.Time { return b.Payloads[i].FetchedAt })
	err = s.conn.QueryRow(s.ctx(ctx), s.loadedCountsQuery(),
		runID, provider, oFrom, oTo, runID, provider, pFrom, pTo).
		Scan(&c.offers, &c.payloads)
	if err != nil {
		return c, s.queryError(fmt.Sprintf("checking what is stored of run %s/%s", runID, provider), err)
	}
	return c, nil
}

// timeRange returns the earliest and latest of n times, to the second; for n == 0 an empty
// range that matches nothing.
func timeRange(n int, at func(int) time.Time) (from, to time.Time) {
	if n == 0 {
		return time.Unix(1, 0).UTC(), time.Unix(0, 0).UTC()
	}
	from, to = at(0), at(0)
	for i := 1; i < n; i++ {
		if t := at(i); t.Before(from) {
			from = t
		} else if t.After(to) {
			to = t
		}
	}
	return from.UTC().Truncate(time.Second), to.UTC().Truncate(time.Second).Add(time.Second)
}

func (s *Store) runRowsQuery() string {
	return `SELECT count() FROM ` + s.table("scrape_runs") + ` WHERE run_id = ? AND provider = ?`
}

func (s *Store) loadedCountsQuery() string {
	return `SELECT
		(SELECT count() FROM ` + s.table("offers") + ` WHERE run_id = ? AND provider = ? AND observed_at >= ? AND observed_at < ?),
		(SELECT count() FROM ` + s.table("raw_payloads") + ` WHERE run_id = ? AND provider = ? AND fetched_at >= ? AND fetched_at < ?)`
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
