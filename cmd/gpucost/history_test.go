package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

func TestHistoryCLIMatchesHandComputation(t *testing.T) {
	fx := newAnFixture(t)
	mid := fx.Start.Add(fx.End.Sub(fx.Start) / 2).Truncate(time.Hour)
	tests := []struct {
		name      string
		model     string
		providers []string
		interval  schema.Interval
		from, to  time.Time
	}{
		{"H100 by day, all four weeks", "H100-SXM-80GB", nil, schema.Day, fx.Start, fx.End},
		{"H100 by week", "H100-SXM-80GB", nil, schema.Week, fx.Start, fx.End},
		{"A100 by day, a mid-day range", "A100-SXM-80GB", nil, schema.Day, mid.Add(-5*24*time.Hour - 7*time.Hour), mid},
		{"H100 at two providers by hour, two days", "H100-SXM-80GB", []string{"lambda", "vastai"}, schema.Hour, mid.Add(-48 * time.Hour), mid},
		{"RTX 4090 by day", "RTX-4090-24GB", nil, schema.Day, fx.Start.AddDate(0, 0, 3), fx.End.AddDate(0, 0, -3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, stdout, stderr := fx.env()
			args := []string{"--gpu", strings.ToLower(tt.model), "--interval", string(tt.interval), "--output", "json",
				"--since", tt.from.Format(time.RFC3339), "--until", tt.to.Format(time.RFC3339)}
			if len(tt.providers) > 0 {
				args = append(args, "--provider", strings.Join(tt.providers, ","))
			}
			if code := runCommand("history", context.Background(), e, args); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got export.Envelope[schema.HistoryPoint]
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatalf("decoding the JSON output: %v\n%s", err, stdout)
			}
			storetest.HistoryMatches(t, fx.HandHistory(tt.model, tt.providers, tt.interval, tt.from, tt.to), got.Items)
			// The query says what was read: the model by its canonical name, the range and buckets.
			var q export.HistoryQuery
			if err := json.Unmarshal(got.Query.(json.RawMessage), &q); err != nil {
				t.Fatal(err)
			}
			if q.GPU != tt.model || !q.Since.Equal(tt.from) || !q.Until.Equal(tt.to) || q.Interval != tt.interval || len(q.Provider) != len(tt.providers) {
				t.Errorf("the query echoed is %+v, want %s from %s to %s by %s at %v", q, tt.model, tt.from, tt.to, tt.interval, tt.providers)
			}
		})
	}
}

func TestHistoryCLIFormatsAndCharts(t *testing.T) {
	fx := newAnFixture(t)
	dir := t.TempDir()
	since, until := fx.Start.Format(time.RFC3339), fx.End.Format(time.RFC3339)
	hand := fx.HandHistory("H100-SXM-80GB", nil, schema.Day, fx.Start, fx.End)

	e, stdout, stderr := fx.env()
	if code := runCommand("history", context.Background(), e, []string{"--gpu", "H100-SXM-80GB", "--since", since, "--until", until, "--output", "csv"}); code != exitOK {
		t.Fatalf("csv: exit %d: %s", code, stderr)
	}
	rows, err := csv.NewReader(stdout).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := []string{"bucket", "provider", "gpu_model", "price_type", "min_usd_per_gpu_hour", "avg_usd_per_gpu_hour",
		"median_usd_per_gpu_hour", "max_usd_per_gpu_hour", "observations", "offers"}
	if diff := cmp.Diff(header, rows[0]); diff != "" {
		t.Errorf("CSV header (-want +got):\n%s", diff)
	}
	if len(rows)-1 != len(hand) {
		t.Fatalf("CSV has %d rows, want %d", len(rows)-1, len(hand))
	}
	for i, h := range hand {
		r := rows[i+1]
		if r[0] != h.Bucket.Format(time.RFC3339) || r[1] != h.Provider || r[3] != string(h.PriceType) || r[4] != h.Min.StringFixed(6) || r[7] != h.Max.StringFixed(6) || r[5] != h.Avg.StringFixed(6) {
			t.Errorf("CSV row %d = %v, want %s %s %s min %s avg %s max %s", i+1, r, h.Bucket.Format(time.RFC3339), h.Provider, h.PriceType, h.Min.StringFixed(6), h.Avg.StringFixed(6), h.Max.StringFixed(6))
		}
	}

	e, stdout, stderr = fx.env()
	png1, svg1 := filepath.Join(dir, "h100.png"), filepath.Join(dir, "h100.svg")
	if code := runCommand("history", context.Background(), e, []string{"--gpu", "H100-SXM-80GB", "--since", since, "--until", until, "--chart", png1}); code != exitOK {
		t.Fatalf("table + png: exit %d: %s", code, stderr)
	}
	first := hand[0]
	wantLine := strings.Join([]string{first.Bucket.Format("2006-01-02"), first.Provider, string(first.PriceType), money.Price(first.Min)}, " ")
	if got := strings.Join(strings.Fields(strings.SplitN(stdout.String(), "\n", 3)[1]), " "); !strings.HasPrefix(got, wantLine) {
		t.Errorf("first table row = %q, want it to start with %q", got, wantLine)
	}
	f, err := os.Open(png1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Width < 500 || cfg.Height < 300 {
		t.Errorf("PNG chart: %+v, %v; want a decodable image of at least 500×300", cfg, err)
	}
	e, _, stderr = fx.env()
	if code := runCommand("history", context.Background(), e, []string{"--gpu", "H100-SXM-80GB", "--since", since, "--until", until, "--chart", svg1}); code != exitOK {
		t.Fatalf("svg: exit %d: %s", code, stderr)
	}
	svg, err := os.ReadFile(svg1)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "lambda on_demand", "runpod spot", "vastai on_demand", "H100-SXM-80GB: cheapest $/GPU-hour per day"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG chart lacks %q", want)
		}
	}
}

