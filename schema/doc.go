// Package schema holds gpucost's domain types, the rows every other package passes around and
// stores: the price observation (Offer), price types, interconnect classes, stock levels,
// data-quality flags, the scrape-run record, what a source is handed and gives back for one run
// (Run, Extract), the kinds of a failed load (ErrUnavailable, ErrRejected), so that the
// scrapers, the pipeline and the store share them without knowing each other, the state of a
// scheduled job, and how busy a placement's GPUs were measured to be (GPUUsage). It also embeds the
// ClickHouse migrations (migrations/*.sql) that create the tables these types are stored in.
//
// Units are normalized once, at the edge (in the scrapers): prices in USD per hour as decimals,
// VRAM in decimal gigabytes per GPU, GPU counts per offer. Unknown values are nil pointers or the
// explicit "unknown" class, never zero. The two rules every price and every observation follow
// are written here once: a price is rounded once, from the exact amount its source quotes
// (Offer.SetPrice, Offer.SetPricePerGPU), and an offer carries the run that observed it
// (Run.Stamp).
//
// schema imports nothing else of gpucost.
package schema
