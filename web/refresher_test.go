package web

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefresher: many callers share one load; a fresh value is not reloaded; a stale one is
// served at once with serveStale and waited for without; a failed load keeps the last value,
// says why, and is not retried before retry; a panicking load is an error.
func TestRefresher(t *testing.T) {
	var clock atomic.Int64 // nanoseconds since the start
	start := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return start.Add(time.Duration(clock.Load())) }
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	// settled waits until a reload started in the background has ended.
	settled := func(r *refresher[int]) {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			r.mu.Lock()
			idle := r.loading == nil
			r.mu.Unlock()
			if idle {
				return
			}
		}
		t.Fatal("a reload never ended")
	}

	for _, serveStale := range []bool{true, false} {
		clock.Store(0)
		var loads atomic.Int32
		release := make(chan struct{})
		fail := atomic.Bool{}
		r := newRefresher(time.Minute, time.Second, serveStale, func(ctx context.Context) (int, error) {
			n := loads.Add(1)
			<-release
			if fail.Load() {
				return 0, errors.New("store down")
			}
			return int(n), nil
		})
		r.now = now

		// 100 callers at once with no value: one load, everyone waits for it.
		var wg sync.WaitGroup
		got := make([]int, 100)
		for i := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, _, _, err := r.get(context.Background())
				if err != nil {
					t.Error(err)
				}
				got[i] = v
			}()
		}
		time.Sleep(20 * time.Millisecond)
		close(release)
		wg.Wait()
		for _, v := range got {
			if v != 1 {
				t.Fatalf("serveStale %v: a caller got %d, want the one load's 1", serveStale, v)
			}
		}
		if v, _, _, _ := r.get(context.Background()); v != 1 || loads.Load() != 1 {
			t.Errorf("serveStale %v: a fresh value was reloaded (%d loads)", serveStale, loads.Load())
		}

		// Stale: a reload runs; with serveStale the old value comes at once.
		advance(time.Minute)
		release = make(chan struct{})
		if serveStale {
			if v, _, _, err := r.get(context.Background()); v != 1 || err != nil {
				t.Errorf("stale with serveStale: got %d, %v, want the last value at once", v, err)
			}
			close(release)
			settled(r)
		} else {
			go func() { time.Sleep(20 * time.Millisecond); close(release) }()
		}
		if v, _, _, _ := r.get(context.Background()); v != 2 {
			t.Errorf("serveStale %v: after the reload got %d, want 2", serveStale, v)
		}

		// A failed reload keeps the value and says why; no retry before r.retry.
		advance(time.Minute)
		fail.Store(true)
		release = make(chan struct{})
		close(release)
		v, at, have, err := r.get(context.Background())
		if serveStale {
			settled(r)
			v, at, have, err = r.get(context.Background())
		}
		if v != 2 || !have || err == nil || !at.Equal(start.Add(time.Minute)) {
			t.Errorf("serveStale %v: after a failed reload got %d %v %v %v, want 2 with the error and its time", serveStale, v, at, have, err)
		}
		n := loads.Load()
		r.get(context.Background())
		if loads.Load() != n {
			t.Errorf("serveStale %v: a failed load was retried at once", serveStale)
		}
		advance(r.retry)
		fail.Store(false)
		r.get(context.Background())
		settled(r)
		if v, _, _, err := r.get(context.Background()); v != int(n)+1 || err != nil {
			t.Errorf("serveStale %v: after the retry got %d, %v", serveStale, v, err)
		}
	}

	p := newRefresher(time.Minute, time.Second, true, func(context.Context) (int, error) { panic("boom") })
	if _, _, have, err := p.get(context.Background()); have || err == nil {
		t.Errorf("a panicking load: have %v, err %v, want an error", have, err)
	}
}
