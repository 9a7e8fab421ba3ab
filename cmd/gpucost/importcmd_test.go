package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

// goodTable is a published price table as an analyst would paste it: comments, mixed-case
// headers, canonical and provider spellings, optional columns, and one price cut (line 8).
const goodTable = `# AWS and Azure list prices, copied from their pricing pages
Provider,GPU,Price_Type,USD_per_GPU_hour,Observed_At,VRAM_GB,GPU_Count,Region,Tier
aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,80,8,us-east-1,
aws,NVIDIA H100 SXM5 80GB,on_demand,6.88,2026-01-12,,8,us-east-1,
aws,H100-SXM-80GB,term_1y,4.30,2026-01-12,,8,us-east-1,datacenter
azure,A100-SXM-80GB,on_demand,3.67,2026-01-05T09:30:00Z,80,8,eastus,
azure,A100 SXM4 80GB,spot,1.47,2026-01-05 09:30:00,,8,eastus,
aws,H100-SXM-80GB,on_demand,3.93,2026-01-19,80,8,us-east-1,
`

// badTable has a problem on every line but line 3.
const badTable = `provider,gpu,price_type,usd_per_gpu_hour,observed_at,vram_gb,gpu_count,region,tier
aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,80,8,us-east-1,
aws,H1000,on_demand,6.88,2026-01-05,,8,us-east-1,
aws,H100-SXM-80GB,on_demand,-1,2026-01-05,,4,us-east-1,
aws,H100-SXM-80GB,on_demand,2.1234567,2026-01-05,,4,us-east-1,
aws,H100-SXM-80GB,hourly,6.88,2026-01-05,,2,us-east-1,
AWS; DROP TABLE offers,H100-SXM-80GB,on_demand,6.88,2026-01-05,,8,us-east-1,
aws,H100-SXM-80GB,on_demand,6.88,31/01/2026,,8,us-east-1,
aws,H100-SXM-80GB,on_demand,6.88,2099-01-01,,8,us-east-1,
aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,40,1,us-east-1,
aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,80,8,us-east-1,
aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,80
aws,H100-SXM-80GB,on_demand,6.88,2026-01-06,80,0,us-east-1,gold
aws,H100-SXM-80GB,on_demand,999,2026-01-06,80,1,us-east-1,
`

