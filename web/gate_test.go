package web

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// A query that fails on gpucost's side (a value it cannot read) is a fault of that request, not
// a store down: the next request is not turned away. A broken connection is: the next request
// checks the store first, and a store that fails the check is unavailable at once.
func TestStoreGateTellsAFailedQueryFromADownStore(t *testing.T) {
	probes := 0
	gate := newStoreGate(2, 5*time.Second, func(context.Context) error { probes++; return syscall.ECONNREFUSED }, storeErrors)
	ctx := context.Background()

	scan := errors.New("converting NULL to string is unsupported")
	if err := gate.do(ctx, func(context.Context) error { return scan }); err != scan {
		t.Fatalf("a scan error came back as %v, want it as it is", err)
	}
	ran := false
	if err := gate.do(ctx, func(context.Context) error { ran = true; return nil }); err != nil || !ran || probes != 0 {
		t.Fatalf("after a scan error: err %v, ran %v, %d checks; want the query run, no check", err, ran, probes)
	}

	refused := fmt.Errorf("reading offers: %w", syscall.ECONNREFUSED)
	if err := gate.do(ctx, func(context.Context) error { return refused }); !errors.Is(err, errStoreUnavailable) {
		t.Fatalf("a refused connection came back as %v, want errStoreUnavailable", err)
	}
	ran = false
	if err := gate.do(ctx, func(context.Context) error { ran = true; return nil }); !errors.Is(err, errStoreUnavailable) || ran {
		t.Fatalf("after a refused connection: err %v, ran %v; want errStoreUnavailable without running the query", err, ran)
	}
}
