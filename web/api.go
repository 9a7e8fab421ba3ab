package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/sync/singleflight"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

// API limits. Every response is bounded: offers and changes by a row limit, history by the
// range each interval may span (selection.MaxHistoryRange) and a row cap.
const (
	apiDefaultLimit  = 100
	apiMaxLimit      = 1000
	apiMaxHistory    = 20000               // rows of one history response
	apiMaxChangesAge = 92 * 24 * time.Hour // the longest range of a changes request
	apiMaxOfferAge   = 366 * 24 * time.Hour
	apiMaxQueryBytes = 2048 // of the whole query string
	apiMaxValueBytes = 256  // of one parameter value
)

// analytics serves the JSON API (/api/v1/offers, /history, /changes, /value, /plans, /gpus and
// the OpenAPI document that describes them) and the dashboard (/ and its static files). Every
// parameter is validated before the store is touched: a bad one is a 400 that names it, and
// values reach ClickHouse only as bound query arguments. Every query runs through the gate
// (storeGate): bounded concurrency, a deadline, and an honest 503 when the store is down or
// paused (504 only for a slow query on a store that answers). The dashboard's data is read by a
// refresher, at most once per Config.DashboardRefresh. Every error, an unknown path's 404 and
// a wrong method's 405 included, is a JSON apiError.
type analytics struct {
	store  func(ctx context.Context) (Reader, error)
	gate   *storeGate
	flight singleflight.Group // identical API reads in flight
	page   *refresher[dashboardData]
	now    func() time.Time
	logger *slog.Logger
}

// newAnalytics returns the API and dashboard on the store that store opens, its queries through
// gate, the dashboard's data read at most once per refresh.
func newAnalytics(store func(ctx context.Context) (Reader, error), gate *storeGate, refresh time.Duration, now func() time.Time, logger *slog.Logger) *analytics {
	a := &analytics{store: store, gate: gate, now: now, logger: logger}
	a.page = newRefresher(refresh, gate.timeout, true, a.readDashboard)
	return a
}

// apiRoutes are the API's paths, each answering GET (and HEAD) only, with their handlers: what
// mount serves and openapi_test.go holds the OpenAPI document to.
func (a *analytics) apiRoutes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"/api/v1/offers":       a.offers,
		"/api/v1/history":      a.history,
		"/api/v1/changes":      a.changes,
		"/api/v1/value":        a.value,
		"/api/v1/plans":        a.plans,
		"/api/v1/gpus":         a.gpus,
		"/api/v1/openapi.json": serveOpenAPI,
	}
}

func (a *analytics) mount(mux *http.ServeMux) {
	for path, h := range a.apiRoutes() {
		mux.HandleFunc("GET "+path, h)
	}
	mux.HandleFunc("GET /{$}", a.dashboard)
	mux.Handle("GET /static/", staticFiles)
	// Every other request: a 405 where the path answers another method, else a 404, in JSON.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		get := r.Clone(r.Context())
		get.Method = http.MethodGet
		if _, pattern := mux.Handler(get); pattern != "/" {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, apiError{Error: r.Method + " is not allowed on " + r.URL.Path + ": it answers GET and HEAD"})
			return
		}
		writeError(w, http.StatusNotFound, apiError{Error: "no such path: " + selection.Quote(r.URL.Path) + " (the API's paths are listed in /api/v1/openapi.json)"})
	})
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
	Status    int    `json:"status"` // the HTTP status, repeated
	Error     string `json:"error"`
	Parameter string `json:"parameter,omitempty"` // the parameter at fault, for a 400
}

// params checks the query string: well formed, bounded, every name known and given once. A
// cursor has its own bound (it carries a whole query); the rest of the query string has
// apiMaxQueryBytes.
func params(r *http.Request, allowed ...string) (url.Values, error) {
	rest := 0
	for _, part := range strings.Split(r.URL.RawQuery, "&") {
		if strings.HasPrefix(part, "cursor=") && len(part) <= len("cursor=")+apiMaxCursorBytes {
			continue
		}
		rest += len(part) + 1
	}
	if rest > apiMaxQueryBytes+1 {
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
		if !slices.Contains(allowed, name) {
			return nil, badRequest{selection.Quote(name), "unknown parameter (this endpoint takes " + strings.Join(allowed, ", ") + ")"}
		}
		if len(v[name]) > 1 {
			return nil, badRequest{name, "given more than once (use one comma-separated value)"}
		}
		if max := apiMaxValueBytes; name != "cursor" && len(v.Get(name)) > max {
			return nil, badRequest{name, fmt.Sprintf("longer than %d bytes", max)}
		}
	}
	return v, nil
}

