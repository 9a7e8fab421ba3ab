package pricetable_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/pricetable"
	"github.com/gpucost/gpucost/schema"
)

// The tables of testdata: good.csv is a published price table as an analyst would paste it
// (comments, mixed-case headers, canonical and provider spellings, optional columns, and one
// price cut on line 8); bad.csv has a problem on every line but line 3, and bad.errors the start
// of each error Parse reports for it, in order.

// testdata returns the text of testdata/name.
func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parse parses content as the table path, and returns its problems as a list.
func parse(t *testing.T, path, content string, opts pricetable.Options) (schema.Import, []error) {
	t.Helper()
	imp, err := pricetable.Parse(path, []byte(content), opts)
	var bad pricetable.Errors
	if err != nil && !errors.As(err, &bad) {
		t.Fatalf("Parse(%s) failed other than with the table's problems: %v", path, err)
	}
	var errs []error
	for _, le := range bad {
		errs = append(errs, le)
	}
	return imp, errs
}

func TestParse(t *testing.T) {
	goodTable, badTable, wantBadLines := testdata(t, "good.csv"), testdata(t, "bad.csv"), strings.Split(strings.TrimSuffix(testdata(t, "bad.errors"), "\n"), "\n")
	lim := pricetable.Options{Pipeline: pipeline.Config{MaxPricePerGPUHour: decimal.NewFromInt(200)}, Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	t.Run("good", func(t *testing.T) {
		imp, errs := parse(t, "dir/good.csv", goodTable, lim)
		if len(errs) > 0 {
			t.Fatalf("errors: %v", errs)
		}
		if len(imp.Offers) != 6 || !strings.HasPrefix(imp.RunID, "import-") {
			t.Fatalf("import %s with %d offers, want 6", imp.RunID, len(imp.Offers))
		}
		o := imp.Offers[1]
		want := schema.Offer{ObservedAt: time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC), RunID: imp.RunID, SourceURL: "import:good.csv",
			Provider: "aws", OfferID: "import:H100-SXM-80GB/8x/datacenter/us-east-1", Tier: schema.TierDatacenter, Region: "us-east-1",
			GPUModel: "H100-SXM-80GB", GPUNameRaw: "NVIDIA H100 SXM5 80GB", GPUCount: 8, VRAMGB: 80,
			PriceType: schema.OnDemand, PriceUSDPerHour: decimal.RequireFromString("55.04"), PriceUSDPerGPUHour: decimal.RequireFromString("6.88"),
			IntraNode: schema.IntraUnknown, InterNode: schema.InterUnknown, Stock: schema.StockUnknown}
		if diff := cmp.Diff(want, o, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
			t.Errorf("second row (-want +got):\n%s", diff)
		}
		if imp.Offers[3].ObservedAt != time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC) || imp.Offers[4].PriceType != schema.Spot {
			t.Errorf("rows 4 and 5: %v %s", imp.Offers[3].ObservedAt, imp.Offers[4].PriceType)
		}
		again, _ := parse(t, "elsewhere/other-name.csv", goodTable, lim)
		if again.RunID != imp.RunID {
			t.Errorf("the same content got run ids %s and %s", imp.RunID, again.RunID)
		}
	})
	t.Run("every bad line", func(t *testing.T) {
		_, errs := parse(t, "bad.csv", badTable, lim)
		var got []string
		for _, err := range errs {
			got = append(got, err.Error())
		}
		if len(got) != len(wantBadLines) {
			t.Errorf("got %d errors, want %d:\n%s", len(got), len(wantBadLines), strings.Join(got, "\n"))
		}
		for i, want := range wantBadLines {
			if i >= len(got) || !strings.HasPrefix(got[i], want) {
				t.Errorf("error %d = %q, want it to start with %q", i+1, at(got, i), want)
			}
		}
	})
	headers := []struct {
		name, content, want string
	}{
		{"empty", "", "empty.csv:1: the file is empty"},
		{"only comments", "# nothing\n", "the file is empty"},
		{"missing columns", "provider,gpu\n", "empty.csv:1: missing required column(s) observed_at, price_type, usd_per_gpu_hour"},
		{"unknown column", "provider,gpu,price_type,usd_per_gpu_hour,observed_at,colour\n", "empty.csv:1: colour: unknown column"},
		{"twice", "provider,gpu,gpu,price_type,usd_per_gpu_hour,observed_at\n", "empty.csv:1: gpu: column named twice"},
		{"no rows", "provider,gpu,price_type,usd_per_gpu_hour,observed_at\n", "empty.csv:1: no rows below the header"},
		{"bad quoting", "provider,gpu,price_type,usd_per_gpu_hour,observed_at\naws,\"H100,on_demand,1,2026-01-01\n", "empty.csv:2:"},
	}
	for _, tt := range headers {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := parse(t, "empty.csv", tt.content, lim)
			if len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Fatalf("errors %v, want the first to contain %q", errs, tt.want)
			}
		})
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

