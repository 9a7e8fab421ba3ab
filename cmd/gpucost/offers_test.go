package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
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
		var got []string
		for _, o := range itemsOf[schema.Offer](t, stdout.Bytes()) {
			got = append(got, o.GPUModel+" "+o.PriceUSDPerGPUHour.StringFixed(6))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cheapest per GPU (-hand +offers):\n%s", diff)
		}
	})
}

// TestOffersAndHistoryShowEveryPriceType stores term, reserved and serverless prices beside an
// on-demand one and reads them back with gpucost offers (its --price-type filter and its
// PRICE TYPE column) and gpucost history (a row per price type).
func TestOffersAndHistoryShowEveryPriceType(t *testing.T) {
	st := storetest.Open(t)
	fx := &anFixture{History: &storetest.History{DSN: storetest.DatabaseDSN(t, st.Database()), Store: st}, spool: t.TempDir()}
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	offer := func(provider, id string, pt schema.PriceType, price string) schema.Offer {
		p := decimal.RequireFromString(price)
		return schema.Offer{ObservedAt: at, RunID: "run-terms", Provider: provider, OfferID: id, Tier: schema.TierSecure, GPUModel: "H100-SXM-80GB",
			GPUNameRaw: "H100 SXM", GPUCount: 1, VRAMGB: 80, PriceType: pt, PriceUSDPerHour: p, PriceUSDPerGPUHour: p,
			IntraNode: schema.IntraNVSwitch, InterNode: schema.InterInfiniBand, Stock: schema.StockHigh}
	}
	if err := st.InsertOffers(ctx, "run-terms", []schema.Offer{
		offer("runpod", "h100/secure", schema.OnDemand, "2.00"),
		offer("runpod", "h100/secure", schema.Term3M, "1.80"),
		offer("lambda", "1-Click Cluster 16x H100", schema.Reserved, "2.10"),
		offer("verda", "serverless/H100", schema.Serverless, "3.10"),
	}); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) string {
		t.Helper()
		e, stdout, stderr := fx.env()
		if code := runCommand(args[0], ctx, e, args[1:]); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout.String()
	}

	offers := itemsOf[schema.Offer](t, []byte(cli("offers", "--price-type", "term_3m,reserved,serverless", "--output", "json")))
	var got []string
	for _, o := range offers {
		got = append(got, string(o.PriceType)+" "+o.PriceUSDPerGPUHour.StringFixed(2))
	}
	if diff := cmp.Diff([]string{"term_3m 1.80", "reserved 2.10", "serverless 3.10"}, got); diff != "" {
		t.Errorf("offers --price-type term_3m,reserved,serverless (-want +got):\n%s", diff)
	}
	table := cli("offers")
	for _, want := range []string{"runpod H100-SXM-80GB 1 80 term_3m 1.8000", "lambda H100-SXM-80GB 1 80 reserved 2.1000", "verda H100-SXM-80GB 1 80 serverless 3.1000"} {
		found := false
		for _, line := range strings.Split(table, "\n") {
			found = found || strings.HasPrefix(strings.Join(strings.Fields(line), " "), want)
		}
		if !found {
			t.Errorf("the offers table has no line %q:\n%s", want, table)
		}
	}

	points := itemsOf[schema.HistoryPoint](t, []byte(cli("history", "--gpu", "H100-SXM-80GB", "--since", "1d", "--interval", "hour", "--price-type", "term_3m,reserved,serverless", "--output", "json")))
	got = nil
	for _, p := range points {
		got = append(got, p.Provider+" "+string(p.PriceType)+" "+p.Min.StringFixed(2))
	}
	if diff := cmp.Diff([]string{"lambda reserved 2.10", "runpod term_3m 1.80", "verda serverless 3.10"}, got); diff != "" {
		t.Errorf("history by price type (-want +got):\n%s", diff)
	}
	if daily := cli("history", "--gpu", "H100-SXM-80GB", "--since", "2d"); !strings.Contains(daily, "term_3m") || !strings.Contains(daily, "serverless") || !strings.Contains(daily, "reserved") {
		t.Errorf("the daily history table lacks a price type:\n%s", daily)
	}
}
