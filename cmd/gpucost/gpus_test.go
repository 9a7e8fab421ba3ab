package main

import (
	"context"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

func TestGPUsCommand(t *testing.T) {
	models := gpus.Models()
	run := func(args ...string) (string, int) {
		var out, errOut strings.Builder
		code := runCommand("gpus", t.Context(), env{stdout: &out, stderr: &errOut, getenv: isolated(t.TempDir(), nil)}, args)
		return out.String() + errOut.String(), code
	}
	table, code := run()
	v100 := func() string { // the V100 row's first cells, however wide the columns are
		for _, line := range strings.Split(table, "\n") {
			if f := strings.Fields(line); len(f) >= 6 && f[0] == "V100-SXM2-32GB" {
				return strings.Join(f[:6], " ")
			}
		}
		return ""
	}
	if code != exitOK || v100() != "V100-SXM2-32GB 7.0 32 900 125 -" {
		t.Errorf("table (exit %d) does not show the V100 without BF16:\n%s", code, table)
	}
	for _, line := range strings.Split(table, "\n") {
		if n := len([]rune(line)); n > 100 {
			t.Errorf("a table line is %d columns wide, more than a 100-column terminal: %q", n, line)
		}
	}
	js, _ := run("--output", "json")
	got := itemsOf[struct {
		gpus.Model
		Engines         []string       `json:"engines"`
		FlashAttention2 bool           `json:"flash_attention_2"`
		Purchase        *gpus.Purchase `json:"purchase"`
	}](t, []byte(js))
	if len(got) != len(models) || got[0].Name != models[0].Name || got[0].Source == "" {
		t.Errorf("json: %d models, want all %d with their sources", len(got), len(models))
	}
	for _, m := range got {
		// vLLM dropped Volta; FlashAttention-2 needs Ampere.
		if m.Name == "V100-SXM2-32GB" && (slices.Contains(m.Engines, "vllm") || m.FlashAttention2) {
			t.Errorf("json: V100 runs %v, FlashAttention-2 %v; want neither vLLM nor FlashAttention-2", m.Engines, m.FlashAttention2)
		}
		if m.Name == "H100-SXM-80GB" && (len(m.Engines) != len(gpus.Engines) || !m.FlashAttention2) {
			t.Errorf("json: H100 runs %v, FlashAttention-2 %v; want every engine and FlashAttention-2", m.Engines, m.FlashAttention2)
		}
		// The guides' H100 purchase price, and none for a card no source prices.
		if p := m.Purchase; m.Name == "H100-SXM-80GB" && (p == nil || p.LowUSD.String() != "25000" || p.Condition != gpus.New || p.Source == "") {
			t.Errorf("json: H100 purchase %+v, want $25,000 new with its source", p)
		}
		if m.Name == "A16-16GB" && m.Purchase != nil {
			t.Errorf("json: the A16 has a purchase price %+v, which no source gives", m.Purchase)
		}
	}
	c, _ := run("--output", "csv")
	rows, err := csv.NewReader(strings.NewReader(c)).ReadAll()
	if err != nil || len(rows) != len(models)+1 || rows[0][0] != "name" || rows[0][len(rows[0])-1] != "source" {
		t.Errorf("csv: %d rows (%v), want a header and %d models", len(rows), err, len(models))
	}
	if i := slices.Index(rows[0], "form_factor"); i < 0 || rows[1][i] == "" {
		t.Errorf("csv: header %v, want a form_factor column filled in", rows[0])
	}
	low, seen := slices.Index(rows[0], "purchase_low_usd"), slices.Index(rows[0], "purchase_seen")
	for _, r := range rows[1:] {
		if low < 0 || seen < 0 || len(r) != len(rows[0]) {
			t.Fatalf("csv: header %v, want purchase_low_usd and purchase_seen columns on every row", rows[0])
		}
		if r[0] == "B200-SXM-180GB" && (r[low] != "45000" || r[seen] != "2026") {
			t.Errorf("csv: B200 bought from $%s, seen %q; want the guides' $45,000 of 2026", r[low], r[seen])
		}
	}
	if out, code := run("--output", "yaml"); code != exitUsage || !strings.Contains(out, `--output "yaml"`) {
		t.Errorf("a bad --output: exit %d, %q", code, out)
	}
	// --value's mistakes are found before any store is opened (none is configured here).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--precision", "fp8"}, "--precision is a flag of --value"},
		{[]string{"--value", "--output", "markdown"}, `--output "markdown": want table, json or csv`},
		{[]string{"--value", "--precision", "fp6"}, `--precision: unknown precision "fp6" (want one of fp32, tf32, fp16, bf16, fp8, int8, fp4)`},
		{[]string{"--value", "--price-type", "committed"}, `--price-type: unknown price type "committed" (want one of on_demand, spot,`},
		{[]string{"--value", "--max-age", "a week"}, `--max-age: "a week" is not an age`},
	} {
		if out, code := run(tc.args...); code != exitUsage || !strings.Contains(out, tc.want) {
			t.Errorf("gpus %v: exit %d, %q; want exit %d and %q", tc.args, code, out, exitUsage, tc.want)
		}
	}
}

