package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
	"github.com/gpucost/gpucost/textcell"
	"github.com/gpucost/gpucost/textcell/textcelltest"
)

// The hostile texts and the checks of what gpucost prints are package textcelltest's, shared with
// the writers' own tests (export/hostile_test.go).
var (
	hostileNames  = namesOf(textcelltest.Names)
	hostileOffers = textcelltest.Offers
	badRune       = textcelltest.BadRune
	checkTable    = textcelltest.CheckTable
	checkCSV      = textcelltest.CheckCSV
)

func namesOf(names []struct{ Name, Text string }) []struct{ name, text string } {
	out := make([]struct{ name, text string }, len(names))
	for i, n := range names {
		out[i].name, out[i].text = n.Name, n.Text
	}
	return out
}

// TestHostileTextInEveryWriter feeds each table and CSV writer of the CLI the hostile names; the
// writers of offers, history and changes have theirs in export/hostile_test.go.
func TestHostileTextInEveryWriter(t *testing.T) {
	now := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	plan := hostilePlan(now)
	rows := plan.Rows("")

	// A table line is at most the sum of its column caps and separators.
	const wide = 600
	t.Run("scrape summary", func(t *testing.T) {
		rep := pipeline.Report{RunID: "r1", Status: schema.RunPartial}
		for _, h := range hostileNames {
			rep.Providers = append(rep.Providers, pipeline.ProviderReport{Provider: h.text, Status: schema.RunFailed, Error: h.text})
		}
		var b bytes.Buffer
		_ = pipeline.WriteSummary(&b, rep)
		// The run line, the header and one line per provider.
		checkTable(t, b.String(), 2+len(hostileNames), wide)
	})
	t.Run("optimize table", func(t *testing.T) {
		var b bytes.Buffer
		if err := report.WritePlan(&b, plan, report.FormatText); err != nil {
			t.Fatal(err)
		}
		// The table (a header, three lines a workload, three of totals) within 100 columns; then
		// the legend and a line per excluded provider, each continued on indented lines.
		table, notes, _ := strings.Cut(b.String(), "\n\n")
		checkTable(t, table, 1+3*len(rows)+3, report.TerminalWidth)
		checkTable(t, notes, strings.Count(notes, "\n"), report.TerminalWidth)
		if n := strings.Count("\n"+notes, "\nexcluded provider "); n != len(plan.ExcludedProviders) {
			t.Errorf("%d excluded provider lines, want %d:\n%s", n, len(plan.ExcludedProviders), notes)
		}
	})
	t.Run("optimize markdown", func(t *testing.T) {
		// The report's organisation and workloads tables (report.WritePlan): every row has
		// its table's cells, and no text adds a cell or a line or runs as HTML.
		var b bytes.Buffer
		if err := report.WritePlan(&b, plan, report.FormatMarkdown); err != nil {
			t.Fatal(err)
		}
		// "## Organisation", a blank, the header, the separator, a line per team and the totals;
		// then per team a blank, its heading, a blank, "### Workloads", a blank, the header,
		// the separator, a line per workload and its total.
		checkTable(t, b.String(), 5+len(plan.Teams)+8*len(plan.Teams)+len(rows), 2500)
		cells := 0
		for _, l := range strings.Split(b.String(), "\n") {
			if !strings.HasPrefix(l, "| ") {
				cells = 0
				continue
			}
			n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|")
			if cells == 0 {
				cells = n // the header
			} else if n != cells {
				t.Errorf("a Markdown row with %d cells under a header of %d: %.100q", n-1, cells-1, l)
			}
			if strings.ContainsAny(l, "<>") {
				t.Errorf("a Markdown row holds raw HTML: %.100q", l)
			}
		}
		if got := strings.Count(b.String(), "\n| "); got < len(rows) {
			t.Errorf("%d table rows for %d workloads", got, len(rows))
		}
	})
	t.Run("mail results table", func(t *testing.T) {
		var results []delivery.Result
		for _, h := range hostileNames {
			results = append(results, delivery.Result{Team: h.text, Recipients: h.text, Status: "failed", Attempts: 1, Err: errors.New(h.text)})
		}
		var b bytes.Buffer
		delivery.WriteResults(&b, report.Week{ID: "2026-W05"}, results)
		checkTable(t, b.String(), 1+len(results), wide)
	})
	t.Run("import errors", func(t *testing.T) {
		var file strings.Builder
		file.WriteString("provider,gpu,price_type,usd_per_gpu_hour,observed_at")
		for _, h := range hostileNames {
			file.WriteString("," + strings.NewReplacer("\r", "", "\n", "", ",", "", `"`, "").Replace(h.text))
		}
		file.WriteString("\n")
		for _, h := range hostileNames {
			fmt.Fprintf(&file, "%q,%q,spot,%q,2026-01-01\n", h.text, h.text, h.text)
		}
		path := filepath.Join(t.TempDir(), "evil.csv")
		if err := os.WriteFile(path, []byte(file.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := runCLI("import", "--dry-run", path)
		if code != exitFailed {
			t.Fatalf("exit %d, want %d\n%.3000s", code, exitFailed, out)
		}
		_, stderr, _ := strings.Cut(out, "--- stderr\n")
		for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if r, bad := badRune(l, false); bad {
				t.Errorf("an error line holds %U: %.100q", r, l)
			}
			if n := utf8.RuneCountInString(l); n > maxImportErrorWidth+1 {
				t.Errorf("an error line of %d characters", n)
			}
		}
	})

	t.Run("optimize csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := report.WritePlan(&b, plan, report.FormatCSV); err != nil {
			t.Fatal(err)
		}
		checkCSV(t, b.String(), 1+len(rows), "savings_usd_per_month", "recommended_usd_per_hour")
	})
}

