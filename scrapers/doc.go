// Package scrapers fetches GPU prices from the providers (docs/providers.md says what each source
// reads) and normalizes them into schema.Offer rows: canonical GPU model (package gpus), USD per
// hour per offer and per GPU as decimals, decimal GB of VRAM per GPU, interconnect classes.
//
// Each provider is one source in its own file (vastai.go, runpod.go, lambda.go, …); fetching and
// parsing are kept apart, and the parsers are pure functions over the response bytes
// (ParseVast, ParseRunPod, ...), tested with golden files on recorded responses in testdata/. Every source
// fetches through one shared Client (client.go) built on go-retryablehttp: retries with jittered
// back-off honouring Retry-After, a per-attempt timeout under the run's context, a body size
// limit, a real User-Agent, secrets scrubbed from logs, errors and recorded URLs, and every
// response body scrubbed of the credentials the client sends before a parser reads it. HTML
// sources fetch through colly (page.go) with the client's Transport, so redirects stay under
// colly's AllowedDomains. What the providers share in parsing (GPU resolution, prices, units,
// table cells) is in normalize.go.
//
// # Sources
//
// Every source is a pipeline source as it is (pipeline.Source: Name, and Fetch(ctx, schema.Run)
// returning a schema.Extract); this package imports neither the pipeline nor anything but schema
// and gpus of gpucost. Fetch fetches and parses the provider's current prices for one run. It
// returns a nil error only with at least one offer; a response that parses to nothing is
// ErrNoOffers, never an empty success. Partial failures (one slice of several failed) leave the
// offers that were parsed in the Extract's Offers and the failures in its Problems. On error, the
// Extract still carries the payloads and attempts made so far, for the run log. Errors are *Error
// values naming the source, and wrap the sentinels of source.go where one applies. Fetch honours
// ctx's deadline and cancellation. Sources are safe for concurrent use by different runs.
//
// # Prices and the run
//
// A price is read as the decimal its text says, never through float64: JSON numbers through
// exactNumber (Vast, RunPod, OCI, DigitalOcean's API), Lambda's cents through lambdaNumber, Verda's numbers and numeric
// strings and RunPod's catalog's through jsonNumberOrString (exactDecimal), page cells through parseUSD; sums (Vast's
// dph_base plus storage, min_bid plus storage) are exact. Each offer is then priced once from
// that exact amount, by schema.Offer.SetPrice (through priced in normalize.go, or directly for
// Lambda's API) or SetPricePerGPU (the sources that quote per GPU; pricedPerGPU): its
// whole-offer and per-GPU prices are each rounded once, the only rounding a price gets on its way
// to the store (the pipeline rounds none again). Each offer is stamped with the run the source is handed (schema.Run.Stamp), so a parse
// is a whole observation on its own; the pipeline stamps the offers again with the same run, and
// is the only one to stamp the raw payloads.
//
// # Whole bodies, bounded memory
//
// A parser proves the body it reads arrived whole before it trusts it (complete.go): JSON
// decodes to its end with nothing after it, a page ends with </html> and closes its tables, and
// the client fails a body shorter than its Content-Length; a cut body is ErrIncomplete, never a
// smaller market. Memory is bounded whatever a provider sends: a body limit, a byte budget per
// source and run over all its requests (ClientConfig.MaxSourceBytes, ErrOverBudget), one copy
// of each body (the raw payload, parsed in place, JSON row by row), pages tokenized and bounded
// before a tree is built, and at most ClientConfig.MaxSourceOffers offers per source (docs/providers.md §6.2). A
// source that pauses between requests (Vast) announces each pause with the run's Pace
// (schema.Run) before it waits, so the deadline set by its caller can follow its plan.
//
// # Record and replay
//
// A Client built with ClientConfig.RecordDir saves every response it receives; one built with
// ClientConfig.ReplayDir serves every request from such a folder instead of the network, so a
// source parses a replayed run byte for byte as it parsed the live one. The layout is:
//
//	DIR/
//	  <source>/                  one folder per source name (vastai, runpod, …)
//	    index.json               Index: the exchanges in request order
//	    001-<slug>.body          the raw response body, exactly as received
//	    002-<slug>.body          <slug> is the last URL path segment ("bundles", "graphql", "pricing")
//
// index.json:
//
//	{"source": "vastai", "entries": [
//	  {"file": "001-bundles.body", "method": "POST",
//	   "url": "https://console.vast.ai/api/v0/bundles/",       // secrets redacted
//	   "request_sha256": "…", "request_body": "{…}",           // both with the body's secrets masked
//	   "status": 200, "content_type": "application/json", "fetched_at": "2026-11-29T14:00:00Z"}]}
//
// A replayed request matches the first unused entry with the same method, redacted URL and
// SHA-256 of the request body with its secrets masked (a request repeated more often than
// recorded gets the last match again); no match is ErrNotRecorded. Headers other than
// Content-Type are not recorded, so credentials never reach the folder; an answer that carries
// credentials (Request.Credentials: Verda's token step) is recorded with every credential field
// masked. The repository ships one snapshot of every provider in testdata/snapshot/, used by
// the tests and by the demo.
package scrapers
