package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

// pacing is a source that keeps pauses pauses of pause between requests, announcing each with
// its run's Pace when announce is set, then hangs when hang is set (a server that stalls), else
// returns one offer. It reports what its context said at the end.
func pacing(name string, pauses int, pause time.Duration, announce, hang bool) fakeSource {
	return fakeSource{name, func(ctx context.Context, run schema.Run) (schema.Extract, error) {
		for range pauses {
			if announce {
				run.Pace(pause)
			}
			select {
			case <-ctx.Done():
				return schema.Extract{}, fmt.Errorf("%s: pausing: %w", name, ctx.Err())
			case <-time.After(pause):
			}
		}
		if hang {
			// A context derived from the fetch's reports the deadline as a deadline, as a
			// request's would.
			req, cancel := context.WithTimeout(ctx, time.Hour)
			defer cancel()
			<-req.Done()
			return schema.Extract{}, fmt.Errorf("%s: request: %w", name, req.Err())
		}
		return schema.Extract{Offers: []schema.Offer{offer(name+"-1", "H100-SXM-80GB", 1, "2")}}, nil
	}}
}

// TestSourceDeadlineFollowsTheWork: the deadline is SourceTimeout of work plus the pauses a
// source announces, at most SourceTimeoutMax; a source that stalls still fails after its work
// allowance, and a source that does not announce its pauses gets no more than SourceTimeout.
func TestSourceDeadlineFollowsTheWork(t *testing.T) {
	const work, pause = 300 * time.Millisecond, 60 * time.Millisecond
	tests := []struct {
		name     string
		cfg      pipeline.Config
		source   fakeSource
		wantErr  string        // "" = ok
		minTook  time.Duration // the run lasted at least this long
		maxTook  time.Duration
		wantText []string
	}{
		{
			name:    "ten announced pauses of 60ms fit a 300ms work allowance",
			cfg:     pipeline.Config{SourceTimeout: work, SourceTimeoutMax: 10 * time.Second},
			source:  pacing("paced", 10, pause, true, false),
			minTook: 10 * pause, maxTook: 5 * time.Second,
		},
		{
			name:    "the same plan unannounced runs out after the work allowance",
			cfg:     pipeline.Config{SourceTimeout: work, SourceTimeoutMax: 10 * time.Second},
			source:  pacing("unannounced", 10, pause, false, false),
			wantErr: "deadline passed after 300ms: 300ms of work",
			minTook: work, maxTook: 2 * time.Second,
			wantText: []string{"context deadline exceeded"},
		},
		{
			name:    "announced pauses stop at the cap",
			cfg:     pipeline.Config{SourceTimeout: work, SourceTimeoutMax: 700 * time.Millisecond},
			source:  pacing("greedy", 50, pause, true, false),
			wantErr: "capped at 700ms",
			minTook: 700 * time.Millisecond, maxTook: 3 * time.Second,
			wantText: []string{"context deadline exceeded"},
		},
		{
			name:    "a source that stalls after its pauses fails after work plus pauses, not at the cap",
			cfg:     pipeline.Config{SourceTimeout: work, SourceTimeoutMax: 20 * time.Second},
			source:  pacing("stalling", 3, pause, true, true),
			wantErr: "deadline passed after 480ms: 300ms of work and 180ms of announced pauses",
			minTook: work + 3*pause, maxTook: 3 * time.Second,
			wantText: []string{"request: context deadline exceeded"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMemStore()
			r := newRunner(t, tt.cfg, st, pipeline.Options{}, tt.source)
			start := time.Now()
			rep, err := r.Run(context.Background())
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if took < tt.minTook || took > tt.maxTook {
				t.Errorf("run took %v, want between %v and %v", took, tt.minTook, tt.maxTook)
			}
			p := rep.Providers[0]
			if tt.wantErr == "" {
				if p.Status != schema.RunOK {
					t.Fatalf("status %s, error %q; want ok", p.Status, p.Error)
				}
				return
			}
			if p.Status != schema.RunFailed || !strings.Contains(p.Error, tt.wantErr) {
				t.Fatalf("status %s, error %q; want failed with %q", p.Status, p.Error, tt.wantErr)
			}
			for _, w := range tt.wantText {
				if !strings.Contains(p.Error, w) {
					t.Errorf("error %q does not say %q", p.Error, w)
				}
			}
		})
	}
}

// TestSourceDeadlineKeepsTheRunsCancellation: a run cancelled (SIGTERM) cancels the fetch at
// once, whatever pauses were announced, and is not reported as a deadline.
func TestSourceDeadlineKeepsTheRunsCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src := fakeSource{"cancelled", func(fctx context.Context, run schema.Run) (schema.Extract, error) {
		run.Pace(time.Hour)
		cancel()
		<-fctx.Done()
		return schema.Extract{}, fmt.Errorf("cancelled: %w", fctx.Err())
	}}
	rep, err := newRunner(t, pipeline.Config{SourceTimeout: time.Minute}, newMemStore(), pipeline.Options{}, src).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Providers[0]
	if !strings.Contains(p.Error, context.Canceled.Error()) || strings.Contains(p.Error, "deadline") {
		t.Errorf("error %q: want the cancellation, not a deadline", p.Error)
	}
}

// TestRunPaceMovesTheDeadline: a source that announces its pauses through the run it is handed
// (schema.Run.Pace, as the scrapers do) gets its deadline moved out by them: ten pauses of 60ms
// fit a 300ms work allowance.
func TestRunPaceMovesTheDeadline(t *testing.T) {
	const pause = 60 * time.Millisecond
	src := fakeSource{"paced", func(ctx context.Context, run schema.Run) (schema.Extract, error) {
		for range 10 {
			run.Pace(pause)
			select {
			case <-ctx.Done():
				return schema.Extract{}, fmt.Errorf("paced: pausing: %w", ctx.Err())
			case <-time.After(pause):
			}
		}
		return schema.Extract{Offers: []schema.Offer{offer("paced-1", "H100-SXM-80GB", 1, "2")}}, nil
	}}
	r := newRunner(t, pipeline.Config{SourceTimeout: 300 * time.Millisecond, SourceTimeoutMax: 10 * time.Second}, nil, pipeline.Options{DryRun: true}, src)
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.Providers[0]; p.Status != schema.RunOK {
		t.Errorf("status %s (%s), want ok: the pauses announced through the run did not move the deadline", p.Status, p.Error)
	}
}
