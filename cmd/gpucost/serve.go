package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
)

const serveHelp = `Run gpucost as a service: a scheduler (UTC cron) that runs the scrape (serve.scrape_schedule),
the nightly plan (optimize.schedule) and the weekly report email (report.schedule), and an HTTP
server on serve.listen with
  /healthz     the last run of each provider and its staleness (503 when a provider's last good
               run is older than serve.stale_after, or the store is unreachable); the run log
               is read at most every 2 seconds, however often /healthz is asked
  /metrics     Prometheus metrics: runs, offers, rejects, HTTP attempts, durations, last success
  /api/v1/...  offers, history and price changes as JSON (see docs/analysts.md)
  /            a dashboard: the cheapest offer per GPU model and price-history charts, rebuilt
               at most every serve.dashboard_refresh (1m) and served from memory in between.
The API and the dashboard run at most half of the DSN's max_open_conns queries at once, each
within serve.query_timeout: a store that is down or paused is a 503 within about two seconds,
a query that is slow on a store that answers a 504.
A job still running when its next time comes is skipped; a job that panics is logged and the
service carries on. On SIGTERM or SIGINT the scheduler stops, the run in flight finishes or
spools its batches (within serve.shutdown_grace), and the process exits 0.`

func runServe(ctx context.Context, e env, args []string) int {
	fs := newFlags("serve", "[flags]", serveHelp)
	fs.withConfig()
	if code := fs.parse(e, args); code >= 0 {
		return code
	}
	cfg, code := fs.config(e)
	if code >= 0 {
		return code
	}
	logger := slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := newServer(cfg, e, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost serve: %v\n", err)
		return exitUsage
	}
	defer srv.close()
	if err := errors.Join(srv.scheduleScrape(), srv.scheduleOptimize(), srv.scheduleReport()); err != nil {
		fmt.Fprintf(e.stderr, "gpucost serve: %v\n", err)
		return exitUsage
	}
	ln, err := net.Listen("tcp", cfg.Serve.Listen)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost serve: %v\n", err)
		return exitFailed
	}
	if err := srv.serve(ctx, ln); err != nil {
		fmt.Fprintf(e.stderr, "gpucost serve: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// server is `gpucost serve`: the scheduler, its jobs' state and the HTTP endpoints.
type server struct {
	cfg      Config
	e        env
	logger   *slog.Logger
	registry *prometheus.Registry
	metrics  *pipeline.Metrics
	store    *store.Lazy
	gate     *storeGate         // every store read of the HTTP side
	runLog   *refresher[runLog] // what /healthz reports of the runs
	cron     *cron.Cron
	now      func() time.Time

	mu   sync.Mutex
	jobs map[string]*jobState
	ctx  context.Context // the service's root context, set by serve; jobs run under it
}

// jobState is what /healthz says of a scheduled job.
type jobState struct {
	Schedule   string     `json:"schedule"`
	Running    bool       `json:"running"`
	LastStart  *time.Time `json:"last_start,omitempty"`
	LastFinish *time.Time `json:"last_finish,omitempty"`
	LastStatus string     `json:"last_status,omitempty"`
	LastError  string     `json:"last_error,omitempty"`
	NextRun    *time.Time `json:"next_run,omitempty"`
	entry      cron.EntryID
}

func newServer(cfg Config, e env, logger *slog.Logger) (*server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cl := cronLogger{logger}
	s := &server{
		cfg:      cfg,
		e:        e,
		logger:   logger,
		registry: reg,
		metrics:  pipeline.NewMetrics(reg),
		store:    newLazyStore(cfg.ClickHouse, logger, nil),
		// SkipIfStillRunning must wrap Recover, not the other way round: its token is put back
		// without a defer, so a panic passing through it would skip the job forever after
		// (cron v3.0.1 chain.go; TestServeRunsJobsSurvivesPanicsAndStopsOnSIGTERM pins this).
		cron: cron.New(cron.WithLocation(time.UTC), cron.WithLogger(cl), cron.WithChain(cron.SkipIfStillRunning(cl), cron.Recover(cl))),
		now:  time.Now,
		jobs: map[string]*jobState{},
		ctx:  context.Background(),
	}
	// Half the pool: the scheduled jobs (a scrape loads up to scrape.parallelism batches at
	// once) and the gate's liveness checks keep connections of their own.
	s.gate = newStoreGate(cfg.ClickHouse.maxOpenConns()/2, cfg.Serve.QueryTimeout.Std(), s.probe)
	s.runLog = newRefresher(healthzRefresh, cfg.Serve.QueryTimeout.Std(), false, s.lastRuns)
	return s, nil
}

// healthzRefresh is how often /healthz reads the run log at most.
const healthzRefresh = 2 * time.Second

// probe is the store gate's liveness check: the smallest query on gpucost's own tables.
func (s *server) probe(ctx context.Context) error {
	st, err := s.store.Store(ctx)
	if err != nil {
		return err
	}
	_, err = st.SchemaVersion(ctx)
	return err
}

// scheduleScrape adds the hourly scrape.
func (s *server) scheduleScrape() error {
	sources, err := buildSources(s.cfg, s.e, s.logger, nil, sourceOptions{})
	if err != nil {
		return err
	}
	runner, err := pipeline.New(pipelineConfig(s.cfg), sources, s.store, s.store, pipeline.Options{Logger: s.logger, Metrics: s.metrics, Redactor: s.e.secrets})
	if err != nil {
		return err
	}
	return s.schedule("scrape", s.cfg.Serve.ScrapeSchedule, func(ctx context.Context) (string, error) {
		rep, err := runner.Run(ctx)
		if err != nil {
			return string(schema.RunFailed), err
		}
		return string(rep.Status), nil
	})
}

// scheduleOptimize adds the nightly plan.
func (s *server) scheduleOptimize() error {
	return s.schedule("optimize", s.cfg.Optimize.Schedule, func(ctx context.Context) (string, error) {
		plan, _, err := optimizeOnce(ctx, s.cfg, s.logger, true)
		if err != nil {
			return "failed", err
		}
		return fmt.Sprintf("ok: %d workloads, saves $%s/month", plan.Totals.Workloads, plan.Totals.SavingsUSDPerMonth.StringFixed(2)), nil
	})
}

// scheduleReport adds the weekly report email (report.schedule).
func (s *server) scheduleReport() error {
	return s.schedule("report", s.cfg.Report.Schedule, func(ctx context.Context) (string, error) {
		return sendWeekly(ctx, s.cfg, s.e, s.logger)
	})
}

// schedule adds a job. The job runs under the service's context; its status and error are kept
// for /healthz. A panic inside fn propagates to cron's Recover, which logs it and carries on.
func (s *server) schedule(name, spec string, fn func(ctx context.Context) (status string, err error)) error {
	st := &jobState{Schedule: spec}
	id, err := s.cron.AddFunc(spec, func() {
		s.mu.Lock()
		start := s.now().UTC()
		st.Running, st.LastStart = true, &start
		ctx := s.ctx
		s.mu.Unlock()
		status, err := "panicked", error(nil)
		defer func() {
			s.mu.Lock()
			finish := s.now().UTC()
			st.Running, st.LastFinish, st.LastStatus = false, &finish, status
			st.LastError = ""
			if err != nil {
				st.LastError = err.Error()
			}
			s.mu.Unlock()
		}()
		s.logger.Info("Job started", "job", name)
		status, err = fn(ctx)
		if err != nil {
			s.logger.Error("Job failed", "job", name, "status", status, "err", err)
			return
		}
		s.logger.Info("Job finished", "job", name, "status", status, "duration", time.Since(start))
	})
	if err != nil {
		return fmt.Errorf("job %s: schedule %q: %w", name, spec, err)
	}
	st.entry = id
	s.mu.Lock()
	s.jobs[name] = st
	s.mu.Unlock()
	return nil
}

// serve runs the scheduler and the HTTP server until ctx is done, then shuts both down: the
// scheduler stops starting jobs, a job in flight gets ShutdownGrace to finish (the pipeline
// spools what it cannot load), and the HTTP server drains.
func (s *server) serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	httpSrv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second}
	httpErr := make(chan error, 1)
	go func() { httpErr <- httpSrv.Serve(ln) }()
	s.cron.Start()
	s.logger.Info("Serving", "addr", ln.Addr().String(), "jobs", len(s.jobs))

	var err error
	select {
	case <-ctx.Done():
	case err = <-httpErr:
	}
	s.logger.Info("Shutting down")
	grace := s.cfg.Serve.ShutdownGrace.Std()
	select {
	case <-s.cron.Stop().Done():
	case <-time.After(grace):
		s.logger.Error("A job did not finish within the shutdown grace", "grace", grace)
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if e := httpSrv.Shutdown(shutCtx); e != nil && err == nil {
		err = e
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *server) close() { s.store.Close() }

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{Registry: s.registry}))
	mux.HandleFunc("GET /healthz", s.healthz)
	s.mountAPI(mux) // /api/v1/offers, /api/v1/history, /api/v1/changes and the dashboard at /
	return mux
}

