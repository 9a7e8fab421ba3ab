// Package schema holds gpucost's domain types, the rows every other package passes around and
// stores: the price observation (Offer), price types, interconnect classes, stock levels,
// data-quality flags, the scrape-run record, and what a source is handed and gives back for one
// run (Run, Extract), so that the scrapers and the pipeline share them without knowing each
// other. It also embeds the ClickHouse migrations
// (migrations/*.sql) that create the tables these types are stored in.
//
// Units are normalized once, at the edge (in the scrapers): prices in USD per hour as decimals,
// VRAM in decimal gigabytes per GPU, GPU counts per offer. Unknown values are nil pointers or the
// explicit "unknown" class, never zero.
//
// schema imports nothing else of gpucost.
package schema
