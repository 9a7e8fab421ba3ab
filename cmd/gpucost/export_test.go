package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/gpucost/gpucost/export"
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

	// The files export writes for the expected rows: the CLI must write the same.
	exported := func(t *testing.T, f export.Format, write func(w io.Writer, f export.Format) error) []byte {
		t.Helper()
		var b bytes.Buffer
		if err := write(&b, f); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	wantOffers := func(w io.Writer, f export.Format) error { return export.Offers(w, f, want) }

	t.Run("offers as CSV", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("export", ctx, e, append([]string{"offers", "--provider", "lambda,runpod"}, rangeArgs...)); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows, err := csv.NewReader(stdout).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		wantRows, err := csv.NewReader(bytes.NewReader(exported(t, export.CSV, wantOffers))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantRows, rows); diff != "" {
			t.Errorf("CSV export (-want +got):\n%s", diff)
		}
		price := slices.Index(rows[0], "price_usd_per_gpu_hour")
		if price < 0 || rows[1][price] != want[0].PriceUSDPerGPUHour.StringFixed(6) || !strings.Contains(rows[1][price], ".") {
			t.Errorf("price_usd_per_gpu_hour is written as %q", rows[1][max(price, 0)])
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
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// export/offers_test.go checks what the rows of such a file hold.
		if !bytes.Equal(got, exported(t, export.Parquet, wantOffers)) {
			t.Errorf("the Parquet file (%d bytes) is not export's Parquet of the %d observations selected", len(got), len(want))
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
		q := schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"A100-SXM-80GB"}}, From: fx.Start, To: fx.End, Interval: schema.Day}
		points, err := fx.Store.History(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		hand := fx.HandHistory("A100-SXM-80GB", nil, schema.Day, fx.Start, fx.End)
		if len(points) != len(hand) {
			t.Fatalf("%d rows, want %d", len(points), len(hand))
		}
		for i, h := range hand {
			g := points[i]
			if !g.Bucket.Equal(h.Bucket) || g.Provider != h.Provider || !g.Min.Equal(h.Min) || !g.Max.Equal(h.Max) || !g.Avg.Equal(h.Avg) || g.Observations != h.Observations {
				t.Errorf("row %d = %+v, want %s %s min %s avg %s max %s n %d", i, g, h.Bucket, h.Provider, h.Min, h.Avg, h.Max, h.Observations)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		wantFile := exported(t, export.Parquet, func(w io.Writer, f export.Format) error { return export.HistoryFile(w, f, export.Snappy, points) })
		if !bytes.Equal(got, wantFile) {
			t.Errorf("the Parquet file (%d bytes) is not export's Parquet of the %d history points", len(got), len(points))
		}
	})

	// The files read back as a notebook reads them: Parquet by a reader of a few columns of
	// its own (the codec is the file's to say), NDJSON a line at a time.
	t.Run("offers as Parquet with ZSTD, read back", func(t *testing.T) {
		path := filepath.Join(dir, "offers-zstd.parquet")
		e, _, stderr := fx.env()
		if code := runCommand("export", ctx, e, append([]string{"offers", "--provider", "lambda,runpod", "--output", "parquet", "--compression", "zstd", "--out", path}, rangeArgs...)); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		got, err := parquet.ReadFile[parquetOffer](path)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(parquetOffers(want), got); diff != "" {
			t.Errorf("the observations read back (-stored +file):\n%s", diff)
		}
		if codecs := fileCodecs(t, path); len(codecs) != 1 || !codecs[format.Zstd] {
			t.Errorf("the file's column chunks are compressed with %v, want ZSTD", codecs)
		}
	})
	t.Run("offers as NDJSON, read back", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("export", ctx, e, append([]string{"offers", "--provider", "lambda,runpod", "--output", "ndjson"}, rangeArgs...)); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var got []schema.Offer
		for i, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
			var o schema.Offer
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("line %d is not one JSON object: %v\n%.200s", i+1, err, line)
			}
			got = append(got, o)
		}
		if diff := cmp.Diff(want, got, cmpDecimal, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("the observations read back (-stored +file):\n%s", diff)
		}
	})
	t.Run("history as Parquet with ZSTD and as NDJSON, read back", func(t *testing.T) {
		args := []string{"history", "--gpu", "H100-SXM-80GB", "--interval", "hour", "--since", fx.End.Add(-48 * time.Hour).Format(time.RFC3339), "--until", fx.End.Format(time.RFC3339)}
		points, err := fx.Store.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}},
			From: fx.End.Add(-48 * time.Hour), To: fx.End, Interval: schema.Hour})
		if err != nil || len(points) == 0 {
			t.Fatalf("%d points in the store (%v)", len(points), err)
		}
		path := filepath.Join(dir, "history-zstd.parquet")
		e, stdout, stderr := fx.env()
		if code := runCommand("export", ctx, e, append(args, "--output", "parquet", "--compression", "zstd", "--out", path)); code != exitOK {
			t.Fatalf("parquet: exit %d: %s", code, stderr)
		}
		type parquetPoint struct {
			Bucket   time.Time `parquet:"bucket,timestamp(millisecond)"`
			Provider string    `parquet:"provider"`
			Min      int64     `parquet:"min_usd_per_gpu_hour,decimal(6:18)"`
			Offers   int64     `parquet:"offers"`
		}
		rows, err := parquet.ReadFile[parquetPoint](path)
		if err != nil {
			t.Fatal(err)
		}
		var wantRows []parquetPoint
		for _, p := range points {
			wantRows = append(wantRows, parquetPoint{Bucket: p.Bucket, Provider: p.Provider, Min: p.Min.Shift(6).IntPart(), Offers: int64(p.Offers)})
		}
		if diff := cmp.Diff(wantRows, rows, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("the history read back (-stored +file):\n%s", diff)
		}
		if codecs := fileCodecs(t, path); len(codecs) != 1 || !codecs[format.Zstd] {
			t.Errorf("the file's column chunks are compressed with %v, want ZSTD", codecs)
		}

		e, stdout, stderr = fx.env()
		if code := runCommand("export", ctx, e, append(args, "--output", "ndjson")); code != exitOK {
			t.Fatalf("ndjson: exit %d: %s", code, stderr)
		}
		dec := json.NewDecoder(stdout)
		var got []schema.HistoryPoint
		for dec.More() {
			var p schema.HistoryPoint
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
		if diff := cmp.Diff(points, got, cmpDecimal); diff != "" {
			t.Errorf("the history read back (-stored +file):\n%s", diff)
		}
	})
}

