package pricetable_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/pricetable"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
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
			IntraNode: schema.IntraUnknown, InterNode: schema.InterUnknown, Stock: schema.StockUnknown,
			DQFlags:       []schema.DQFlag{schema.FlagVRAMMissing}, // the row gives no vram_gb: flagged as a scrape flags it
			ParserVersion: pricetable.ParserVersion()}
		if v := o.ParserVersion; !strings.HasPrefix(v, "pricetable/") || !strings.Contains(v, " gpus/") {
			t.Errorf("parser version %q, want pricetable/<date> gpus/<catalog>", v)
		}
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

// source is a pipeline.Source that returns offers.
type source struct {
	name   string
	offers []schema.Offer
}

var _ pipeline.Source = source{}

func (s source) Name() string { return s.name }
func (s source) Fetch(context.Context, schema.Run) (schema.Extract, error) {
	return schema.Extract{Offers: s.offers}, nil
}

// TestImportedRowsAreFlaggedAsScraped scrapes a Vast ask (its VRAM in MiB, which the catalog
// snaps) and two Lambda instance types (one whose text gives its VRAM, one without) through a
// dry run of the pipeline, imports the same rows as a table, and wants the same dq_flags on both.
func TestImportedRowsAreFlaggedAsScraped(t *testing.T) {
	run := schema.Run{ID: "run-1", ObservedAt: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)}
	vast, _, err := scrapers.ParseVast([]byte(`{"offers": [{"id": 1, "num_gpus": 8, "dph_total": 20, "gpu_name": "H100 SXM", "gpu_ram": 81559,
		"verification": "verified", "geolocation": "Texas, US"}]}`), run, "https://vast.example/")
	if err != nil {
		t.Fatal(err)
	}
	lambda, _, err := scrapers.ParseLambda([]byte(`{"data": {
		"gpu_8x_h100_sxm5": {"instance_type": {"name": "gpu_8x_h100_sxm5", "description": "8x H100 (80 GB SXM5)", "gpu_description": "H100 (80 GB SXM5)",
			"price_cents_per_hour": 2392, "specs": {"vcpus": 208, "memory_gib": 1800, "storage_gib": 24780, "gpus": 8}}, "regions_with_capacity_available": []},
		"gpu_1x_a10": {"instance_type": {"name": "gpu_1x_a10", "description": "1x A10", "gpu_description": "A10",
			"price_cents_per_hour": 75, "specs": {"vcpus": 30, "memory_gib": 200, "storage_gib": 1400, "gpus": 1}}, "regions_with_capacity_available": []}}}`),
		run, "https://lambda.example/")
	if err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.Config{MaxPricePerGPUHour: decimal.NewFromInt(200)}
	r, err := pipeline.New(cfg, []pipeline.Source{source{scrapers.VastName, vast}, source{scrapers.LambdaName, lambda}}, nil, nil, pipeline.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Provider, GPU string }
	scraped := map[row][]schema.DQFlag{}
	for _, b := range rep.Batches {
		for _, o := range b.Offers {
			scraped[row{o.Provider, o.GPUModel}] = o.DQFlags
		}
	}
	if len(scraped) != 3 {
		t.Fatalf("the scrape kept %d offers, want 3: %+v", len(scraped), rep.Providers)
	}

	table := "provider,gpu,price_type,usd_per_gpu_hour,observed_at,vram_gb,gpu_count,region,tier\n" +
		"vastai,H100 SXM,on_demand,2.5,2026-01-05,85.52,8,us-texas,verified\n" + // 81559 MiB
		"lambda,H100 (80 GB SXM5),on_demand,2.99,2026-01-05,80,8,,\n" +
		"lambda,A10,on_demand,0.75,2026-01-05,,1,,\n"
	imp, errs := parse(t, "lists.csv", table, pricetable.Options{Pipeline: cfg, Now: run.ObservedAt})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	imported := map[row][]schema.DQFlag{}
	for _, o := range imp.Offers {
		imported[row{o.Provider, o.GPUModel}] = o.DQFlags
	}
	if diff := cmp.Diff(scraped, imported, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("dq_flags by provider and GPU (-scraped +imported):\n%s", diff)
	}
	want := map[row][]schema.DQFlag{
		{"vastai", "H100-SXM-80GB"}: {schema.FlagVRAMSnapped},
		{"lambda", "H100-SXM-80GB"}: nil,
		{"lambda", "A10-24GB"}:      {schema.FlagVRAMMissing},
	}
	if diff := cmp.Diff(want, imported, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("dq_flags of the import (-want +got):\n%s", diff)
	}
}

// TestParseByTheScrapesRules: a row passes the checks a scraped offer does, with the scrape's
// configuration (the price cap) and the catalog's VRAM tolerance (gpus.SnapTolerance), and every
// catalog model's own name imports as that model.
func TestParseByTheScrapesRules(t *testing.T) {
	opts := pricetable.Options{Pipeline: pipeline.Config{MaxPricePerGPUHour: decimal.NewFromInt(5)}, Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	const header = "provider,gpu,price_type,usd_per_gpu_hour,observed_at,vram_gb\n"
	bad := []struct{ name, row, want string }{
		{"above the configured cap", "aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,", "t.csv:2: usd_per_gpu_hour: 6.88 is above the plausible maximum of 5 (scrape.max_price_per_gpu_hour)"},
		{"zero", "aws,H100-SXM-80GB,on_demand,0,2026-01-05,", "t.csv:2: usd_per_gpu_hour: 0 is not positive"},
		{"VRAM beyond the catalog's tolerance", "aws,H100-SXM-80GB,on_demand,2,2026-01-05,73.5", "t.csv:2: vram_gb: 73.5 GB does not match H100-SXM-80GB (80 GB per GPU)"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := parse(t, "t.csv", header+tt.row+"\n", opts)
			if len(errs) != 1 || errs[0].Error() != tt.want {
				t.Errorf("errors %v, want %q", errs, tt.want)
			}
		})
	}

	var table strings.Builder
	table.WriteString(header + "aws,H100-SXM-80GB,on_demand,4.30,2026-01-05,76\n") // within 7%: snapped
	for _, m := range gpus.Models() {
		fmt.Fprintf(&table, "aws,%s,spot,1,2026-01-05,\n", m.Name)
	}
	imp, errs := parse(t, "t.csv", table.String(), opts)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if o := imp.Offers[0]; o.GPUModel != "H100-SXM-80GB" || o.VRAMGB != 80 || !o.HasFlag(schema.FlagVRAMSnapped) {
		t.Errorf("76 GB of an H100 SXM: %s, %g GB, flags %v; want H100-SXM-80GB, 80 GB, vram_snapped", o.GPUModel, o.VRAMGB, o.DQFlags)
	}
	for i, m := range gpus.Models() {
		if o := imp.Offers[i+1]; o.GPUModel != m.Name || o.VRAMGB != m.VRAMGB {
			t.Errorf("%s imported as %q with %g GB", m.Name, o.GPUModel, o.VRAMGB)
		}
	}
}
