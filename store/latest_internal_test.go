package store

import (
	"fmt"
	"testing"

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
