// Package pricetable reads a published price table, a CSV file of the list prices a provider
// publishes (copied from its pricing page by an analyst), into the price observations of one
// import (schema.Import), or into every problem the table has, each as FILE:LINE: column:
// problem (Errors). A table with any problem gives no offers at all, so nothing of it is loaded.
//
// # Format
//
// The first line names the columns, in any order and any case; Columns lists them, with what
// each holds (gpucost import --help prints it).
//
// Empty cells take the default. An interconnect the table does not give is unknown: it is never
// taken from the GPU's name or count. Lines starting with # are comments; a UTF-8 byte order
// mark is ignored.
//
// # Checks
//
// Each row becomes an offer as a scraped one does: pipeline.Prepare normalizes it and checks it
// by the scrape's rules and configuration (Options.Pipeline). So it carries the data-quality
// flags a scraped offer would (vram_snapped for a vram_gb the catalog's figure differs from,
// vram_missing for a row without one), and a row a scrape would reject (a price not above zero,
// or above pipeline.Config.MaxPricePerGPUHour) is a problem of its line. A table is stricter than
// a scrape where a scrape keeps or rounds what it gets: a GPU the catalog does not know (within
// gpus.SnapTolerance of its VRAM), a price with more than 6 decimals, an observed_at more than an
// hour ahead of the import, and one offer twice at one time are problems too (a scrape observes
// an offer once a run; a table may hold one offer at many times). A table holds at most
// Options.MaxRows rows.
//
// # What the offers hold
//
// Every offer of a table carries the run id import-<hash of the file> (the same file imported
// again is the same import), the source_url of its row or else import:<file name>, and the offer
// id import:<gpu>/<count>x/<tier>/<region>, with gpu the catalog model. The file itself is the
// import's raw payload.
//
// The CLI command gpucost import (cmd/gpucost/importcmd.go) reads a table with Read and loads it
// with store.LoadImport.
package pricetable
