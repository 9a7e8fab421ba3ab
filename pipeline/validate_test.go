package pipeline_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

// TestPricesAreNotRoundedAgain: the pipeline prices an offer its source priced by the whole offer
// only (both prices from the exact offer price, each rounded once), and rejects a price with more
// decimals than are stored instead of rounding it a second time.
func TestPricesAreNotRoundedAgain(t *testing.T) {
	wholeOnly := offer("whole", "H100-SXM-80GB", 8, "0")
	wholeOnly.PriceUSDPerHour = decimal.RequireFromString("35.159555555555556")
	unrounded := offer("unrounded", "H100-SXM-80GB", 1, "2.0000001")
	st := newMemStore()
	r := newRunner(t, pipeline.Config{}, st, pipeline.Options{}, returning("p", wholeOnly, unrounded, offer("ok", "L4-24GB", 1, "0.4")))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{pipeline.RejectUnroundedPrice: 1}, rep.Providers[0].Rejected); diff != "" {
		t.Errorf("rejected (-want +got):\n%s", diff)
	}
	var got schema.Offer
	for _, o := range st.loaded(rep.RunID, "p").Offers {
		if o.OfferID == "whole" {
			got = o
		}
	}
	if got.OfferID != "whole" || got.PriceUSDPerHour.String() != "35.159556" || got.PriceUSDPerGPUHour.String() != "4.394944" {
		t.Errorf("offer priced by the whole offer: %s at %s, %s per GPU; want whole at 35.159556, 4.394944", got.OfferID, got.PriceUSDPerHour, got.PriceUSDPerGPUHour)
	}
}
