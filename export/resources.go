package export

import (
	"strconv"
	"time"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

// The schemas of gpucost's envelopes, one per resource. The CLI and the JSON API share them:
// `gpucost history --output json` and /api/v1/history answer the same schema, with the same
// query and the same items, and so do offers, changes, value, plans and gpus. The others are
// the CLI's alone: the market's groups, and what a command did.
var (
	OffersSchema = Schema{Resource: "offers", Version: 2} // schema.Offer
	// OfferGroupsSchema is gpucost offers --group-by's: the market summarised per group of GPU
	// model, provider and GPU count (market.Summary).
	OfferGroupsSchema = Schema{Resource: "offer_groups", Version: 1}
	HistorySchema     = Schema{Resource: "history", Version: 2} // schema.HistoryPoint
	ChangesSchema     = Schema{Resource: "changes", Version: 2} // schema.PriceChange
	ValueSchema       = Schema{Resource: "value", Version: 2}   // market.Value
	// PlansSchema's items are a plan's rows as stored (schema.PlanRow): the API serves them;
	// gpucost optimize adds what the store does not keep of each workload.
	PlansSchema = Schema{Resource: "plans", Version: 1}
	GPUsSchema  = Schema{Resource: "gpus", Version: 1} // GPUListing
	// TCOSchema is gpucost tco's: each workload's rent-or-buy case, or the calculator's one.
	TCOSchema = Schema{Resource: "tco", Version: 1}
	// RunsSchema is gpucost scrape's: the one run it made, as its summary says.
	RunsSchema = Schema{Resource: "runs", Version: 1}
	// ImportsSchema is gpucost import's: the one price table it read.
	ImportsSchema = Schema{Resource: "imports", Version: 1}
	// DatabasesSchema is gpucost migrate's: the one database it migrated.
	DatabasesSchema = Schema{Resource: "databases", Version: 1}
	// RederivationsSchema is gpucost reparse's: the one re-derivation it made (or would make).
	RederivationsSchema = Schema{Resource: "rederivations", Version: 1}
)

// Schemas are every schema above, in that order: the documented ones (docs/analysts.md).
var Schemas = []Schema{OffersSchema, OfferGroupsSchema, HistorySchema, ChangesSchema, ValueSchema, PlansSchema, GPUsSchema,
	TCOSchema, RunsSchema, ImportsSchema, DatabasesSchema, RederivationsSchema}

// The queries below are what an envelope echoes of a request: every parameter with its default
// filled in, lists as lists ([] is "all"), times resolved. The CLI's flags and the API's
// parameters of the same resource have the same names (--price-type is price_type), so both
// echo the same query.

// OffersQuery is an offers request as understood.
type OffersQuery struct {
	GPU       []string           `json:"gpu"`
	Provider  []string           `json:"provider"`
	PriceType []schema.PriceType `json:"price_type"`
	MinVRAM   float64            `json:"min_vram"`
	MaxAge    string             `json:"max_age"` // "" keeps every age
	Limit     int                `json:"limit"`   // 0: no limit
}

// NewOffersQuery is the query of an offers filter.
func NewOffersQuery(f schema.OfferFilter) OffersQuery {
	return OffersQuery{GPU: list(f.GPUModels), Provider: list(f.Providers), PriceType: list(f.PriceTypes), MinVRAM: f.MinVRAMGB,
		MaxAge: formatAge(f.MaxAge), Limit: f.Limit}
}

// HistoryQuery is a history request as understood.
type HistoryQuery struct {
	GPU       string             `json:"gpu"`
	Provider  []string           `json:"provider"`
	PriceType []schema.PriceType `json:"price_type"`
	Since     time.Time          `json:"since"`
	Until     time.Time          `json:"until"`
	Interval  schema.Interval    `json:"interval"`
}

// NewHistoryQuery is the query of a history request.
func NewHistoryQuery(q schema.HistoryQuery) HistoryQuery {
	return HistoryQuery{GPU: q.Model(), Provider: list(q.Providers), PriceType: list(q.PriceTypes), Since: q.From.UTC(), Until: q.To.UTC(),
		Interval: q.Interval}
}

// ChangesQuery is a changes request as understood: since and until resolved, so that every
// page of it covers the same range.
type ChangesQuery struct {
	GPU       []string           `json:"gpu"`
	Provider  []string           `json:"provider"`
	PriceType []schema.PriceType `json:"price_type"`
	Since     time.Time          `json:"since"`
	Until     time.Time          `json:"until"`
	MinPct    float64            `json:"min_pct"`
	Limit     int                `json:"limit"` // 0: no limit
}

// NewChangesQuery is the query of a changes request.
func NewChangesQuery(q schema.ChangesQuery) ChangesQuery {
	return ChangesQuery{GPU: list(q.GPUModels), Provider: list(q.Providers), PriceType: list(q.PriceTypes), Since: q.From.UTC(), Until: q.To.UTC(),
		MinPct: q.MinChangePct, Limit: q.Limit}
}

// ValueQuery is a value request as understood.
type ValueQuery struct {
	PriceType market.Basis   `json:"price_type"` // a price type, or commitment
	Precision gpus.Precision `json:"precision"`
	MaxAge    string         `json:"max_age"`
}

// NewValueQuery is the query of a value request: f reads the market, q ranks it.
func NewValueQuery(f schema.OfferFilter, q market.ValueQuery) ValueQuery {
	return ValueQuery{PriceType: q.Basis, Precision: q.Precision, MaxAge: formatAge(f.MaxAge)}
}

// PlansQuery is a plans request as understood: the teams asked for ([] is every team).
type PlansQuery struct {
	Team []string `json:"team"`
}

// NewPlansQuery is the query of the plans of teams.
func NewPlansQuery(teams []string) PlansQuery { return PlansQuery{Team: list(teams)} }

// list is s, or an empty list for nil: a query's lists are [] when nothing was asked, not null.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// formatAge writes an age as the CLI's flags and the API's parameters read it, briefly: 6h, 7d,
// 90m; "" for none.
func formatAge(d time.Duration) string {
	switch {
	case d == 0:
		return ""
	case d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	case d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d%time.Minute == 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return d.String()
}
