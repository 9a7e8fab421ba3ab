package store

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// TestMeanIsDivRound: the integer division of mean gives DivRound's decimal, digit for digit,
// on sums of every size and sign, halves included; sums it cannot divide so go to DivRound.
func TestMeanIsDivRound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sums := []decimal.Decimal{decimal.New(5, -6), decimal.New(-5, -6), decimal.New(15, -6), decimal.New(999999999999999999, -6),
		decimal.RequireFromString("123456789012345678901234.5"), decimal.New(25, -7), decimal.Zero}
	for range 20000 {
		sums = append(sums, decimal.New(r.Int64N(1<<40)-1<<39, -6), decimal.New(r.Int64N(1_000_000_000_000_000_000), -6))
	}
	for _, sum := range sums {
		for _, n := range []uint64{1, 2, 3, 4, 7, 10, 24, 1 + r.Uint64N(1_000_000)} {
			want := sum.DivRound(decimal.NewFromUint64(n), schema.PriceDecimals)
			if got := mean(sum, n, n, 0); got.String() != want.String() {
				t.Fatalf("mean of %s over %d = %s, DivRound gives %s", sum, n, got, want)
			}
		}
	}
}
