package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

// sampleOffers are observations with every kind of value an offer column holds: nullable columns
// set and unset, flags, a valid_until, prices that need all 6 decimals, and a non-UTC time.
func sampleOffers() []schema.Offer {
	d := decimal.RequireFromString
	f := func(x float64) *float64 { return &x }
	n := uint32(12)
	at := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	until := at.AddDate(1, 0, 0)
	return []schema.Offer{
		{ObservedAt: at, RunID: "run-1", SourceURL: "https://console.vast.ai/api/v0/bundles/", Provider: "vastai", OfferID: "ask-101",
			Tier: schema.TierVerified, Region: "Texas, US", Country: "US", GPUModel: "H100-SXM-80GB", GPUNameRaw: "H100 SXM", GPUCount: 8, VRAMGB: 80,
			VCPUs: f(128), RAMGB: f(1031.5), DiskGB: f(2000), PriceType: schema.OnDemand, PriceUSDPerHour: d("15.123456"), PriceUSDPerGPUHour: d("1.890432"),
			IntraNode: schema.IntraNVSwitch, NVLinkGbps: f(900), InterNode: schema.InterNone, AvailableCount: &n, Stock: schema.StockHigh,
			Reliability: f(0.9987), DQFlags: []schema.DQFlag{schema.FlagVRAMSnapped, schema.FlagPriceOutlier}},
		{ObservedAt: at.In(time.FixedZone("CET", 3600)), ValidUntil: &until, RunID: "import-abc", SourceURL: "https://aws.example/ec2/pricing",
			Provider: "aws", OfferID: "import:H100-SXM-80GB/8x/datacenter/us-east-1", Tier: schema.TierDatacenter, Region: "us-east-1", Country: "US",
			GPUModel: "H100-SXM-80GB", GPUNameRaw: "H100-SXM-80GB", GPUCount: 8, VRAMGB: 80, PriceType: schema.Term1Y,
			PriceUSDPerHour: d("55.04"), PriceUSDPerGPUHour: d("6.88"), IntraNode: schema.IntraUnknown, InterNode: schema.InterUnknown, Stock: schema.StockUnknown},
		{ObservedAt: at, RunID: "run-1", SourceURL: "https://api.runpod.io/graphql", Provider: "runpod", OfferID: "NVIDIA GeForce RTX 5090/community",
			Tier: schema.TierCommunity, GPUNameRaw: "RTX 5090 Ti", GPUCount: 1, VRAMGB: 32, PriceType: schema.Spot,
			PriceUSDPerHour: d("0.0000005"), PriceUSDPerGPUHour: d("0.0000005"), IntraNode: schema.IntraPCIe, InterNode: schema.InterNone,
			Stock: schema.StockLow, DQFlags: []schema.DQFlag{schema.FlagUnknownGPU}},
	}
}

func TestOffersCSV(t *testing.T) {
	offers := sampleOffers()
	var b bytes.Buffer
	if err := Offers(&b, CSV, offers); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	wantRows := [][]string{offerColumns.names}
	for i := range offers {
		wantRows = append(wantRows, offerCSVRow(&offers[i]))
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("CSV (-want +got):\n%s", diff)
	}
	// price_usd_per_gpu_hour, exact.
	if rows[1][18] != offers[0].PriceUSDPerGPUHour.StringFixed(6) || !strings.Contains(rows[1][18], ".") {
		t.Errorf("price_usd_per_gpu_hour is written as %q", rows[1][18])
	}
	// What each kind of value becomes.
	cells := map[string]string{}
	for i, name := range rows[0] {
		cells[name] = rows[2][i]
	}
	for name, want := range map[string]string{
		"observed_at": "2026-01-31T12:00:00Z", "valid_until": "2027-01-31T12:00:00Z", "vcpus": "", "available_count": "",
		"price_usd_per_hour": "55.040000", "gpu_count": "8", "vram_gb": "80", "dq_flags": "", "price_type": "term_1y",
	} {
		if cells[name] != want {
			t.Errorf("%s of the imported offer is %q, want %q", name, cells[name], want)
		}
	}
	first := map[string]string{}
	for i, name := range rows[0] {
		first[name] = rows[1][i]
	}
	for name, want := range map[string]string{
		"valid_until": "", "vcpus": "128", "ram_gb": "1031.5", "available_count": "12", "reliability": "0.9987",
		"dq_flags": "vram_snapped;price_outlier", "region": "Texas, US",
	} {
		if first[name] != want {
			t.Errorf("%s of the Vast offer is %q, want %q", name, first[name], want)
		}
	}
}

