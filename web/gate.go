package web

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The store gate's liveness check: a query still running after storeProbeAfter makes the gate
// ask the store a trivial question, and a store that does not answer within storeProbeTimeout
// is unavailable. A check's answer holds for storeProbeFresh.
const (
	storeProbeAfter   = time.Second
	storeProbeTimeout = time.Second
	storeProbeFresh   = time.Second
)

// Errors of storeGate.do, which the API and the dashboard turn into status codes.
var (
	// errStoreUnavailable: the store cannot be reached or does not answer (503).
	errStoreUnavailable = errors.New("the price store is unavailable")
	// errStoreBusy: every query slot stayed taken for the whole request deadline (503).
	errStoreBusy = errors.New("the price store is busy")
	// errQueryTooSlow: the store answers, but this query ran past its deadline (504).
	errQueryTooSlow = errors.New("the query took too long")
)

// storeGate runs the store reads of gpucost serve's HTTP side (the JSON API, the dashboard,
// /healthz): at most len(slots) at once, so that load queues here instead of exhausting the
// driver's connection pool (which answers "acquire conn timeout"), each under a deadline that
// covers the wait and the query. It tells a store that is down or paused (a query hangs and the
// liveness check gets no answer either) from a query that is merely slow on a store that
// answers, and once the store is known to be down, requests fail at once instead of each
// hanging until its deadline. It is safe for concurrent use.
type storeGate struct {
	slots   chan struct{}
	timeout time.Duration               // deadline of one request: the wait for a slot and the query
	probe   func(context.Context) error // the liveness check: a trivial query
	errs    StoreErrors                 // what the store's errors mean
	now     func() time.Time

	mu       sync.Mutex
	checked  time.Time     // when the last check ended
	checkErr error         // its outcome
	checking chan struct{} // closed when the check in flight ends; nil when none runs
	probing  bool          // a probe goroutine is still running (it may outlive its check)
	down     chan struct{} // closed when a check finds the store down; replaced when it answers
}

// newStoreGate returns a gate letting slots queries run at once, each request within timeout,
// that sorts the store's errors by errs.
func newStoreGate(slots int, timeout time.Duration, probe func(context.Context) error, errs StoreErrors) *storeGate {
	if slots < 1 {
		slots = 1
	}
	return &storeGate{slots: make(chan struct{}, slots), timeout: timeout, probe: probe, errs: errs, now: time.Now, down: make(chan struct{})}
}