// request reads a request's parameters as a selection, each absent or empty one taking its
// default from defaults.
func request(v url.Values, defaults selection.Request) selection.Request {
	p := func(name, def string) string {
		if s := strings.TrimSpace(v.Get(name)); s != "" {
			return s
		}
		return def
	}
	return selection.Request{GPU: p("gpu", defaults.GPU), Provider: p("provider", defaults.Provider), PriceType: p("price_type", defaults.PriceType),
		Since: p("since", defaults.Since), Until: p("until", defaults.Until), Interval: p("interval", defaults.Interval),
		MinPct: p("min_pct", defaults.MinPct), MinVRAM: p("min_vram", defaults.MinVRAM), MaxAge: p("max_age", defaults.MaxAge), Limit: p("limit", defaults.Limit),
		Precision: p("precision", defaults.Precision)}
}

// apiBounds are the API's limits on a selection.
var apiBounds = selection.Bounds{MinLimit: 1, MaxLimit: apiMaxLimit, MaxChangesRange: apiMaxChangesAge, MinAge: time.Minute, MaxAgeCap: apiMaxOfferAge}

// offersValues are the parameters of an offers query: what its cursor carries to the next page.
func offersValues(q export.OffersQuery) url.Values {
	return url.Values{"gpu": {strings.Join(q.GPU, ",")}, "provider": {strings.Join(q.Provider, ",")}, "price_type": {schema.List(q.PriceType)},
		"min_vram": {strconv.FormatFloat(q.MinVRAM, 'f', -1, 64)}, "max_age": {q.MaxAge}, "limit": {strconv.Itoa(q.Limit)}}
}

