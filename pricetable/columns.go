package pricetable

// Columns are the columns of a price table, one per line: the name, whether it is required, and
// what the cells hold.
const Columns = `  provider          required  who sells it, e.g. aws, lambda (lower case)
  gpu               required  a catalog name (H100-SXM-80GB) or a provider's spelling (H100 80GB SXM5)
  price_type        required  on_demand, spot, serverless, reserved, term_1w,
                              term_1m, term_3m, term_6m, term_1y or term_3y
  usd_per_gpu_hour  required  USD per GPU-hour, at most 6 decimals, e.g. 2.49
  observed_at       required  when the price was published: 2026-01-31 or 2026-01-31T12:00:00Z (UTC)
  vram_gb           optional  VRAM per GPU; must match the catalog model within 7%, as GB or GiB
  gpu_count         optional  GPUs per instance (default 1)
  region            optional  the provider's region
  tier              optional  secure, community, datacenter (default), verified or unverified
  valid_until       optional  when the price stops holding, written like observed_at and after it
                              (a date alone is 00:00 UTC of that day). Until then the price is
                              current however old observed_at is (offers, optimize, the API); from
                              then on it is not. Empty: the price ages like a scraped one.
  intra_node        optional  how the GPUs of one instance are linked: nvswitch, nvlink,
                              infinity_fabric, pcie or unknown
  inter_node        optional  how instances are linked: infiniband, roce, ethernet, none or unknown
  available_count   optional  instances or GPUs available, as the publisher counts them (0 or more)
  stock             optional  high, medium, low, none or unknown
  source_url        optional  the publisher's page: https://, without user, password or key`
