package optimizer_test

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/optimizer"
)

func mustModel(tb testing.TB, name string) gpus.Model {
	tb.Helper()
	m, ok := gpus.Lookup(name)
	if !ok {
		tb.Fatalf("catalog has no %s", name)
	}
	return m
}

// Reference workloads of docs/gpus.md §1.4, with exact shapes from §1.2 where it gives them.
var (
	llama2_7B = optimizer.Workload{Name: "7b", Kind: optimizer.Inference, ParamsB: 7, Precisions: []optimizer.Precision{optimizer.FP16},
		Layers: 32, KVHeads: 32, HeadDim: 128, ContextTokens: 2048, Concurrency: 4}
	llama3_70B = optimizer.Workload{Name: "70b", Kind: optimizer.Inference, ParamsB: 70, Precisions: []optimizer.Precision{optimizer.FP16},
		Layers: 80, KVHeads: 8, HeadDim: 128, ContextTokens: 4096, Concurrency: 1}
	fullFT13B = optimizer.Workload{Name: "ft", Kind: optimizer.FullFinetune, ParamsB: 13, TrainTokens: 1e9}
	qlora65B  = optimizer.Workload{Name: "qlora", Kind: optimizer.QLoRA, ParamsB: 65, TrainTokens: 1e7}
	lora7B    = optimizer.Workload{Name: "lora", Kind: optimizer.LoRA, ParamsB: 7, TrainTokens: 1e8}
	pretrain  = optimizer.Workload{Name: "pt", Kind: optimizer.Pretrain, ParamsB: 70, TrainTokens: 1.4e12}
)

func with(w optimizer.Workload, f func(*optimizer.Workload)) optimizer.Workload {
	f(&w)
	return w
}

