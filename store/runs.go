package store

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpucost/gpucost/schema"
)

// Column lists of the run log and raw payload inserts and reads, in schema order.
const (
	runColumns     = "run_id, provider, started_at, finished_at, status, offers_parsed, offers_loaded, offers_rejected, error, http_attempts"
	payloadColumns = "run_id, provider, url, status, fetched_at, body"
)

// RecordRun appends rows to the run log (scrape_runs), one per provider of a run.
func (s *Store) RecordRun(ctx context.Context, runs ...schema.ScrapeRun) error {
	if len(runs) == 0 {
		return nil
	}
	ctx = s.ctx(ctx, clickhouse.WithQueryID(loadQueryID(runs[0].RunID, runs[0].Provider, "scrape_runs")))
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.table("scrape_runs")+" ("+runColumns+")")
	if err != nil {
		return s.queryError("preparing the run log insert", err)
	}
	defer batch.Close()
	for _, r := range runs {
		if err := batch.Append(r.RunID, r.Provider, r.StartedAt.UTC(), r.FinishedAt.UTC(), string(r.Status),
			r.OffersParsed, r.OffersLoaded, r.OffersRejected, r.Error, r.HTTPAttempts); err != nil {
			return fmt.Errorf("appending run %s/%s: %w: %w", r.RunID, r.Provider, schema.ErrRejected, err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.queryError(fmt.Sprintf("recording run %s", runs[0].RunID), err)
	}
	return nil
}

// HasRun reports whether the run log holds any row of the run runID, for any provider.
// (CompleteBatch checks one provider's part of a run itself.)
func (s *Store) HasRun(ctx context.Context, runID string) (bool, error) {
	var n uint64
	if err := s.conn.QueryRow(s.ctx(ctx), s.hasRunQuery(), runID).Scan(&n); err != nil {
		return false, s.queryError("checking run "+runID, err)
	}
	return n > 0, nil
}

func (s *Store) hasRunQuery() string {
	return "SELECT count() FROM " + s.table("scrape_runs") + " WHERE run_id = ?"
}

// LastRuns returns the newest run-log row of each provider, sorted by provider.
func (s *Store) LastRuns(ctx context.Context) ([]schema.ScrapeRun, error) {
	return s.queryRuns(ctx, "reading the last run per provider", s.lastRunsQuery(false))
}

// LastGoodRuns returns, per provider, the newest run whose status was ok or partial: the
// optimizer's freshness check and the pipeline's shrink check start from it.
func (s *Store) LastGoodRuns(ctx context.Context) ([]schema.ScrapeRun, error) {
	return s.queryRuns(ctx, "reading the last good run per provider", s.lastRunsQuery(true))
}

// lastRunsQuery selects the newest run-log row per provider, of good runs only if goodOnly.
func (s *Store) lastRunsQuery(goodOnly bool) string {
	where := ""
	if goodOnly {
		where = "WHERE status IN ('ok', 'partial')"
	}
	return `SELECT ` + runColumns + `
		FROM ` + s.table("scrape_runs") + `
		` + where + `
		ORDER BY provider, started_at DESC, run_id DESC
		LIMIT 1 BY provider`
}

func (s *Store) queryRuns(ctx context.Context, what, query string, args ...any) ([]schema.ScrapeRun, error) {
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	var out []schema.ScrapeRun
	for rows.Next() {
		var r schema.ScrapeRun
		var status string
		if err := rows.Scan(&r.RunID, &r.Provider, &r.StartedAt, &r.FinishedAt, &status,
			&r.OffersParsed, &r.OffersLoaded, &r.OffersRejected, &r.Error, &r.HTTPAttempts); err != nil {
			return nil, fmt.Errorf("%s: scanning a row: %w", what, err)
		}
		r.Status = schema.RunStatus(status)
		r.StartedAt, r.FinishedAt = r.StartedAt.UTC(), r.FinishedAt.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}

// InsertPayloads writes the raw response bodies of one provider's run as one batch.
func (s *Store) InsertPayloads(ctx context.Context, payloads []schema.RawPayload) error {
	if len(payloads) == 0 {
		return nil
	}
	ctx = s.ctx(ctx, clickhouse.WithQueryID(loadQueryID(payloads[0].RunID, payloads[0].Provider, "raw_payloads")))
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.table("raw_payloads")+" ("+payloadColumns+")")
	if err != nil {
		return s.queryError("preparing the raw payload insert", err)
	}
	defer batch.Close()
	// The bodies go as they are (a []byte is not copied into a string first). The driver holds
	// the block's columns until it sends them: CompleteBatch hands over payloads in chunks of
	// about insertBlockBytes.
	for _, p := range payloads {
		if err := batch.Append(p.RunID, p.Provider, p.URL, p.Status, p.FetchedAt.UTC(), p.Body); err != nil {
			return fmt.Errorf("appending a payload of run %s/%s: %w: %w", p.RunID, p.Provider, schema.ErrRejected, err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.queryError(fmt.Sprintf("inserting %d raw payloads of run %s", len(payloads), payloads[0].RunID), err)
	}
	return nil
}

// Payloads returns the raw payloads of one run, oldest first, so a parser fix can re-derive it.
func (s *Store) Payloads(ctx context.Context, runID string) ([]schema.RawPayload, error) {
	return s.payloads(ctx, "reading payloads of run "+runID, "run_id = ?", runID)
}

// payloads reads the raw payloads where the condition holds, by provider and fetch time.
func (s *Store) payloads(ctx context.Context, what, where string, args ...any) ([]schema.RawPayload, error) {
	rows, err := s.conn.Query(s.ctx(ctx), "SELECT "+payloadColumns+" FROM "+s.table("raw_payloads")+
		" WHERE "+where+" ORDER BY provider, fetched_at, url", args...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	var out []schema.RawPayload
	for rows.Next() {
		var p schema.RawPayload
		var body string
		if err := rows.Scan(&p.RunID, &p.Provider, &p.URL, &p.Status, &p.FetchedAt, &body); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		p.Body = []byte(body)
		p.FetchedAt = p.FetchedAt.UTC()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}
