package schema_test

import (
	"testing"
	"time"

	"github.com/gpucost/gpucost/schema"
)

func TestRunStampsAndPaces(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 0, 0, 0, time.FixedZone("CET", 3600))
	var paused time.Duration
	run := schema.Run{ID: "run-1", ObservedAt: at, Pacer: func(d time.Duration) { paused += d }}
	var o schema.Offer
	run.Stamp(&o)
	if o.RunID != "run-1" || !o.ObservedAt.Equal(at) || o.ObservedAt.Location() != time.UTC {
		t.Errorf("stamped %q at %v, want run-1 at %v in UTC", o.RunID, o.ObservedAt, at)
	}
	run.Pace(time.Second)
	run.Pace(2 * time.Second)
	if paused != 3*time.Second {
		t.Errorf("the pacer heard %v, want 3s", paused)
	}
	schema.Run{}.Pace(time.Second) // no pacer: nothing happens
}
