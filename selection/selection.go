// Package selection is the language in which a user picks price data, on the command line and
// in the JSON API alike: GPU models by catalog name, providers, price types, points in time
// (dates, times, "now", ages such as 36h or 7d), ranges, ages, minimum sizes and row caps; and,
// for `gpucost offers`, GPU specs in dstack's shapes (H100:8, A100:1..4, 24GB..80GB; gpuspec.go),
// a price cap, regions, countries, the least vCPUs and RAM, an order and a grouping.
//
// A Request holds the values as typed, one string per parameter; its methods check them and
// build the store's filters (schema.OfferFilter, HistoryQuery, ChangesQuery, ObservationFilter).
// Every bad value is an *Error naming the parameter, so the CLI can say "--since: …" and the
// API answer 400 with {"parameter": "since"}; no value reaches the store unchecked, and the
// store binds every value as a query argument.
//
// What differs between the two surfaces (defaults, the largest limit, the longest range) is a
// Bounds value the caller passes; the grammar is the same.
package selection

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

// Error is a bad value of one parameter. Error returns the message alone; Param names the
// parameter as the API spells it (price_type; the CLI's flag is --price-type).
type Error struct {
	Param string
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// Flag returns the command-line flag of the parameter: --price-type for price_type.
func (e *Error) Flag() string { return "--" + strings.ReplaceAll(e.Param, "_", "-") }

func bad(param, format string, args ...any) *Error {
	return &Error{Param: param, Msg: fmt.Sprintf(format, args...)}
}

// Request is one selection as the user gave it: each value as typed, "" when not given (the
// caller fills in its defaults first).
type Request struct {
	GPU       string // comma-separated catalog GPU models; exactly one for a history
	Provider  string // comma-separated providers
	PriceType string // comma-separated price types
	Since     string // start of a range: a date, a time, "now" or an age
	Until     string // end of a range (exclusive)
	Interval  string // history buckets: hour, day or week
	MinPct    string // changes: the least move in percent
	MinVRAM   string // offers: the least VRAM per GPU, GB
	MaxAge    string // offers: how long an observation holds (an age)
	Limit     string // row cap
	Precision string // value: the precision to rank at

	// Offers' filters of `gpucost offers` (the API has none of them).
	GPUSpecs []string // GPU specs, each value a comma-separated list of them (GPUSpecs)
	MaxPrice string   // the most per GPU-hour, USD
	Region   string   // comma-separated regions: each keeps itself and the regions inside it
	Country  string   // comma-separated ISO 3166-1 alpha-2 country codes
	MinVCPUs string   // the least vCPUs of the host
	MinRAM   string   // the least RAM of the host, GB
	Sort     string   // the order: price, gpu, vram or provider ("" is price)
}

// Bounds are a surface's limits on a request.
type Bounds struct {
	// MinLimit and MaxLimit bound Limit; MinLimit 0 means 0 is "no limit".
	MinLimit, MaxLimit int
	// MaxChangesRange is the longest range of a changes request; zero: any.
	MaxChangesRange time.Duration
	// MinAge and MaxAgeCap bound MaxAge; MinAge 0 lets an age of 0 keep every offer.
	MinAge, MaxAgeCap time.Duration
}

// Offers checks the request as a latest-market filter: GPU, provider, price type, MinVRAM,
// MaxAge and Limit, and the filters and the order of `gpucost offers`.
func (r Request) Offers(now time.Time, b Bounds) (schema.OfferFilter, error) {
	var f schema.OfferFilter
	var err error
	if f.Selection, err = r.selection(); err != nil {
		return f, err
	}
	if f.MinVRAMGB, err = number("min_vram", r.MinVRAM, 0, 10000); err != nil {
		return f, err
	}
	if f.GPUs, err = GPUSpecs(r.GPUSpecs); err != nil {
		return f, err
	}
	if f.MaxUSDPerGPUHour, err = price("max_price", r.MaxPrice); err != nil {
		return f, err
	}
	if f.Regions, err = regions(r.Region); err != nil {
		return f, err
	}
	if f.Countries, err = countries(r.Country); err != nil {
		return f, err
	}
	if f.MinVCPUs, err = number("min_vcpus", r.MinVCPUs, 0, 100000); err != nil {
		return f, err
	}
	if f.MinRAMGB, err = number("min_ram", r.MinRAM, 0, 1e6); err != nil {
		return f, err
	}
	if f.Sort, err = offerSort(r.Sort); err != nil {
		return f, err
	}
	if f.MaxAge, err = r.maxAge(b); err != nil {
		return f, err
	}
	f.Limit, err = limit(r.Limit, b)
	return f, err
}

// Value checks the request as a value query on the latest market: PriceType is one basis (a
// price type, or commitment: the cheapest reserved or term price), Precision one the catalog
// rates (market.RatedPrecisions), and MaxAge as for Offers. The filter reads the basis' price
// types only.
func (r Request) Value(b Bounds) (schema.OfferFilter, market.ValueQuery, error) {
	var f schema.OfferFilter
	var q market.ValueQuery
	q.Basis = market.Basis(strings.ToLower(strings.TrimSpace(r.PriceType)))
	if !slices.Contains(market.Bases, q.Basis) {
		return f, q, bad("price_type", "unknown price type %s (want one of %s)", Quote(r.PriceType), schema.List(market.Bases))
	}
	q.Precision = gpus.Precision(strings.ToLower(strings.TrimSpace(r.Precision)))
	if !slices.Contains(market.RatedPrecisions, q.Precision) {
		return f, q, bad("precision", "unknown precision %s (want one of %s)", Quote(r.Precision), schema.List(market.RatedPrecisions))
	}
	var err error
	if f.MaxAge, err = r.maxAge(b); err != nil {
		return f, q, err
	}
	f.PriceTypes = q.Basis.PriceTypes()
	return f, q, nil
}

// History checks the request as a price history: exactly one GPU model, providers, price
// types, the interval and a range no longer than the interval allows (MaxHistoryRange).
func (r Request) History(now time.Time) (schema.HistoryQuery, error) {
	var q schema.HistoryQuery
	model, err := GPU(r.GPU)
	if err != nil {
		return q, &Error{Param: "gpu", Msg: err.Error()}
	}
	if q.Selection, err = r.selection(); err != nil {
		return q, err
	}
	q.GPUModels = []string{model}
	if q.Interval, err = schema.ParseInterval(r.Interval); err != nil {
		return q, bad("interval", "unknown interval %s: want hour, day or week", Quote(r.Interval))
	}
	if q.From, q.To, err = r.timeRange(now); err != nil {
		return q, err
	}
	if max := MaxHistoryRange(q.Interval); q.To.Sub(q.From) > max {
		return q, bad("since", "the range %s to %s is longer than the %d days %s buckets allow: narrow it or use a wider interval",
			q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), int(max.Hours()/24), q.Interval)
	}
	return q, nil
}

