package store

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
)

// TestOfferChunksKeepTheOrderRead: the offers collected come back in the order read, whether
// they fill the reserved chunk, overflow it (more came than were counted) or were not reserved.
func TestOfferChunksKeepTheOrderRead(t *testing.T) {
	for _, tc := range []struct{ reserve, read int }{{0, 0}, {5, 0}, {5, 3}, {5, 5}, {5, 5 + 2*offerChunk + 1}, {0, offerChunk + 1}} {
		t.Run(fmt.Sprintf("reserve %d read %d", tc.reserve, tc.read), func(t *testing.T) {
			var c offerChunks
			c.reserve(tc.reserve)
			var want []string
			for i := range tc.read {
				id := fmt.Sprint(i)
				c.next().OfferID = id
				want = append(want, id)
			}
			all := c.all()
			var got []string
			for _, o := range all {
				got = append(got, o.OfferID)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("all (-read +got):\n%s", diff)
			}
			if tc.read == 0 && all != nil {
				t.Errorf("all of nothing read = %v, want nil", all)
			}
			if tc.read > 0 && tc.read <= tc.reserve && &all[0] != &c.chunks[0][0] {
				t.Error("the offers that fit the reserved chunk were copied")
			}
			var each []string
			c.each(func(i int, o *schema.Offer) {
				if i != len(each) {
					t.Fatalf("each gave position %d after %d offers", i, len(each))
				}
				each = append(each, o.OfferID)
			})
			if diff := cmp.Diff(want, each); diff != "" {
				t.Errorf("each (-read +got):\n%s", diff)
			}
		})
	}
}

// TestPackSharesKeepsBucketsWholeUnderTheBound: every bucket that holds offers is in exactly one
// share; a share holds at most the bound, but for a bucket larger than it, alone; and a market
// dominated by a few GPU models (uneven buckets) packs into few shares.
func TestPackSharesKeepsBucketsWholeUnderTheBound(t *testing.T) {
	var counts [schema.Buckets]int
	for b := range counts {
		counts[b] = 1_000 + 37*b%500
	}
	counts[3], counts[17], counts[40], counts[41] = 250_000, 120_000, 90_000, 0
	const per = 200_000
	shares := packShares(counts, per)
	total, seen := 0, uint64(0)
	for _, s := range shares {
		if s.Buckets&seen != 0 {
			t.Errorf("share %064b shares buckets with another", s.Buckets)
		}
		seen |= s.Buckets
		size := 0
		for b, n := range counts {
			if s.Holds(b) {
				size += n
			}
		}
		total += size
		if size > per && s.Buckets != 1<<3 {
			t.Errorf("share %064b holds %d offers, more than %d", s.Buckets, size, per)
		}
	}
	for b, n := range counts {
		if (n > 0) != (seen&(1<<b) != 0) {
			t.Errorf("bucket %d of %d offers: in a share %v", b, n, seen&(1<<b) != 0)
		}
	}
	// 250k alone; 120k + 90k > 200k, so 120k with the small ones (about 75k), and 90k alone.
	if sum := 250_000 + 120_000 + 90_000; total < sum || len(shares) > 3 {
		t.Errorf("%d shares of %d offers, want 3 holding them all", len(shares), total)
	}
	if got := packShares([schema.Buckets]int{}, per); len(got) != 1 || got[0] != (schema.Share{}) {
		t.Errorf("no offers: %v, want the one share of every offer", got)
	}
}

// TestInlineArgs: each value goes into its placeholder as a literal no content breaks out of;
// a count that does not match, or a value without a literal, is an error.
func TestInlineArgs(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	got, err := inlineArgs("a = ? AND b IN (?, ?) AND c >= ? AND d < ?", []any{`it's \ "x"`, "", "ü", 80.5, at})
	const want = `a = unhex('69742773205C20227822') AND b IN (unhex(''), unhex('C3BC')) AND c >= 80.5 AND d < toDateTime(1796126400, 'UTC')`
	if err != nil || got != want {
		t.Errorf("inlineArgs = %q, %v; want %q", got, err, want)
	}
	for _, tc := range []struct {
		q    string
		args []any
	}{
		{"a = ? AND b = ?", []any{"x"}},
		{"a = ?", []any{math.NaN()}},
		{"a = ?", []any{[]string{"x"}}},
	} {
		if got, err := inlineArgs(tc.q, tc.args); err == nil {
			t.Errorf("inlineArgs(%q, %v) = %q, want an error", tc.q, tc.args, got)
		}
	}
}
