package plans_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/schema"
)

// noOffers is a store with an empty market: the plans below are about measuring.
type noOffers struct{}

func (noOffers) LatestOffersToPlan(context.Context, schema.OfferFilter) ([]schema.Offer, error) {
	return nil, nil
}
func (noOffers) LastGoodRuns(context.Context) ([]schema.ScrapeRun, error) { return nil, nil }

var _ plans.Offers = noOffers{}

// measurer answers from MeasureFn, counting the calls in flight.
type measurer struct {
	MeasureFn         func(selector string, end time.Time) (schema.GPUUsage, error)
	inFlight, maxSeen atomic.Int32
	mu                sync.Mutex
	selectors         []string
}

func (m *measurer) Measure(ctx context.Context, selector string, end time.Time) (schema.GPUUsage, error) {
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		seen := m.maxSeen.Load()
		if n <= seen || m.maxSeen.CompareAndSwap(seen, n) {
			break
		}
	}
	m.mu.Lock()
	m.selectors = append(m.selectors, selector)
	m.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // long enough for the others to start
	return m.MeasureFn(selector, end)
}

var _ plans.Measurer = (*measurer)(nil)

// TestMakeMeasuresTheWorkloadsWithASelector: every workload with a metrics_selector is
// measured up to the plan's time, a few at once; a failed measurement becomes the workload's
// caveat and a log line, never the plan's failure; the file given is left as it was.
func TestMakeMeasuresTheWorkloadsWithASelector(t *testing.T) {
	var doc strings.Builder
	doc.WriteString("teams:\n  - name: search\n    email: search@example.com\n    workloads:\n")
	for i := range 10 {
		fmt.Fprintf(&doc, "      - name: w%d\n        kind: custom\n        min_vram_gb_per_gpu: 10\n        current: {provider: p, gpu_model: H100-SXM-80GB, metrics_selector: 'pod=\"w%d\"'}\n", i, i)
	}
	doc.WriteString("      - name: unmeasured\n        kind: custom\n        min_vram_gb_per_gpu: 10\n        current: {provider: p, gpu_model: H100-SXM-80GB}\n")
	wl, err := optimizer.ParseWorkloads("teams.yaml", []byte(doc.String()))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 4, 2, 30, 0, 0, time.UTC)
	m := &measurer{MeasureFn: func(selector string, end time.Time) (schema.GPUUsage, error) {
		if !end.Equal(now) {
			return schema.GPUUsage{}, fmt.Errorf("measured up to %s, not the plan's time", end)
		}
		if selector == `pod="w3"` {
			return schema.GPUUsage{}, errors.New(`reading the GPU utilization of {pod="w3"}: no GPU series matched`)
		}
		return schema.GPUUsage{Share: 0.5, GPUs: 1, From: end.Add(-time.Hour), To: end}, nil
	}}
	var logs bytes.Buffer
	today, err := plans.Make(context.Background(), noOffers{}, plans.Measuring{Measurer: m, Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		wl, optimizer.DefaultOptions(), now)
	if err != nil {
		t.Fatalf("a failed measurement failed the plan: %v", err)
	}
	if len(m.selectors) != 10 || m.maxSeen.Load() > 4 || m.maxSeen.Load() < 2 {
		t.Errorf("%d measurements, at most %d at once; want 10, a few (≤ 4) at once", len(m.selectors), m.maxSeen.Load())
	}
	for _, w := range today.Plan.Teams[0].Workloads {
		caveats := strings.Join(w.Caveats, "; ")
		switch w.Name {
		case "w3":
			if w.MeasuredUtilization != nil || !strings.Contains(caveats, `utilization not measured: reading the GPU utilization of {pod="w3"}: no GPU series matched`) {
				t.Errorf("w3: measured %+v, caveats %q", w.MeasuredUtilization, w.Caveats)
			}
		case "unmeasured":
			if w.MeasuredUtilization != nil || strings.Contains(caveats, "measured") {
				t.Errorf("a workload without a selector: measured %+v, caveats %q", w.MeasuredUtilization, w.Caveats)
			}
		default:
			if w.MeasuredUtilization == nil || w.MeasuredUtilization.Share != 0.5 {
				t.Errorf("%s: measured %+v", w.Name, w.MeasuredUtilization)
			}
		}
	}
	if got := logs.String(); strings.Count(got, "GPU utilization not measured") != 1 || !strings.Contains(got, "workload=w3") {
		t.Errorf("logs:\n%s", got)
	}
	for _, w := range wl.Teams[0].Workloads {
		if w.Measured != nil || w.Unmeasured != "" {
			t.Fatalf("Make changed the file given: %s measured %+v, unmeasured %q", w.Name, w.Measured, w.Unmeasured)
		}
	}

	// No measurer: nothing is measured, nothing is said.
	today, err = plans.Make(context.Background(), noOffers{}, plans.Measuring{}, wl, optimizer.DefaultOptions(), now)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range today.Plan.Teams[0].Workloads {
		if w.MeasuredUtilization != nil || strings.Contains(strings.Join(w.Caveats, "; "), "measured") {
			t.Errorf("no measurer: %s measured %+v, caveats %q", w.Name, w.MeasuredUtilization, w.Caveats)
		}
	}
}
