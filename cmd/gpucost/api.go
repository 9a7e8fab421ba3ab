package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
)

// API limits. Every response is bounded: offers and changes by a row limit, history by the
// range each interval may span (maxHistoryRange) and a row cap.
const (
	apiDefaultLimit  = 100
	apiMaxLimit      = 1000
	apiMaxHistory    = 20000               // rows of one history response
	apiMaxChangesAge = 92 * 24 * time.Hour // the longest range of a changes request
	apiMaxOfferAge   = 366 * 24 * time.Hour
	apiMaxQueryBytes = 2048 // of the whole query string
	apiMaxValueBytes = 256  // of one parameter value
)

// analyticsStore is what the API and the dashboard read. *store.Store implements it; tests
// substitute fakes.
type analyticsStore interface {
	LatestOffers(ctx context.Context, f store.OfferFilter) ([]schema.Offer, error)
	History(ctx context.Context, q store.HistoryQuery) ([]store.HistoryPoint, error)
	Changes(ctx context.Context, q store.ChangesQuery) ([]store.PriceChange, error)
}

// analytics serves the JSON API (/api/v1/offers, /api/v1/history, /api/v1/changes) and the
// dashboard (/). Every parameter is validated before the store is touched: a bad one is a 400
// that names it, and values reach ClickHouse only as bound query arguments. Every query runs
// through the server's storeGate: bounded concurrency, a deadline, and an honest 503 when the
// store is down or paused (504 only for a slow query on a store that answers). The dashboard
// is served from a refresher, rebuilt at most once per serve.dashboard_refresh.
type analytics struct {
	store  func(ctx context.Context) (analyticsStore, error)
	gate   *storeGate
	flight singleflight.Group // identical API reads in flight
	page   *refresher[dashboardView]
	now    func() time.Time
	logger *slog.Logger
}

// newAnalytics returns the API and dashboard on the store that store opens, its queries through
// gate, the dashboard rebuilt at most once per refresh.
func newAnalytics(store func(ctx context.Context) (analyticsStore, error), gate *storeGate, refresh time.Duration, now func() time.Time, logger *slog.Logger) *analytics {
	a := &analytics{store: store, gate: gate, now: now, logger: logger}
	// One rebuild makes one offers query and then the charts' history queries, four at a time.
	a.page = newRefresher(refresh, time.Duration(1+dashboardCharts/4)*gate.timeout, true, a.buildDashboard)
	return a
}

// mountAPI adds the JSON API and the dashboard to the server's mux.
func (s *server) mountAPI(mux *http.ServeMux) {
	st := func(ctx context.Context) (analyticsStore, error) {
		st, err := s.store.Store(ctx)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	newAnalytics(st, s.gate, s.cfg.Serve.DashboardRefresh.Std(), s.now, s.logger).mount(mux)
}

func (a *analytics) mount(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/offers", a.offers)
	mux.HandleFunc("GET /api/v1/history", a.history)
	mux.HandleFunc("GET /api/v1/changes", a.changes)
	mux.HandleFunc("GET /{$}", a.dashboard)
}

// badRequest is a 400: the parameter and what is wrong with it.
type badRequest struct {
	param string
	msg   string
}

func (e badRequest) Error() string {
	if e.param == "" {
		return e.msg
	}
	return e.param + ": " + e.msg
}

// apiError is the body of every error response.
type apiError struct {
	Error     string `json:"error"`
	Parameter string `json:"parameter,omitempty"`
}

// params checks the query string: well formed, bounded, every name known and given once.
func params(r *http.Request, allowed ...string) (url.Values, error) {
	if len(r.URL.RawQuery) > apiMaxQueryBytes {
		return nil, badRequest{"", fmt.Sprintf("the query string is longer than %d bytes", apiMaxQueryBytes)}
	}
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest{"", "the query string is malformed: " + err.Error()}
	}
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !contains(allowed, name) {
			return nil, badRequest{quoteShort(name), "unknown parameter (this endpoint takes " + strings.Join(allowed, ", ") + ")"}
		}
		if len(v[name]) > 1 {
			return nil, badRequest{name, "given more than once (use one comma-separated value)"}
		}
		if len(v.Get(name)) > apiMaxValueBytes {
			return nil, badRequest{name, fmt.Sprintf("longer than %d bytes", apiMaxValueBytes)}
		}
	}
	return v, nil
}

