package web

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// refresher keeps the result of an expensive read for gpucost serve (the dashboard's page, the
// run log /healthz reports) so that load never multiplies queries: the value is reloaded at most
// once per every, by one load at a time that every caller shares. With serveStale, callers get
// the last value at once while a reload runs, and only callers that have no value at all wait;
// without, a value older than every is never returned while a reload can run. A failed load is
// retried after retry at the earliest, and reported with the last good value. It is safe for
// concurrent use.
type refresher[T any] struct {
	every      time.Duration                    // how long a loaded value is fresh
	serveStale bool                             // answer with the last value while a reload runs
	retry      time.Duration                    // the least time between a failed load and the next
	timeout    time.Duration                    // deadline of one load
	load       func(context.Context) (T, error) // the read; runs detached from the caller's cancellation
	now        func() time.Time

	mu      sync.Mutex
	val     T
	have    bool          // val holds a loaded value
	at      time.Time     // when val was loaded
	err     error         // the last load's error; nil when it worked
	errAt   time.Time     // when the last load failed
	loading chan struct{} // closed when the load in flight ends; nil when none runs
}

func newRefresher[T any](every, timeout time.Duration, serveStale bool, load func(context.Context) (T, error)) *refresher[T] {
	return &refresher[T]{every: every, serveStale: serveStale, retry: min(every, 5*time.Second), timeout: timeout, load: load, now: time.Now}
}

// get returns the value, when it was loaded, and the error of the last load when that failed
// (val is then the last good value, or the zero value and have false when there never was one).
func (r *refresher[T]) get(ctx context.Context) (val T, at time.Time, have bool, err error) {
	r.mu.Lock()
	now := r.now()
	stale := !r.have || now.Sub(r.at) >= r.every
	canRetry := r.err == nil || now.Sub(r.errAt) >= r.retry
	if stale && canRetry && r.loading == nil {
		r.loading = make(chan struct{})
		go r.reload(context.WithoutCancel(ctx))
	}
	wait := r.loading
	if wait == nil || (r.have && (r.serveStale || !stale)) {
		defer r.mu.Unlock()
		return r.val, r.at, r.have, r.err
	}
	r.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return val, at, false, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.val, r.at, r.have, r.err
}

// reload runs one load and keeps its outcome. A load that panics is a failed load: the
// service carries on.
func (r *refresher[T]) reload(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var v T
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("the load panicked: %v", p)
			}
		}()
		v, err = r.load(ctx)
	}()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.err, r.errAt = err, r.now()
	} else {
		r.val, r.at, r.have, r.err = v, r.now(), true, nil
	}
	close(r.loading)
	r.loading = nil
}
