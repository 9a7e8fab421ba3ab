package schema

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// Selection picks price rows by what is sold: GPU models, providers and price types. An empty
// list selects every value. The CLI's flags and the API's parameters read into it through the
// same grammar (package selection); the store turns it into bound SQL conditions.
type Selection struct {
	GPUModels  []string    // canonical catalog names
	Providers  []string    // provider names as stored
	PriceTypes []PriceType //
}

// OfferFilter selects the current market: the newest observation of each offer.
type OfferFilter struct {
	Selection
	MinVRAMGB float64 // per GPU
	// MinIntraNode keeps the offers whose GPUs are linked at least this well
	// (IntraNode.AtLeast); "" keeps all.
	MinIntraNode IntraNode
	// MaxAge keeps the offers that hold now (by the store's clock): those last observed within
	// MaxAge, which removes offers a provider no longer lists, and those whose valid_until is
	// still ahead however long ago they were observed (a published price table); an offer whose
	// valid_until has passed is dropped (unless ExpiredWithin keeps it). Zero keeps all.
	MaxAge time.Duration
	// ExpiredWithin, with MaxAge, also keeps the offers whose valid_until passed within it, so
	// that a caller can say a price table expired instead of finding nothing offered.
	ExpiredWithin time.Duration
	// GPUs keeps the offers that fit any of the specs (`gpucost offers --gpu`); none keeps all.
	GPUs []GPUSpec
	// MaxUSDPerGPUHour keeps the offers that ask at most this per GPU-hour; zero keeps all.
	MaxUSDPerGPUHour decimal.Decimal
	// Regions keeps the offers in one of these regions or inside one, in lower case: "us"
	// keeps us and us-texas (a region, then a dash), not usa. None keeps all.
	Regions []string
	// Countries keeps the offers in one of these ISO 3166-1 alpha-2 countries (upper case); an
	// offer whose source names no country is left out. None keeps all.
	Countries []string
	// MinVCPUs and MinRAMGB keep the offers whose host has at least this many vCPUs and GB of
	// RAM; an offer whose source does not say is left out. Zero keeps all.
	MinVCPUs, MinRAMGB float64
	// KnownGPUs keeps only the offers of catalog GPUs (gpu_model not empty).
	KnownGPUs bool
	// Sort orders the offers: "" and SortPrice cheapest $/GPU-hour first, the others by their
	// key first and then so. After pages SortPrice only.
	Sort OfferSort
	// Limit caps the number of rows returned (in Sort's order); zero means no limit.
	Limit int
	// After, when set, keeps the offers that come after it in the cheapest-first order: the
	// next page of a market read in pages. Like Limit, it pages the list of offers; a summary
	// of the market (per GPU model, or to plan on) reads it whole.
	After *OfferPosition
}

// GPUSpec is one kind of GPU an offer may have, as `gpucost offers --gpu` reads it
// (selection.GPUSpecs): catalog models, how many GPUs the offer has and how much VRAM each.
// A zero field does not narrow.
type GPUSpec struct {
	// Models are canonical catalog names; none admits any GPU, those outside the catalog too.
	Models []string
	// MinCount and MaxCount bound the GPUs in the offer (inclusive); 0 is no bound.
	MinCount, MaxCount uint16
	// MinVRAMGB and MaxVRAMGB bound the VRAM per GPU (inclusive); 0 is no bound. A spec that
	// names models has applied its memory to the catalog's models already and leaves these 0.
	MinVRAMGB, MaxVRAMGB float64
}

// OfferSort is an order of the latest offers (OfferFilter.Sort).
type OfferSort string

// Orders of the latest offers. Ties of each go cheapest $/GPU-hour first, then as SortPrice.
const (
	SortPrice    OfferSort = "price"    // cheapest $/GPU-hour first; ties by provider, offer id, price type
	SortGPU      OfferSort = "gpu"      // by GPU model name (GPUs outside the catalog, with no name, last)
	SortVRAM     OfferSort = "vram"     // the most VRAM per GPU first
	SortProvider OfferSort = "provider" // by provider name
)

// OfferSorts lists every order of the latest offers.
var OfferSorts = []OfferSort{SortPrice, SortGPU, SortVRAM, SortProvider}

// OfferPosition is an offer's place in the latest market's order: cheapest $/GPU-hour first,
// ties by provider, offer id and price type (each as bytes). An offer key is unique in the latest
// market, so the order is total and a page that ends at a position is followed by exactly the
// offers after it.
type OfferPosition struct {
	PriceUSDPerGPUHour decimal.Decimal
	Provider           string
	OfferID            string
	PriceType          PriceType
}

// Position returns the offer's place in the latest market's order.
func (o *Offer) Position() OfferPosition {
	return OfferPosition{PriceUSDPerGPUHour: o.PriceUSDPerGPUHour, Provider: o.Provider, OfferID: o.OfferID, PriceType: o.PriceType}
}

// ObservationFilter selects raw price observations: one row per offer per scrape.
type ObservationFilter struct {
	Selection
	From, To time.Time // required: observations in [From, To)
	// Limit caps the number of rows; zero means no limit.
	Limit int
}

// HistoryQuery selects the price history of one GPU model.
type HistoryQuery struct {
	// Selection names exactly one GPU model (Model returns it); empty provider and price type
	// lists select all.
	Selection
	// From and To bound the buckets returned: every bucket whose start is in [From, To), with
	// From rounded down to its bucket's start.
	From, To time.Time
	Interval Interval
}