// param returns the value of name, or def when it is absent or empty.
func param(v url.Values, name, def string) string {
	if s := strings.TrimSpace(v.Get(name)); s != "" {
		return s
	}
	return def
}

func intParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := param(v, name, "")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, badRequest{name, fmt.Sprintf("%s is not a whole number between %d and %d", quoteShort(s), lo, hi)}
	}
	return n, nil
}

func floatParam(v url.Values, name string, lo, hi float64) (float64, error) {
	s := param(v, name, "")
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= lo && f <= hi) {
		return 0, badRequest{name, fmt.Sprintf("%s is not a number between %g and %g", quoteShort(s), lo, hi)}
	}
	return f, nil
}

// asBadRequest turns a validation error of a flags-style helper into a 400 for param.
func asBadRequest(param string, err error) error {
	var br badRequest
	if err == nil || errors.As(err, &br) {
		return err
	}
	return badRequest{param, err.Error()}
}

// offersResponse is the body of /api/v1/offers.
type offersResponse struct {
	Offers    []schema.Offer `json:"offers"`
	Count     int            `json:"count"`
	Limit     int            `json:"limit"`
	Truncated bool           `json:"truncated"` // more offers matched than the limit
}

// offers serves the current market: the newest observation of every offer seen within max_age
// or valid until later (store.OfferFilter.MaxAge), cheapest $/GPU-hour first.
// selectionParams reads the gpu, provider and price_type parameters (comma-separated lists),
// each checked against the catalog or the known values.
func selectionParams(v url.Values) (models, providers []string, priceTypes []schema.PriceType, err error) {
	if models, err = parseGPUs(v.Get("gpu")); err != nil {
		return nil, nil, nil, badRequest{"gpu", err.Error()}
	}
	if providers, err = parseProviders(v.Get("provider")); err != nil {
		return nil, nil, nil, asBadRequest("provider", err)
	}
	if priceTypes, err = parsePriceTypes(v.Get("price_type")); err != nil {
		return nil, nil, nil, asBadRequest("price_type", err)
	}
	return models, providers, priceTypes, nil
}