// parquetOffer is the part of an exported offer a notebook might read.
type parquetOffer struct {
	ObservedAt time.Time `parquet:"observed_at,timestamp(millisecond)"`
	Provider   string    `parquet:"provider"`
	OfferID    string    `parquet:"offer_id"`
	PriceType  string    `parquet:"price_type"`
	GPUModel   string    `parquet:"gpu_model"`
	Price      int64     `parquet:"price_usd_per_gpu_hour,decimal(6:18)"`
}

func parquetOffers(offers []schema.Offer) []parquetOffer {
	out := make([]parquetOffer, len(offers))
	for i, o := range offers {
		out[i] = parquetOffer{ObservedAt: o.ObservedAt.UTC(), Provider: o.Provider, OfferID: o.OfferID, PriceType: string(o.PriceType),
			GPUModel: o.GPUModel, Price: o.PriceUSDPerGPUHour.Shift(6).IntPart()}
	}
	return out
}

// fileCodecs are the codecs of the column chunks of the Parquet file at path, as its footer says.
func fileCodecs(t *testing.T, path string) map[format.CompressionCodec]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	codecs := map[format.CompressionCodec]bool{}
	for _, rg := range pf.Metadata().RowGroups {
		for _, col := range rg.Columns {
			codecs[col.MetaData.Codec] = true
		}
	}
	return codecs
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
		{"bad output", []string{"offers", "--output", "xlsx"}, `--output "xlsx": want csv, parquet or ndjson`},
		// --format is another name of --output (the flag of earlier releases): its value is checked as one.
		{"bad format", []string{"offers", "--format", "xlsx"}, `--output "xlsx": want csv, parquet or ndjson`},
		{"unknown codec", []string{"offers", "--output", "parquet", "--compression", "lzo"}, `--compression "lzo": want snappy or zstd`},
		{"a codec without Parquet", []string{"history", "--gpu", "H100-SXM-80GB", "--compression", "zstd"}, "--compression goes with --output parquet"},
		{"history without a GPU", []string{"history"}, "a GPU model is required"},
		{"unknown GPU", []string{"offers", "--gpu", "TPUv5"}, `unknown GPU model "TPUv5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			e := env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), nil)}
			if code := runCommand("export", context.Background(), e, tt.args); code != exitUsage || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, tt.wantErr)
			}
		})
	}
}