// Changes checks the request as a price-changes query: the selection, the range (at most
// b.MaxChangesRange), MinPct and Limit.
func (r Request) Changes(now time.Time, b Bounds) (schema.ChangesQuery, error) {
	var q schema.ChangesQuery
	var err error
	if q.Selection, err = r.selection(); err != nil {
		return q, err
	}
	if q.From, q.To, err = r.timeRange(now); err != nil {
		return q, err
	}
	if b.MaxChangesRange > 0 && q.To.Sub(q.From) > b.MaxChangesRange {
		return q, bad("since", "the range %s to %s is longer than %d days", q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), int(b.MaxChangesRange.Hours()/24))
	}
	if q.MinChangePct, err = number("min_pct", r.MinPct, 0, 1e6); err != nil {
		return q, err
	}
	q.Limit, err = limit(r.Limit, b)
	return q, err
}

// Observations checks the request as a filter of raw observations: the selection and the range.
func (r Request) Observations(now time.Time) (schema.ObservationFilter, error) {
	var f schema.ObservationFilter
	var err error
	if f.Selection, err = r.selection(); err != nil {
		return f, err
	}
	f.From, f.To, err = r.timeRange(now)
	return f, err
}

func (r Request) selection() (schema.Selection, error) {
	var s schema.Selection
	var err error
	if s.GPUModels, err = GPUs(r.GPU); err != nil {
		return s, &Error{Param: "gpu", Msg: err.Error()}
	}
	if s.Providers, err = Providers(r.Provider); err != nil {
		return s, &Error{Param: "provider", Msg: err.Error()}
	}
	if s.PriceTypes, err = PriceTypes(r.PriceType); err != nil {
		return s, &Error{Param: "price_type", Msg: err.Error()}
	}
	return s, nil
}