func (a *analytics) offers(w http.ResponseWriter, r *http.Request) {
	v, err := params(r, "gpu", "provider", "price_type", "min_vram", "max_age", "limit")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var f store.OfferFilter
	if f.GPUModels, f.Providers, f.PriceTypes, err = selectionParams(v); err != nil {
		a.fail(w, r, err)
		return
	}
	if f.MinVRAMGB, err = floatParam(v, "min_vram", 0, 10000); err != nil {
		a.fail(w, r, err)
		return
	}
	maxAge, now := param(v, "max_age", "6h"), a.now()
	since, err := parseWhen(maxAge, now)
	if f.MaxAge = now.Sub(since); err != nil || f.MaxAge < time.Minute || f.MaxAge > apiMaxOfferAge {
		a.fail(w, r, badRequest{"max_age", fmt.Sprintf("%s is not an age between 1m and 366d, like 6h or 7d", quoteShort(maxAge))})
		return
	}
	limit, err := intParam(v, "limit", apiDefaultLimit, 1, apiMaxLimit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	f.Limit = limit + 1
	offers, err := read(a, r, func(ctx context.Context, st analyticsStore) ([]schema.Offer, error) { return st.LatestOffers(ctx, f) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	resp := offersResponse{Offers: offers, Limit: limit}
	if len(offers) > limit {
		resp.Offers, resp.Truncated = offers[:limit], true
	}
	if resp.Offers == nil {
		resp.Offers = []schema.Offer{}
	}
	resp.Count = len(resp.Offers)
	writeJSON(w, http.StatusOK, resp)
}

// historyResponse is the body of /api/v1/history.
type historyResponse struct {
	GPUModel  string               `json:"gpu_model"`
	Interval  store.Interval       `json:"interval"`
	Since     time.Time            `json:"since"`
	Until     time.Time            `json:"until"`
	Points    []store.HistoryPoint `json:"points"`
	Truncated bool                 `json:"truncated"`
}

// history serves the price history of one GPU model (see gpucost history).
func (a *analytics) history(w http.ResponseWriter, r *http.Request) {
	v, err := params(r, "gpu", "provider", "price_type", "since", "until", "interval")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	now := a.now()
	model, err := lookupGPU(v.Get("gpu"))
	if err != nil {
		a.fail(w, r, badRequest{"gpu", err.Error()})
		return
	}
	var q store.HistoryQuery
	q.GPUModel = model
	if q.Providers, err = parseProviders(v.Get("provider")); err != nil {
		a.fail(w, r, asBadRequest("provider", err))
		return
	}
	if q.PriceTypes, err = parsePriceTypes(v.Get("price_type")); err != nil {
		a.fail(w, r, asBadRequest("price_type", err))
		return
	}
	if q.Interval, err = store.ParseInterval(param(v, "interval", "day")); err != nil {
		a.fail(w, r, badRequest{"interval", fmt.Sprintf("%s: want hour, day or week", quoteShort(v.Get("interval")))})
		return
	}
	if q.From, q.To, err = a.rangeParams(v, "30d", now); err != nil {
		a.fail(w, r, err)
		return
	}
	if max := maxHistoryRange(q.Interval); q.To.Sub(q.From) > max {
		a.fail(w, r, badRequest{"since", fmt.Sprintf("the range %s to %s is longer than the %d days %s buckets allow: narrow it or use a wider interval",
			q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), int(max.Hours()/24), q.Interval)})
		return
	}
	points, err := read(a, r, func(ctx context.Context, st analyticsStore) ([]store.HistoryPoint, error) { return st.History(ctx, q) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	resp := historyResponse{GPUModel: q.GPUModel, Interval: q.Interval, Since: q.From, Until: q.To, Points: points}
	if len(points) > apiMaxHistory {
		resp.Points, resp.Truncated = points[:apiMaxHistory], true
	}
	if resp.Points == nil {
		resp.Points = []store.HistoryPoint{}
	}
	writeJSON(w, http.StatusOK, resp)
}

// changesResponse is the body of /api/v1/changes.
type changesResponse struct {
	Since     time.Time           `json:"since"`
	Until     time.Time           `json:"until"`
	Changes   []store.PriceChange `json:"changes"`
	Count     int                 `json:"count"`
	Limit     int                 `json:"limit"`
	Truncated bool                `json:"truncated"`
}

// changes serves price changes, newest first (see gpucost changes).
func (a *analytics) changes(w http.ResponseWriter, r *http.Request) {
	v, err := params(r, "gpu", "provider", "price_type", "since", "until", "min_pct", "limit")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var q store.ChangesQuery
	if q.GPUModels, q.Providers, q.PriceTypes, err = selectionParams(v); err != nil {
		a.fail(w, r, err)
		return
	}
	if q.From, q.To, err = a.rangeParams(v, "7d", a.now()); err != nil {
		a.fail(w, r, err)
		return
	}
	if q.To.Sub(q.From) > apiMaxChangesAge {
		a.fail(w, r, badRequest{"since", fmt.Sprintf("the range %s to %s is longer than %d days", q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), int(apiMaxChangesAge.Hours()/24))})
		return
	}
	if q.MinChangePct, err = floatParam(v, "min_pct", 0, 1e6); err != nil {
		a.fail(w, r, err)
		return
	}
	limit, err := intParam(v, "limit", apiDefaultLimit, 1, apiMaxLimit)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	q.Limit = limit + 1
	changes, err := read(a, r, func(ctx context.Context, st analyticsStore) ([]store.PriceChange, error) { return st.Changes(ctx, q) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	resp := changesResponse{Since: q.From, Until: q.To, Changes: changes, Limit: limit}
	if len(changes) > limit {
		resp.Changes, resp.Truncated = changes[:limit], true
	}
	if resp.Changes == nil {
		resp.Changes = []store.PriceChange{}
	}
	resp.Count = len(resp.Changes)
	writeJSON(w, http.StatusOK, resp)
}

// rangeParams reads since and until (defaults: def ago, and now) and names the parameter that
// is wrong.
func (a *analytics) rangeParams(v url.Values, def string, now time.Time) (from, to time.Time, err error) {
	if from, err = parseWhen(param(v, "since", def), now); err != nil {
		return from, to, badRequest{"since", err.Error()}
	}
	if to, err = parseWhen(param(v, "until", "now"), now); err != nil {
		return from, to, badRequest{"until", err.Error()}
	}
	if !to.After(from) {
		return from, to, badRequest{"until", fmt.Sprintf("the range is empty or inverted: since %s is not before until %s", from.Format(time.RFC3339), to.Format(time.RFC3339))}
	}
	return from, to, nil
}

// read runs the store read of one API answer through the gate. Identical requests in flight
// (the same path and query string) share one read and get the same rows, so a crowd asking the
// same question costs one query. The read is detached from the first client's cancellation:
// the others still wait for it. The rows are shared: callers must not change them.
func read[T any](a *analytics, r *http.Request, fn func(ctx context.Context, st analyticsStore) (T, error)) (T, error) {
	v, err, _ := a.flight.Do(r.URL.Path+"?"+r.URL.RawQuery, func() (any, error) {
		var rows T
		err := a.query(context.WithoutCancel(r.Context()), func(ctx context.Context, st analyticsStore) (err error) {
			rows, err = fn(ctx, st)
			return err
		})
		if err != nil {
			return nil, err // fn may still be running (see storeGate.do): rows is not read
		}
		return rows, nil
	})
	rows, _ := v.(T)
	return rows, err
}

// query runs fn on the store through the gate: opening the store is part of the query, so a
// store that cannot be reached or hangs while connecting is unavailable like one that hangs on
// a query.
func (a *analytics) query(ctx context.Context, fn func(ctx context.Context, st analyticsStore) error) error {
	return a.gate.do(ctx, func(ctx context.Context) error {
		st, err := a.store(ctx)
		if err != nil {
			return err
		}
		return fn(ctx, st)
	})
}

// fail answers 400 for a bad request, naming the parameter.
func (a *analytics) fail(w http.ResponseWriter, r *http.Request, err error) {
	var br badRequest
	if !errors.As(err, &br) {
		br = badRequest{msg: err.Error()}
	}
	a.logger.Info("Bad API request", "path", r.URL.Path, "err", br.Error())
	writeJSON(w, http.StatusBadRequest, apiError{Error: br.Error(), Parameter: strings.Trim(br.param, `"`)})
}

// unavailable answers a request the store could not: the cause is logged, not shown.
func (a *analytics) unavailable(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client has gone: nobody reads an answer
	}
	a.logger.Error("API request failed", "path", r.URL.Path, "err", err)
	status, msg, retry := storeErrorStatus(err)
	if retry != "" {
		w.Header().Set("Retry-After", retry)
	}
	writeJSON(w, status, apiError{Error: msg})
}

// storeErrorStatus maps a store error to the HTTP status, the message a client sees and a
// Retry-After in seconds (or ""). Only a query that ran past serve.query_timeout on a store that
// answers is a 504 asking to narrow the request; a store that is down, paused or saturated is a
// 503.
func storeErrorStatus(err error) (status int, msg, retryAfter string) {
	switch {
	case errors.Is(err, errQueryTooSlow):
		return http.StatusGatewayTimeout, "the query took too long; narrow the request (a shorter range, fewer GPU models or providers)", ""
	case errors.Is(err, errStoreBusy):
		return http.StatusServiceUnavailable, "the price store is busy; try again in a moment", "1"
	}
	return http.StatusServiceUnavailable, "the price store is unavailable; try again later", "5"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = writeIndentedJSON(w, v)
}
