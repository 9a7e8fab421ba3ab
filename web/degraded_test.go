package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

// delayedStore answers like the store it wraps, after a delay on History: a query that a real
// store would run long on a wide request. The gate's liveness check still goes to the real
// store, which answers.
type delayedStore struct {
	Reader
	delay time.Duration
}

func (d delayedStore) History(ctx context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error) {
	select {
	case <-time.After(d.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return d.Reader.History(ctx, q)
}

// TestServeSlowQueryIs504: a query that runs past serve.query_timeout on a store that answers is
// a 504 that asks to narrow the request, not a 503.
func TestServeSlowQueryIs504(t *testing.T) {
	fx := storetest.NewHistory(t)
	open := func(context.Context) (Reader, error) { return delayedStore{fx.Store, 3 * time.Second}, nil }
	gate := newStoreGate(5, 1500*time.Millisecond, func(ctx context.Context) error { _, err := fx.Store.SchemaVersion(ctx); return err }, storeErrors)
	mux := http.NewServeMux()
	newAnalytics(open, gate, time.Minute, time.Now, slog.New(slog.DiscardHandler)).mount(mux)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	start := time.Now()
	resp, err := http.Get(ts.URL + "/api/v1/history?gpu=H100-SXM-80GB&interval=hour&since=40d")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("slow query: %d in %s", resp.StatusCode, time.Since(start).Round(time.Millisecond))
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(string(body), "narrow the request") {
		t.Errorf("a slow query on a live store: %d %s, want 504 narrow the request", resp.StatusCode, body)
	}
	if resp, err := http.Get(ts.URL + "/api/v1/offers"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("a quick query after the slow one: %v %v", resp.StatusCode, err)
	}
}

// countingStore counts the queries that reach the store it wraps.
type countingStore struct {
	Reader
	offers, history *atomic.Int64
}

func (c countingStore) LatestOffers(ctx context.Context, f schema.OfferFilter) ([]schema.Offer, error) {
	c.offers.Add(1)
	return c.Reader.LatestOffers(ctx, f)
}

func (c countingStore) LatestPerGPU(ctx context.Context, f schema.OfferFilter) ([]market.GPU, error) {
	c.offers.Add(1)
	return c.Reader.LatestPerGPU(ctx, f)
}

func (c countingStore) History(ctx context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error) {
	c.history.Add(1)
	return c.Reader.History(ctx, q)
}

// TestDashboardLoadDoesNotMultiplyQueries: 400 requests for the dashboard at once, then 400
// more, cost the store one read of its tables (one offers query). The chart's history is not
// read here: the browser asks the API for it.
func TestDashboardLoadDoesNotMultiplyQueries(t *testing.T) {
	fx := storetest.NewHistory(t)
	var offers, history atomic.Int64
	open := func(context.Context) (Reader, error) { return countingStore{fx.Store, &offers, &history}, nil }
	gate := newStoreGate(5, 10*time.Second, func(ctx context.Context) error { _, err := fx.Store.SchemaVersion(ctx); return err }, storeErrors)
	mux := http.NewServeMux()
	newAnalytics(open, gate, time.Minute, time.Now, slog.New(slog.DiscardHandler)).mount(mux)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 400}}
	for round := 0; round < 2; round++ {
		var wg sync.WaitGroup
		var bad atomic.Int64
		for i := 0; i < 400; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(ts.URL + "/")
				if err != nil {
					bad.Add(1)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "H100-SXM-80GB") {
					bad.Add(1)
				}
			}()
		}
		wg.Wait()
		if bad.Load() > 0 {
			t.Errorf("round %d: %d of 400 dashboard requests failed", round, bad.Load())
		}
	}
	if offers.Load() != 1 || history.Load() != 0 {
		t.Errorf("800 dashboard requests made %d offers and %d history queries, want 1 and 0", offers.Load(), history.Load())
	}
}
