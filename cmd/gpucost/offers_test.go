package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
	"github.com/gpucost/gpucost/textcell"
)

// TestOffersCLI reads the generated market back with gpucost offers: CSV under export's
// columns, and --cheapest-per-gpu as the cheapest offer of each GPU model, in model order.
func TestOffersCLI(t *testing.T) {
	fx := newAnFixture(t)
	ctx := context.Background()
	latest := map[schema.Key]schema.Offer{}
	for _, o := range fx.Offers {
		if l, ok := latest[o.Key()]; !ok || o.ObservedAt.After(l.ObservedAt) {
			latest[o.Key()] = o
		}
	}

	t.Run("csv", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("offers", ctx, e, []string{"--output", "csv", "--limit", "0", "--max-age", "1d"}); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		rows, err := csv.NewReader(stdout).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var empty bytes.Buffer
		if err := export.Offers(&empty, export.CSV, nil); err != nil {
			t.Fatal(err)
		}
		header, err := csv.NewReader(&empty).Read()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(header, rows[0]); diff != "" {
			t.Errorf("header (-export +offers):\n%s", diff)
		}
		if len(rows)-1 != len(latest) {
			t.Errorf("%d offers, want the %d generated", len(rows)-1, len(latest))
		}
	})
	// --cheapest-per-gpu is the older name of --group-by gpu: a group per GPU model, in model
	// order, its cheapest price the least of its range.
	t.Run("cheapest per GPU", func(t *testing.T) {
		cheapest := map[string]schema.Offer{}
		for _, o := range latest {
			if c, ok := cheapest[o.GPUModel]; !ok || o.PriceUSDPerGPUHour.LessThan(c.PriceUSDPerGPUHour) {
				cheapest[o.GPUModel] = o
			}
		}
		var want []string
		for model, o := range cheapest {
			want = append(want, model+" "+o.PriceUSDPerGPUHour.StringFixed(6))
		}
		sort.Strings(want)
		for _, flag := range [][]string{{"--cheapest-per-gpu"}, {"--group-by", "gpu"}} {
			e, stdout, stderr := fx.env()
			if code := runCommand("offers", ctx, e, append(flag, "--output", "json", "--max-age", "1d")); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got []string
			for _, g := range itemsOf[market.Summary](t, stdout.Bytes()) {
				got = append(got, g.GPUModel+" "+g.MinUSDPerGPUHour.StringFixed(6))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-hand +offers):\n%s", flag, diff)
			}
		}
	})
}

// TestOffersAndHistoryShowEveryPriceType stores term, reserved and serverless prices beside an
// on-demand one and reads them back with gpucost offers (its --price-type filter and its
// PRICE TYPE column) and gpucost history (a row per price type).
func TestOffersAndHistoryShowEveryPriceType(t *testing.T) {
	st := storetest.Open(t)
	fx := &anFixture{History: &storetest.History{DSN: storetest.DatabaseDSN(t, st.Database()), Store: st}, spool: t.TempDir()}
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	offer := func(provider, id string, pt schema.PriceType, price string) schema.Offer {
		p := decimal.RequireFromString(price)
		return schema.Offer{ObservedAt: at, RunID: "run-terms", Provider: provider, OfferID: id, Tier: schema.TierSecure, GPUModel: "H100-SXM-80GB",
			GPUNameRaw: "H100 SXM", GPUCount: 1, VRAMGB: 80, PriceType: pt, PriceUSDPerHour: p, PriceUSDPerGPUHour: p,
			IntraNode: schema.IntraNVSwitch, InterNode: schema.InterInfiniBand, Stock: schema.StockHigh}
	}
	if err := st.InsertOffers(ctx, "run-terms", []schema.Offer{
		offer("runpod", "h100/secure", schema.OnDemand, "2.00"),
		offer("runpod", "h100/secure", schema.Term3M, "1.80"),
		offer("lambda", "1-Click Cluster 16x H100", schema.Reserved, "2.10"),
		offer("verda", "serverless/H100", schema.Serverless, "3.10"),
	}); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) string {
		t.Helper()
		e, stdout, stderr := fx.env()
		if code := runCommand(args[0], ctx, e, args[1:]); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return stdout.String()
	}

	offers := itemsOf[schema.Offer](t, []byte(cli("offers", "--price-type", "term_3m,reserved,serverless", "--output", "json")))
	var got []string
	for _, o := range offers {
		got = append(got, string(o.PriceType)+" "+o.PriceUSDPerGPUHour.StringFixed(2))
	}
	if diff := cmp.Diff([]string{"term_3m 1.80", "reserved 2.10", "serverless 3.10"}, got); diff != "" {
		t.Errorf("offers --price-type term_3m,reserved,serverless (-want +got):\n%s", diff)
	}
	table := cli("offers")
	for _, want := range [][]string{{"runpod", "term_3m", "$1.80"}, {"lambda", "reserved", "$2.10"}, {"verda", "serverless", "$3.10"}} {
		found := false
		for _, line := range strings.Split(table, "\n") {
			fields := strings.Fields(line)
			found = found || len(fields) > 0 && fields[0] == want[0] && slices.Contains(fields, want[1]) && slices.Contains(fields, want[2])
		}
		if !found {
			t.Errorf("the offers table has no line of %s at %s %s:\n%s", want[0], want[1], want[2], table)
		}
	}

	points := itemsOf[schema.HistoryPoint](t, []byte(cli("history", "--gpu", "H100-SXM-80GB", "--since", "1d", "--interval", "hour", "--price-type", "term_3m,reserved,serverless", "--output", "json")))
	got = nil
	for _, p := range points {
		got = append(got, p.Provider+" "+string(p.PriceType)+" "+p.Min.StringFixed(2))
	}
	if diff := cmp.Diff([]string{"lambda reserved 2.10", "runpod term_3m 1.80", "verda serverless 3.10"}, got); diff != "" {
		t.Errorf("history by price type (-want +got):\n%s", diff)
	}
	if daily := cli("history", "--gpu", "H100-SXM-80GB", "--since", "2d"); !strings.Contains(daily, "term_3m") || !strings.Contains(daily, "serverless") || !strings.Contains(daily, "reserved") {
		t.Errorf("the daily history table lacks a price type:\n%s", daily)
	}
}

