// Package pricetable reads a published price table, a CSV file of the list prices a provider
// publishes (copied from its pricing page by an analyst), into the price observations of one
// import (schema.Import), or into every problem the table has, each as FILE:LINE: column:
// problem (Errors). A table with any problem gives no offers at all, so nothing of it is loaded.
//
// # Format
//
// The first line names the columns, in any order and any case:
//
//	provider          required  who sells it, e.g. aws, lambda (lower case)
//	gpu               required  a catalog name (H100-SXM-80GB) or a provider's spelling (H100 80GB SXM5)
//	price_type        required  on_demand, spot, reserved, term_1y or term_3y
//	usd_per_gpu_hour  required  USD per GPU-hour, at most 6 decimals, e.g. 2.49
//	observed_at       required  when the price was published: 2026-01-31 or 2026-01-31T12:00:00Z (UTC)
//	vram_gb           optional  VRAM per GPU; must match the catalog model within 7%, as GB or GiB
//	gpu_count         optional  GPUs per instance (default 1)
//	region            optional  the provider's region
//	tier              optional  secure, community, datacenter (default), verified or unverified
//	valid_until       optional  when the price stops holding, written like observed_at and after it
//	                            (a date alone is 00:00 UTC of that day); empty: the price ages like
//	                            a scraped one
//	intra_node        optional  how the GPUs of one instance are linked: nvswitch, nvlink,
//	                            infinity_fabric, pcie or unknown
//	inter_node        optional  how instances are linked: infiniband, roce, ethernet, none or unknown
//	available_count   optional  instances or GPUs available, as the publisher counts them (0 or more)
//	stock             optional  high, medium, low, none or unknown
//	source_url        optional  the publisher's page: https://, without user, password or key
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