// hostilePlan is a plan whose teams, workloads, providers, regions and reasons carry the
// hostile names (the workloads file and the scraped offers both feed a plan).
func hostilePlan(now time.Time) *optimizer.Plan {
	d := decimal.RequireFromString
	plan := &optimizer.Plan{GeneratedAt: now, Options: optimizer.DefaultOptions()}
	for _, h := range hostileNames {
		place := func(provider string, perHour string) *optimizer.Placement {
			hours := d("730")
			return &optimizer.Placement{Provider: provider, Region: h.text, GPUModel: h.text, GPUCount: 1, GPUsPerNode: 1, Nodes: 1,
				PriceType: schema.OnDemand, PriceUSDPerHour: d(perHour), PriceUSDPerGPUHour: d(perHour), PriceSource: optimizer.PriceMarket,
				HoursPerMonth: hours, CostUSDPerMonth: d(perHour).Mul(hours).Round(2)}
		}
		more := d("-730")
		plan.Teams = append(plan.Teams, optimizer.TeamPlan{Name: h.text, Email: "t@example.com", Workloads: []optimizer.WorkloadPlan{
			{Name: h.text, Kind: optimizer.Inference, Status: optimizer.StatusOK, Current: place("runpod", "1"), Recommended: place(h.text, "2"),
				Savings: &optimizer.Savings{USDPerMonth: more, Percent: &more}},
			{Name: h.text + "2", Kind: optimizer.Inference, Status: optimizer.StatusNoFit, Reason: h.text},
		}})
		plan.ExcludedProviders = append(plan.ExcludedProviders, optimizer.ExcludedProvider{Provider: h.text, Reason: h.text})
	}
	return plan
}

// TestHostileTextThroughTheCLI stores the hostile names in ClickHouse as a scraper would and
// reads them back with gpucost offers, changes, history and export: the tables and CSV files
// the commands print are safe.
func TestHostileTextThroughTheCLI(t *testing.T) {
	dsn := storetest.DSN(t)
	ctx := context.Background()
	st, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	first, second := now.Add(-2*time.Hour), now.Add(-time.Hour)
	days := 1 // the daily history's rows per offer: two between midnight and 02:00 UTC
	if first.YearDay() != second.YearDay() {
		days = 2
	}
	for _, b := range [][]schema.Offer{hostileOffers(first, "2.00"), hostileOffers(second, "1.50")} {
		if err := st.InsertOffers(ctx, b[0].RunID, b); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{"GPUCOST_CLICKHOUSE_DSN": dsn}
	cli := func(t *testing.T, args ...string) string {
		t.Helper()
		code, out := runCLIEnv(vars, args...)
		stdout, stderr, _ := strings.Cut(out, "\n--- stderr\n")
		if code != exitOK {
			t.Fatalf("gpucost %s: exit %d\n%.2000s", strings.Join(args, " "), code, out)
		}
		if r, bad := badRune(stderr, false); bad && strings.TrimSpace(stderr) != "" {
			t.Errorf("stderr holds %U", r)
		}
		return stdout
	}
	n := len(hostileNames)
	t.Run("offers", func(t *testing.T) {
		// Fitted to 100 columns: a header, the offers, a blank line and the columns left out.
		checkTable(t, cli(t, "offers"), 1+n+2, textcell.TerminalWidth)
	})
	t.Run("offers, every column", func(t *testing.T) {
		checkTable(t, cli(t, "offers", "--wide"), 1+n, 14*(export.OfferCellWidth+2))
	})
	t.Run("offers by provider", func(t *testing.T) {
		checkTable(t, cli(t, "offers", "--group-by", "provider,gpu"), 1+n, textcell.TerminalWidth)
	})
	t.Run("offers csv", func(t *testing.T) {
		checkCSV(t, cli(t, "offers", "--output", "csv"), 1+n, "price_usd_per_gpu_hour")
	})
	t.Run("changes", func(t *testing.T) {
		checkTable(t, cli(t, "changes", "--since", "1d"), 1+n, textcell.TerminalWidth)
	})
	t.Run("changes csv", func(t *testing.T) {
		rows := checkCSV(t, cli(t, "changes", "--since", "1d", "--output", "csv"), 1+n, "change_usd", "change_pct")
		var pcts []string
		for _, r := range rows[1:] {
			pcts = append(pcts, r[12])
		}
		sort.Strings(pcts)
		if len(pcts) == 0 || !strings.HasPrefix(pcts[0], "-") {
			t.Errorf("change_pct %v: want negative numbers kept as numbers", pcts)
		}
	})
	t.Run("history", func(t *testing.T) {
		checkTable(t, cli(t, "history", "--gpu", "H100-SXM-80GB", "--interval", "hour", "--since", "1d"), 1+2*n, textcell.TerminalWidth)
	})
	t.Run("history csv", func(t *testing.T) {
		checkCSV(t, cli(t, "history", "--gpu", "H100-SXM-80GB", "--interval", "hour", "--since", "1d", "--output", "csv"), 1+2*n, "min_usd_per_gpu_hour")
	})
	t.Run("export offers", func(t *testing.T) {
		checkCSV(t, cli(t, "export", "offers", "--since", "1d"), 1+2*n, "price_usd_per_gpu_hour")
	})
	t.Run("export history", func(t *testing.T) {
		checkCSV(t, cli(t, "export", "history", "--gpu", "H100-SXM-80GB", "--since", "2d"), 1+days*n, "avg_usd_per_gpu_hour")
	})
}