// Model returns the GPU model of the query: the only entry of GPUModels, or "" when there is
// not exactly one.
func (q HistoryQuery) Model() string {
	if len(q.GPUModels) != 1 {
		return ""
	}
	return q.GPUModels[0]
}

// ChangesQuery selects price changes: moves of an offer's $/GPU-hour between two consecutive
// observations of it.
type ChangesQuery struct {
	Selection
	// From and To bound the time of the new price: changes first seen in [From, To). The old
	// price may have been observed at any time before.
	From, To time.Time
	// MinChangePct keeps only moves of at least this many percent, up or down (0 keeps all).
	MinChangePct float64
	// Limit caps the rows returned, newest first; zero means no limit.
	Limit int
	// After, when set, keeps the changes that come after it in the newest-first order: the
	// next page of changes read in pages.
	After *ChangePosition
}

// ChangePosition is a change's place in the order of price changes: newest first, ties by
// provider, price type and offer id (each as bytes).
type ChangePosition struct {
	ChangedAt time.Time
	Provider  string
	PriceType PriceType
	OfferID   string
}

// Position returns the change's place in the order of price changes.
func (c *PriceChange) Position() ChangePosition {
	return ChangePosition{ChangedAt: c.ChangedAt, Provider: c.Provider, PriceType: c.PriceType, OfferID: c.OfferID}
}

// Interval is the width of a history bucket.
type Interval string

// History intervals. Day and week buckets are read from the offers_daily rollup; hour buckets
// from the raw offers table (the rollup is daily).
const (
	Hour Interval = "hour"
	Day  Interval = "day"
	Week Interval = "week" // weeks start on Monday, UTC
)

// ParseInterval returns the Interval named s.
func ParseInterval(s string) (Interval, error) {
	switch Interval(s) {
	case Hour, Day, Week:
		return Interval(s), nil
	}
	return "", fmt.Errorf("unknown interval %q (want hour, day or week)", s)
}

// Truncate returns the start of the bucket that holds t.
func (i Interval) Truncate(t time.Time) time.Time {
	t = t.UTC()
	switch i {
	case Hour:
		return t.Truncate(time.Hour)
	case Week:
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	default:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	}
}

// HistoryPoint is the $/GPU-hour distribution of one GPU model at one provider and price type
// within one bucket. Its JSON names are the columns of every history output (CSV, Parquet, the
// API): one vocabulary, see package export.
type HistoryPoint struct {
	Bucket    time.Time       `json:"bucket"` // start of the bucket, UTC
	Provider  string          `json:"provider"`
	GPUModel  string          `json:"gpu_model"`
	PriceType PriceType       `json:"price_type"`
	Min       decimal.Decimal `json:"min_usd_per_gpu_hour"`
	Avg       decimal.Decimal `json:"avg_usd_per_gpu_hour"` // the mean, rounded half up to 6 places
	// Median is a t-digest estimate. For an even count, current ClickHouse versions give the lower
	// middle value, 18.x the midpoint of the two middle ones.
	Median       decimal.Decimal `json:"median_usd_per_gpu_hour"`
	Max          decimal.Decimal `json:"max_usd_per_gpu_hour"`
	Observations uint64          `json:"observations"`
	Offers       uint64          `json:"offers"` // distinct offer ids (an estimate above ~10k)
}

// PriceChange is one move of an offer's price: the observation at ChangedAt asked NewPrice
// where the offer's previous observation, at PreviousAt, asked OldPrice. Prices are USD per
// GPU-hour. Its JSON names are the columns of every changes output and of the price_changes
// view (schema/migrations/0008_price_changes.sql).
type PriceChange struct {
	ChangedAt  time.Time       `json:"changed_at"`
	PreviousAt time.Time       `json:"previous_at"`
	Provider   string          `json:"provider"`
	GPUModel   string          `json:"gpu_model"`
	GPUCount   uint16          `json:"gpu_count"`
	PriceType  PriceType       `json:"price_type"`
	OfferID    string          `json:"offer_id"`
	Tier       Tier            `json:"tier"`
	Region     string          `json:"region"`
	OldPrice   decimal.Decimal `json:"old_price"`
	NewPrice   decimal.Decimal `json:"new_price"`
	ChangeUSD  decimal.Decimal `json:"change_usd"` // NewPrice - OldPrice
	ChangePct  decimal.Decimal `json:"change_pct"` // 100 × ChangeUSD / OldPrice, 2 decimals
	RunID      string          `json:"run_id"`     // the run that saw the new price
}

// SendStatus is the outcome of one attempt to email a team its report.
type SendStatus string

// Send statuses.
const (
	SendSent   SendStatus = "sent"   // the SMTP server accepted the message
	SendFailed SendStatus = "failed" // every attempt failed; Error says why
)

// ReportSend is one row of the report send log (report_sends): one attempt to email one team
// its report of one week.
type ReportSend struct {
	Week       time.Time  // Monday 00:00 UTC of the report week
	WeekID     string     // ISO week, e.g. 2025-W48
	Team       string     //
	Recipients string     // the To addresses, comma-separated
	Status     SendStatus //
	SentAt     time.Time  // when the attempt ended, UTC (stored to the second)
	MessageID  string     // the Message-ID header, without angle brackets
	Attempts   uint32     // SMTP attempts, retries included
	Error      string     // empty when sent; never holds a password
	Forced     bool       // a resend of a week already sent (--force)
}

// Import is a published price table loaded as observations: its offers, all tagged with RunID,
// and the file itself as a raw payload, so a fix to the import parser can re-derive them.
type Import struct {
	RunID   string // derived from the file's content: the same file always gets the same id
	Offers  []Offer
	Payload RawPayload
}