// TestFits pins the sizing rules to docs/gpus.md §1.4 (the "fits" and
// "interconnect" columns).
func TestFits(t *testing.T) {
	opts := optimizer.DefaultOptions()
	type fit struct {
		GPUs      int
		Nodes     int
		IntraNode optimizer.Link
		InterNode optimizer.Link
		Feasible  bool
	}
	one := fit{GPUs: 1, Nodes: 1, IntraNode: optimizer.LinkNone, InterNode: optimizer.LinkNone, Feasible: true}
	tests := []struct {
		name       string
		w          optimizer.Workload
		gpu        string
		want       fit
		wantReason string // substring, when not feasible
	}{
		// 7B inference: "FP16: 1× ≥24 GB (L4, A10, RTX 3090/4090, L40S…) at moderate batch."
		{name: "7B fp16, 4×2048 tokens, fits one RTX 4090", w: llama2_7B, gpu: "RTX-4090-24GB", want: one},
		{name: "7B fp16, 4×2048 tokens, fits one L4", w: llama2_7B, gpu: "L4-24GB", want: one},
		{name: "7B fp16, 4×2048 tokens, fits one A10", w: llama2_7B, gpu: "A10-24GB", want: one},
		// §1.2: Llama-2-7B holds 16 GiB of KV cache at 32k tokens: no longer one 24 GB card.
		{name: "7B fp16 at 32k tokens in flight needs two 24 GB cards", gpu: "RTX-4090-24GB",
			w:    with(llama2_7B, func(w *optimizer.Workload) { w.Concurrency = 16 }),
			want: fit{GPUs: 2, Nodes: 1, IntraNode: optimizer.LinkNVLinkPreferred, InterNode: optimizer.LinkNone, Feasible: true}},
		// "INT8: 16 GB (T4)."
		{name: "7B int8 fits one T4 16 GB", gpu: "T4-16GB",
			w:    with(llama2_7B, func(w *optimizer.Workload) { w.Precisions = []optimizer.Precision{optimizer.INT8}; w.Concurrency = 2 }),
			want: one},
		// 70B inference: "1× H200 (141 GB) does not fit at FP16"; "FP16: 2×80 GB (A100 / H100, TP=2)".
		{name: "70B fp16 does not fit one H200", w: llama3_70B, gpu: "H200-SXM-141GB",
			want: fit{GPUs: 2, Nodes: 1, IntraNode: optimizer.LinkNVLinkPreferred, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "70B fp16 fits 2× H100 80 GB, NVLink preferred", w: llama3_70B, gpu: "H100-SXM-80GB",
			want: fit{GPUs: 2, Nodes: 1, IntraNode: optimizer.LinkNVLinkPreferred, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "70B fp16 fits 2× A100 80 GB", w: llama3_70B, gpu: "A100-SXM-80GB",
			want: fit{GPUs: 2, Nodes: 1, IntraNode: optimizer.LinkNVLinkPreferred, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "70B fp16 fits one MI300X", w: llama3_70B, gpu: "MI300X-192GB", want: one},
		{name: "70B fp16 fits one B200", w: llama3_70B, gpu: "B200-SXM-180GB", want: one},
		{name: "70B fp8 fits one H200", gpu: "H200-SXM-141GB",
			w:    with(llama3_70B, func(w *optimizer.Workload) { w.Precisions = []optimizer.Precision{optimizer.FP8} }),
			want: one},
		// "INT4: 1× 48 GB (L40S, A6000) or 2× 24 GB."
		{name: "70B int4 fits one L40S", gpu: "L40S-48GB",
			w:    with(llama3_70B, func(w *optimizer.Workload) { w.Precisions = []optimizer.Precision{optimizer.INT4} }),
			want: one},
		{name: "70B int4 fits 2× 24 GB", gpu: "RTX-4090-24GB",
			w:    with(llama3_70B, func(w *optimizer.Workload) { w.Precisions = []optimizer.Precision{optimizer.INT4} }),
			want: fit{GPUs: 2, Nodes: 1, IntraNode: optimizer.LinkNVLinkPreferred, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "fp8 needs FP8 hardware (not A100)", gpu: "A100-SXM-80GB",
			w:          with(llama3_70B, func(w *optimizer.Workload) { w.Precisions = []optimizer.Precision{optimizer.FP8} }),
			want:       fit{IntraNode: optimizer.LinkNone, InterNode: optimizer.LinkNone},
			wantReason: "A100-SXM-80GB: no FP8 support"},
		// Full fine-tune 13B: "≥4×80 GB with ZeRO-3 / FSDP"; "NVLink / NVSwitch strongly preferred".
		{name: "13B full fine-tune needs 4× H100 80 GB with NVLink", w: fullFT13B, gpu: "H100-SXM-80GB",
			want: fit{GPUs: 4, Nodes: 1, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "13B full fine-tune needs 4× A100 80 GB with NVLink", w: fullFT13B, gpu: "A100-SXM-80GB",
			want: fit{GPUs: 4, Nodes: 1, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "13B full fine-tune on A100 40 GB needs 7 of an 8-GPU node (tight)", w: fullFT13B, gpu: "A100-SXM-40GB",
			want: fit{GPUs: 7, Nodes: 1, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "13B full fine-tune cannot shard over L40S (no NVLink)", w: fullFT13B, gpu: "L40S-48GB",
			want:       fit{GPUs: 6, Nodes: 1, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkNone},
			wantReason: "L40S-48GB ×6: no NVLink, training needs it"},
		// QLoRA: "finetune a 65B parameter model on a single 48GB GPU".
		{name: "QLoRA 65B fits one L40S 48 GB", w: qlora65B, gpu: "L40S-48GB", want: one},
		{name: "QLoRA 65B fits one RTX A6000 48 GB", w: qlora65B, gpu: "RTX-A6000-48GB", want: one},
		{name: "QLoRA 65B does not fit one 24 GB card", w: qlora65B, gpu: "RTX-4090-24GB",
			want:       fit{GPUs: 3, Nodes: 1, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkNone},
			wantReason: "no NVLink, training needs it"},
		// LoRA 7B: "1× 24 GB (tight) to 48 GB (comfortable)".
		{name: "LoRA 7B fits one 24 GB card", w: lora7B, gpu: "RTX-4090-24GB", want: one},
		// 70B pretraining: "≥16×80 GB just for sharded states"; "Multi-node … InfiniBand / RoCE".
		{name: "70B pretraining needs several H100 nodes over InfiniBand", w: pretrain, gpu: "H100-SXM-80GB",
			want: fit{GPUs: 19, Nodes: 3, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkRDMA, Feasible: true}},
		// Eight B200 (1,440 GB) hold the states by memory alone; the compute (5.9e23 FLOPs,
		// about 1.8 years on one node) is what takes it across nodes: TestPretrainMultiNode.
		{name: "70B pretraining states fit one B200 node by memory", w: pretrain, gpu: "B200-SXM-180GB",
			want: fit{GPUs: 8, Nodes: 1, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkNone, Feasible: true}},
		{name: "70B pretraining excludes PCIe consumer cards", w: pretrain, gpu: "RTX-4090-24GB",
			want:       fit{GPUs: 74, Nodes: 10, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkRDMA},
			wantReason: "no NVLink, training needs it"},
		// Custom: raw numbers, no headroom.
		{name: "custom 24 GB per GPU fits a 24 GB card", gpu: "RTX-4090-24GB",
			w:    optimizer.Workload{Name: "c", Kind: optimizer.Custom, MinVRAMGBPerGPU: 24, GPUs: 1},
			want: one},
		{name: "custom 8 GPUs with NVLink", gpu: "H100-SXM-80GB",
			w:    optimizer.Workload{Name: "c", Kind: optimizer.Custom, MinVRAMGBPerGPU: 80, GPUs: 8, Interconnect: optimizer.LinkNVLink},
			want: fit{GPUs: 8, Nodes: 1, IntraNode: optimizer.LinkNVLink, InterNode: optimizer.LinkNone, Feasible: true}},
		// A bridged pair is NVLink, not an NVSwitch fabric.
		{name: "custom 2 GPUs on NVSwitch: not a bridged pair of A6000s", gpu: "RTX-A6000-48GB",
			w:          optimizer.Workload{Name: "c", Kind: optimizer.Custom, MinVRAMGBPerGPU: 48, GPUs: 2, Interconnect: optimizer.LinkNVSwitch},
			want:       fit{GPUs: 2, Nodes: 1, IntraNode: optimizer.LinkNVSwitch, InterNode: optimizer.LinkNone},
			wantReason: "RTX-A6000-48GB ×2: no NVSwitch (its fabric: bridge), the workload asks for nvswitch"},
		{name: "custom 8 GPUs on NVSwitch", gpu: "H100-SXM-80GB",
			w:    optimizer.Workload{Name: "c", Kind: optimizer.Custom, MinVRAMGBPerGPU: 80, GPUs: 8, Interconnect: optimizer.LinkNVSwitch},
			want: fit{GPUs: 8, Nodes: 1, IntraNode: optimizer.LinkNVSwitch, InterNode: optimizer.LinkNone, Feasible: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fits := opts.Fits(&tt.w, mustModel(t, tt.gpu))
			if len(fits) != 1 {
				t.Fatalf("got %d fits, want 1", len(fits))
			}
			f := fits[0]
			got := fit{GPUs: f.GPUs, Nodes: f.Nodes, IntraNode: f.IntraNode, InterNode: f.InterNode, Feasible: f.Feasible}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Fits(%s) mismatch (-want +got):\n%s\nreason: %s, needed %v GB", tt.gpu, diff, f.Reason, f.NeededGB)
			}
			if tt.wantReason != "" && !strings.Contains(f.Reason, tt.wantReason) {
				t.Errorf("reason %q does not contain %q", f.Reason, tt.wantReason)
			}
			if tt.want.Feasible && f.Reason != "" {
				t.Errorf("feasible fit has reason %q", f.Reason)
			}
		})
	}
}

// TestSize pins the memory terms to docs/gpus.md §1.1–1.2 (KV-cache examples and bytes per parameter).
func TestSize(t *testing.T) {
	opts := optimizer.DefaultOptions()
	inf := func(params float64, layers, kvHeads, ctx int, p optimizer.Precision) optimizer.Workload {
		return optimizer.Workload{Name: "x", Kind: optimizer.Inference, ParamsB: params, Precisions: []optimizer.Precision{p},
			Layers: layers, KVHeads: kvHeads, HeadDim: 128, ContextTokens: ctx, Concurrency: 1}
	}
	const gib = 1.073741824
	tests := []struct {
		name                        string
		w                           optimizer.Workload
		weights, kv, state, sharded float64 // GB
		pflops                      float64
	}{
		// §1.2 table: tokens in flight 32k.
		{name: "Llama-2-7B MHA: 16 GiB KV at 32k tokens", w: inf(7, 32, 32, 32768, optimizer.FP16), weights: 14, kv: 16 * gib, sharded: 14 + 16*gib},
		{name: "Llama-3-8B GQA: 4 GiB KV at 32k tokens", w: inf(8, 32, 8, 32768, optimizer.BF16), weights: 16, kv: 4 * gib, sharded: 16 + 4*gib},
		{name: "Llama-2-13B MHA: 25 GiB KV at 32k tokens", w: inf(13, 40, 40, 32768, optimizer.FP16), weights: 26, kv: 25 * gib, sharded: 26 + 25*gib},
		{name: "Llama-3-70B GQA: 10 GiB KV at 32k tokens", w: inf(70, 80, 8, 32768, optimizer.FP16), weights: 140, kv: 10 * gib, sharded: 140 + 10*gib},
		// §1.1: FP8 1 B/param; INT4 0.5 + scales (§1.4: 70B int4 ≈ 38 GB).
		{name: "70B fp8 weights 70 GB", w: inf(70, 80, 8, 32768, optimizer.FP8), weights: 70, kv: 10 * gib, sharded: 70 + 10*gib},
		{name: "70B int4 weights 38.5 GB", w: inf(70, 80, 8, 32768, optimizer.INT4), weights: 38.5, kv: 10 * gib, sharded: 38.5 + 10*gib},
		// §1.1 and §1.4: a full fine-tune keeps 18 B/param of state: 13B → 234 GB.
		{name: "13B full fine-tune: 234 GB of states", w: fullFT13B, weights: 26, state: 208, sharded: 234, pflops: 6 * 13e9 * 1e9 / 1e15},
		// §1.4: 70B pretraining, C ≈ 6·N·D = 5.9e23 FLOPs at 1.4T tokens.
		{name: "70B pretraining: 1.26 TB of states, 5.88e23 FLOPs", w: pretrain, weights: 140, state: 1120, sharded: 1260, pflops: 5.88e8},
		// §1.1: QLoRA NF4 0.5 B + double-quant constants; adapters 0.3% × 16 B.
		{name: "QLoRA 65B: 34 GB base + 3 GB adapters", w: qlora65B, weights: 65 * 0.525, state: 65 * 0.003 * 16, sharded: 65*0.525 + 65*0.003*16, pflops: 4 * 65e9 * 1e7 / 1e15},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 0.011 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := opts.Size(&tt.w)[0]
			if !near(s.WeightsGB, tt.weights) || !near(s.KVCacheGB, tt.kv) || !near(s.StateGB, tt.state) || !near(s.ShardedGB, tt.sharded) || !near(s.TrainingPFLOPs, math.Round(tt.pflops)) {
				t.Errorf("Size = weights %v, kv %v, state %v, sharded %v, PFLOPs %v; want %v, %v, %v, %v, %v",
					s.WeightsGB, s.KVCacheGB, s.StateGB, s.ShardedGB, s.TrainingPFLOPs, tt.weights, tt.kv, tt.state, tt.sharded, math.Round(tt.pflops))
			}
		})
	}
}

// TestOptionsOverride shows that every default is an option: a tighter utilization or more
// overhead changes what fits.
func TestOptionsOverride(t *testing.T) {
	w := llama3_70B
	h100 := mustModel(t, "H100-SXM-80GB")
	tests := []struct {
		name string
		mod  func(*optimizer.Options)
		want int
	}{
		{name: "defaults", mod: func(*optimizer.Options) {}, want: 2},
		{name: "2 GiB overhead per GPU", mod: func(o *optimizer.Options) { o.OverheadGiBPerGPU = 2 }, want: 4},
		{name: "80% utilization", mod: func(o *optimizer.Options) { o.GPUMemoryUtilization = 0.8 }, want: 4},
		{name: "no power-of-two rounding", mod: func(o *optimizer.Options) { o.GPUMemoryUtilization = 0.8; o.TensorParallelPowerOfTwo = false }, want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := optimizer.DefaultOptions()
			tt.mod(&o)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := o.Fits(&w, h100)[0].GPUs; got != tt.want {
				t.Errorf("GPUs = %d, want %d", got, tt.want)
			}
		})
	}
	bad := optimizer.DefaultOptions()
	bad.GPUMemoryUtilization = 1.5
	bad.MaxGPUsPerNode = 0
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "utilization") || !strings.Contains(err.Error(), "max_gpus_per_node") {
		t.Errorf("Validate() = %v, want errors naming utilization and max_gpus_per_node", err)
	}
}
