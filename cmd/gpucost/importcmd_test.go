package main

import (
	"bytes"
	"context"
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

// priceTable returns a table of pricetable/testdata: good.csv, a published price table as an
// analyst would paste it, and bad.csv, which has a problem on every line but line 3; bad.errors
// holds the start of each error reported for bad.csv, one a line.
func priceTable(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../pricetable/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImportGoodBadAndTwice(t *testing.T) {
	goodTable, badTable, wantBadLines := priceTable(t, "good.csv"), priceTable(t, "bad.csv"), strings.Split(strings.TrimSuffix(priceTable(t, "bad.errors"), "\n"), "\n")
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
	// The same as one record, in JSON and CSV: nothing stored, already imported.
	e, stdout, stderr = fx.env()
	if code := runCommand("import", ctx, e, []string{good, "--output", "json"}); code != exitOK {
		t.Fatalf("good file again, JSON: exit %d\n%s", code, stderr)
	}
	if rec := oneItem[imported](t, stdout.Bytes()); rec.File != good || rec.Observations != 6 || rec.Providers["aws"] != 4 ||
		rec.Stored != 0 || !rec.AlreadyImported || rec.DryRun || !strings.HasPrefix(rec.RunID, "import-") {
		t.Errorf("second import as JSON: %+v\n%s", rec, stdout)
	}
	e, stdout, stderr = fx.env()
	if code := runCommand("import", ctx, e, []string{"--output", "csv", good}); code != exitOK {
		t.Fatalf("good file again, CSV: exit %d\n%s", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stdout.String()), "\n"); len(lines) != 2 || lines[0] != "file,run_id,observations,providers,stored,already_imported,dry_run" ||
		!strings.HasSuffix(lines[1], `,6,"aws 4, azure 2",0,true,false`) {
		t.Errorf("second import as CSV:\n%s", stdout)
	}
	if o, p := countImports(); o != 6 || p != 1 {
		t.Fatalf("after importing twice the store holds %d imported offers and %d payloads, want 6 and 1", o, p)
	}
	if n, _ := countRows(fx.DSN, "scrape_runs", ""); n != 0 {
		t.Errorf("imports wrote %d run-log rows, want none", n)
	}
	// The three rows without vram_gb are stored flagged as a scraped offer without VRAM is.
	if n, err := countRows(fx.DSN, "offers", "startsWith(run_id, 'import-') AND has(dq_flags, 'vram_missing')"); err != nil || n != 3 {
		t.Errorf("%d imported offers flagged vram_missing (%v), want 3", n, err)
	}

	// The imported rows are history and changes like any others.
	e, stdout, stderr = fx.env()
	if code := runCommand("history", ctx, e, []string{"--gpu", "H100-SXM-80GB", "--provider", "aws", "--price-type", "on_demand", "--interval", "week",
		"--since", "2026-01-01", "--until", "2026-02-01", "--output", "json"}); code != exitOK {
		t.Fatalf("history: exit %d: %s", code, stderr)
	}
	points := itemsOf[schema.HistoryPoint](t, stdout.Bytes())
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
	goodTable := priceTable(t, "good.csv")
	var stdout, stderr bytes.Buffer
	e := env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), nil)}
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

// TestImportValidUntilIsTodaysPrice imports a table published weeks ago: the row valid for a
// year is in today's market with everything the table said; the row without valid_until and
// the one that has expired are not.
func TestImportValidUntilIsTodaysPrice(t *testing.T) {
	st := storetest.Open(t)
	fx := &anFixture{History: &storetest.History{DSN: storetest.DatabaseDSN(t, st.Database()), Store: st}, spool: t.TempDir()}
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
	got := itemsOf[schema.Offer](t, stdout.Bytes())
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
	cfg := writeFile(t, dir, "gpucost.yaml", fmt.Sprintf("clickhouse:\n  dsn: %q\nscrape:\n  spool_dir: %q\noptimize:\n  workloads: %q\n", dsn, t.TempDir(), workloads))
	for _, table := range []string{fresh, stale, expired} {
		if code, out := runCLI("import", "--config", cfg, table); code != exitOK {
			t.Fatalf("import %s: exit %d\n%s", table, code, out)
		}
	}
	rec := optimizeJSON(t, cfg)[0].Recommended
	if rec == nil || rec.Provider != "aws" || !rec.PriceUSDPerGPUHour.Equal(decimal.RequireFromString("1.86")) {
		t.Fatalf("recommended %+v, want aws's imported L40S at $1.86", rec)
	}
	// The plan's table says which providers it left out, and why.
	code, out := runCLI("optimize", "--no-store", "--config", cfg)
	var ex []string
	for _, line := range strings.Split(stdoutOf(out), "\n") {
		if strings.HasPrefix(line, "excluded provider ") {
			ex = append(ex, line)
		}
	}
	if code != exitOK || len(ex) != 2 || !strings.HasPrefix(ex[0], "excluded provider azure: ") || !strings.Contains(ex[0], "observed 3d ago, older than the 24h a price holds") ||
		!strings.HasPrefix(ex[1], "excluded provider gcp: ") || !strings.Contains(ex[1], "its prices held until") {
		t.Errorf("exit %d, excluded providers %q, want azure (its price 3 days old) and gcp (its table expired yesterday)\n%s", code, ex, out)
	}
}
