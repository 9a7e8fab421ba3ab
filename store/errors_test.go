package store

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// TestErrorKinds: what Busy, Refused and Unreachable say of the driver's errors, which the HTTP
// side of gpucost serve turns into 503s and 504s.
func TestErrorKinds(t *testing.T) {
	tests := []struct {
		name                       string
		err                        error
		busy, refused, unreachable bool
	}{
		{"no connection free in time", fmt.Errorf("reading offers: %w", clickhouse.ErrAcquireConnTimeout), true, false, true},
		{"a syntax error", &clickhouse.Exception{Code: 62, Message: "Syntax error"}, false, true, false},
		{"a table missing, wrapped", fmt.Errorf("reading offers: %w", &clickhouse.Exception{Code: codeUnknownTable}), false, true, true},
		{"connection refused", fmt.Errorf("dialing: %w", syscall.ECONNREFUSED), false, false, true},
		{"the pool closed", clickhouse.ErrConnectionClosed, false, false, true},
		{"a value gpucost cannot read", errors.New("converting NULL to string is unsupported"), false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Busy(tt.err); got != tt.busy {
				t.Errorf("Busy = %v, want %v", got, tt.busy)
			}
			if got := Refused(tt.err); got != tt.refused {
				t.Errorf("Refused = %v, want %v", got, tt.refused)
			}
			if got := Unreachable(tt.err); got != tt.unreachable {
				t.Errorf("Unreachable = %v, want %v", got, tt.unreachable)
			}
		})
	}
}
