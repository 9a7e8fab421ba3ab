package pipeline

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// The deadline of one source's fetch follows the work it has to do: Config.SourceTimeout for the
// source's own work (requests, retries, parsing), plus every pause it announces with its run's Pace (the
// waits a provider's rate limit asks for between requests), and never more than
// Config.SourceTimeoutMax after the fetch started. A source whose plan grows (Vast asks a slice
// again when a page comes back full) gets the time its pauses need without a deadline sized for
// the largest market, and a source that stalls still fails after SourceTimeout of work.

// fetchDeadline is the context one source fetches under: done when the run's context is, when
// SourceTimeoutMax has passed, or when its work allowance plus its announced pauses has; in the
// last two cases Err is context.DeadlineExceeded, as for any deadline. It is its own Context
// type, not a cancelCtx, so that contexts derived from it report DeadlineExceeded too.
type fetchDeadline struct {
	parent context.Context // the run's context under the cap
	stop   func()          // releases the cap and the watch on parent
	done   chan struct{}

	mu     sync.Mutex
	err    error
	start  time.Time
	work   time.Duration // Config.SourceTimeout
	last   time.Time     // start + Config.SourceTimeoutMax
	paused time.Duration // announced with Pace
	timer  *time.Timer
}

var _ context.Context = (*fetchDeadline)(nil)

func newFetchDeadline(ctx context.Context, work, max time.Duration) *fetchDeadline {
	start := time.Now()
	parent, cancel := context.WithDeadline(ctx, start.Add(max))
	fd := &fetchDeadline{parent: parent, done: make(chan struct{}), start: start, work: work, last: start.Add(max)}
	unwatch := context.AfterFunc(parent, func() { fd.finish(parent.Err()) })
	fd.mu.Lock()
	fd.timer = time.AfterFunc(work, fd.expire)
	fd.mu.Unlock()
	fd.stop = func() {
		fd.finish(context.Canceled) // the fetch is over: later Pace calls change nothing
		fd.mu.Lock()
		fd.timer.Stop()
		fd.mu.Unlock()
		unwatch()
		cancel()
	}
	return fd
}

// due is when the fetch's deadline passes now. fd.mu is held.
func (fd *fetchDeadline) due() time.Time {
	d := fd.start.Add(fd.work + fd.paused)
	if d.After(fd.last) {
		return fd.last
	}
	return d
}

// pace is Pace for this fetch: the run's Pacer.
func (fd *fetchDeadline) pace(pause time.Duration) {
	if pause <= 0 {
		return
	}
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if fd.err != nil {
		return
	}
	fd.paused += pause
	fd.timer.Reset(time.Until(fd.due()))
}

// expire ends the fetch when its deadline has passed, else waits again (an extension came in
// while the timer fired).
func (fd *fetchDeadline) expire() {
	fd.mu.Lock()
	if left := time.Until(fd.due()); left > 0 && fd.err == nil {
		fd.timer.Reset(left)
		fd.mu.Unlock()
		return
	}
	fd.mu.Unlock()
	fd.finish(context.DeadlineExceeded)
}

func (fd *fetchDeadline) finish(err error) {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	if fd.err == nil {
		fd.err = err
		close(fd.done)
	}
}

// describe says what the deadline was made of, for the error of a source that ran out of it.
func (fd *fetchDeadline) describe() string {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	due := fd.due()
	s := fmt.Sprintf("the source's deadline passed after %s: %s of work", due.Sub(fd.start).Round(time.Millisecond), fd.work)
	if fd.paused > 0 {
		s += fmt.Sprintf(" and %s of announced pauses", fd.paused)
	}
	if due.Equal(fd.last) {
		s += fmt.Sprintf(", capped at %s", fd.last.Sub(fd.start))
	}
	return s
}

// Deadline is the cap: the fetch may end sooner, as any context may be cancelled.
func (fd *fetchDeadline) Deadline() (time.Time, bool) { return fd.parent.Deadline() }

func (fd *fetchDeadline) Done() <-chan struct{} { return fd.done }

func (fd *fetchDeadline) Err() error {
	fd.mu.Lock()
	defer fd.mu.Unlock()
	return fd.err
}

func (fd *fetchDeadline) Value(key any) any {
	return fd.parent.Value(key)
}