// do runs fn once a slot is free, with a context that ends at the request's deadline. Its error
// is fn's, or one of errStoreUnavailable, errStoreBusy and errQueryTooSlow (wrapping the cause),
// or ctx's own when the caller went away. do may return before fn does (a store that stopped
// answering is not waited for; fn's context is cancelled): after an error, the caller must not
// read what fn writes.
func (g *storeGate) do(ctx context.Context, fn func(ctx context.Context) error) error {
	// A store found down a moment ago is not asked again; after that, one check (shared by
	// every request) decides before any query is sent.
	if err := g.knownDown(ctx); err != nil {
		return err
	}
	qctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	g.mu.Lock()
	down := g.down
	g.mu.Unlock()
	select {
	case g.slots <- struct{}{}:
	case <-down:
		return fmt.Errorf("%w: it did not answer a check within %s", errStoreUnavailable, storeProbeTimeout)
	case <-qctx.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: no query slot came free within %s", errStoreBusy, g.timeout)
	}
	started := g.now()
	done := make(chan error, 1)
	go func() {
		defer func() { <-g.slots }() // the slot is held until fn has really returned
		done <- fn(qctx)
	}()
	slow := time.NewTimer(storeProbeAfter)
	defer slow.Stop()
	var check <-chan error
	for {
		select {
		case err := <-done:
			return g.classify(ctx, qctx, g.now().Sub(started), err)
		case <-slow.C:
			check = g.check(ctx)
		case err := <-check:
			if err != nil {
				cancel()
				return fmt.Errorf("%w: %v", errStoreUnavailable, err)
			}
			// The store answers; check again while the query runs, in case it stops.
			check = nil
			slow.Reset(storeProbeFresh)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// classify names the outcome of a query that returned after running for ran: a deadline passed
// on a store that answers its checks is a slow query, unless the query had less than half the
// deadline left after waiting for its slot (the store is busy, not the query wide); a pool that
// had no connection left is a busy store; a broken connection makes the next requests check the
// store first; an error of gpucost's own (a value it cannot read) is returned as it is.
func (g *storeGate) classify(ctx, qctx context.Context, ran time.Duration, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case qctx.Err() != nil:
		// The deadline passed (the driver may say so as an i/o timeout). The store answered a
		// check during the query (one runs after storeProbeAfter), else do would have returned.
		if cerr := <-g.check(ctx); cerr != nil {
			return fmt.Errorf("%w: %v", errStoreUnavailable, cerr)
		}
		if ran < g.timeout/2 {
			return fmt.Errorf("%w: the wait for a query slot left the query %s of its %s", errStoreBusy, ran.Round(time.Millisecond), g.timeout)
		}
		return fmt.Errorf("%w (%s): %v", errQueryTooSlow, g.timeout, err)
	case is(g.errs.Busy, err):
		return fmt.Errorf("%w: %v", errStoreBusy, err)
	case is(g.errs.Refused, err):
		return fmt.Errorf("%w: %v", errStoreUnavailable, err) // the server refused the query
	case is(g.errs.Unreachable, err):
		// The connection failed. The next requests check first.
		g.record(err)
		return fmt.Errorf("%w: %v", errStoreUnavailable, err)
	}
	return err // not the store's fault (a value gpucost cannot read): the store stays up
}

// is reports whether kind, when set, says err is of its kind.
func is(kind func(error) bool, err error) bool { return kind != nil && kind(err) }

// knownDown returns errStoreUnavailable when the last check found the store down: at once while
// that check is fresh, else after a new check fails.
func (g *storeGate) knownDown(ctx context.Context) error {
	g.mu.Lock()
	err, fresh := g.checkErr, g.now().Sub(g.checked) < storeProbeFresh
	g.mu.Unlock()
	if err == nil {
		return nil
	}
	if !fresh {
		if err = <-g.check(ctx); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %v", errStoreUnavailable, err)
}

// check returns a channel that yields the outcome of a liveness check: the last one while it is
// fresh, else the one in flight, else a new one. A probe that overran its deadline and still
// runs means the store is still not answering.
func (g *storeGate) check(ctx context.Context) <-chan error {
	out := make(chan error, 1)
	g.mu.Lock()
	if !g.checked.IsZero() && g.now().Sub(g.checked) < storeProbeFresh {
		out <- g.checkErr
		g.mu.Unlock()
		return out
	}
	if g.checking == nil {
		g.checking = make(chan struct{})
		go g.runCheck(context.WithoutCancel(ctx))
	}
	wait := g.checking
	g.mu.Unlock()
	go func() {
		<-wait
		g.mu.Lock()
		out <- g.checkErr
		g.mu.Unlock()
	}()
	return out
}

// runCheck runs one probe with storeProbeTimeout and records its outcome.
func (g *storeGate) runCheck(ctx context.Context) {
	var err error
	g.mu.Lock()
	busy := g.probing
	g.probing = true
	g.mu.Unlock()
	if busy {
		err = fmt.Errorf("no answer to a check for more than %s", storeProbeTimeout)
	} else {
		pctx, cancel := context.WithTimeout(ctx, storeProbeTimeout)
		res := make(chan error, 1)
		go func() {
			// The probe may block past its deadline (the driver dials with its own timeout):
			// the check does not wait for it, and no new probe starts until it returns.
			res <- g.probe(pctx)
			g.mu.Lock()
			g.probing = false
			g.mu.Unlock()
		}()
		select {
		case err = <-res:
		case <-pctx.Done():
			err = fmt.Errorf("no answer to a check within %s", storeProbeTimeout)
		}
		cancel()
	}
	g.record(err)
	g.mu.Lock()
	close(g.checking)
	g.checking = nil
	g.mu.Unlock()
}

// record keeps a check's (or a failed connection's) outcome: a failure closes down, so that
// requests waiting for a slot give up; an answer opens a new down channel.
func (g *storeGate) record(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checked, g.checkErr = g.now(), err
	select {
	case <-g.down:
		if err == nil {
			g.down = make(chan struct{})
		}
	default:
		if err != nil {
			close(g.down)
		}
	}
}
