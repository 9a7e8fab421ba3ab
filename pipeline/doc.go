// Package pipeline runs one scrape: extract (every enabled source in parallel, bounded, each
// under its own deadline) → normalize (units, defaults, canonical GPU) → validate (reject invalid
// rows with counted reasons, flag suspicious ones) → load (one batch per provider: raw payloads,
// offers, run-log row) into a Sink.
//
// Normalizing stamps every row of a batch, offers and payloads, with the run (schema.Run.Stamp)
// and the provider, whatever the source put there, so a batch holds its own run's rows only. It
// rounds no price a source set: a price is rounded once, where it is priced, and the scrapers
// price every offer they parse (scrapers/doc.go). The pipeline prices only an offer whose
// source gave its whole-offer price alone, from that price as given (schema.Offer.SetPrice), and
// rejects a price with more decimals than are stored (RejectUnroundedPrice) rather than rounding
// it a second time.
//
// Reliability rules it enforces:
//   - One source failing never stops the others; its run-log row says why, and the run's status
//     is partial.
//   - A source that returns far fewer offers than its last good run (Config.MinOfferRatio) is
//     marked failed and its offers are not loaded: an emptied market is far less likely than a
//     broken page.
//   - Nothing lost, nothing doubled, whenever the process stops: the spool folder is a
//     write-ahead log (spool.go). Every batch is written to it durably before it is loaded and
//     removed only once the sink has stored all of it, and every run first loads what the spool
//     holds, oldest first, with the run id and timestamps the batch was made with. The sink
//     stores only what is missing of a batch (the ClickHouse store compares it row by row and
//     checks its rollups, store/batch.go), so a batch whose load was cut off at any instant
//     (SIGKILL, a crash, ClickHouse down or killed) is completed by the next run, never loaded
//     twice. A recording replayed again under the same run id while its earlier copy waits in
//     the spool (or in quarantine) is not loaded beside it: the earlier copy, with the
//     timestamps it may be partly stored under, is the one the sink completes.
//   - One batch never blocks the others: a spooled batch that fails to load is retried by the
//     next runs while the ones behind it load; after Config.MaxLoadAttempts failures, or at once
//     when the sink rejects it as such (schema.ErrRejected) or its file cannot be read, it moves
//     to the spool's quarantine folder with a .failures file of the reasons. A sink that is
//     unavailable (schema.ErrUnavailable) counts no failures: every batch waits. The Report says
//     how many batches wait and how many are in quarantine (cmd/gpucost turns both into exit
//     codes), and Metrics exports both.
//   - No secret is written: each batch (payload URLs and bodies, the run-log error, the offers'
//     text) passes Options.Redactor before it is spooled or loaded, and so do the errors the
//     run reports and records in the spool.
//   - Two runs never overlap: a lock file in the spool folder makes the second wait
//     (Config.LockWait) or fail with ErrBusy naming the holder.
//   - When the run's context is cancelled (SIGTERM), a load already in flight finishes under its
//     own LoadTimeout, and every batch not yet loading waits in the spool.
//   - A batch that can be neither loaded nor spooled (spool disk full) fails its provider, so
//     the run never reports lost offers as safe; if only the spooling fails, it is loaded
//     without its write-ahead copy (a kill during that load is then not recovered).
//
// The package knows nothing of provider formats or of ClickHouse: it declares the Source, Sink
// and History interfaces it consumes, over schema's types (schema.Run, schema.Extract,
// schema.Batch and the load failure kinds), and cmd/gpucost hands it the scrapers and the store
// as they are.
package pipeline