// offers serves the current market: the newest observation of every offer seen within max_age
// or valid until later (schema.OfferFilter.MaxAge), cheapest $/GPU-hour first, in pages.
func (a *analytics) offers(w http.ResponseWriter, r *http.Request) {
	allowed := []string{"gpu", "provider", "price_type", "min_vram", "max_age", "limit", "cursor"}
	v, err := params(r, allowed...)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var after offerPosition
	if v, err = resume(v, allowed, &after); err != nil {
		a.fail(w, r, err)
		return
	}
	f, err := request(v, selection.Request{MaxAge: "6h", Limit: strconv.Itoa(apiDefaultLimit)}).Offers(a.now(), apiBounds)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if v.Has("cursor") {
		if f.After, err = after.position(); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	q := export.NewOffersQuery(f)
	limit := f.Limit
	f.Limit = limit + 1
	offers, err := read(a, r, func(ctx context.Context, st Reader) ([]schema.Offer, error) { return st.LatestOffers(ctx, f) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	resp := export.Envelope[schema.Offer]{Schema: export.OffersSchema, Query: q, Items: offers}
	if len(offers) > limit {
		resp.Items, resp.Truncated = offers[:limit], true
		resp.Next = encodeCursor(offersValues(q), newOfferPosition(resp.Items[limit-1].Position()))
	}
	writeJSON(w, http.StatusOK, resp)
}

// history serves the price history of one GPU model (see gpucost history): at most
// apiMaxHistory points, truncated beyond.
func (a *analytics) history(w http.ResponseWriter, r *http.Request) {
	v, err := params(r, "gpu", "provider", "price_type", "since", "until", "interval")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	q, err := request(v, selection.Request{Since: "30d", Until: "now", Interval: "day"}).History(a.now())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	points, err := read(a, r, func(ctx context.Context, st Reader) ([]schema.HistoryPoint, error) { return st.History(ctx, q) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	resp := export.Envelope[schema.HistoryPoint]{Schema: export.HistorySchema, Query: export.NewHistoryQuery(q), Items: points}
	if len(points) > apiMaxHistory {
		resp.Items, resp.Truncated = points[:apiMaxHistory], true
	}
	writeJSON(w, http.StatusOK, resp)
}

// changesValues are the parameters of a changes query: what its cursor carries to the next page.
func changesValues(q export.ChangesQuery) url.Values {
	return url.Values{"gpu": {strings.Join(q.GPU, ",")}, "provider": {strings.Join(q.Provider, ",")}, "price_type": {schema.List(q.PriceType)},
		"since": {q.Since.Format(time.RFC3339Nano)}, "until": {q.Until.Format(time.RFC3339Nano)},
		"min_pct": {strconv.FormatFloat(q.MinPct, 'f', -1, 64)}, "limit": {strconv.Itoa(q.Limit)}}
}

// changes serves price changes, newest first (see gpucost changes), in pages.
func (a *analytics) changes(w http.ResponseWriter, r *http.Request) {
	allowed := []string{"gpu", "provider", "price_type", "since", "until", "min_pct", "limit", "cursor"}
	v, err := params(r, allowed...)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var after changePosition
	if v, err = resume(v, allowed, &after); err != nil {
		a.fail(w, r, err)
		return
	}
	q, err := request(v, selection.Request{Since: "7d", Until: "now", Limit: strconv.Itoa(apiDefaultLimit)}).Changes(a.now(), apiBounds)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if v.Has("cursor") {
		if q.After, err = after.position(); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	echo := export.NewChangesQuery(q)
	limit := q.Limit
	q.Limit = limit + 1
	changes, err := read(a, r, func(ctx context.Context, st Reader) ([]schema.PriceChange, error) { return st.Changes(ctx, q) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	resp := export.Envelope[schema.PriceChange]{Schema: export.ChangesSchema, Query: echo, Items: changes}
	if len(changes) > limit {
		resp.Items, resp.Truncated = changes[:limit], true
		resp.Next = encodeCursor(changesValues(echo), newChangePosition(resp.Items[limit-1].Position()))
	}
	writeJSON(w, http.StatusOK, resp)
}

// value serves what a dollar buys on each catalog GPU model of the market now (see gpucost
// gpus --value): its cheapest offer at price_type (or commitment), $ per dense TFLOP-hour at
// each precision and per TB/s-hour, ranked at precision. The market is the newest observation of
// every offer seen within max_age or valid until later, as for /api/v1/offers.
func (a *analytics) value(w http.ResponseWriter, r *http.Request) {
	v, err := params(r, "price_type", "precision", "max_age")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	f, q, err := request(v, selection.Request{PriceType: string(schema.OnDemand), Precision: string(gpus.BF16), MaxAge: "6h"}).Value(apiBounds)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	models, err := read(a, r, func(ctx context.Context, st Reader) ([]market.GPU, error) { return st.LatestPerGPU(ctx, f) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, export.Envelope[market.Value]{Schema: export.ValueSchema, Query: export.NewValueQuery(f, q), Items: market.Values(models, q)})
}

// plans serves the rows of the newest stored plan (the nightly gpucost optimize), by team and
// workload, of the teams asked for (all when none is).
func (a *analytics) plans(w http.ResponseWriter, r *http.Request) {
	v, err := params(r, "team")
	if err != nil {
		a.fail(w, r, err)
		return
	}
	teams := selection.List(v.Get("team"))
	for _, t := range teams {
		if strings.ContainsFunc(t, unicode.IsControl) {
			a.fail(w, r, badRequest{"team", "a team name " + selection.Quote(t) + " with a control character"})
			return
		}
	}
	rows, err := read(a, r, func(ctx context.Context, st Reader) ([]schema.PlanRow, error) { return st.LatestPlan(ctx) })
	if err != nil {
		a.unavailable(w, r, err)
		return
	}
	var out []schema.PlanRow
	for _, row := range rows {
		if len(teams) == 0 || slices.Contains(teams, row.Team) {
			out = append(out, row)
		}
	}
	writeJSON(w, http.StatusOK, export.Envelope[schema.PlanRow]{Schema: export.PlansSchema, Query: export.NewPlansQuery(teams), Items: out})
}

// gpus serves the GPU catalog (see gpucost gpus): every model with its specifications, the
// serving engines that run on it and its purchase price where the catalog has one.
func (a *analytics) gpus(w http.ResponseWriter, r *http.Request) {
	if _, err := params(r); err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, export.Envelope[export.GPUListing]{Schema: export.GPUsSchema, Query: struct{}{}, Items: export.Listings(gpus.Models())})
}

// read runs the store read of one API answer through the gate. Identical requests in flight
// (the same path and query string) share one read and get the same rows, so a crowd asking the
// same question costs one query. The read is detached from the first client's cancellation:
// the others still wait for it. The rows are shared: callers must not change them.
func read[T any](a *analytics, r *http.Request, fn func(ctx context.Context, st Reader) (T, error)) (T, error) {
	v, err, _ := a.flight.Do(r.URL.Path+"?"+r.URL.RawQuery, func() (any, error) {
		var rows T
		err := a.query(context.WithoutCancel(r.Context()), func(ctx context.Context, st Reader) (err error) {
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
func (a *analytics) query(ctx context.Context, fn func(ctx context.Context, st Reader) error) error {
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
	var se *selection.Error
	switch {
	case errors.As(err, &se):
		br = badRequest{param: se.Param, msg: strings.TrimPrefix(se.Msg, se.Param+": ")}
	case !errors.As(err, &br):
		br = badRequest{msg: err.Error()}
	}
	a.logger.Info("Bad API request", "path", r.URL.Path, "err", br.Error())
	writeError(w, http.StatusBadRequest, apiError{Error: br.Error(), Parameter: strings.Trim(br.param, `"`)})
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
	writeError(w, status, apiError{Error: msg})
}

// storeErrorStatus maps a store error to the HTTP status, the message a client sees and a
// Retry-After in seconds (or ""). Only a query that ran past Config.QueryTimeout on a store that
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
	_ = export.WriteJSON(w, v)
}

// writeError answers with an error: its status, and the status in the body too.
func writeError(w http.ResponseWriter, status int, e apiError) {
	e.Status = status
	writeJSON(w, status, e)
}
