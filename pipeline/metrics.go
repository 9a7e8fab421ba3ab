package pipeline

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpucost/gpucost/schema"
)

// Metrics are the pipeline's Prometheus metrics, registered on the registerer given to
// NewMetrics (no global registry). A nil *Metrics records nothing.
type Metrics struct {
	runs        *prometheus.CounterVec
	loaded      *prometheus.CounterVec
	rejected    *prometheus.CounterVec
	attempts    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	lastSuccess *prometheus.GaugeVec
	spooledB    *prometheus.CounterVec
	spoolFiles  prometheus.Gauge
	quarantineB *prometheus.CounterVec
	quarantineF prometheus.Gauge
}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpucost_scrape_runs_total",
			Help: "Provider scrapes by outcome (ok, partial, failed)."}, []string{"provider", "status"}),
		loaded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpucost_scrape_offers_loaded_total",
			Help: "Offers that passed validation and were loaded or spooled."}, []string{"provider"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpucost_scrape_offers_rejected_total",
			Help: "Offers rejected by validation, by reason."}, []string{"provider", "reason"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpucost_scrape_http_attempts_total",
			Help: "HTTP attempts made by sources, retries included."}, []string{"provider"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpucost_scrape_duration_seconds",
			Help: "Time each provider's fetch took.", Buckets: prometheus.ExponentialBuckets(0.25, 2, 11)}, []string{"provider"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpucost_scrape_last_success_timestamp_seconds",
			Help: "Unix time of the last ok or partial scrape of each provider; alert when it gets old."}, []string{"provider"}),
		spooledB: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpucost_spooled_batches_total",
			Help: "Batches written to the spool because the store could not take them."}, []string{"provider"}),
		spoolFiles: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gpucost_spool_batches",
			Help: "Batches waiting in the spool after the last run."}),
		quarantineB: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpucost_quarantined_batches_total",
			Help: "Batches moved to the spool's quarantine folder because they will not load."}, []string{"provider"}),
		quarantineF: prometheus.NewGauge(prometheus.GaugeOpts{Name: "gpucost_spool_quarantined_batches",
			Help: "Batches in the spool's quarantine folder after the last run; an operator must look at them."}),
	}
	reg.MustRegister(m.runs, m.loaded, m.rejected, m.attempts, m.duration, m.lastSuccess, m.spooledB, m.spoolFiles, m.quarantineB, m.quarantineF)
	return m
}

func (m *Metrics) observe(p ProviderReport, at time.Time) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(p.Provider, string(p.Status)).Inc()
	m.loaded.WithLabelValues(p.Provider).Add(float64(p.Loaded))
	for reason, n := range p.Rejected {
		m.rejected.WithLabelValues(p.Provider, reason).Add(float64(n))
	}
	m.attempts.WithLabelValues(p.Provider).Add(float64(p.Attempts))
	m.duration.WithLabelValues(p.Provider).Observe(p.Duration.Seconds())
	if p.Status != schema.RunFailed {
		m.lastSuccess.WithLabelValues(p.Provider).Set(float64(at.Unix()))
	}
}

func (m *Metrics) spooled(provider string) {
	if m == nil {
		return
	}
	m.spooledB.WithLabelValues(provider).Inc()
}

func (m *Metrics) quarantined(provider string) {
	if m == nil {
		return
	}
	m.quarantineB.WithLabelValues(provider).Inc()
}

// spoolSize counts the batches waiting in the spool and those in its quarantine, and sets the
// gauges to them. A folder that cannot be listed counts -1 and leaves its gauge as it was.
func (m *Metrics) spoolSize(s *spool) (waiting, quarantined int) {
	waiting, quarantined = -1, -1
	if files, err := s.list(); err == nil {
		waiting = len(files)
		if m != nil {
			m.spoolFiles.Set(float64(waiting))
		}
	}
	if files, err := s.quarantined(); err == nil {
		quarantined = len(files)
		if m != nil {
			m.quarantineF.Set(float64(quarantined))
		}
	}
	return waiting, quarantined
}
