// Package service is gpucost serve, the long-running process: a scheduler (UTC cron) that runs
// the scrape (and, with serve.scrape_on_start, once at start-up), the nightly plan and the
// weekly report, the state of each of those jobs and their metrics, the Prometheus registry,
// and the HTTP server of package web, from listening to a graceful shutdown within
// serve.shutdown_grace. What the jobs do comes from its caller: the scrape's sources, sink and
// history, and the other jobs as functions; the store the HTTP side reads, as a function that
// opens it.
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
// shutdown, and returns its result and, unless the outcome is OK, why. A job that panics is
// logged and counted as Panicked; the service carries on.
type Job func(ctx context.Context) (Result, error)

// Result is what one run of a job says of itself.
type Result struct {
	// Outcome is counted by gpucost_job_runs_total. A job that returns an error counts as
	// Failed unless it says Partial.
	Outcome Outcome
	// Status is the job's own word for the run (a plan's totals), which /healthz reports as the
	// job's last_status; empty, the outcome is reported.
	Status string
}

// Outcome is how one run of a job went: the outcome label of gpucost_job_runs_total.
type Outcome string

// The outcomes of a run.
const (
	OK       Outcome = "ok"       // the job did all its work
	Partial  Outcome = "partial"  // part of it failed: some providers of a scrape, some teams of a report
	Failed   Outcome = "failed"   // the job failed
	Panicked Outcome = "panicked" // the job panicked; the service carried on
)

// outcomes are every outcome a run can have: the series each job has from the start.
var outcomes = []Outcome{OK, Partial, Failed, Panicked}

// outcome is the outcome r and err count as: Partial and Failed as the job says, any other
// Failed with an error and OK without.
func (r Result) outcome(err error) Outcome {
	switch {
	case r.Outcome == Partial || r.Outcome == Failed:
		return r.Outcome
	case err != nil:
		return Failed
	}
	return OK
}

// status is what /healthz reports of a run with outcome o.
func (r Result) status(o Outcome) string {
	if r.Status != "" {
		return r.Status
	}
	return string(o)
}

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
	// Version is the binary's version, the version label of gpucost_build_info.
	Version string
	Logger  *slog.Logger // nil discards
}

// Service is gpucost serve: build it with New, then Run it.
type Service struct {
	cfg     config.Config
	logger  *slog.Logger
	cron    *cron.Cron
	web     *web.Handler
	metrics *Metrics
	now     func() time.Time
	startup sync.WaitGroup // the start-up scrape, which cron does not wait for

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
		cfg:     cfg,
		logger:  logger,
		metrics: NewMetrics(reg, d.Version),
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
	errs := []error{s.Schedule(scrapeJob, cfg.Serve.ScrapeSchedule, func(ctx context.Context) (Result, error) {
		rep, err := runner.Run(ctx)
		if err != nil {
			return Result{Outcome: Failed}, err
		}
		return Result{Outcome: scrapeOutcome(rep.Status)}, nil
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

// scrapeJob is the name of the scrape's job: in /healthz, the logs and the job_name label.
const scrapeJob = "scrape"

// scrapeOutcome is the outcome of a scrape run whose status is st.
func scrapeOutcome(st schema.RunStatus) Outcome {
	switch st {
	case schema.RunOK:
		return OK
	case schema.RunPartial:
		return Partial
	}
	return Failed
}

// Schedule adds a job at spec (a cron spec, UTC). The job's state is kept for /healthz and its
// runs are counted in the service's metrics, whose series for it exist from now on. A panic
// inside fn is counted, then propagates to cron's Recover, which logs it and carries on.
func (s *Service) Schedule(name, spec string, fn Job) error {
	j := &job{state: schema.JobState{Schedule: spec}}
	id, err := s.cron.AddFunc(spec, func() {
		s.mu.Lock()
		start := s.now().UTC()
		j.state.Running, j.state.LastStart = true, &start
		ctx := s.ctx
		s.mu.Unlock()
		res, outcome, err := Result{}, Panicked, error(nil)
		defer func() {
			finish := s.now().UTC()
			s.metrics.observe(name, outcome, start, finish)
			s.mu.Lock()
			j.state.Running, j.state.LastFinish, j.state.LastStatus = false, &finish, res.status(outcome)
			j.state.LastError = ""
			if err != nil {
				j.state.LastError = err.Error()
			}
			s.mu.Unlock()
		}()
		s.logger.Info("Job started", "job", name)
		res, err = fn(ctx)
		outcome = res.outcome(err)
		attrs := []any{"job", name, "outcome", outcome, "status", res.status(outcome), "duration_seconds", s.now().Sub(start).Seconds()}
		if err != nil {
			attrs = append(attrs, "err", err)
		}
		switch outcome {
		case OK:
			s.logger.Info("Job finished", attrs...)
		case Partial:
			s.logger.Warn("Job partly failed", attrs...)
		default:
			s.logger.Error("Job failed", attrs...)
		}
	})
	if err != nil {
		return fmt.Errorf("job %s: schedule %q: %w", name, spec, err)
	}
	j.entry = id
	s.metrics.add(name)
	s.mu.Lock()
	s.jobs[name] = j
	s.mu.Unlock()
	return nil
}

// runNow runs the job name at once, outside its schedule but through the same wrappers: a run
// of it still in flight makes this one skip, and a panic is recovered. Serve waits for it at
// shutdown.
func (s *Service) runNow(name string) {
	s.mu.Lock()
	j := s.jobs[name]
	s.mu.Unlock()
	run := s.cron.Entry(j.entry).WrappedJob
	s.startup.Add(1)
	go func() {
		defer s.startup.Done()
		run.Run()
	}()
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
// pipeline spools what it cannot load), and the HTTP server drains. With serve.scrape_on_start
// it also starts a scrape at once; its failure is logged and counted like any run's, and serving
// goes on.
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
	if s.cfg.Serve.ScrapeOnStart {
		s.logger.Info("Scraping at start-up (serve.scrape_on_start)")
		s.runNow(scrapeJob)
	}

	var err error
	select {
	case <-ctx.Done():
	case err = <-httpErr:
	}
	s.logger.Info("Shutting down")
	grace := s.cfg.Serve.ShutdownGrace.Std()
	stopped := make(chan struct{})
	go func() {
		<-s.cron.Stop().Done()
		s.startup.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
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
