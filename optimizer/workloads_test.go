package optimizer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// TestParseSample parses the shipped sample and checks that it covers every kind.
func TestParseSample(t *testing.T) {
	f := MustReadSample(t)
	kinds := map[optimizer.Kind]bool{}
	for _, tm := range f.Teams {
		for _, w := range tm.Workloads {
			kinds[w.Kind] = true
			if w.Current == nil {
				t.Errorf("%s/%s has no current placement", tm.Name, w.Name)
			}
		}
	}
	for _, k := range optimizer.Kinds {
		if !kinds[k] {
			t.Errorf("sample has no %s workload", k)
		}
	}
}

// TestParseWorkload checks that values land in the right fields, with defaults.
func TestParseWorkload(t *testing.T) {
	f := MustParse(t, "w.yaml", `teams:
  - name: search
    email: search@example.com
    workloads:
      - name: chat
        kind: inference
        params_b: 70
        precision: [FP8, int4]
        context_tokens: 8192
        concurrency: 4
        layers: 80
        kv_heads: 8
        providers: [RunPod, lambda]
        current:
          provider: lambda
          gpu_model: h100-sxm-80gb
          gpu_count: 2
          paid_usd_per_gpu_hour: 2.49
      - name: ft
        kind: full_finetune
        params_b: 13
        gpu_hours: 400
        reference_gpu: A100-SXM-80GB
        deadline: 2d
`)
	paid := decimal.RequireFromString("2.49")
	want := []optimizer.Workload{
		{
			Name: "chat", Kind: optimizer.Inference, Line: 5, ParamsB: 70,
			Precisions:    []optimizer.Precision{optimizer.FP8, optimizer.INT4},
			Engine:        gpus.VLLM, // the default serving engine
			ContextTokens: 8192, Concurrency: 4, KVPrecision: optimizer.FP16, Layers: 80, KVHeads: 8,
			Providers: []string{"runpod", "lambda"},
			Current:   &optimizer.Current{Provider: "lambda", GPUModel: "H100-SXM-80GB", GPUCount: 2, PriceType: schema.OnDemand, PaidUSDPerGPUHour: &paid},
		},
		{
			Name: "ft", Kind: optimizer.FullFinetune, Line: 19, ParamsB: 13, GPUHours: 400,
			Precisions:   []optimizer.Precision{optimizer.BF16}, // training's default: mixed bf16
			ReferenceGPU: "A100-SXM-80GB", DeadlineHours: 48, RunsPerMonth: 1,
		},
	}
	if diff := cmp.Diff(want, f.Teams[0].Workloads); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
}

