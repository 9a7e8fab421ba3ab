// Package pipeline runs one scrape: extract (every enabled source in parallel, bounded, each
// under its own deadline) → normalize (units, defaults, canonical GPU) → validate (reject invalid
// rows with counted reasons, flag suspicious ones) → load (one batch per provider: raw payloads,
// offers, run-log row) into a Sink.
//
// Reliability rules it enforces:
//   - One source failing never stops the others; its run-log row says why, and the run's status
//     is partial.
//   - A source that returns far fewer offers than its last good run (Config.MinOfferRatio) is
//     marked failed and its offers are not loaded: an emptied market is far less likely than a
//     broken page.
//   - When the sink fails (ClickHouse down), the batch is written to the spool folder and the
//     next run loads it first. The sink skips what it already holds, so a replayed batch never
//     doubles rows.
//   - Two runs never overlap: a lock file in the spool folder makes the second wait
//     (Config.LockWait) or fail with ErrBusy naming the holder.
//   - When the run's context is cancelled (SIGTERM), a load already in flight finishes under its
//     own LoadTimeout, and every batch not yet loading is spooled.
//   - A batch that can be neither loaded nor spooled (spool disk full) fails its provider, so
//     the run never reports lost offers as safe.
//
// The package knows nothing of provider formats or of ClickHouse: it declares the Source, Sink
// and History interfaces it consumes, and cmd/gpucost wires the scrapers and the store in.
package pipeline
