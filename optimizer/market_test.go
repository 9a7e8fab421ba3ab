package optimizer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// TestSortOffersMatchesCompareOfferRefs checks that a bucket sorted on its integer keys is in
// compareOfferRefs' order, across ties on price and on the ids' first 8 bytes, ids shorter
// than 8 bytes, duplicate offers, and prices finer than a micro-dollar.
func TestSortOffersMatchesCompareOfferRefs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	prices := []string{"0.5", "0.50", "1.25", "1.3", "2", "2.000001", "0.0000005", "2.0000001"}
	ids := []string{"", "a", "o1", "o10", "o2", "offer-00001", "offer-00002", "offer-000010", "offer-0", "offer-00\x00", "12345678", "123456789"}
	for trial := range 200 {
		fine := trial%4 == 0 // some buckets hold a price finer than a micro-dollar
		offers := make([]schema.Offer, 1+r.IntN(60))
		for i := range offers {
			price := prices[r.IntN(5)]
			if fine && i == 0 {
				price = prices[5+r.IntN(3)]
			}
			offers[i] = schema.Offer{
				Provider:        "p",
				OfferID:         ids[r.IntN(len(ids))],
				PriceType:       schema.OnDemand,
				Region:          []string{"", "eu", "us"}[r.IntN(3)],
				PriceUSDPerHour: decimal.RequireFromString(price),
			}
		}
		refs := make([]offerRef, len(offers))
		for i := range offers {
			refs[i] = newOfferRef(&offers[i], i)
		}
		want := slices.Clone(refs)
		slices.SortFunc(want, compareOfferRefs)
		sortOffers(refs)
		if !slices.Equal(inputOrder(refs), inputOrder(want)) {
			t.Fatalf("trial %d: sortOffers order %v, compareOfferRefs order %v", trial, inputOrder(refs), inputOrder(want))
		}
	}
}

// inputOrder lists the offers' positions in the input.
func inputOrder(refs []offerRef) []int {
	out := make([]int, len(refs))
	for i, ref := range refs {
		out[i] = ref.inputIndex
	}
	return out
}

// TestPrefixKeyOrdersAsStrings checks that strings whose prefix keys differ compare as
// their keys do.
func TestPrefixKeyOrdersAsStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	word := func() string {
		var b strings.Builder
		for range r.IntN(11) {
			b.WriteByte("\x00\x01ab\xff"[r.IntN(5)])
		}
		return b.String()
	}
	for range 20_000 {
		a, b := word(), word()
		ka, kb := prefixKey(a), prefixKey(b)
		if ka != kb && (ka < kb) != (a < b) {
			t.Fatalf("prefixKey(%q) = %#x, prefixKey(%q) = %#x: ordered unlike the strings", a, ka, b, kb)
		}
	}
	if got := fmt.Sprintf("%#x", prefixKey("ab")); got != "0x6162000000000000" {
		t.Errorf("prefixKey(%q) = %s, want 0x6162000000000000", "ab", got)
	}
}

// TestOfferRefPriceIsInexactFloat64 checks that the float price an offer entry takes from
// its micro-dollars is the one InexactFloat64 gives, so pruning compares the same numbers.
func TestOfferRefPriceIsInexactFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 17))
	for range 100_000 {
		price := decimal.New(r.Int64N(1_000_000_000_000), -int32(r.IntN(7)))
		if price.IsZero() {
			continue
		}
		off := schema.Offer{PriceUSDPerHour: price}
		if got, want := newOfferRef(&off, 0).price, price.InexactFloat64(); got != want {
			t.Fatalf("price %s: entry has %v, InexactFloat64 %v", price, got, want)
		}
	}
}
