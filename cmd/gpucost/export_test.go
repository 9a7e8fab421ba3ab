package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

func TestExportOffersAndHistory(t *testing.T) {
	fx := newAnFixture(t)
	ctx := context.Background()
	dir := t.TempDir()
	from, to := fx.Start.AddDate(0, 0, 7), fx.Start.AddDate(0, 0, 14)
	rangeArgs := []string{"--since", from.Format(time.RFC3339), "--until", to.Format(time.RFC3339)}
	// The observations export selects, in its order, computed from the generated history.
	var want []schema.Offer
	for _, o := range fx.Offers {
		if !o.ObservedAt.Before(from) && o.ObservedAt.Before(to) && (o.Provider == "lambda" || o.Provider == "runpod") {
			want = append(want, o)
		}
	}
	sort.SliceStable(want, func(i, j int) bool {
		a, b := want[i], want[j]
		if !a.ObservedAt.Equal(b.ObservedAt) {
			return a.ObservedAt.Before(b.ObservedAt)
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.PriceType != b.PriceType {
			return a.PriceType < b.PriceType
		}
		return a.OfferID < b.OfferID
	})

	t.Run("offers as CSV", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("export", ctx, e, append([]string{"offers", "--provider", "lambda,runpod"}, rangeArgs...)); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows, err := csv.NewReader(stdout).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var wantRows [][]string
		wantRows = append(wantRows, offerExportHeader)
		for i := range want {
			wantRows = append(wantRows, offerCSVRow(&want[i]))
		}
		if diff := cmp.Diff(wantRows, rows); diff != "" {
			t.Errorf("CSV export (-want +got):\n%s", diff)
		}
		if rows[1][17] != want[0].PriceUSDPerGPUHour.StringFixed(6) || !strings.Contains(rows[1][17], ".") {
			t.Errorf("price_usd_per_gpu_hour is written as %q", rows[1][17])
		}
	})
	t.Run("offers as Parquet", func(t *testing.T) {
		path := filepath.Join(dir, "offers.parquet")
		e, _, stderr := fx.env()
		if code := runCommand("export", ctx, e, append([]string{"offers", "--provider", "lambda,runpod", "--format", "parquet", "--out", path}, rangeArgs...)); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr.String(), fmt.Sprintf("wrote %d rows to %s", len(want), path)) {
			t.Errorf("stderr: %s", stderr)
		}
		got, err := parquet.ReadFile[offerRecord](path)
		if err != nil {
			t.Fatal(err)
		}
		wantRecs := make([]offerRecord, len(want))
		for i := range want {
			wantRecs[i] = toOfferRecord(&want[i])
		}
		if diff := cmp.Diff(wantRecs, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("Parquet export (-want +got):\n%s", diff)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		col, ok := pf.Schema().Lookup("price_usd_per_gpu_hour")
		if !ok || !strings.Contains(col.Node.Type().LogicalType().String(), "DECIMAL(18,6)") {
			t.Errorf("price_usd_per_gpu_hour is %v, want DECIMAL(18,6)", col.Node.Type().LogicalType())
		}
	})
	t.Run("latest offers", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("export", ctx, e, []string{"offers", "--latest", "--since", "2d"}); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows, err := csv.NewReader(stdout).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows)-1 != storetest.HistoryOffers() {
			t.Errorf("latest export has %d rows, want one per generated offer (%d)", len(rows)-1, storetest.HistoryOffers())
		}
	})
	t.Run("history as Parquet", func(t *testing.T) {
		path := filepath.Join(dir, "history.parquet")
		e, _, stderr := fx.env()
		if code := runCommand("export", ctx, e, []string{"history", "--gpu", "A100-SXM-80GB", "--format", "parquet", "--out", path,
			"--since", fx.Start.Format(time.RFC3339), "--until", fx.End.Format(time.RFC3339)}); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		got, err := parquet.ReadFile[historyRecord](path)
		if err != nil {
			t.Fatal(err)
		}
		hand := fx.HandHistory("A100-SXM-80GB", nil, schema.Day, fx.Start, fx.End)
		if len(got) != len(hand) {
			t.Fatalf("%d rows, want %d", len(got), len(hand))
		}
		for i, h := range hand {
			g := got[i]
			if !g.Bucket.Equal(h.Bucket) || g.Provider != h.Provider || g.Min != micros(h.Min) || g.Max != micros(h.Max) || g.Avg != micros(h.Avg) || g.Observations != int64(h.Observations) {
				t.Errorf("row %d = %+v, want %s %s min %s avg %s max %s n %d", i, g, h.Bucket, h.Provider, h.Min, h.Avg, h.Max, h.Observations)
			}
		}
	})
}

func TestExportUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"nothing", nil, "want offers or history, got nothing"},
		{"unknown kind", []string{"plans"}, `want offers or history, got "plans"`},
		{"flags first", []string{"--format", "csv"}, "want offers or history before the flags"},
		{"bad format", []string{"offers", "--format", "xlsx"}, `--format "xlsx": want csv or parquet`},
		{"history without a GPU", []string{"history"}, "a GPU model is required"},
		{"unknown GPU", []string{"offers", "--gpu", "TPUv5"}, `unknown GPU model "TPUv5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			e := env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
			if code := runCommand("export", context.Background(), e, tt.args); code != exitUsage || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, tt.wantErr)
			}
		})
	}
}