var wantBadLines = []string{
	"bad.csv:3: gpu: unknown GPU \"H1000\"",
	"bad.csv:4: usd_per_gpu_hour: -1 is not positive",
	"bad.csv:5: usd_per_gpu_hour: 2.1234567 has more than 6 decimals",
	"bad.csv:6: price_type: unknown price type \"hourly\"",
	"bad.csv:7: provider: \"AWS; DROP TABLE offers\" is not a provider name",
	"bad.csv:8: observed_at: cannot read \"31/01/2026\" as a date",
	"bad.csv:9: observed_at: 2099-01-01 is in the future",
	"bad.csv:10: vram_gb: 40 GB does not match H100-SXM-80GB (80 GB per GPU)",
	"bad.csv:11: the same offer (aws H100-SXM-80GB, 8 GPUs, datacenter, on_demand) at the same time as line 2",
	"bad.csv:12: 6 fields, but the header names 9 columns",
	"bad.csv:13: gpu_count: \"0\" is not a whole number of GPUs between 1 and 1024",
	"bad.csv:13: tier: unknown tier \"gold\"",
	"bad.csv:14: usd_per_gpu_hour: 999 is above the plausible maximum of 200",
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParsePriceTable(t *testing.T) {
	lim := importLimits{maxPrice: decimal.NewFromInt(200), now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	t.Run("good", func(t *testing.T) {
		imp, errs := parsePriceTable("dir/good.csv", []byte(goodTable), lim)
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
		again, _ := parsePriceTable("elsewhere/other-name.csv", []byte(goodTable), lim)
		if again.RunID != imp.RunID {
			t.Errorf("the same content got run ids %s and %s", imp.RunID, again.RunID)
		}
	})
	t.Run("every bad line", func(t *testing.T) {
		_, errs := parsePriceTable("bad.csv", []byte(badTable), lim)
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
			_, errs := parsePriceTable("empty.csv", []byte(tt.content), lim)
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

func TestImportGoodBadAndTwice(t *testing.T) {
	fx := newAnFixture(t)
	dir := t.TempDir()
	good := writeFile(t, dir, "cloud-list-prices.csv", goodTable)
	bad := writeFile(t, dir, "bad.csv", badTable)
	ctx := context.Background()
	countImports := func() (offers, payloads int) {
		t.Helper()
		var err error
		if offers, err = countRows(fx.DSN, "offers", "startsWith(run_id, 'import-')"); err != nil {
			t.Fatal(err)
		}
		if payloads, err = countRows(fx.DSN, "raw_payloads", "startsWith(run_id, 'import-')"); err != nil {
			t.Fatal(err)
		}
		return offers, payloads
	}

	// A bad file: every bad line reported, nothing loaded.
	e, stdout, stderr := fx.env()
	if code := runCommand("import", ctx, e, []string{bad}); code != exitFailed {
		t.Fatalf("bad file: exit %d, want %d\n%s%s", code, exitFailed, stdout, stderr)
	}
	for _, want := range wantBadLines {
		if !strings.Contains(stderr.String(), strings.Replace(want, "bad.csv", bad, 1)) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stderr.String(), "has 12 bad lines: nothing loaded") {
		t.Errorf("stderr lacks the summary:\n%s", stderr)
	}
	if o, p := countImports(); o != 0 || p != 0 {
		t.Fatalf("after the bad file the store holds %d imported offers and %d payloads, want none", o, p)
	}

	// A good file, then the same file again.
	e, stdout, stderr = fx.env()
	if code := runCommand("import", ctx, e, []string{good}); code != exitOK {
		t.Fatalf("good file: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "imported 6 observations (aws 4, azure 2) from "+good) {
		t.Errorf("stdout: %s", stdout)
	}
	e, stdout, stderr = fx.env()
	if code := runCommand("import", ctx, e, []string{good}); code != exitOK {
		t.Fatalf("good file again: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "was already imported as run import-") || !strings.Contains(stdout.String(), "nothing loaded") {
		t.Errorf("second import stdout: %s", stdout)
	}
	if o, p := countImports(); o != 6 || p != 1 {
		t.Fatalf("after importing twice the store holds %d imported offers and %d payloads, want 6 and 1", o, p)
	}
	if n, _ := countRows(fx.DSN, "scrape_runs", ""); n != 0 {
		t.Errorf("imports wrote %d run-log rows, want none", n)
	}

	// The imported rows are history and changes like any others.
	e, stdout, stderr = fx.env()
	if code := runCommand("history", ctx, e, []string{"--gpu", "H100-SXM-80GB", "--provider", "aws", "--price-type", "on_demand", "--interval", "week",
		"--since", "2026-01-01", "--until", "2026-02-01", "--output", "json"}); code != exitOK {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	var points []schema.HistoryPoint
	if err := json.Unmarshal(stdout.Bytes(), &points); err != nil {
		t.Fatal(err)
	}
	var mins []string
	for _, p := range points {
		mins = append(mins, p.Bucket.Format("01-02")+" "+p.Min.String())
	}
	if diff := cmp.Diff([]string{"01-05 6.88", "01-12 6.88", "01-19 3.93"}, mins); diff != "" {
		t.Errorf("weekly history of the import (-want +got):\n%s", diff)
	}
	e, stdout, stderr = fx.env()
	if code := runCommand("changes", ctx, e, []string{"--provider", "aws,azure", "--since", "2026-01-01", "--until", "2026-02-01", "--output", "csv"}); code != exitOK {
		t.Fatalf("changes: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "2026-01-19T00:00:00Z,2026-01-12T00:00:00Z,aws,H100-SXM-80GB,8,on_demand,import:H100-SXM-80GB/8x/datacenter/us-east-1,datacenter,us-east-1,6.880000,3.930000,-2.950000,-42.88,import-") {
		t.Errorf("changes of the import:\n%s", stdout)
	}
}

func TestImportUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	e := env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	if code := runCommand("import", context.Background(), e, nil); code != exitUsage || !strings.Contains(stderr.String(), "want exactly one CSV file") {
		t.Errorf("no file: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := runCommand("import", context.Background(), e, []string{filepath.Join(t.TempDir(), "missing.csv")}); code != exitFailed || !strings.Contains(stderr.String(), "missing.csv") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	if code := runCommand("import", context.Background(), e, []string{"--dry-run", writeFile(t, t.TempDir(), "p.csv", goodTable)}); code != exitOK || !strings.Contains(stdout.String(), "dry run:") {
		t.Errorf("dry run: exit %d, stdout %q", code, stdout.String())
	}
}

func writeConfigFile(t *testing.T, content string) string {
	t.Helper()
	path := t.TempDir() + "/gpucost.yaml"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// marketTable gives the columns that make an import market data like a scraped price: how long
// the price holds, the interconnect, availability and the publisher's page.
const marketTable = `provider,gpu,price_type,usd_per_gpu_hour,observed_at,gpu_count,valid_until,intra_node,inter_node,available_count,stock,source_url
aws,H100-SXM-80GB,term_1y,4.30,2026-01-05,8,2026-12-31,nvswitch,infiniband,12,low,https://aws.example/ec2/pricing?region=us-east-1#p5
aws,H100-SXM-80GB,on_demand,6.88,2026-01-05,8,,,,,,
azure,MI300X-192GB,on_demand,5.10,2026-01-05T09:30:00Z,8,2026-03-31T23:59:59Z,infinity_fabric,roce,0,none,https://azure.example/pricing
`

func TestParsePriceTableMarketColumns(t *testing.T) {
	lim := importLimits{maxPrice: decimal.NewFromInt(200), now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	imp, errs := parsePriceTable("dir/market.csv", []byte(marketTable), lim)
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
	plain, errs := parsePriceTable("good.csv", []byte(goodTable), lim)
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

func TestParsePriceTableBadMarketColumns(t *testing.T) {
	lim := importLimits{maxPrice: decimal.NewFromInt(200), now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
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
			imp, errs := parsePriceTable("bad.csv", []byte(header+tt.row+"\n"), lim)
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

// TestImportValidUntilIsTodaysPrice imports a table published weeks ago: the row valid for a
// year is in today's market with everything the table said; the row without valid_until and
// the one that has expired are not.
func TestImportValidUntilIsTodaysPrice(t *testing.T) {
	st := storetest.Open(t)
	fx := &anFixture{&storetest.History{DSN: storetest.DatabaseDSN(t, st.Database()), Store: st}}
	now := time.Now().UTC()
	published := now.AddDate(0, 0, -40).Format("2006-01-02")
	table := "provider,gpu,price_type,usd_per_gpu_hour,observed_at,gpu_count,region,valid_until,intra_node,inter_node,available_count,stock,source_url\n" +
		"aws,H100-SXM-80GB,term_1y,4.30," + published + ",8,us-east-1," + now.AddDate(1, 0, 0).Format("2006-01-02") + ",nvswitch,infiniband,12,low,https://aws.example/ec2/pricing\n" +
		"aws,H100-SXM-80GB,on_demand,6.88," + published + ",8,us-east-1,,,,,,\n" +
		"aws,A100-SXM-80GB,on_demand,3.10," + published + ",8,us-east-1," + now.AddDate(0, 0, -1).Format("2006-01-02") + ",nvswitch,infiniband,,,\n"
	file := writeFile(t, t.TempDir(), "aws-2026.csv", table)
	ctx := context.Background()
	e, stdout, stderr := fx.env()
	if code := runCommand("import", ctx, e, []string{file}); code != exitOK {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	e, stdout, stderr = fx.env()
	if code := runCommand("offers", ctx, e, []string{"--output", "json", "--max-age", "6h"}); code != exitOK {
		t.Fatalf("offers: exit %d\n%s", code, stderr)
	}
	var got []schema.Offer
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("today's market holds %d offers, want the one still valid:\n%s", len(got), stdout)
	}
	o := got[0]
	until, _ := time.Parse("2006-01-02", now.AddDate(1, 0, 0).Format("2006-01-02"))
	if o.PriceType != schema.Term1Y || o.ValidUntil == nil || !o.ValidUntil.Equal(until) || o.IntraNode != schema.IntraNVSwitch || o.InterNode != schema.InterInfiniBand ||
		o.AvailableCount == nil || *o.AvailableCount != 12 || o.Stock != schema.StockLow || o.SourceURL != "https://aws.example/ec2/pricing" {
		t.Errorf("the imported offer read back as %+v", o)
	}
	// All three are history.
	if n, err := countRows(fx.DSN, "offers", "startsWith(run_id, 'import-')"); err != nil || n != 3 {
		t.Errorf("%d imported observations (%v), want 3", n, err)
	}
}

// TestImportedPricesArePlanned imports two price tables and plans on them: the provider whose
// table is current gets the workload (an import is market data like a scrape, with no scrape
// run of its own); the one whose prices are three days old and the one whose table expired
// yesterday are named in the plan with the reason, though they are cheaper.
func TestImportedPricesArePlanned(t *testing.T) {
	st := storetest.Open(t)
	dsn := storetest.DatabaseDSN(t, st.Database())
	dir := t.TempDir()
	now := time.Now().UTC()
	header := "provider,gpu,price_type,usd_per_gpu_hour,observed_at,gpu_count,region,valid_until\n"
	fresh := writeFile(t, dir, "aws.csv", header+"aws,L40S-48GB,on_demand,1.86,"+now.Add(-time.Hour).Format(time.RFC3339)+",1,us-east-1,\n")
	stale := writeFile(t, dir, "azure.csv", header+"azure,L40S-48GB,on_demand,1.20,"+now.AddDate(0, 0, -3).Format(time.RFC3339)+",1,eastus,\n")
	expired := writeFile(t, dir, "gcp.csv", header+"gcp,L40S-48GB,on_demand,1.10,"+now.AddDate(0, -1, 0).Format(time.RFC3339)+",1,us-central1,"+now.Add(-24*time.Hour).Format(time.RFC3339)+"\n")
	workloads := writeFile(t, dir, "workloads.yaml", `teams:
  - name: search
    email: search@example.com
    workloads:
      - name: chat-7b
        kind: inference
        params_b: 7
        precision: fp16
        context_tokens: 4096
        concurrency: 8
        hours_per_month: 730
`)
	cfg := writeFile(t, dir, "gpucost.yaml", fmt.Sprintf("clickhouse:\n  dsn: %q\noptimize:\n  workloads: %q\n", dsn, workloads))
	for _, table := range []string{fresh, stale, expired} {
		if code, out := runCLI("import", "--config", cfg, table); code != exitOK {
			t.Fatalf("import %s: exit %d\n%s", table, code, out)
		}
	}
	plan := optimizeJSON(t, cfg)
	rec := plan.Teams[0].Workloads[0].Recommended
	if rec == nil || rec.Provider != "aws" || !rec.PriceUSDPerGPUHour.Equal(decimal.RequireFromString("1.86")) {
		t.Fatalf("recommended %+v, want aws's imported L40S at $1.86", rec)
	}
	ex := plan.ExcludedProviders
	if len(ex) != 2 || ex[0].Provider != "azure" || !strings.Contains(ex[0].Reason, "observed 3d ago, older than the 24h a price holds") ||
		ex[1].Provider != "gcp" || !strings.Contains(ex[1].Reason, "its prices held until") {
		t.Errorf("excluded providers %+v, want azure (its price 3 days old) and gcp (its table expired yesterday)", ex)
	}
}