func TestHistoryCLIBadFlags(t *testing.T) {
	// None of these may reach the store: the environment names no server that answers.
	e := func() (env, *bytes.Buffer) {
		var stdout, stderr bytes.Buffer
		return env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), func(k string) string {
			if k == "GPUCOST_CLICKHOUSE_DSN" {
				return "clickhouse://default@127.0.0.1:1/nothing?dial_timeout=200ms"
			}
			return ""
		})}, &stderr
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no GPU", []string{}, "a GPU model is required"},
		{"unknown GPU", []string{"--gpu", "H1000"}, `unknown GPU model "H1000"`},
		{"SQL as a GPU", []string{"--gpu", "H100-SXM-80GB' OR 1=1 --"}, `unknown GPU model "H100-SXM-80GB' OR 1=1 --"`},
		{"SQL as a provider", []string{"--gpu", "H100-SXM-80GB", "--provider", "vastai') OR ('1'='1"}, "invalid provider"},
		{"unknown price type", []string{"--gpu", "H100-SXM-80GB", "--price-type", "cheap"}, `unknown price type "cheap"`},
		{"inverted range", []string{"--gpu", "H100-SXM-80GB", "--since", "2026-02-01", "--until", "2026-01-01"}, "empty or inverted"},
		{"unreadable since", []string{"--gpu", "H100-SXM-80GB", "--since", "last tuesday"}, `since: cannot read "last tuesday"`},
		{"too many hours", []string{"--gpu", "H100-SXM-80GB", "--interval", "hour", "--since", "90d"}, "longer than the 46 days hour buckets allow"},
		{"too many days", []string{"--gpu", "H100-SXM-80GB", "--since", "2000-01-01"}, "longer than the 1098 days day buckets allow"},
		{"bad interval", []string{"--gpu", "H100-SXM-80GB", "--interval", "month"}, `unknown interval "month"`},
		{"bad output", []string{"--gpu", "H100-SXM-80GB", "--output", "xml"}, `--output "xml"`},
		{"bad chart", []string{"--gpu", "H100-SXM-80GB", "--chart", "out.jpg"}, "must end in .png or .svg"},
		{"an argument", []string{"--gpu", "H100-SXM-80GB", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, stderr := e()
			if code := runCommand("history", context.Background(), env, tt.args); code != exitUsage {
				t.Errorf("exit %d, want %d (usage)", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantErr)
			}
		})
	}
}

