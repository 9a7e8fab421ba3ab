// Package export writes gpucost's price data for people and programs, from one model: the
// schema types. Offers (the market now) and observations as a terminal table, CSV, NDJSON and
// Parquet; the market's groups (market.Summary, `gpucost offers --group-by`) as a table and
// CSV; history points as a table, CSV, NDJSON and Parquet; price changes as a table and CSV;
// the value figures of the market (market.Value: $ per TFLOP-hour and per TB/s-hour) as a
// table and CSV; and the GPU catalog as a table, CSV and Markdown.
//
// The terminal tables fit a width (textcell.Fit): textcell.TerminalWidth (100) columns, or the
// terminal's own for offers. They leave out and shorten their least needed columns first, and
// the market's say under the table what they left out (View).
//
// One column vocabulary: a fact has the same name in every CSV, JSON, NDJSON and Parquet output,
// of the CLI, the JSON API and `gpucost export` alike. The names are the JSON names of the
// schema types (schema.Offer, schema.HistoryPoint, schema.PriceChange, market.Summary), which
// are the stored ones: the columns of the offers table (schema/migrations/0001_offers.sql),
// history's *_usd_per_gpu_hour, the columns of the price_changes view
// (schema/migrations/0008_price_changes.sql). CSV headers and cells are derived from those
// types (columns.go), JSON and NDJSON are the types themselves, and vocabulary_test.go holds
// the Parquet records to the same names in the same order.
//
// Lists in JSON come in one Envelope (envelope.go), from every command of the CLI and every
// answer of the API: a schema name per resource and version (gpucost.offers/v2), the query as
// understood, the count, whether more matched, the cursor of the next page, and the items under
// the resource's name. resources.go lists the schemas and the queries they echo.
//
// Prices are exact: CSV writes them with schema.PriceDecimals decimals, Parquet as
// DECIMAL(18, 6) (its pages compressed with Snappy or ZSTD); value figures have
// market.ValueDecimals decimals. Times are UTC. Scraped text is untrusted: tables and CSV pass
// every cell through package textcell; JSON, NDJSON and Parquet keep the text as stored.
package export