// timeRange reads Since and Until and checks that the range is not empty or inverted.
func (r Request) timeRange(now time.Time) (from, to time.Time, err error) {
	if from, err = When(r.Since, now); err != nil {
		return from, to, &Error{Param: "since", Msg: "since: " + err.Error()}
	}
	if to, err = When(r.Until, now); err != nil {
		return from, to, &Error{Param: "until", Msg: "until: " + err.Error()}
	}
	if !to.After(from) {
		return from, to, bad("until", "the range is empty or inverted: since %s is not before until %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return from, to, nil
}

// maxAge reads MaxAge as an age ("" is 0: keep all, where b allows it).
func (r Request) maxAge(b Bounds) (time.Duration, error) {
	s := strings.TrimSpace(r.MaxAge)
	if s == "" {
		return 0, nil
	}
	age, err := Age(s)
	if err != nil || age < b.MinAge || (b.MaxAgeCap > 0 && age > b.MaxAgeCap) || (b.MinAge > 0 && age == 0) {
		return 0, bad("max_age", "%s is not an age between %s and %s, like 6h or 7d", Quote(r.MaxAge), age0(b.MinAge), ageCap(b.MaxAgeCap))
	}
	return age, nil
}

func age0(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return strings.TrimSuffix(d.String(), "0s")
}

func ageCap(d time.Duration) string {
	if d == 0 {
		return "100 years"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// limit reads a row cap within b.
func limit(s string, b Bounds) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < b.MinLimit || (b.MaxLimit > 0 && n > b.MaxLimit) {
		if b.MaxLimit == 0 {
			return 0, bad("limit", "%s is not a whole number of rows (0: all)", Quote(s))
		}
		return 0, bad("limit", "%s is not a whole number between %d and %d", Quote(s), b.MinLimit, b.MaxLimit)
	}
	return n, nil
}

// number reads a number between lo and hi; "" is 0.
func number(param, s string, lo, hi float64) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= lo && f <= hi) || math.IsNaN(f) {
		return 0, bad(param, "%s is not a number between %g and %g", Quote(s), lo, hi)
	}
	return f, nil
}

// maxPrice bounds a price a user gives: a Decimal(18, 6) holds less than 10¹² dollars.
var maxPrice = decimal.New(1, 9)

// price reads a price in USD per GPU-hour, "" as zero (none); a leading $ is allowed.
func price(param, s string) (decimal.Decimal, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "$")
	if s == "" {
		return decimal.Zero, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil || !d.IsPositive() || d.GreaterThan(maxPrice) || strings.ContainsAny(s, "eE") {
		return decimal.Zero, bad(param, "%s is not a price in USD per GPU-hour, like 2.50", Quote(s))
	}
	return d, nil
}

// offerSort reads an order of the latest offers: price, gpu, vram or provider; "" is the
// default (schema.OfferFilter.Sort).
func offerSort(s string) (schema.OfferSort, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || slices.Contains(schema.OfferSorts, schema.OfferSort(s)) {
		return schema.OfferSort(s), nil
	}
	return "", bad("sort", "unknown order %s (want %s)", Quote(s), schema.List(schema.OfferSorts))
}

// GroupBy reads the dimensions to group the latest offers by: a comma-separated list of gpu,
// provider and count, each at most once, in the order given; "" is none.
func GroupBy(s string) ([]market.Dimension, error) {
	var out []market.Dimension
	for _, d := range List(strings.ToLower(s)) {
		dim := market.Dimension(d)
		switch {
		case !slices.Contains(market.Dimensions, dim):
			return nil, bad("group_by", "cannot group by %s (want gpu, provider or count, e.g. gpu,provider)", Quote(d))
		case slices.Contains(out, dim):
			return nil, bad("group_by", "%s is named twice", Quote(d))
		}
		out = append(out, dim)
	}
	return out, nil
}

// regionName is what a region filter may be: the names providers give their regions.
var regionName = regexp.MustCompile(`^[a-z0-9][a-z0-9 ._-]{0,63}$`)

// regions splits a comma-separated list of regions, in lower case, and checks each name.
func regions(list string) ([]string, error) {
	var out []string
	for _, r := range List(strings.ToLower(list)) {
		if !regionName.MatchString(r) {
			return nil, bad("region", "invalid region %s: regions are letters, digits, spaces, '.', '_' and '-', like us-east-1 or us", Quote(r))
		}
		out = append(out, r)
	}
	return out, nil
}

// countries splits a comma-separated list of ISO 3166-1 alpha-2 country codes, in upper case,
// and checks each.
func countries(list string) ([]string, error) {
	var out []string
	for _, c := range List(strings.ToUpper(list)) {
		if !schema.KnownCountry(c) {
			return nil, bad("country", "%s is not an ISO 3166-1 alpha-2 country code, like US, DE or JP", Quote(c))
		}
		out = append(out, c)
	}
	return out, nil
}

// MaxHistoryRange bounds a history request so its result stays small: at most ~1,100 buckets.
func MaxHistoryRange(i schema.Interval) time.Duration {
	switch i {
	case schema.Hour:
		return 46 * 24 * time.Hour // a month and a half of hours
	case schema.Week:
		return 20 * 366 * 24 * time.Hour
	default:
		return 3 * 366 * 24 * time.Hour
	}
}

// GPU returns the canonical name of a catalog GPU model, or an error naming the unknown one and
// the catalog names that resemble it.
func GPU(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", fmt.Errorf("a GPU model is required, e.g. H100-SXM-80GB")
	}
	if m, ok := gpus.Lookup(name); ok {
		return m.Name, nil
	}
	msg := "unknown GPU model " + Quote(name)
	if like := SimilarGPUs(name); len(like) > 0 {
		msg += " (did you mean " + strings.Join(like, ", ") + "?)"
	} else {
		msg += " (canonical catalog names look like H100-SXM-80GB or RTX-4090-24GB)"
	}
	return "", fmt.Errorf("%s", msg)
}