// TestOffersParquet: a file of either codec reads back, by a reader that knows nothing of how it
// was written, as the offers it was written from; its pages say the codec asked for, and
// prices are DECIMAL(18, 6).
func TestOffersParquet(t *testing.T) {
	offers := sampleOffers()
	wantRecs := make([]offerRecord, len(offers))
	for i := range offers {
		wantRecs[i] = toOfferRecord(&offers[i])
	}
	for _, c := range []struct {
		compression Compression
		codec       format.CompressionCodec
	}{{"", format.Snappy}, {Snappy, format.Snappy}, {Zstd, format.Zstd}} {
		t.Run(string(c.compression), func(t *testing.T) {
			b := writeOffers(t, Parquet, c.compression, offers)
			path := filepath.Join(t.TempDir(), "offers.parquet")
			if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := parquet.ReadFile[offerRecord](path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantRecs, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("Parquet (-want +got):\n%s", diff)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if codecs := pageCodecs(pf); len(codecs) != 1 || !codecs[c.codec] {
				t.Errorf("the column chunks are compressed with %v, want %v only", codecs, c.codec)
			}
			col, ok := pf.Schema().Lookup("price_usd_per_gpu_hour")
			if !ok || !strings.Contains(col.Node.Type().LogicalType().String(), "DECIMAL(18,6)") {
				t.Errorf("price_usd_per_gpu_hour is %v, want DECIMAL(18,6)", col.Node.Type().LogicalType())
			}
		})
	}
	if _, err := NewOfferWriter(io.Discard, Parquet, "gzip"); err == nil {
		t.Error("a Parquet writer of an unknown codec")
	}
}

// pageCodecs are the codecs of every column chunk of a Parquet file, as its footer says.
func pageCodecs(pf *parquet.File) map[format.CompressionCodec]bool {
	codecs := map[format.CompressionCodec]bool{}
	for _, rg := range pf.Metadata().RowGroups {
		for _, col := range rg.Columns {
			codecs[col.MetaData.Codec] = true
		}
	}
	return codecs
}

// TestOffersNDJSON: one line per offer, each the offer's JSON as an envelope holds it (the
// same keys, in the CSV's order), compact; nothing else, an empty list writing nothing.
func TestOffersNDJSON(t *testing.T) {
	offers := sampleOffers()
	b := writeOffers(t, NDJSON, "", offers)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(offers) || !strings.HasSuffix(b.String(), "}\n") {
		t.Fatalf("%d lines for %d offers:\n%s", len(lines), len(offers), b.String())
	}
	for i, line := range lines {
		var got schema.Offer
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if diff := cmp.Diff(offers[i], got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
			cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("line %d (-written +read):\n%s", i+1, diff)
		}
		if diff := cmp.Diff(offerColumns.names, objectKeys(t, json.RawMessage(line))); diff != "" {
			t.Errorf("line %d: keys (-csv +ndjson):\n%s", i+1, diff)
		}
	}
	if b := writeOffers(t, NDJSON, "", nil); b.Len() != 0 {
		t.Errorf("no offers as NDJSON: %q, want nothing", b.String())
	}
}

func TestMicros(t *testing.T) {
	for in, want := range map[string]int64{"1.89": 1890000, "0.0000005": 1, "0.0000004": 0, "6.880000": 6880000, "-0.1": -100000, "123456.654321": 123456654321} {
		if got := micros(decimal.RequireFromString(in)); got != want {
			t.Errorf("micros(%s) = %d, want %d", in, got, want)
		}
	}
}

// TestHistoryFile: a history file in Parquet of either codec, and in NDJSON, reads back as the
// points it was written from.
func TestHistoryFile(t *testing.T) {
	d := decimal.RequireFromString
	at := time.Date(2026, 1, 26, 0, 0, 0, 0, time.UTC)
	points := []schema.HistoryPoint{
		{Bucket: at, Provider: "lambda", GPUModel: "A100-SXM-80GB", PriceType: schema.OnDemand, Min: d("1.29"), Avg: d("1.540001"), Median: d("1.79"), Max: d("1.79"), Observations: 28, Offers: 1},
		{Bucket: at.AddDate(0, 0, 1), Provider: "runpod", GPUModel: "A100-SXM-80GB", PriceType: schema.Spot, Min: d("0.000001"), Avg: d("0.5"), Median: d("0.5"), Max: d("1"), Observations: 3, Offers: 2},
	}
	for _, c := range []struct {
		compression Compression
		codec       format.CompressionCodec
	}{{Snappy, format.Snappy}, {Zstd, format.Zstd}} {
		t.Run("parquet "+string(c.compression), func(t *testing.T) {
			var b bytes.Buffer
			if err := HistoryFile(&b, Parquet, c.compression, points); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "history.parquet")
			if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := parquet.ReadFile[historyRecord](path)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(points) {
				t.Fatalf("%d rows, want %d", len(got), len(points))
			}
			for i, h := range points {
				g := got[i]
				if !g.Bucket.Equal(h.Bucket) || g.Provider != h.Provider || g.Min != micros(h.Min) || g.Max != micros(h.Max) || g.Avg != micros(h.Avg) || g.Observations != int64(h.Observations) {
					t.Errorf("row %d = %+v, want %s %s min %s avg %s max %s n %d", i, g, h.Bucket, h.Provider, h.Min, h.Avg, h.Max, h.Observations)
				}
			}
			pf, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if codecs := pageCodecs(pf); len(codecs) != 1 || !codecs[c.codec] {
				t.Errorf("the column chunks are compressed with %v, want %v only", codecs, c.codec)
			}
		})
	}
	t.Run("ndjson", func(t *testing.T) {
		var b bytes.Buffer
		if err := HistoryFile(&b, NDJSON, "", points); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(&b)
		var got []schema.HistoryPoint
		for dec.More() {
			var p schema.HistoryPoint
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			got = append(got, p)
		}
		if diff := cmp.Diff(points, got, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("NDJSON (-written +read):\n%s", diff)
		}
	})
}

