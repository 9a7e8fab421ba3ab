package schema

import (
	"time"

	"github.com/shopspring/decimal"
)

// Offer is one price observation: what one provider asked for one GPU configuration at one
// scrape. Offers are append-only; the history of a price is the sequence of Offers with the same
// Key. docs/analysts.md describes every field as the column it is stored in; the JSON names are
// those columns, in their order, and name them in every output (package export).
type Offer struct {
	// Observation.
	ObservedAt time.Time `json:"observed_at"` // UTC scrape time, the same for every offer of a run
	// ValidUntil is when the price stops holding, where the source says so (a published price
	// table); nil (JSON null, as every other nullable column) for scraped prices, which hold
	// until they are observed again.
	ValidUntil *time.Time `json:"valid_until"`
	RunID      string     `json:"run_id"`     // the scrape run that saw it
	SourceURL  string     `json:"source_url"` // the URL the price came from, without secrets

	// Identity.
	Provider string `json:"provider"` // vastai, runpod, lambda, coreweave, verda, oci, or an import source
	OfferID  string `json:"offer_id"` // the provider's own id for this offer (see Key)
	Tier     Tier   `json:"tier"`
	Region   string `json:"region"`  // provider's region or data-center id; "" when global
	Country  string `json:"country"` // ISO 3166-1 alpha-2 when known, else ""

	// GPU.
	GPUModel   string  `json:"gpu_model"`    // canonical catalog name, e.g. H100-SXM-80GB; "" when unknown
	GPUNameRaw string  `json:"gpu_name_raw"` // the provider's own spelling, kept verbatim
	GPUCount   uint16  `json:"gpu_count"`    // GPUs in the offer (one node or bundle)
	VRAMGB     float64 `json:"vram_gb"`      // decimal GB per GPU, after snapping to the catalog

	// Host.
	VCPUs  *float64 `json:"vcpus"`
	RAMGB  *float64 `json:"ram_gb"`
	DiskGB *float64 `json:"disk_gb"`

	// Price.
	PriceType          PriceType       `json:"price_type"`
	PriceUSDPerHour    decimal.Decimal `json:"price_usd_per_hour"`     // the whole offer
	PriceUSDPerGPUHour decimal.Decimal `json:"price_usd_per_gpu_hour"` // PriceUSDPerHour / GPUCount

	// Interconnect.
	IntraNode  IntraNode `json:"intra_node"`
	NVLinkGbps *float64  `json:"nvlink_gbps"` // GPU-to-GPU NVLink bandwidth when the source says
	InterNode  InterNode `json:"inter_node"`

	// Availability.
	AvailableCount *uint32 `json:"available_count"` // offers/nodes/GPUs available, when the source says
	Stock          Stock   `json:"stock"`

	// Quality.
	Reliability *float64 `json:"reliability"` // 0..1 where the provider publishes one (Vast)
	DQFlags     []DQFlag `json:"dq_flags"`

	// ParserVersion names the parser that derived the row from its source's payload, and the GPU
	// catalog it resolved the model with (scrapers.ParserVersion), so rows of an older parser
	// can be found and re-derived (gpucost reparse). Empty for rows stored before it was recorded.
	ParserVersion string `json:"parser_version"`
}

// Key identifies the same offer across scrapes: a price change is a change of price under the
// same Key.
type Key struct {
	Provider  string
	OfferID   string
	PriceType PriceType
}

// Key returns the offer's identity across observations.
func (o *Offer) Key() Key {
	return Key{Provider: o.Provider, OfferID: o.OfferID, PriceType: o.PriceType}
}

// Holds reports whether the offer's price holds at now: until its ValidUntil when the source
// gives one (a published price table), else for maxAge after it was observed. The store's
// OfferFilter.MaxAge applies the same rule in SQL.
func (o *Offer) Holds(now time.Time, maxAge time.Duration) bool {
	if o.ValidUntil != nil {
		return now.Before(*o.ValidUntil)
	}
	return !o.ObservedAt.IsZero() && now.Sub(o.ObservedAt) <= maxAge
}

// HasFlag reports whether the offer carries the data-quality flag f.
func (o *Offer) HasFlag(f DQFlag) bool {
	for _, g := range o.DQFlags {
		if g == f {
			return true
		}
	}
	return false
}

// AddFlag adds the data-quality flag f once.
func (o *Offer) AddFlag(f DQFlag) {
	if !o.HasFlag(f) {
		o.DQFlags = append(o.DQFlags, f)
	}
}

// Prices are rounded once, from the exact amount a source quotes, to PriceDecimals (half away
// from zero), by SetPrice or SetPricePerGPU: never a rounded price rounded again, and never a
// price derived from a rounded one (the per-GPU price of 35.159555555555556 for 8 GPUs is
// 4.394944, its exact quotient rounded; from the rounded 35.159556 it would be 4.394945).

// SetPrice sets the offer's prices from the exact whole-offer price its source quotes:
// PriceUSDPerHour is that price rounded, PriceUSDPerGPUHour its exact quotient by GPUCount
// rounded (PerGPU). Set GPUCount first.
func (o *Offer) SetPrice(exact decimal.Decimal) {
	o.PriceUSDPerHour = exact.Round(PriceDecimals)
	o.PriceUSDPerGPUHour = PerGPU(exact, o.GPUCount)
}

// SetPricePerGPU sets the offer's prices from the exact per-GPU price its source quotes:
// PriceUSDPerGPUHour is that price rounded, PriceUSDPerHour its exact product by GPUCount
// rounded. Set GPUCount first.
func (o *Offer) SetPricePerGPU(exact decimal.Decimal) {
	o.PriceUSDPerGPUHour = exact.Round(PriceDecimals)
	o.PriceUSDPerHour = exact.Mul(decimal.NewFromInt(int64(o.GPUCount))).Round(PriceDecimals)
}

// PerGPU divides an offer price by its GPU count, rounding the exact quotient to the stored
// precision (PriceDecimals): give it the exact offer price, as SetPrice does, or the price is
// rounded twice. A zero count returns zero; validation rejects such offers.
func PerGPU(offerPrice decimal.Decimal, gpuCount uint16) decimal.Decimal {
	if gpuCount == 0 {
		return decimal.Zero
	}
	return offerPrice.DivRound(decimal.NewFromInt(int64(gpuCount)), PriceDecimals)
}

// PriceDecimals is the number of decimal places prices are stored with (Decimal(18, 6) in
// ClickHouse): a millionth of a dollar per hour.
const PriceDecimals = 6
