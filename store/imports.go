package store

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/gpucost/gpucost/schema"
)

// MaxImportRows is the most offers one import may hold: ClickHouse writes an insert of up to
// max_insert_block_size rows (1,048,576 by default) as one block, so an import this size is
// stored whole or not at all (per monthly partition).
const MaxImportRows = 1_000_000

// ImportResult says what LoadImport did.
type ImportResult struct {
	OffersWritten  int  // offers inserted by this call
	PayloadWritten bool // the file was stored as a raw payload by this call
}

// Skipped reports whether the import was already stored whole (the same file imported again).
func (r ImportResult) Skipped() bool { return r.OffersWritten == 0 && !r.PayloadWritten }

// LoadImport stores an import unless it is already stored: the file as a raw payload, then its
// offers, then their rollups, as CompleteBatch does: each row is compared with what is stored of the
// import and only the missing ones are written, so loading the same import again writes nothing,
// and an import cut off anywhere (between the payload and the offers, between two monthly
// partitions of its offers, before the rollups) is completed by the next call. Imports are not
// scrapes: they write no run-log row, so scrape health and the pipeline's shrink check never see
// them.
func (s *Store) LoadImport(ctx context.Context, imp schema.Import) (ImportResult, error) {
	var res ImportResult
	if imp.RunID == "" {
		return res, fmt.Errorf("loading an import: %w: a run id is required", schema.ErrRejected)
	}
	if len(imp.Offers) > MaxImportRows {
		return res, fmt.Errorf("loading import %s: %w: %d offers is more than the %d one import may hold: split the file", imp.RunID, schema.ErrRejected, len(imp.Offers), MaxImportRows)
	}
	byProvider := map[string][]schema.Offer{}
	var providers []string
	for i, o := range imp.Offers {
		if o.RunID != imp.RunID {
			return res, fmt.Errorf("loading import %s: %w: offer %d has run id %q", imp.RunID, schema.ErrRejected, i+1, o.RunID)
		}
		if _, ok := byProvider[o.Provider]; !ok {
			providers = append(providers, o.Provider)
		}
		byProvider[o.Provider] = append(byProvider[o.Provider], o)
	}
	if err := s.endStrays(ctx, imp.RunID, ""); err != nil {
		return res, unavailable(err)
	}
	if len(imp.Payload.Body) > 0 {
		p := imp.Payload
		p.RunID = imp.RunID
		// The file's fetch time is the import's, new each time: look it up by its content.
		n, err := s.completePayloads(ctx, imp.RunID, p.Provider, []schema.RawPayload{p}, false, newStoredRows[payloadKey]())
		if err != nil {
			return res, err
		}
		res.PayloadWritten = n > 0
	}
	// The final rows of the days the import reaches are written once, when every provider's
	// rollups are whole (finalizeLoad rewrites a day for all providers).
	days := map[int64]bool{}
	for _, provider := range providers {
		offers := byProvider[provider]
		ins := s.newOfferInsert("offers", imp.RunID)
		n, err := s.completeOffers(ctx, imp.RunID, provider, offers, newStoredRows[offerRowKey](), ins)
		if err == nil {
			err = ins.send()
		}
		ins.close()
		if err != nil {
			return res, err
		}
		res.OffersWritten += n
		var rows span
		rows.add(len(offers), func(i int) time.Time { return offers[i].ObservedAt })
		if _, err := s.repairRollups(ctx, imp.RunID, provider, rows); err != nil {
			return res, err
		}
		maps.Copy(days, rows.days)
		if _, err := s.completeLatest(ctx, imp.RunID, provider, rows); err != nil {
			return res, err
		}
	}
	if len(days) > 0 {
		if err := s.finalizeLoad(ctx, days); err != nil {
			return res, err
		}
	}
	return res, nil
}