func TestUnsupportedFormat(t *testing.T) {
	var b bytes.Buffer
	for name, err := range map[string]error{
		"offers as Markdown":   Offers(&b, Markdown, nil),
		"history as XML":       History(&b, "xml", schema.Day, nil),
		"a history file table": HistoryFile(&b, Table, Snappy, nil),
		"changes as NDJSON":    Changes(&b, NDJSON, nil),
		"changes as Parquet":   Changes(&b, Parquet, nil),
		"the catalog as Parq":  GPUs(&b, Parquet, nil),
	} {
		if err == nil || !strings.Contains(err.Error(), "no ") {
			t.Errorf("%s: %v, want an error", name, err)
		}
	}
	if b.Len() != 0 {
		t.Errorf("an unsupported format wrote %q", b.String())
	}
}

// TestSummariesVocabulary: the groups of `gpucost offers --group-by` name their fields alike in
// CSV and JSON, every key in every item (nulls too), and as docs/analysts.md lists them.
func TestSummariesVocabulary(t *testing.T) {
	by := []market.Dimension{market.ByGPU, market.ByProvider}
	groups := market.Summaries(sampleOffers(), by)
	var b bytes.Buffer
	if err := Summaries(&b, CSV, by, groups, View{}); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(groups) {
		t.Fatalf("%d CSV rows for %d groups", len(rows), len(groups))
	}
	b.Reset()
	if err := WriteJSON(&b, Envelope[market.Summary]{Schema: OfferGroupsSchema, Items: groups}); err != nil {
		t.Fatal(err)
	}
	var items Envelope[json.RawMessage]
	if err := json.Unmarshal(b.Bytes(), &items); err != nil || len(items.Items) != len(groups) {
		t.Fatalf("JSON: %v\n%s", err, b.String())
	}
	for _, item := range items.Items {
		if diff := cmp.Diff(rows[0], objectKeys(t, item)); diff != "" {
			t.Errorf("CSV header and JSON keys differ (-csv +json):\n%s", diff)
		}
	}
	if diff := cmp.Diff(filesDoc(t)["groups"], rows[0]); diff != "" {
		t.Errorf("docs/analysts.md's columns of groups and the CSV header differ (-doc +csv):\n%s", diff)
	}
	// The H100 at vastai: one on-demand offer at 1.890432 (exact), no spot (empty).
	cells := map[string]string{}
	for i, name := range rows[0] {
		for _, r := range rows[1:] {
			if r[slices.Index(rows[0], "provider")] == "vastai" {
				cells[name] = r[i]
			}
		}
	}
	for name, want := range map[string]string{"gpu_model": "H100-SXM-80GB", "offers": "1", "on_demand_usd_per_gpu_hour": "1.890432",
		"spot_usd_per_gpu_hour": "", "commitment_price_type": "", "gpu_count": "0", "vram_gb": "80"} {
		if cells[name] != want {
			t.Errorf("%s of the vastai group is %q, want %q", name, cells[name], want)
		}
	}
}

