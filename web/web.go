// Package web is gpucost serve's HTTP side: the JSON API (/api/v1/offers, /api/v1/history,
// /api/v1/changes, /api/v1/value, /api/v1/plans, /api/v1/gpus, each answer an export.Envelope,
// described by the OpenAPI document at /api/v1/openapi.json and in docs/analysts.md), the
// dashboard (/: tables rendered on the server, charts drawn in the browser from the API), the
// probes, and /metrics (Prometheus, from the registry it is given). It reads the price store
// through the Store interface it declares and runs every read through one gate: bounded
// concurrency, a deadline, and an honest 503 when the store is down or paused (504 only for a
// slow query on a store that answers). It knows nothing of the scheduler or of ClickHouse: what
// it needs of them comes in a Config.
//
// The probes each answer one question, for one reader:
//
//   - /livez, for a liveness probe: the process serves HTTP. It is 200 whenever it answers at
//     all and touches nothing else, so a restart happens only for a process that is stuck.
//   - /readyz, for a readiness probe: the API and the dashboard can answer, because the store
//     answers the gate's liveness check (the smallest query on gpucost's own tables) within a
//     second. 200, else 503 with the reason. How fresh the providers' prices are plays no part:
//     a provider whose page changed leaves its own prices stale, and the API still answers with
//     everyone's, so it must not take serve out of a load balancer.
//   - /healthz, for people and alerting: each provider's last run, last good run and staleness,
//     and the scheduled jobs' state; 503 when a provider is stale (or has no good run yet) or
//     the run log cannot be read. Never a probe.
package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

// Reader is what the JSON API and the dashboard read of the store: the prices and the stored
// plans. Its methods must be safe for concurrent use and must return when their context ends.
type Reader interface {
	LatestOffers(ctx context.Context, f schema.OfferFilter) ([]schema.Offer, error)
	// LatestPerGPU is market.PerGPU of LatestOffers(ctx, f), computed by the store.
	LatestPerGPU(ctx context.Context, f schema.OfferFilter) ([]market.GPU, error)
	History(ctx context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error)
	Changes(ctx context.Context, q schema.ChangesQuery) ([]schema.PriceChange, error)
	// LatestPlan returns the rows of the newest stored plan (the nightly gpucost optimize), by
	// team and workload; nil when none is stored.
	LatestPlan(ctx context.Context) ([]schema.PlanRow, error)
}

// Store is everything the HTTP side reads of the store: the prices and plans, the run log
// /healthz reports, and the schema version, the smallest query on gpucost's own tables, which
// the gate asks as its liveness check (and /readyz through it). *store.Store implements it.
type Store interface {
	Reader
	LastRuns(ctx context.Context) ([]schema.ScrapeRun, error)
	LastGoodRuns(ctx context.Context) ([]schema.ScrapeRun, error)
	SchemaVersion(ctx context.Context) (int, error)
}

// StoreErrors tells the gate what a store error means; each reports whether err is of its kind,
// and a nil one never does. Package store has all three (store.Busy, store.Refused,
// store.Unreachable). An error of none of the kinds is a fault of that one request (a value
// gpucost cannot read): the store is taken to be up.
type StoreErrors struct {
	Busy        func(error) bool // no connection came free in time: 503, try again in a moment
	Refused     func(error) bool // the server answered and refused the query: 503
	Unreachable func(error) bool // the connection failed: 503, and the next requests check the store first
}

// Config is what the HTTP side is built from.
type Config struct {
	// Open returns the store. It is called for every read, within the read's deadline, so that a
	// store that cannot be reached or hangs while connecting is unavailable like one that hangs
	// on a query; once the store is open it must return at once (a store opened on first use).
	Open   func(ctx context.Context) (Store, error)
	Errors StoreErrors
	// Jobs returns the state of the scheduled jobs by name, for /healthz; nil reports none.
	Jobs func() map[string]schema.JobState
	// Registry is served on /metrics; nil serves no /metrics.
	Registry *prometheus.Registry
	Logger   *slog.Logger // nil discards

	Providers        []string      // the providers whose last runs /healthz reports
	StaleAfter       time.Duration // a provider whose last good run is older is stale (/healthz is 503)
	QueryTimeout     time.Duration // the deadline of one read: the wait for a query slot and the query
	MaxQueries       int           // reads run at once at most (at least 1)
	DashboardRefresh time.Duration // the dashboard is rebuilt at most this often
}

// Handler serves the HTTP side. It is safe for concurrent use.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	gate   *storeGate         // every store read
	runLog *refresher[runLog] // what /healthz reports of the runs
	now    func() time.Time
	logger *slog.Logger
}

// New returns the HTTP side of cfg.
func New(cfg Config) *Handler {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), now: time.Now, logger: logger}
	h.gate = newStoreGate(cfg.MaxQueries, cfg.QueryTimeout, h.probe, cfg.Errors)
	h.runLog = newRefresher(healthzRefresh, cfg.QueryTimeout, false, h.lastRuns)
	if cfg.Registry != nil {
		h.mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{Registry: cfg.Registry}))
	}
	h.mux.HandleFunc("GET /livez", h.livez)
	h.mux.HandleFunc("GET /readyz", h.readyz)
	h.mux.HandleFunc("GET /healthz", h.healthz)
	reader := func(ctx context.Context) (Reader, error) {
		st, err := cfg.Open(ctx)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	// The JSON API under /api/v1/, the dashboard at /, and JSON 404s and 405s for the rest
	newAnalytics(reader, h.gate, cfg.DashboardRefresh, h.now, logger).mount(h.mux)
	return h
}

// ServeHTTP serves /metrics, the probes, the JSON API and the dashboard.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// probe is the gate's liveness check: the smallest query on gpucost's own tables.
func (h *Handler) probe(ctx context.Context) error {
	st, err := h.cfg.Open(ctx)
	if err != nil {
		return err
	}
	_, err = st.SchemaVersion(ctx)
	return err
}