// TestOffersFilters runs gpucost offers with each of its filters and orders on the hand-made
// market of storetest.FilterMarket, the expected offers worked out by hand; the table's footer
// says what it cut and left out, the grouped table's rows are its groups, and a bad value is a
// usage error naming its flag.
func TestOffersFilters(t *testing.T) {
	st := storetest.Open(t)
	fx := &anFixture{History: &storetest.History{DSN: storetest.DatabaseDSN(t, st.Database()), Store: st}, spool: t.TempDir()}
	ctx := context.Background()
	if err := st.InsertOffers(ctx, "run-filters", storetest.FilterMarket(time.Now().UTC().Truncate(time.Second).Add(-time.Hour))); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		e, stdout, stderr := fx.env()
		code := runCommand("offers", ctx, e, args)
		return code, stdout.String(), stderr.String()
	}
	// ids runs offers with args, as CSV of every offer, and returns their offer_id column.
	ids := func(t *testing.T, args ...string) []string {
		t.Helper()
		code, out, errOut := run(t, append([]string{"--output", "csv", "--limit", "0"}, args...)...)
		if code != exitOK {
			t.Fatalf("offers %v: exit %d: %s", args, code, errOut)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		id := slices.Index(rows[0], "offer_id")
		var got []string
		for _, r := range rows[1:] {
			got = append(got, r[id])
		}
		return got
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"o7", "o2", "o4", "o6", "o5", "o1", "o10", "o3"}}, // o8 and o9 are GPUs outside the catalog
		{[]string{"--unknown"}, []string{"o8", "o7", "o2", "o4", "o6", "o5", "o1", "o9", "o10", "o3"}},
		{[]string{"--gpu", "H100"}, []string{"o2", "o1", "o3"}},
		{[]string{"--gpu", "h100-sxm"}, []string{"o1"}},
		{[]string{"--gpu", "H100:2.."}, []string{"o1", "o3"}},
		{[]string{"--gpu", "A100,H100:8"}, []string{"o5", "o1"}},
		{[]string{"--gpu", "A100", "--gpu", "H100:8"}, []string{"o4", "o6", "o5", "o1"}},
		{[]string{"--gpu", "A100:80GB"}, []string{"o6", "o5"}},
		{[]string{"--gpu", "48GB..100GB", "--unknown"}, []string{"o2", "o6", "o5", "o1", "o9", "o3"}},
		{[]string{"--gpu", "amd"}, []string{"o10"}},
		{[]string{"--spot"}, []string{"o7", "o2", "o6"}},
		{[]string{"--on-demand"}, []string{"o4", "o5", "o1", "o10", "o3"}},
		{[]string{"--spot", "--on-demand"}, []string{"o7", "o2", "o4", "o6", "o5", "o1", "o10", "o3"}},
		{[]string{"--commitment"}, nil},
		{[]string{"--max-price", "1.80"}, []string{"o7", "o2", "o4", "o6", "o5"}},
		{[]string{"--region", "us"}, []string{"o4", "o6", "o5", "o1"}}, // not usa-1
		{[]string{"--country", "se", "--unknown"}, []string{"o8", "o2"}},
		{[]string{"--min-vcpus", "32"}, []string{"o6", "o5", "o1"}},
		{[]string{"--min-ram", "64"}, []string{"o2", "o4", "o6", "o5", "o1"}},
		{[]string{"--provider", "vastai"}, []string{"o7", "o2", "o1"}},
		{[]string{"--sort", "gpu"}, []string{"o6", "o4", "o5", "o3", "o2", "o1", "o10", "o7"}},
		{[]string{"--sort", "vram"}, []string{"o10", "o3", "o2", "o6", "o5", "o1", "o4", "o7"}},
		{[]string{"--sort", "provider"}, []string{"o6", "o4", "o5", "o10", "o3", "o7", "o2", "o1"}},
		{[]string{"--sort", "vram", "--limit", "3"}, []string{"o10", "o3", "o2"}},
	} {
		if diff := cmp.Diff(tt.want, ids(t, tt.args...)); diff != "" {
			t.Errorf("offers %v (-want +got):\n%s", tt.args, diff)
		}
	}

	t.Run("footer", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want []string // the lines after the table's blank line
		}{
			{[]string{"--limit", "3"}, []string{"shown 3 of 8 offers; --limit 0 for all",
				"2 offers of GPUs outside the catalog not shown; --unknown shows them"}},
			{[]string{"--gpu", "H100", "--limit", "1"}, []string{"shown 1 of 3 offers (--gpu H100); --limit 0 for all"}},
			{[]string{"--gpu", "H100", "--unknown"}, nil},
			{[]string{"--group-by", "gpu", "--limit", "2", "--spot"}, []string{"shown 2 of 3 groups (--spot); --limit 0 for all",
				"1 offer of GPUs outside the catalog not shown; --unknown shows them"}},
		} {
			code, out, errOut := run(t, tt.args...)
			if code != exitOK {
				t.Fatalf("offers %v: exit %d: %s", tt.args, code, errOut)
			}
			var notes []string
			if _, after, ok := strings.Cut(out, "\n\n"); ok {
				for _, l := range strings.Split(strings.TrimSuffix(after, "\n"), "\n") {
					if !strings.HasPrefix(l, "left out to fit 100 columns: ") { // what fits is the fitting's test
						notes = append(notes, l)
					}
				}
			}
			if diff := cmp.Diff(tt.want, notes); diff != "" {
				t.Errorf("offers %v: footer (-want +got):\n%s\n%s", tt.args, diff, out)
			}
			for _, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); n > textcell.TerminalWidth {
					t.Errorf("offers %v: a line of %d characters: %q", tt.args, n, l)
				}
			}
		}
		if code, out, _ := run(t, "--commitment"); code != exitOK || out != "no offers match --commitment\n" {
			t.Errorf("offers --commitment: exit %d\n%s", code, out)
		}
	})

	// Beside a CSV the cut is said on stderr, stdout holding the CSV alone.
	t.Run("csv cut by --limit", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			rows int
			note string
		}{
			{[]string{"--limit", "3"}, 3, "shown 3 of 8 offers; --limit 0 for all\n"},
			{[]string{"--group-by", "gpu", "--limit", "2", "--spot"}, 2, "shown 2 of 3 groups; --limit 0 for all\n"},
			{[]string{"--limit", "0"}, 8, ""},
		} {
			code, out, errOut := run(t, append(tt.args, "--output", "csv")...)
			if code != exitOK {
				t.Fatalf("offers %v: exit %d: %s", tt.args, code, errOut)
			}
			rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(rows) != 1+tt.rows {
				t.Errorf("offers %v --output csv: %d rows (%v), want a header and %d\n%s", tt.args, len(rows), err, tt.rows, out)
			}
			if errOut != tt.note {
				t.Errorf("offers %v --output csv: stderr %q, want %q", tt.args, errOut, tt.note)
			}
		}
	})

	t.Run("grouped", func(t *testing.T) {
		// By provider, the catalog's offers: coreweave o6 (spot 1.50); lambda o4 and o5
		// (on-demand 1.29, 1.79); runpod o10 and o3 (on-demand 2.49, 2.60); vastai o7 and o2
		// (spot 0.30, 1.10) and o1 (on-demand 2.00).
		code, out, errOut := run(t, "--group-by", "provider", "--output", "csv")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows[1:] {
			cell := func(name string) string { return r[slices.Index(rows[0], name)] }
			got = append(got, strings.Join([]string{cell("provider"), cell("offers"), cell("providers"), cell("min_usd_per_gpu_hour"),
				cell("max_usd_per_gpu_hour"), cell("on_demand_usd_per_gpu_hour"), cell("spot_usd_per_gpu_hour"), cell("commitment_usd_per_gpu_hour")}, " "))
		}
		want := []string{
			"coreweave 1 1 1.500000 1.500000  1.500000 ",
			"lambda 2 1 1.290000 1.790000 1.290000  ",
			"runpod 2 1 2.490000 2.600000 2.490000  ",
			"vastai 3 1 0.300000 2.000000 2.000000 0.300000 ",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("--group-by provider (-hand +csv):\n%s", diff)
		}
		// The table: a row per group, the price range, on-demand and spot side by side.
		_, table, _ := run(t, "--group-by", "provider", "--sort", "price")
		var lines []string
		for _, l := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
		wantTable := []string{
			"PROVIDER OFFERS $/GPU-H ON-DEMAND SPOT",
			"vastai 3 $0.30–$2.00 $2.00 $0.30",
			"lambda 2 $1.29–$1.79 $1.29 -",
			"coreweave 1 $1.50 - $1.50",
			"runpod 2 $2.49–$2.60 $2.49 -",
			"",
			"2 offers of GPUs outside the catalog not shown; --unknown shows them",
		}
		if diff := cmp.Diff(wantTable, lines); diff != "" {
			t.Errorf("--group-by provider --sort price (-want +got):\n%s\n%s", diff, table)
		}
	})

	// The examples of docs/analysts.md run as written.
	t.Run("the analysts' examples", func(t *testing.T) {
		doc, err := os.ReadFile("../../docs/analysts.md")
		if err != nil {
			t.Fatal(err)
		}
		_, section, _ := strings.Cut(string(doc), "\n## The market now (`gpucost offers`)")
		_, block, _ := strings.Cut(section, "```sh\n")
		block, _, _ = strings.Cut(block, "```")
		n := 0
		for _, line := range strings.Split(block, "\n") {
			line, _, _ = strings.Cut(line, "#")
			args, ok := strings.CutPrefix(strings.TrimSpace(line), "gpucost offers ")
			if !ok {
				continue
			}
			n++
			if code, _, errOut := run(t, strings.Fields(args)...); code != exitOK {
				t.Errorf("%s: exit %d: %s", line, code, errOut)
			}
		}
		if n < 5 {
			t.Errorf("docs/analysts.md shows %d examples of gpucost offers, want its five or more", n)
		}
	})

	t.Run("bad values", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			want string
		}{
			{[]string{"--gpu", "H100:0"}, `gpucost offers: --gpu: "H100:0": 0 GPUs: a count starts at 1`},
			{[]string{"--gpu", "H10"}, `gpucost offers: --gpu: "H10" is no GPU of the catalog`},
			{[]string{"--max-price", "cheap"}, `gpucost offers: --max-price: "cheap" is not a price in USD per GPU-hour, like 2.50`},
			{[]string{"--region", "us;1"}, `gpucost offers: --region: invalid region "us;1"`},
			{[]string{"--country", "USA"}, `gpucost offers: --country: "USA" is not an ISO 3166-1 alpha-2 country code`},
			{[]string{"--min-vcpus", "-1"}, `gpucost offers: --min-vcpus: "-1" is not a number between 0 and 100000`},
			{[]string{"--min-ram", "lots"}, `gpucost offers: --min-ram: "lots" is not a number`},
			{[]string{"--sort", "cheapest"}, `gpucost offers: --sort: unknown order "cheapest" (want price, gpu, vram, provider)`},
			{[]string{"--group-by", "region"}, `gpucost offers: --group-by: cannot group by "region"`},
			{[]string{"--cheapest-per-gpu", "--group-by", "provider"}, `gpucost offers: --cheapest-per-gpu is --group-by gpu: give one of them`},
		} {
			code, out, errOut := run(t, tt.args...)
			if code != exitUsage || out != "" || !strings.HasPrefix(errOut, tt.want) {
				t.Errorf("offers %v: exit %d, stdout %q, stderr %q; want exit 2 and %s", tt.args, code, out, errOut, tt.want)
			}
		}
	})
}

// TestOffersHelp: offers --help explains the GPU specs and every column of its tables, in lines
// a terminal of 100 columns shows whole.
func TestOffersHelp(t *testing.T) {
	code, out, _ := runOut("offers", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > textcell.TerminalWidth {
			t.Errorf("a line of %d characters: %q", n, l)
		}
	}
	for _, legend := range []string{"\n  H100:8 ", "\n  24GB..80GB ", "\n  N ", "\n  CPUS, RAM ", "\n  PRICE TYPE ", "\n  $/GPU-H ", "\n  INTRA ",
		"\n  INTER ", "\n  TIER ", "\n  ? NAME ", "ON-DEMAND, SPOT,\nCOMMITMENT and SERVERLESS", "--sort price:", "--limit 0 for all"} {
		if !strings.Contains(out, legend) {
			t.Errorf("offers --help does not explain %q", legend)
		}
	}
}
