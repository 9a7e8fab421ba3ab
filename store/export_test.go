package store

import (
	"context"

	"github.com/gpucost/gpucost/schema"
)

// FinalizeLoad is what every load does for the final daily rows (finalizeLoad) when no day of
// its own is completed, for the benchmark of its cost.
func FinalizeLoad(ctx context.Context, s *Store) error { return s.finalizeLoad(ctx, nil) }

// FinalizeStale is what every migrate does for the final daily rows (finalizeStale), for the
// benchmark of its cost.
func FinalizeStale(ctx context.Context, s *Store) (int, error) { return s.finalizeStale(ctx) }

// ReadsColumnar says whether planning reads this server's market as columns (columnar.go).
func ReadsColumnar(s *Store) bool { return s.readsColumnar() }

// ReadPlanOffersColumnar reads the latest offers that match f as columns, whatever the server,
// for the test that the columnar reader is used on exactly the servers it speaks.
func ReadPlanOffersColumnar(ctx context.Context, s *Store, f schema.OfferFilter) (int, error) {
	q, args := s.latestOffersQuery(f, toPlanColumns)
	var got offerChunks
	err := s.readPlanOffers(ctx, "reading the latest offers as columns", q, args, got.next)
	return got.n, err
}

// SetShareOffers makes s write the offers of a load in inserts of about n offers each.
func SetShareOffers(s *Store, n int) { s.shareOffers = n }