// health is the /healthz document.
type health struct {
	Status     string              `json:"status"` // ok or degraded
	Time       time.Time           `json:"time"`
	StaleAfter string              `json:"stale_after"`
	Providers  []providerHealth    `json:"providers"`
	Jobs       map[string]jobState `json:"jobs"`
	StoreError string              `json:"store_error,omitempty"`
}

type providerHealth struct {
	Provider        string     `json:"provider"`
	LastRun         string     `json:"last_run,omitempty"`
	LastStatus      string     `json:"last_status,omitempty"`
	LastFinished    *time.Time `json:"last_finished,omitempty"`
	LastError       string     `json:"last_error,omitempty"`
	LastGoodRun     string     `json:"last_good_run,omitempty"`
	LastGoodAt      *time.Time `json:"last_good_at,omitempty"`
	StalenessSecond float64    `json:"staleness_seconds"`
	Stale           bool       `json:"stale"`
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	now := s.now().UTC()
	h := health{Status: "ok", Time: now, StaleAfter: s.cfg.Serve.StaleAfter.Std().String(), Jobs: map[string]jobState{}}
	s.mu.Lock()
	for name, j := range s.jobs {
		js := *j
		if e := s.cron.Entry(j.entry); e.Valid() && !e.Next.IsZero() {
			next := e.Next.UTC()
			js.NextRun = &next
		}
		h.Jobs[name] = js
	}
	s.mu.Unlock()

	runs, _, _, err := s.runLog.get(r.Context())
	if err != nil {
		h.Status, h.StoreError = "degraded", err.Error()
	}
	last, good := runs.last, runs.good
	for _, p := range s.cfg.Scrape.Providers {
		ph := providerHealth{Provider: p, Stale: true}
		if r, ok := last[p]; ok {
			fin := r.FinishedAt
			ph.LastRun, ph.LastStatus, ph.LastFinished, ph.LastError = r.RunID, string(r.Status), &fin, r.Error
		}
		if r, ok := good[p]; ok {
			fin := r.FinishedAt
			ph.LastGoodRun, ph.LastGoodAt = r.RunID, &fin
			ph.StalenessSecond = now.Sub(fin).Seconds()
			ph.Stale = now.Sub(fin) > s.cfg.Serve.StaleAfter.Std()
		}
		if ph.Stale {
			h.Status = "degraded"
		}
		h.Providers = append(h.Providers, ph)
	}
	sort.Slice(h.Providers, func(i, j int) bool { return h.Providers[i].Provider < h.Providers[j].Provider })
	w.Header().Set("Content-Type", "application/json")
	if h.Status != "ok" {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = writeIndentedJSON(w, h)
}

// runLog is the last run and the last good run of each provider.
type runLog struct {
	last, good map[string]schema.ScrapeRun
}

// lastRuns reads the run log through the gate (runLog's load).
func (s *server) lastRuns(ctx context.Context) (runLog, error) {
	var runs, goods []schema.ScrapeRun
	err := s.gate.do(ctx, func(ctx context.Context) error {
		st, err := s.store.Store(ctx)
		if err != nil {
			return err
		}
		if runs, err = st.LastRuns(ctx); err != nil {
			return err
		}
		goods, err = st.LastGoodRuns(ctx)
		return err
	})
	if err != nil {
		return runLog{}, err
	}
	l := runLog{last: map[string]schema.ScrapeRun{}, good: map[string]schema.ScrapeRun{}}
	for _, r := range runs {
		l.last[r.Provider] = r
	}
	for _, r := range goods {
		l.good[r.Provider] = r
	}
	return l, nil
}

// cronLogger adapts slog to cron's logger interface.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("Cron: "+msg, kv...) }

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("Cron: "+msg, append(kv, "err", err)...)
}