// GPUs splits a comma-separated list of GPU models and looks each up in the catalog.
func GPUs(list string) ([]string, error) {
	var out []string
	for _, g := range List(list) {
		model, err := GPU(g)
		if err != nil {
			return nil, err
		}
		out = append(out, model)
	}
	return out, nil
}

// SimilarGPUs lists up to five catalog models whose names resemble name.
func SimilarGPUs(name string) []string {
	key := strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "_", "").Replace(name))
	if len(key) < 2 || len(key) > 64 {
		return nil
	}
	var out []string
	for _, m := range gpus.Models() {
		flat := strings.ReplaceAll(m.Name, "-", "")
		if strings.Contains(flat, key) || strings.Contains(key, strings.ToUpper(strings.ReplaceAll(m.Family, " ", ""))) {
			out = append(out, m.Name)
		}
		if len(out) == 5 {
			break
		}
	}
	return out
}

// providerName is what a provider (or an import source) may be called.
var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// IsProviderName reports whether s could name a provider: lower-case letters, digits, '.', '_'
// and '-'.
func IsProviderName(s string) bool { return providerName.MatchString(s) }

// Providers splits a comma-separated provider list and checks each name's spelling: a name that
// could not be a provider is an error, not an empty result.
func Providers(list string) ([]string, error) {
	var out []string
	for _, p := range List(list) {
		if !IsProviderName(p) {
			return nil, fmt.Errorf("invalid provider %s: provider names are lower-case letters, digits, '.', '_' and '-'", Quote(p))
		}
		out = append(out, p)
	}
	return out, nil
}