// TestOfferTableFits: the offers table fits the width it is given by leaving out its least
// needed columns first, and says which; a column a filter reads stays; prices line up on their
// decimal point; a column with nothing to say is not shown; every column with width 0.
func TestOfferTableFits(t *testing.T) {
	offers := sampleOffers()
	offers[1].VCPUs, offers[0].VCPUs = nil, nil // no provider says its hosts' vCPUs
	table := func(v View) (head []string, lines []string, notes string) {
		t.Helper()
		var b bytes.Buffer
		if err := OfferTable(&b, offers, v); err != nil {
			t.Fatal(err)
		}
		rows, notes, _ := strings.Cut(b.String(), "\n\n")
		lines = strings.Split(rows, "\n")
		return strings.Split(regexp.MustCompile(`\s{2,}`).ReplaceAllString(lines[0], "|"), "|"), lines, notes
	}
	for _, tt := range []struct {
		width int
		f     schema.OfferFilter
		head  []string
		notes string
	}{
		{100, schema.OfferFilter{}, []string{"PROVIDER", "GPU", "N", "VRAM", "RAM", "PRICE TYPE", "$/GPU-H", "$/H", "INTRA", "INTER", "REGION"},
			"left out to fit 100 columns: OFFER, TIER; --wide shows them\n"},
		{80, schema.OfferFilter{}, []string{"PROVIDER", "GPU", "N", "VRAM", "PRICE TYPE", "$/GPU-H", "INTRA", "REGION"},
			"left out to fit 80 columns: OFFER, TIER, RAM, INTER, $/H; --wide shows them\n"},
		{60, schema.OfferFilter{MinRAMGB: 64}, []string{"PROVIDER", "GPU", "N", "RAM", "PRICE TYPE", "$/GPU-H"},
			"left out to fit 60 columns: OFFER, TIER, INTER, $/H, INTRA,\n  REGION, VRAM; --wide shows them\n"},
		{50, schema.OfferFilter{}, []string{"PROVIDER", "GPU", "N", "PRICE TYPE", "$/GPU-H"},
			"left out to fit 50 columns: OFFER, TIER, RAM,\n  INTER, $/H, INTRA, REGION, VRAM; --wide shows\n  them\n"},
	} {
		head, lines, notes := table(View{Width: tt.width, Filter: tt.f})
		if diff := cmp.Diff(tt.head, head); diff != "" {
			t.Errorf("width %d: columns (-want +got):\n%s", tt.width, diff)
		}
		if notes != tt.notes {
			t.Errorf("width %d: notes %q, want %q", tt.width, notes, tt.notes)
		}
		for _, l := range append(lines, strings.Split(notes, "\n")...) {
			if n := utf8.RuneCountInString(l); n > tt.width {
				t.Errorf("width %d: a line of %d characters: %q", tt.width, n, l)
			}
		}
		// $/GPU-H: $1.8904, $6.88 and $0.00 end their digits where the point says.
		at := strings.Index(lines[0], "$/GPU-H")
		points := map[int]bool{}
		for _, l := range lines[1:] {
			points[at+strings.IndexByte(l[at:], '.')] = true
		}
		if len(points) != 1 {
			t.Errorf("width %d: the prices' points are at %v:\n%s", tt.width, points, strings.Join(lines, "\n"))
		}
	}
	head, lines, notes := table(View{})
	if want := []string{"PROVIDER", "GPU", "N", "VRAM", "CPUS", "RAM", "PRICE TYPE", "$/GPU-H", "$/H", "INTRA", "INTER", "REGION", "TIER", "OFFER"}; !slices.Equal(head, want) || notes != "" {
		t.Errorf("every column: %v, notes %q", head, notes)
	}
	if !strings.HasSuffix(lines[2], "  import:H100-SXM-80GB/8x/datacenter/us-ea…") {
		t.Errorf("a long offer id is not cut at %d characters: %q", OfferCellWidth, lines[2])
	}
}

// writeOffers writes offers through an OfferWriter of format f, one at a time, as an export
// does.
func writeOffers(t *testing.T, f Format, c Compression, offers []schema.Offer) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	ow, err := NewOfferWriter(&b, f, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range offers {
		if err := ow.Write(&offers[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := ow.Close(); err != nil {
		t.Fatal(err)
	}
	return &b
}
