package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gpucost/gpucost/schema"
)

// MaxImportRows is the most offers one import may hold: ClickHouse writes an insert of up to
// max_insert_block_size rows (1,048,576 by default) as one block, so an import this size is
// stored whole or not at all (per monthly partition).
const MaxImportRows = 1_000_000

// Import is a published price table loaded as observations: its offers, all tagged with RunID,
// and the file itself as a raw payload, so a fix to the import parser can re-derive them.
type Import struct {
	RunID   string // derived from the file's content: the same file always gets the same id
	Offers  []schema.Offer
	Payload schema.RawPayload
}

// ImportResult says what LoadImport did.
type ImportResult struct {
	OffersWritten  int  // offers inserted by this call
	PayloadWritten bool // the file was stored as a raw payload by this call
}

// Skipped reports whether the import was already stored whole (the same file imported again).
func (r ImportResult) Skipped() bool { return r.OffersWritten == 0 && !r.PayloadWritten }

// LoadImport stores an import unless it is already stored: the file as a raw payload, then its
// offers in one insert. Loading the same import again writes nothing, and a load interrupted
// between the payload and the offers is completed by the next call. An import whose offers are
// stored only in part (an insert cut off between two monthly partitions) is an error that says
// how to remove them. Imports are not scrapes: they write no run-log row, so scrape health and
// the pipeline's shrink check never see them.
func (s *Store) LoadImport(ctx context.Context, imp Import) (ImportResult, error) {
	var res ImportResult
	if imp.RunID == "" {
		return res, fmt.Errorf("loading an import: a run id is required")
	}
	if len(imp.Offers) > MaxImportRows {
		return res, fmt.Errorf("loading import %s: %d offers is more than the %d one import may hold: split the file", imp.RunID, len(imp.Offers), MaxImportRows)
	}
	for i := range imp.Offers {
		if imp.Offers[i].RunID != imp.RunID {
			return res, fmt.Errorf("loading import %s: offer %d has run id %q", imp.RunID, i+1, imp.Offers[i].RunID)
		}
	}
	var offers, payloads uint64
	from, to := timeRange(len(imp.Offers), func(i int) time.Time { return imp.Offers[i].ObservedAt })
	if err := s.conn.QueryRow(s.ctx(ctx), s.importedCountsQuery(), imp.RunID, from, to, imp.Payload.Provider, imp.RunID).Scan(&offers, &payloads); err != nil {
		return res, s.queryError("checking what is stored of import "+imp.RunID, err)
	}
	if offers != 0 && offers != uint64(len(imp.Offers)) {
		return res, fmt.Errorf("import %s is stored in part (%d of %d offers) in database %s: remove it with ALTER TABLE offers DELETE WHERE run_id = '%s', then import again",
			imp.RunID, offers, len(imp.Offers), s.database, imp.RunID)
	}
	if payloads == 0 && len(imp.Payload.Body) > 0 {
		p := imp.Payload
		p.RunID = imp.RunID
		if err := s.InsertPayloads(ctx, []schema.RawPayload{p}); err != nil {
			return res, err
		}
		res.PayloadWritten = true
	}
	if offers == 0 && len(imp.Offers) > 0 {
		if err := s.InsertOffers(ctx, imp.RunID, imp.Offers); err != nil {
			return res, err
		}
		res.OffersWritten = len(imp.Offers)
	}
	return res, nil
}

// importedCountsQuery counts what is stored of an import. As in LoadBatch, run_id is not in the
// sort keys: the offers are counted within the import's own time range (its rows' observation
// times come from the file, so they are the same on a re-import), the payload within its
// provider (the sort key's first column; its fetch time is the import's, not the file's).
func (s *Store) importedCountsQuery() string {
	return `SELECT
		(SELECT count() FROM ` + s.table("offers") + ` WHERE run_id = ? AND observed_at >= ? AND observed_at < ?),
		(SELECT count() FROM ` + s.table("raw_payloads") + ` WHERE provider = ? AND run_id = ?)`
}
