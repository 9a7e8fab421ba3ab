// Package service is gpucost serve, the long-running process: a scheduler (UTC cron) that runs
// the scrape, the nightly plan and the weekly report, the state of each of those jobs, the
// Prometheus registry, and the HTTP server of package web, from listening to a graceful shutdown
// within serve.shutdown_grace. What the jobs do comes from its caller: the scrape's sources,
// sink and history, and the other jobs as functions; the store the HTTP side reads, as a
// function that opens it.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/robfig/cron/v3"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/web"
)

// Job is one run of a scheduled job. It runs under the service's context, which ends at
// shutdown; its status is the job's own word for the outcome (a scrape's run status, a plan's
// totals) and, with its error, what /healthz reports of the job. A job that panics is logged and
// reported as "panicked"; the service carries on.
type Job func(ctx context.Context) (status string, err error)

// Scrape is what the scrape job runs: pipeline.New's arguments. Options.Metrics is the service's
// own (served on /metrics); Options.Logger defaults to the service's logger.
type Scrape struct {
	Config  pipeline.Config
	Sources []pipeline.Source
	Sink    pipeline.Sink
	History pipeline.History
	Options pipeline.Options
}

// Deps are what the service runs on, built by its caller.
type Deps struct {
	// Open returns the store the HTTP side reads; see web.Config.Open.
	Open func(ctx context.Context) (web.Store, error)
	// StoreErrors tells the HTTP side what the store's errors mean.
	StoreErrors web.StoreErrors
	// Scrape runs at serve.scrape_schedule.
	Scrape Scrape
	// Optimize runs at optimize.schedule and Report at report.schedule; a nil one is not
	// scheduled.
	Optimize, Report Job
	Logger           *slog.Logger // nil discards
}

// Service is gpucost serve: build it with New, then Run it.
type Service struct {
	cfg    config.Config
	logger *slog.Logger
	cron   *cron.Cron
	web    *web.Handler
	now    func() time.Time

	mu   sync.Mutex
	jobs map[string]*job
	ctx  context.Context // the service's root context, set by Serve; jobs run under it
}

// job is a scheduled job's state and its cron entry.
type job struct {
	state schema.JobState
	entry cron.EntryID
}

// New returns the service of cfg on d, its jobs scheduled. Its errors are the configuration's: a
// schedule that does not parse, a scrape that cannot be built.
func New(cfg config.Config, d Deps) (*Service, error) {
	logger := d.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cl := cronLogger{logger}
	s := &Service{
		cfg:    cfg,
		logger: logger,
		// SkipIfStillRunning must wrap Recover, not the other way round: its token is put back
		// without a defer (robfig/cron v3.0.1), so a panic passing through it would skip the job
		// forever after (TestServeRunsJobsSurvivesPanicsAndStopsOnSIGTERM in service_test.go
		// pins this).
		cron: cron.New(cron.WithLocation(time.UTC), cron.WithLogger(cl), cron.WithChain(cron.SkipIfStillRunning(cl), cron.Recover(cl))),
		now:  time.Now,
		jobs: map[string]*job{},
		ctx:  context.Background(),
	}
	s.web = web.New(web.Config{
		Open:     d.Open,
		Errors:   d.StoreErrors,
		Jobs:     s.Jobs,
		Registry: reg,
		Logger:   logger,

		Providers:    cfg.Scrape.Providers,
		StaleAfter:   cfg.Serve.StaleAfter.Std(),
		QueryTimeout: cfg.Serve.QueryTimeout.Std(),
		// Half the pool: the scheduled jobs (a scrape loads up to scrape.parallelism batches at
		// once) and the gate's liveness checks keep connections of their own.
		MaxQueries:       cfg.ClickHouse.MaxOpenConns() / 2,
		DashboardRefresh: cfg.Serve.DashboardRefresh.Std(),
	})

	opts := d.Scrape.Options
	opts.Metrics = pipeline.NewMetrics(reg)
	if opts.Logger == nil {
		opts.Logger = logger
	}
	runner, err := pipeline.New(d.Scrape.Config, d.Scrape.Sources, d.Scrape.Sink, d.Scrape.History, opts)
	if err != nil {
		return nil, err
	}
	errs := []error{s.Schedule("scrape", cfg.Serve.ScrapeSchedule, func(ctx context.Context) (string, error) {
		rep, err := runner.Run(ctx)
		if err != nil {
			return string(schema.RunFailed), err
		}
		return string(rep.Status), nil
	})}
	if d.Optimize != nil {
		errs = append(errs, s.Schedule("optimize", cfg.Optimize.Schedule, d.Optimize))
	}
	if d.Report != nil {
		errs = append(errs, s.Schedule("report", cfg.Report.Schedule, d.Report))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Schedule adds a job at spec (a cron spec, UTC). The job's status and error are kept for
// /healthz. A panic inside fn propagates to cron's Recover, which logs it and carries on.
func (s *Service) Schedule(name, spec string, fn Job) error {
	j := &job{state: schema.JobState{Schedule: spec}}
	id, err := s.cron.AddFunc(spec, func() {
		s.mu.Lock()
		start := s.now().UTC()
		j.state.Running, j.state.LastStart = true, &start
		ctx := s.ctx
		s.mu.Unlock()
		status, err := "panicked", error(nil)
		defer func() {
			s.mu.Lock()
			finish := s.now().UTC()
			j.state.Running, j.state.LastFinish, j.state.LastStatus = false, &finish, status
			j.state.LastError = ""
			if err != nil {
				j.state.LastError = err.Error()
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
	j.entry = id
	s.mu.Lock()
	s.jobs[name] = j
	s.mu.Unlock()
	return nil
}

// Jobs returns the state of every scheduled job by name, with its next run.
func (s *Service) Jobs() map[string]schema.JobState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]schema.JobState, len(s.jobs))
	for name, j := range s.jobs {
		st := j.state
		if e := s.cron.Entry(j.entry); e.Valid() && !e.Next.IsZero() {
			next := e.Next.UTC()
			st.NextRun = &next
		}
		out[name] = st
	}
	return out
}

// Handler is the service's HTTP side (package web).
func (s *Service) Handler() http.Handler { return s.web }

// Run listens on serve.listen and serves until ctx is done (see Serve).
func (s *Service) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Serve.Listen)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve runs the scheduler and the HTTP server on ln until ctx is done, then shuts both down:
// the scheduler stops starting jobs, a job in flight gets serve.shutdown_grace to finish (the
// pipeline spools what it cannot load), and the HTTP server drains.
func (s *Service) Serve(ctx context.Context, ln net.Listener) error {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	httpSrv := &http.Server{Handler: s.web, ReadHeaderTimeout: 10 * time.Second}
	httpErr := make(chan error, 1)
	go func() { httpErr <- httpSrv.Serve(ln) }()
	s.cron.Start()
	s.mu.Lock()
	jobs := len(s.jobs)
	s.mu.Unlock()
	s.logger.Info("Serving", "addr", ln.Addr().String(), "jobs", jobs)

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

// cronLogger adapts slog to cron's logger interface.
type cronLogger struct{ l *slog.Logger }

func (c cronLogger) Info(msg string, kv ...any) { c.l.Debug("Cron: "+msg, kv...) }

func (c cronLogger) Error(err error, msg string, kv ...any) {
	c.l.Error("Cron: "+msg, append(kv, "err", err)...)
}
