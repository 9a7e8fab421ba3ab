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
		Engines         []string `json:"engines"`
		FlashAttention2 bool     `json:"flash_attention_2"`
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
	}
	c, _ := run("--output", "csv")
	rows, err := csv.NewReader(strings.NewReader(c)).ReadAll()
	if err != nil || len(rows) != len(models)+1 || rows[0][0] != "name" || rows[0][len(rows[0])-1] != "source" {
		t.Errorf("csv: %d rows (%v), want a header and %d models", len(rows), err, len(models))
	}
	if i := slices.Index(rows[0], "form_factor"); i < 0 || rows[1][i] == "" {
		t.Errorf("csv: header %v, want a form_factor column filled in", rows[0])
	}
	if out, code := run("--output", "yaml"); code != exitUsage || !strings.Contains(out, `--output "yaml"`) {
		t.Errorf("a bad --output: exit %d, %q", code, out)
	}
}