// TestParseErrors: every bad input names the file, the line and the field.
func TestParseErrors(t *testing.T) {
	head := "teams:\n  - name: t\n    email: t@example.com\n    workloads:\n"
	tests := []struct {
		name string
		doc  string
		want []string // each error line, in order
	}{
		{
			name: "typo in kind",
			doc:  head + "      - name: w\n        kind: inferense\n        params_b: 7\n",
			want: []string{`w.yaml:6:15: teams[0].workloads[0].kind: unknown kind "inferense" (want one of inference, lora, qlora, full_finetune, pretrain, custom); did you mean "inference"?`},
		},
		{
			name: "typo in a field name",
			doc:  head + "      - name: w\n        kind: inference\n        params_b: 7\n        precision: fp16\n        contxt_tokens: 4096\n        concurrency: 4\n",
			want: []string{`w.yaml:9:9: contxt_tokens: unknown field (did you mean "context_tokens"?)`},
		},
		{
			name: "unknown field in current",
			doc:  head + "      - name: w\n        kind: custom\n        min_vram_gb_per_gpu: 24\n        current:\n          provider: runpod\n          gpu: RTX-4090-24GB\n",
			want: []string{`w.yaml:10:11: gpu: unknown field (did you mean "gpus"?)`},
		},
		{
			name: "a string where a number goes",
			doc:  head + "      - name: w\n        kind: lora\n        params_b: seven\n",
			want: []string{`w.yaml:7:19: params_b: cannot use "seven" as a number`},
		},
		{
			name: "syntax error",
			doc:  head + "      - name: w\n      kind: [\n",
			want: []string{`w.yaml:6:7:`},
		},
		{
			name: "duplicate key",
			doc:  head + "      - name: w\n        kind: lora\n        kind: qlora\n",
			want: []string{`w.yaml:7:9: kind: mapping key "kind" already defined at [6:9]`},
		},
		{
			name: "field of another kind, missing fields, fractional count",
			doc: head + "      - name: w\n        kind: lora\n        params_b: 7\n        context_tokens: 4096\n" +
				"      - name: x\n        kind: inference\n        params_b: 7\n        precision: fp17\n        concurrency: 2.5\n",
			want: []string{
				`w.yaml:8:25: teams[0].workloads[0].context_tokens: does not apply to kind lora`,
				`w.yaml:5:13: teams[0].workloads[0]: lora needs train_tokens (per run), or gpu_hours with reference_gpu`,
				`w.yaml:12:20: teams[0].workloads[1].precision: unknown precision "fp17" (want one of fp32, fp16, bf16, fp8, int8, int4, fp4)`,
				`w.yaml:13:22: teams[0].workloads[1].concurrency: 2.5 must be a whole number ≥ 1`,
				`w.yaml:9:13: teams[0].workloads[1]: inference needs context_tokens and concurrency (or kv_cache_gb) to size the KV cache`,
			},
		},
		{
			name: "unknown GPU model, price type and bad money",
			doc: head + "      - name: w\n        kind: custom\n        min_vram_gb_per_gpu: 24\n        reference_gpu: RTX-4090\n        hours_per_month: 10\n        scale_by: bf16\n        current:\n" +
				"          provider: runpod\n          gpu_model: RTX-4090\n          price_type: hourly\n          paid_usd_per_hour: free\n",
			want: []string{
				`w.yaml:8:24: teams[0].workloads[0].reference_gpu: unknown GPU model "RTX-4090": use a canonical catalog name (gpucost gpus lists them)`,
				`w.yaml:14:23: teams[0].workloads[0].current.price_type: unknown price type "hourly"`,
				`w.yaml:15:30: teams[0].workloads[0].current.paid_usd_per_hour: "free" is not a positive amount of dollars`,
			},
		},
		{
			name: "a reference GPU without the precision the work scales by",
			doc:  head + "      - name: w\n        kind: custom\n        min_vram_gb_per_gpu: 24\n        reference_gpu: V100-SXM2-32GB\n        hours_per_month: 10\n        scale_by: bf16\n",
			want: []string{`w.yaml:10:19: teams[0].workloads[0].scale_by: the reference_gpu V100-SXM2-32GB has no BF16 support (Volta, sm_70), so no bf16 rate to scale from`},
		},
		{
			name: "team problems",
			doc:  "teams:\n  - name: t\n    email: not-an-address\n    workloads: []\n  - name: t\n    email: t@example.com\n    workloads:\n      - name: w\n        kind: custom\n        min_vram_gb_per_gpu: 8\n        deadline: 3d\n",
			want: []string{
				`w.yaml:3:12: teams[0].email: "not-an-address" is not an email address`,
				`w.yaml:4:16: teams[0].workloads: team "t" has no workloads`,
				`w.yaml:11:19: teams[1].workloads[0].deadline: does not apply to kind custom`,
				`w.yaml:5:11: teams[1].name: duplicate team "t"`,
			},
		},
		{
			name: "bad deadline and both KV sizes",
			doc: head + "      - name: w\n        kind: qlora\n        params_b: 7\n        train_tokens: 1e9\n        deadline: soon\n" +
				"      - name: x\n        kind: inference\n        params_b: 7\n        precision: fp16\n        kv_cache_gb: 4\n        context_tokens: 4096\n        concurrency: 1\n",
			want: []string{
				`w.yaml:9:19: teams[0].workloads[0].deadline: deadline "soon": want a positive duration such as 36h, 21d or 2w`,
				`w.yaml:14:22: teams[0].workloads[1].kv_cache_gb: give either kv_cache_gb or context_tokens and concurrency, not both`,
			},
		},
		{
			name: "empty file",
			doc:  "",
			want: []string{`w.yaml:1: empty file: want a teams list`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := optimizer.ParseWorkloads("w.yaml", []byte(tt.doc))
			if err == nil {
				t.Fatal("no error")
			}
			var ie *optimizer.InputError
			if !errors.As(err, &ie) || ie.File != "w.yaml" {
				t.Errorf("error %v is not an *InputError for w.yaml", err)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tt.want) && len(tt.want) > 1 {
				t.Fatalf("got %d errors, want %d:\n%s", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				line := got[min(i, len(got)-1)]
				if len(tt.want) == 1 || strings.HasSuffix(w, ":") {
					line = err.Error()
				}
				if !strings.Contains(line, w) {
					t.Errorf("error %d = %q, want it to contain %q", i, line, w)
				}
			}
		})
	}
}
