package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// Lazy is a Store opened on first use: the call that needs it opens it, and a call after an open
// that failed tries again. So a scrape started while ClickHouse is down still runs: its batches
// fail to load as unavailable (schema.ErrUnavailable) and wait in the pipeline's spool, and a
// later call finds the server back. Like a Store, it is the pipeline's Sink and History, and it
// is safe for concurrent use.
type Lazy struct {
	dsn  string
	opts Options

	mu sync.Mutex
	s  *Store
}

// NewLazy returns a Lazy that opens the store with Open(ctx, dsn, opts) when first used.
func NewLazy(dsn string, opts Options) *Lazy {
	return &Lazy{dsn: dsn, opts: opts}
}

// Store returns the store, opening it if no earlier call did.
func (l *Lazy) Store(ctx context.Context) (*Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		return l.s, nil
	}
	s, err := Open(ctx, l.dsn, l.opts)
	if err != nil {
		return nil, err
	}
	l.s = s
	return s, nil
}

// LoadBatch is Store.LoadBatch. A store that cannot be opened is unavailable: the batch is not
// at fault.
func (l *Lazy) LoadBatch(ctx context.Context, b schema.Batch) (skipped bool, err error) {
	s, err := l.Store(ctx)
	if err != nil {
		return false, fmt.Errorf("%w: %w", schema.ErrUnavailable, err)
	}
	return s.LoadBatch(ctx, b)
}

// LastGoodRuns is Store.LastGoodRuns.
func (l *Lazy) LastGoodRuns(ctx context.Context) ([]schema.ScrapeRun, error) {
	s, err := l.Store(ctx)
	if err != nil {
		return nil, err
	}
	return s.LastGoodRuns(ctx)
}

// LatestPrices is Store.LatestPrices.
func (l *Lazy) LatestPrices(ctx context.Context, provider string) (map[schema.Key]decimal.Decimal, error) {
	s, err := l.Store(ctx)
	if err != nil {
		return nil, err
	}
	return s.LatestPrices(ctx, provider)
}

// Close closes the store if it was opened.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Close()
}
