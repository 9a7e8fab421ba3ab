package main

import (
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/gpus"
)

func TestGPUsCommand(t *testing.T) {
	models := gpus.Models()
	run := func(args ...string) (string, int) {
		var out, errOut strings.Builder
		code := runCommand("gpus", t.Context(), env{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}, args)
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
	var got []struct {
		gpus.Model
		Engines         []string       `json:"engines"`
		FlashAttention2 bool           `json:"flash_attention_2"`
		Purchase        *gpus.Purchase `json:"purchase"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil || len(got) != len(models) || got[0].Name != models[0].Name || got[0].Source == "" {
		t.Errorf("json: %d models (%v), want all %d with their sources", len(got), err, len(models))
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
}