// PriceTypes splits a comma-separated list of price types.
func PriceTypes(list string) ([]schema.PriceType, error) {
	var out []schema.PriceType
	for _, p := range List(list) {
		pt, err := schema.ParsePriceType(p)
		if err != nil {
			return nil, fmt.Errorf("unknown price type %s (want one of %v)", Quote(p), schema.PriceTypes)
		}
		out = append(out, pt)
	}
	return out, nil
}

// List splits a comma-separated list, dropping blanks.
func List(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Quote quotes s for an error message, cut to 64 bytes: the text may be anything a user or a
// client sent.
func Quote(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "…"
	}
	return strconv.Quote(s)
}

var ageRE = regexp.MustCompile(`^(\d{1,6})([mhdw])$`)

// maxAge is the furthest back an age may reach.
const maxAge = 100 * 366 * 24 * time.Hour

// timeLayouts are the dates and times When and Time read, in UTC when no zone is given.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// When reads a point in time, in UTC: "now", an age before now (90m, 36h, 7d, 2w, or any Go
// duration), a date (2026-01-31), or a time (RFC 3339, or 2026-01-31 12:00[:00] in UTC).
func When(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	now = now.UTC()
	if s == "" {
		return time.Time{}, fmt.Errorf("a time is required (a date like 2026-01-31, a time, now, or an age like 7d)")
	}
	if s == "now" {
		return now, nil
	}
	if age, err := Age(s); err == nil {
		return now.Add(-age), nil
	} else if !errors.Is(err, errNotAnAge) {
		return time.Time{}, err
	}
	if t, ok, err := parseTime(s); ok {
		return t, err
	}
	return time.Time{}, fmt.Errorf("cannot read %s as a time: want a date like 2026-01-31, a time like 2026-01-31T12:00:00Z, now, or an age like 7d", Quote(s))
}

// errNotAnAge: the text is not written as an age at all.
var errNotAnAge = errors.New("not an age")

// Age reads an age: 90m, 36h, 7d or 2w, or any Go duration (1h30m), not negative and at most
// 100 years.
func Age(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if m := ageRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		if int64(n) > int64(maxAge/unit) {
			return 0, fmt.Errorf("the age %s reaches back more than 100 years", s)
		}
		return time.Duration(n) * unit, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errNotAnAge
	}
	if d < 0 || d > maxAge {
		return 0, fmt.Errorf("the age %s must be positive and under 100 years", s)
	}
	return d, nil
}

// Time reads a date or a time (no ages, no "now"), as a published price table gives them; times
// without a zone are UTC. Sub-second parts are dropped.
func Time(s string) (time.Time, error) {
	t, ok, err := parseTime(s)
	if !ok {
		return time.Time{}, fmt.Errorf("cannot read %s as a date (2026-01-31) or a time (2026-01-31T12:00:00Z)", Quote(s))
	}
	return t.Truncate(time.Second), err
}

// parseTime reads s in one of timeLayouts; ok is false when none fits.
func parseTime(s string) (t time.Time, ok bool, err error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 2000 || t.Year() > 2200 {
				return time.Time{}, true, fmt.Errorf("%s is out of range (years 2000 to 2200)", Quote(s))
			}
			return t.UTC(), true, nil
		}
	}
	return time.Time{}, false, nil
}
