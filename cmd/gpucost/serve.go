package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/service"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/web"
)

const serveHelp = `Run gpucost as a service: a scheduler (UTC cron) that runs the scrape (serve.scrape_schedule,
and once as it starts unless serve.scrape_on_start is false), the nightly plan
(optimize.schedule) and the weekly report email (report.schedule), and an HTTP server on
serve.listen with
  /livez       200 while the process serves HTTP: the liveness probe
  /readyz      200 while ClickHouse answers gpucost's check within a second, else 503 with the
               reason: the readiness probe (provider freshness plays no part)
  /healthz     the last run of each provider and its staleness (503 when a provider's last good
               run is older than serve.stale_after, or the run log cannot be read), and the
               state of each job: for people and alerting, never a probe
  /metrics     Prometheus metrics: each job's runs by outcome, last success and failure and
               durations, gpucost_build_info, the scrapes' offers, rejects and HTTP attempts
  /api/v1/...  offers and price changes in cursor pages, history, value per dollar, the latest
               plan and the GPU catalog as JSON, one versioned envelope each, described at
               /api/v1/openapi.json (and in docs/analysts.md)
  /            a dashboard: a price-history chart of the GPU model and range you pick, drawn in
               the browser from the API, and the cheapest offer per GPU model (on-demand, spot,
               commitment, serverless) and $ per TFLOP-hour, their data read at most every
               serve.dashboard_refresh (1m) and served from memory in between.
The API and the dashboard run at most half of the DSN's max_open_conns queries at once, each
within serve.query_timeout: a store that is down or paused is a 503 within about two seconds,
a query that is slow on a store that answers a 504.
A job still running when its next time comes is skipped; a job that panics is logged and the
service carries on. On SIGTERM or SIGINT the scheduler stops, the run in flight finishes or
spools its batches (within serve.shutdown_grace), and the process exits 0.`

func serveCommand(e env) *cobra.Command {
	var cf configFlag
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "run the scheduled jobs with probes, /metrics, the JSON API and the dashboard",
		Long:  serveHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := cf.load(e)
			if err != nil {
				return err
			}
			svc, st, err := newService(cfg, e, newLogger(e.stderr, cfg.Log))
			if err != nil {
				return err
			}
			defer st.Close()
			return svc.Run(cmd.Context())
		},
	}
	cf.add(cmd)
	return cmd
}

// newService assembles gpucost serve from cfg: the store, opened on first use, the enabled
// providers' sources, the nightly plan and the weekly report. The caller closes the store.
func newService(cfg config.Config, e env, logger *slog.Logger) (*service.Service, *store.Lazy, error) {
	st := newLazyStore(cfg.ClickHouse, logger, nil)
	sources, err := buildSources(cfg, e, logger, nil, sourceOptions{})
	if err != nil {
		return nil, nil, &usageError{err: err}
	}
	svc, err := service.New(cfg, service.Deps{
		Open: func(ctx context.Context) (web.Store, error) {
			s, err := st.Store(ctx)
			if err != nil {
				return nil, err
			}
			return s, nil
		},
		StoreErrors: web.StoreErrors{Busy: store.Busy, Refused: store.Refused, Unreachable: store.Unreachable},
		Scrape: service.Scrape{Config: cfg.Scrape.Pipeline(), Sources: sources, Sink: st, History: st,
			Options: pipeline.Options{Logger: logger, Redactor: e.secrets}},
		Optimize: func(ctx context.Context) (service.Result, error) {
			plan, err := optimizeOnce(ctx, cfg, e, logger, true)
			if err != nil {
				return service.Result{Outcome: service.Failed}, err
			}
			return service.Result{Outcome: service.OK, Status: fmt.Sprintf("ok: %d workloads, saves %s/month", plan.Totals.Workloads, money.USD(plan.Totals.SavingsUSDPerMonth))}, nil
		},
		Report: func(ctx context.Context) (service.Result, error) {
			outcome, err := sendWeekly(ctx, cfg, e, logger)
			return service.Result{Outcome: service.Outcome(outcome)}, err
		},
		Version: version,
		Logger:  logger,
	})
	if err != nil {
		return nil, nil, &usageError{err: err}
	}
	return svc, st, nil
}