func TestChangesCLIFindsExactlyTheMoves(t *testing.T) {
	fx := newAnFixture(t)
	newestFirst := func(keep func(schema.PriceChange) bool) []schema.PriceChange {
		var out []schema.PriceChange
		for _, m := range fx.Moves {
			if keep(m) {
				out = append(out, m)
			}
		}
		storetest.SortNewestFirst(out)
		return out
	}
	mid := fx.Start.Add(fx.End.Sub(fx.Start) / 2)
	tests := []struct {
		name string
		args []string
		want []schema.PriceChange
	}{
		{"all four weeks", []string{"--since", fx.Start.AddDate(0, 0, -1).Format(time.RFC3339), "--until", fx.End.Format(time.RFC3339)},
			newestFirst(func(schema.PriceChange) bool { return true })},
		{"the second half only, which needs the price before it", []string{"--since", mid.Format(time.RFC3339), "--until", fx.End.Format(time.RFC3339)},
			newestFirst(func(c schema.PriceChange) bool { return !c.ChangedAt.Before(mid) })},
		{"big moves of A100 and H100", []string{"--since", "60d", "--gpu", "A100-SXM-80GB,h100-sxm-80gb", "--min-pct", "15"},
			newestFirst(func(c schema.PriceChange) bool {
				return c.GPUModel != "RTX-4090-24GB" && c.ChangePct.Abs().GreaterThanOrEqual(decimal.NewFromInt(15))
			})},
		{"lambda", []string{"--since", "60d", "--provider", "lambda"},
			newestFirst(func(c schema.PriceChange) bool { return c.Provider == "lambda" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, stdout, stderr := fx.env()
			if code := runCommand("changes", context.Background(), e, append(tt.args, "--output", "json", "--limit", "0")); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got export.Envelope[schema.PriceChange]
			if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if len(tt.want) == 0 {
				t.Fatal("no moves selected: the test is wrong")
			}
			if got.Truncated || got.Next != "" {
				t.Errorf("--limit 0 answered truncated %v, next %q", got.Truncated, got.Next)
			}
			if diff := cmp.Diff(tt.want, got.Items, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("changes (-generated +got):\n%s", diff)
			}
		})
	}
	t.Run("table", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("changes", context.Background(), e, []string{"--since", "60d", "--provider", "lambda"}); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		flat := strings.Join(strings.Fields(stdout.String()), " ")
		for _, want := range []string{"lambda A100-SXM-80GB 8 on_demand $1.79 $1.29 -27.9%", "lambda H100-SXM-80GB 8 on_demand $2.99 $2.49 -16.7%"} {
			if !strings.Contains(flat, want) {
				t.Errorf("table lacks %q:\n%s", want, stdout)
			}
		}
		if strings.Contains(stdout.String(), "shown") {
			t.Errorf("a table the limit did not cut says it did:\n%s", stdout)
		}
	})
	// A limit that cuts says so: the table in its last line, the CSV on stderr, the JSON in
	// its envelope, each with what the limit left out.
	all := newestFirst(func(schema.PriceChange) bool { return true })
	cut := []string{"--since", "60d", "--limit", "3"}
	t.Run("a limit that cuts", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("changes", context.Background(), e, cut); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
		want := fmt.Sprintf("shown 3 of %d price changes, the newest; --limit 0 for all", len(all))
		if len(lines) != 5 || lines[4] != want {
			t.Errorf("the table's lines:\n%s\nwant a header, 3 changes and %q", stdout, want)
		}
		e, stdout, stderr = fx.env()
		if code := runCommand("changes", context.Background(), e, append(cut, "--output", "csv")); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if rows, err := csv.NewReader(stdout).ReadAll(); err != nil || len(rows) != 4 || strings.TrimSpace(stderr.String()) != want {
			t.Errorf("CSV of %d records (%v), stderr %q; want a header and 3 records, and %q", len(rows), err, stderr, want)
		}
		e, stdout, stderr = fx.env()
		if code := runCommand("changes", context.Background(), e, append(cut, "--output", "json")); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var page export.Envelope[schema.PriceChange]
		if err := json.Unmarshal(stdout.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		if !page.Truncated || len(page.Items) != 3 || page.Items[0].Position() != all[0].Position() || stderr.Len() != 0 {
			t.Errorf("JSON: truncated %v, %d items, the first %+v, stderr %q; want truncated, the 3 newest, nothing on stderr", page.Truncated, len(page.Items), page.Items, stderr)
		}
	})
}