// marketTable gives the columns that make an import market data like a scraped price: how long
// the price holds, the interconnect, availability and the publisher's page.
const marketTable = `provider,gpu,price_type,usd_per_gpu_hour,observed_at,gpu_count,valid_until,intra_node,inter_node,available_count,stock,source_url
aws,H100-SXM-80GB,term_1y,4.30,2026-01-05,8,2026-12-31,nvswitch,infiniband,12,low,https://aws.example/ec2/pricing?region=us-east-1#p5
aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,8,,,,,,
azure,MI300X-192GB,on_demand,5.10,2026-01-05T09:30:00Z,8,2026-03-31T23:59:59Z,infinity_fabric,roce,0,none,https://azure.example/pricing
`

func TestParseMarketColumns(t *testing.T) {
	goodTable := testdata(t, "good.csv")
	lim := pricetable.Options{Pipeline: pipeline.Config{MaxPricePerGPUHour: decimal.NewFromInt(200)}, Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	imp, errs := parse(t, "dir/market.csv", marketTable, lim)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	type market struct {
		ValidUntil     *time.Time
		IntraNode      schema.IntraNode
		InterNode      schema.InterNode
		AvailableCount *uint32
		Stock          schema.Stock
		SourceURL      string
	}
	var got []market
	for _, o := range imp.Offers {
		got = append(got, market{o.ValidUntil, o.IntraNode, o.InterNode, o.AvailableCount, o.Stock, o.SourceURL})
	}
	endOfYear, endOfMarch := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 31, 23, 59, 59, 0, time.UTC)
	twelve, zero := uint32(12), uint32(0)
	want := []market{
		{&endOfYear, schema.IntraNVSwitch, schema.InterInfiniBand, &twelve, schema.StockLow, "https://aws.example/ec2/pricing?region=us-east-1#p5"},
		// An 8-GPU SXM node whose table says nothing of its fabric: unknown, not NVSwitch or InfiniBand.
		{nil, schema.IntraUnknown, schema.InterUnknown, nil, schema.StockUnknown, "import:market.csv"},
		{&endOfMarch, schema.IntraInfinityFabric, schema.InterRoCE, &zero, schema.StockNone, "https://azure.example/pricing"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("market columns (-want +got):\n%s", diff)
	}

	// Without the columns, every interconnect is unknown too.
	plain, errs := parse(t, "good.csv", goodTable, lim)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, o := range plain.Offers {
		if o.IntraNode != schema.IntraUnknown || o.InterNode != schema.InterUnknown || o.ValidUntil != nil || o.AvailableCount != nil || o.Stock != schema.StockUnknown {
			t.Errorf("%s %s without market columns: intra %s, inter %s, valid until %v, available %v, stock %s; want all unknown",
				o.Provider, o.GPUModel, o.IntraNode, o.InterNode, o.ValidUntil, o.AvailableCount, o.Stock)
		}
	}
}

func TestParseBadMarketColumns(t *testing.T) {
	lim := pricetable.Options{Pipeline: pipeline.Config{MaxPricePerGPUHour: decimal.NewFromInt(200)}, Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	const header = "provider,gpu,price_type,usd_per_gpu_hour,observed_at,valid_until,intra_node,inter_node,available_count,stock,source_url\n"
	tests := []struct {
		name, row, want string
	}{
		{"valid_until not a date", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,next year,,,,,", `bad.csv:2: valid_until: cannot read "next year" as a date`},
		{"valid_until before observed_at", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,2026-01-04,,,,,", "bad.csv:2: valid_until: 2026-01-04 is not after observed_at 2026-01-05"},
		{"valid_until equal to observed_at", "aws,H100-SXM-80GB,on_demand,2,2026-01-05T10:00:00Z,2026-01-05 10:00:00,,,,,", "bad.csv:2: valid_until: 2026-01-05 10:00:00 is not after observed_at"},
		{"valid_until out of range", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,2999-01-01,,,,,", `bad.csv:2: valid_until: "2999-01-01" is out of range`},
		{"intra_node", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,NVLink 4,,,,", `bad.csv:2: intra_node: unknown interconnect "NVLink 4" (want one of [nvswitch nvlink infinity_fabric pcie unknown])`},
		{"inter_node", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,efa,,,", `bad.csv:2: inter_node: unknown interconnect "efa" (want one of [infiniband roce ethernet none unknown])`},
		{"available_count negative", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,-1,,", `bad.csv:2: available_count: "-1" is not a whole number of 0 or more`},
		{"available_count fraction", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,2.5,,", `bad.csv:2: available_count: "2.5" is not a whole number`},
		{"available_count too big", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,4294967296,,", `bad.csv:2: available_count: "4294967296" is not a whole number`},
		{"stock", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,plenty,", `bad.csv:2: stock: unknown stock level "plenty" (want one of [high medium low none unknown])`},
		{"source_url http", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,,http://aws.example/pricing", `bad.csv:2: source_url: "http://aws.example/pricing" is not an https:// URL`},
		{"source_url not a URL", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,,the AWS page", `bad.csv:2: source_url: "the AWS page" is not a URL`},
		{"source_url without host", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,,https:///pricing", `bad.csv:2: source_url: "https:///pricing" is not an https:// URL`},
		{"source_url with a password", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,,https://me:hunter2@aws.example/pricing", "bad.csv:2: source_url: the URL holds a user name or password (not shown)"},
		{"source_url with a user", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,,http://me@aws.example/pricing", "bad.csv:2: source_url: the URL holds a user name or password (not shown)"},
		{"source_url with a key", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,,https://aws.example/pricing?region=x&API_KEY=abc", `bad.csv:2: source_url: the URL has the query parameter "API_KEY", which carries credentials`},
		{"source_url with a token", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,,,,,,https://aws.example/p?token=abc", `the URL has the query parameter "token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imp, errs := parse(t, "bad.csv", header+tt.row+"\n", lim)
			if len(imp.Offers) != 0 {
				t.Errorf("a bad table gave %d offers, want none", len(imp.Offers))
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Fatalf("errors %v, want one containing %q", errs, tt.want)
			}
			if strings.Contains(errs[0].Error(), "hunter2") || strings.Contains(errs[0].Error(), "abc") {
				t.Errorf("error %q repeats a credential", errs[0])
			}
		})
	}
}

// TestReadAndLimits reads a table from its file, and stops at the row limit.
func TestReadAndLimits(t *testing.T) {
	opts := pricetable.Options{Pipeline: pipeline.Config{MaxPricePerGPUHour: decimal.NewFromInt(200)}, Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	imp, err := pricetable.Read(filepath.Join("testdata", "good.csv"), opts)
	if err != nil || len(imp.Offers) != 6 || imp.Payload.URL != "import:good.csv" || string(imp.Payload.Body) != testdata(t, "good.csv") {
		t.Errorf("Read: %d offers, payload %s of %d bytes, error %v; want 6 offers and the file as payload", len(imp.Offers), imp.Payload.URL, len(imp.Payload.Body), err)
	}
	var bad pricetable.Errors
	if _, err := pricetable.Read(filepath.Join(t.TempDir(), "missing.csv"), opts); err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "missing.csv") {
		t.Errorf("a missing file: %v, want an error naming it, not a table's problems", err)
	}

	opts.MaxRows = 2
	_, err = pricetable.Parse("good.csv", []byte(testdata(t, "good.csv")), opts)
	if !errors.As(err, &bad) || len(bad) != 1 || bad[0].Error() != "good.csv:5: more than 2 rows: split the file" {
		t.Errorf("three rows where two may be: %v", err)
	}

	_, err = pricetable.Parse("bad.csv", []byte(testdata(t, "bad.csv")), pricetable.Options{Pipeline: opts.Pipeline})
	if !errors.As(err, &bad) || bad.Lines() != 12 || err.Error() != "bad.csv has 12 bad lines" {
		t.Errorf("bad.csv: %v (%d lines), want 12 bad lines", err, bad.Lines())
	}
	if _, err := pricetable.Parse("good.csv", []byte(testdata(t, "good.csv")), pricetable.Options{}); err == nil || errors.As(err, &bad) {
		t.Errorf("no price cap: %v, want an error of the caller's", err)
	}
}