// TestGPUsValueCLI ranks a market stored in ClickHouse by value, every figure worked out by
// hand: the cheapest offer's $/GPU-hour over the catalog's dense rate (H100 BF16 989, FP8 1979;
// B200 2250, 4500, 9000; RTX 4090 165.2, 330; L40S 362, 733; V100 FP16 125, no BF16 or FP8) and
// over the memory bandwidth (H100 3.35 TB/s).
func TestGPUsValueCLI(t *testing.T) {
	st := storetest.Open(t)
	fx := &anFixture{History: &storetest.History{DSN: storetest.DatabaseDSN(t, st.Database()), Store: st}, spool: t.TempDir()}
	now := time.Now().UTC().Truncate(time.Second)
	evil := "=HYPERLINK(\"http://x.example\",\"x\")\x1b[31m\r\nlambda  B200  $0.0001"
	offer := func(provider, id, model string, pt schema.PriceType, price string, ago time.Duration) schema.Offer {
		p := decimal.RequireFromString(price)
		return schema.Offer{ObservedAt: now.Add(-ago), RunID: "run-value", Provider: provider, OfferID: id, Tier: schema.TierSecure,
			Region: "us-east", Country: "US", GPUModel: model, GPUNameRaw: model, GPUCount: 1, VRAMGB: 80, PriceType: pt,
			PriceUSDPerHour: p, PriceUSDPerGPUHour: p, IntraNode: schema.IntraPCIe, InterNode: schema.InterNone, Stock: schema.StockHigh}
	}
	hostile := offer("vast\x1b]0;pwned\x07ai", evil, "RTX-4090-24GB", schema.OnDemand, "0.35", time.Hour)
	hostile.Region = evil
	offers := []schema.Offer{
		offer("runpod", "h100/secure", "H100-SXM-80GB", schema.OnDemand, "2.00", time.Hour),
		offer("lambda", "gpu_1x_h100_sxm5", "H100-SXM-80GB", schema.OnDemand, "2.49", time.Hour),
		offer("runpod", "h100/community", "H100-SXM-80GB", schema.Spot, "1.50", time.Hour),
		offer("runpod", "h100/secure", "H100-SXM-80GB", schema.Term3M, "1.80", time.Hour),
		offer("aws", "p5/1y", "H100-SXM-80GB", schema.Term1Y, "1.60", time.Hour),
		offer("lambda", "gpu_1x_b200", "B200-SXM-180GB", schema.OnDemand, "4.50", time.Hour),
		hostile,
		offer("runpod", "l40s/secure", "L40S-48GB", schema.OnDemand, "0.90", time.Hour),
		offer("vastai", "ask-1", "V100-SXM2-32GB", schema.OnDemand, "0.30", time.Hour),
		offer("vastai", "ask-2", "A100-SXM-80GB", schema.OnDemand, "0.10", 48*time.Hour), // no longer listed: not today's market
		offer("vastai", "ask-3", "", schema.OnDemand, "0.05", time.Hour),                 // not in the catalog
	}
	if err := st.InsertOffers(context.Background(), "run-value", offers); err != nil {
		t.Fatal(err)
	}
	gpusCmd := func(t *testing.T, args ...string) string {
		t.Helper()
		e, stdout, stderr := fx.env()
		if code := runCommand("gpus", context.Background(), e, append([]string{"--value"}, args...)); code != exitOK {
			t.Fatalf("gpus --value %v: exit %d: %s", args, code, stderr)
		}
		return stdout.String()
	}

	t.Run("table", func(t *testing.T) {
		out := gpusCmd(t)
		checkTable(t, out, 1+5+4, 120) // the header, 5 GPUs, a blank line and the 3 lines of the note
		var got []string
		for _, line := range strings.Split(out, "\n")[1:6] {
			f := strings.Fields(line)
			got = append(got, strings.Join(f[:min(len(f), 4)], " "))
		}
		want := []string{
			"B200-SXM-180GB $0.002 $4.50 $0.563",  // 4.50 / 2250; 4.50 / 8 TB/s
			"H100-SXM-80GB $0.00202 $2.00 $0.597", // 2.00 / 989, not lambda's 2.49; 2.00 / 3.35
			"RTX-4090-24GB $0.00212 $0.35 $0.347", // 0.35 / 165.2; 0.35 / 1.008
			"V100-SXM2-32GB $0.0024 at fp16",      // 0.30 / 125: no BF16
			"L40S-48GB $0.00249 $0.90 $1.04",      // 0.90 / 362; 0.90 / 0.864
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the ranking (-hand +gpus --value):\n%s\n%s", diff, out)
		}
		if !strings.Contains(out, "vast ]0;pwned ai") || !strings.Contains(out, `"at fp16": the GPU has no BF16 path`) {
			t.Errorf("the hostile provider is not shown cleaned, or the fallback is not explained:\n%s", out)
		}
	})
	t.Run("json at fp8", func(t *testing.T) {
		got := itemsOf[market.Value](t, []byte(gpusCmd(t, "--precision", "FP8", "--output", "json")))
		want := []string{"B200-SXM-180GB fp8 0.001", "H100-SXM-80GB fp8 0.00101061", "RTX-4090-24GB fp8 0.00106061", "L40S-48GB fp8 0.00122783", "V100-SXM2-32GB fp16 0.0024"}
		var ranked []string
		for _, v := range got {
			ranked = append(ranked, v.GPUModel+" "+string(v.RunsAt)+" "+v.USDPerTFLOPHour.String())
		}
		if diff := cmp.Diff(want, ranked); diff != "" {
			t.Errorf("fp8 ranking (-hand +gpus --value):\n%s", diff)
		}
		if h := got[1]; h.Provider != "runpod" || h.OfferID != "h100/secure" || h.BF16 == nil || h.BF16.String() != "0.00202224" || h.FP4 != nil ||
			h.USDPerTBpsHour.String() != "0.59701493" || h.Precision != "fp8" {
			t.Errorf("the H100: %+v", h)
		}
		if r := got[2]; r.Provider != hostile.Provider || r.Region != evil {
			t.Errorf("JSON keeps text as stored: provider %q, region %q", r.Provider, r.Region)
		}
	})
	t.Run("csv of the cheapest commitment", func(t *testing.T) {
		rows := checkCSV(t, gpusCmd(t, "--price-type", "commitment", "--output", "csv"), 2, "usd_per_tflop_hour", "price_usd_per_gpu_hour")
		// aws's one-year price, under runpod's three-month one: 1.60 / 989.
		if got := strings.Join(rows[1][:4], " ") + " " + rows[1][7] + " " + rows[1][10]; got != "H100-SXM-80GB term_1y aws p5/1y 1.600000 0.00161780" {
			t.Errorf("the commitment row: %q", got)
		}
	})
	t.Run("csv cleans what a spreadsheet would run", func(t *testing.T) {
		rows := checkCSV(t, gpusCmd(t, "--output", "csv"), 6, "usd_per_tflop_hour")
		if r := rows[3]; r[0] != "RTX-4090-24GB" || !strings.HasPrefix(r[3], "'=HYPERLINK") || !strings.HasPrefix(r[4], "'=HYPERLINK") {
			t.Errorf("the RTX 4090's offer id and region: %q, %q", r[3], r[4])
		}
	})
	t.Run("a price type nobody sells at", func(t *testing.T) {
		e, stdout, stderr := fx.env()
		if code := runCommand("gpus", context.Background(), e, []string{"--value", "--price-type", "reserved", "--output", "json"}); code != exitOK ||
			len(itemsOf[market.Value](t, stdout.Bytes())) != 0 || !strings.Contains(stdout.String(), `"value": []`) ||
			!strings.Contains(stderr.String(), "no offer of a catalog GPU at reserved") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}
