package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
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
		if offers, err = countRows(fx.dsn, "offers", "startsWith(run_id, 'import-')"); err != nil {
			t.Fatal(err)
		}
		if payloads, err = countRows(fx.dsn, "raw_payloads", "startsWith(run_id, 'import-')"); err != nil {
			t.Fatal(err)
		}
		return offers, payloads
	}

	// A bad file: every bad line reported, nothing loaded.
	e, stdout, stderr := fx.env()
	if code := runImport(ctx, e, []string{bad}); code != exitFailed {
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
	if code := runImport(ctx, e, []string{good}); code != exitOK {
		t.Fatalf("good file: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "imported 6 observations (aws 4, azure 2) from "+good) {
		t.Errorf("stdout: %s", stdout)
	}
	e, stdout, stderr = fx.env()
	if code := runImport(ctx, e, []string{good}); code != exitOK {
		t.Fatalf("good file again: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "was already imported as run import-") || !strings.Contains(stdout.String(), "nothing loaded") {
		t.Errorf("second import stdout: %s", stdout)
	}
	if o, p := countImports(); o != 6 || p != 1 {
		t.Fatalf("after importing twice the store holds %d imported offers and %d payloads, want 6 and 1", o, p)
	}
	if n, _ := countRows(fx.dsn, "scrape_runs", ""); n != 0 {
		t.Errorf("imports wrote %d run-log rows, want none", n)
	}

	// The imported rows are history and changes like any others.
	e, stdout, stderr = fx.env()
	if code := runHistory(ctx, e, []string{"--gpu", "H100-SXM-80GB", "--provider", "aws", "--price-type", "on_demand", "--interval", "week",
		"--since", "2026-01-01", "--until", "2026-02-01", "--output", "json"}); code != exitOK {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	var points []store.HistoryPoint
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
	if code := runChanges(ctx, e, []string{"--provider", "aws,azure", "--since", "2026-01-01", "--until", "2026-02-01", "--output", "csv"}); code != exitOK {
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
	if code := runImport(context.Background(), e, nil); code != exitUsage || !strings.Contains(stderr.String(), "want exactly one CSV file") {
		t.Errorf("no file: exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := runImport(context.Background(), e, []string{filepath.Join(t.TempDir(), "missing.csv")}); code != exitFailed || !strings.Contains(stderr.String(), "missing.csv") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	if code := runImport(context.Background(), e, []string{"--dry-run", writeFile(t, t.TempDir(), "p.csv", goodTable)}); code != exitOK || !strings.Contains(stdout.String(), "dry run:") {
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
