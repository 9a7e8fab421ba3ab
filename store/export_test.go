package store

import (
	"context"
	"time"

	"github.com/gpucost/gpucost/schema"
)

// FinalizeLoad is what every load does for the final daily rows (finalizeLoad), for the
// benchmark of its cost.
func FinalizeLoad(ctx context.Context, s *Store, offers []schema.Offer) error {
	var rows span
	rows.add(len(offers), func(i int) time.Time { return offers[i].ObservedAt })
	return s.finalizeLoad(ctx, rows.days)
}

// FinalizeStale is what every migrate does for the final daily rows (finalizeStale), for the
// benchmark of its cost.
func FinalizeStale(ctx context.Context, s *Store) (int, error) { return s.finalizeStale(ctx) }
