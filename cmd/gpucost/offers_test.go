package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
)

// TestOffersCLI reads the generated market back with gpucost offers: CSV under export's
// columns, and --cheapest-per-gpu as the cheapest offer of each GPU model, in model order.
func TestOffersCLI(t *testing.T) {
	fx := newAnFixture(t)
	ctx := context.Background()
	latest := map[schema.Key]schema.Offer{}
	for _, o := range fx.Offers {
		if l, ok := latest[o.Key()]; !ok || o.ObservedAt.After(l.ObservedAt) {
			latest[o.Key()] = o
		}
	}

	t.Run("csv", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("offers", ctx, e, []string{"--output", "csv", "--limit", "0", "--max-age", "1d"}); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows, err := csv.NewReader(stdout).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var empty bytes.Buffer
		if err := export.Offers(&empty, export.CSV, nil); err != nil {
			t.Fatal(err)
		}
		header, err := csv.NewReader(&empty).Read()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(header, rows[0]); diff != "" {
			t.Errorf("header (-export +offers):\n%s", diff)
		}
		if len(rows)-1 != len(latest) {
			t.Errorf("%d offers, want the %d generated", len(rows)-1, len(latest))
		}
	})
	t.Run("cheapest per GPU", func(t *testing.T) {
		cheapest := map[string]schema.Offer{}
		for _, o := range latest {
			if c, ok := cheapest[o.GPUModel]; !ok || o.PriceUSDPerGPUHour.LessThan(c.PriceUSDPerGPUHour) {
				cheapest[o.GPUModel] = o
			}
		}
		var want []string
		for model, o := range cheapest {
			want = append(want, model+" "+o.PriceUSDPerGPUHour.StringFixed(6))
		}
		sort.Strings(want)
		e, stdout, stderr := fx.env()
		if code := runCommand("offers", ctx, e, []string{"--cheapest-per-gpu", "--output", "json", "--max-age", "1d"}); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var offers []schema.Offer
		if err := json.Unmarshal(stdout.Bytes(), &offers); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range offers {
			got = append(got, o.GPUModel+" "+o.PriceUSDPerGPUHour.StringFixed(6))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cheapest per GPU (-hand +offers):\n%s", diff)
		}
	})
}
