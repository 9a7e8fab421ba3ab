package service

import (
	"runtime"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the service's own Prometheus metrics, registered on the registerer given to
// NewMetrics (no global registry): gpucost_build_info and, for every scheduled job, its runs by
// outcome, when it last succeeded and last failed, and how long its runs took. Every series of
// a job exists from the moment it is scheduled, at 0, so that an alert sees a count of 0 or a
// time of 0 (never) rather than nothing. The scrape's per-provider metrics are the pipeline's
// (pipeline.Metrics), on the same registry.
type Metrics struct {
	runs        *prometheus.CounterVec
	lastSuccess *prometheus.GaugeVec
	lastFailure *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them on reg, with gpucost_build_info for the
// given version (the binary's, stamped at build time), the Go that built it and the VCS
// revision it was built from ("unknown" when the build recorded none, as in a build without
// the repository's .git).
func NewMetrics(reg prometheus.Registerer, version string) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpucost_job_runs_total",
			Help: "Runs of each scheduled job (scrape, optimize, report) by outcome: ok, partial (some providers or teams failed), failed, panicked."},
			[]string{"job_name", "outcome"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpucost_job_last_success_timestamp_seconds",
			Help: "Unix time at which each scheduled job last finished with the outcome ok; 0 until it has since serve started."},
			[]string{"job_name"}),
		lastFailure: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpucost_job_last_failure_timestamp_seconds",
			Help: "Unix time at which each scheduled job last finished with any other outcome (partial, failed, panicked); 0 until it has since serve started."},
			[]string{"job_name"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpucost_job_duration_seconds",
			Help: "How long each run of each scheduled job took, whatever its outcome.", Buckets: prometheus.ExponentialBuckets(0.5, 2, 13)},
			[]string{"job_name"}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "gpucost_build_info",
		Help:        "Always 1; its labels say which gpucost runs: the version, the Go that built it and the VCS revision.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version(), "revision": revision()}})
	build.Set(1)
	reg.MustRegister(m.runs, m.lastSuccess, m.lastFailure, m.duration, build)
	return m
}

// add creates every series of the job name, at 0.
func (m *Metrics) add(name string) {
	for _, o := range outcomes {
		m.runs.WithLabelValues(name, string(o))
	}
	m.lastSuccess.WithLabelValues(name)
	m.lastFailure.WithLabelValues(name)
	m.duration.WithLabelValues(name)
}

// observe records a run of the job name that started at start, finished at finish and ended
// with outcome o.
func (m *Metrics) observe(name string, o Outcome, start, finish time.Time) {
	m.runs.WithLabelValues(name, string(o)).Inc()
	m.duration.WithLabelValues(name).Observe(finish.Sub(start).Seconds())
	at := float64(finish.UnixNano()) / 1e9
	if o == OK {
		m.lastSuccess.WithLabelValues(name).Set(at)
	} else {
		m.lastFailure.WithLabelValues(name).Set(at)
	}
}

// revision is the VCS revision the binary was built from, as the Go toolchain recorded it.
func revision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}
