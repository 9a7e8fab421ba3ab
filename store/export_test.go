package store

import (
	"context"

	"github.com/gpucost/gpucost/schema"
)

// FinalizeLoad is what every load does for the final daily rows (finalizeLoad), for the
// benchmark of its cost.
func FinalizeLoad(ctx context.Context, s *Store, offers []schema.Offer) error {
	return s.finalizeLoad(ctx, offers)
}

// FinalizeStale is what every migrate does for the final daily rows (finalizeStale), for the
// benchmark of its cost.
func FinalizeStale(ctx context.Context, s *Store) (int, error) { return s.finalizeStale(ctx) }
