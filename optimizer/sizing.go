package optimizer

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpucost/gpucost/gpus"
)

// maxGPUCount bounds GPU counts so that absurd inputs cannot overflow.
const maxGPUCount = 1 << 20

// variant is a workload sized at one precision: the numbers every offer is checked against.
type variant struct {
	precision Precision // of the weights (inference), the math (training), or "" (custom without one)
	measured  bool      // sharded is a measured footprint: no headroom is added
	sizing    Sizing    // without Fits
	sharded   float64   // GB split across GPUs: weights + KV cache + state
	perGPU    float64   // GB on every GPU: overhead + activations
	decodeGB  float64   // GB read per decode step: weights + KV cache (inference)
	flops     float64   // FLOPs of one run (training)
}

// size estimates a workload's memory and compute at each acceptable precision (docs/gpus.md §1).
func (o *Options) size(w *Workload) []variant {
	overhead := o.OverheadGiBPerGPU * gpus.GiB
	switch {
	case w.Kind == Inference:
		return finishSizing(o, o.inferenceVariants(w, overhead))
	case w.Kind.Training():
		return finishSizing(o, o.trainingVariants(w, overhead))
	}
	return customVariants(w)
}

// inferenceVariants sizes serving at each of its precisions: the weights at that precision
// and the KV cache, sharded; the runtime overhead on every GPU. A measured footprint
// replaces both.
func (o *Options) inferenceVariants(w *Workload, overhead float64) []variant {
	variants := make([]variant, 0, len(w.Precisions))
	kv := o.kvCacheGB(w)
	for _, p := range w.Precisions {
		weights := w.ParamsB * o.WeightBytes.Of(p)
		v := variant{precision: p, sharded: weights + kv, perGPU: overhead, decodeGB: weights + kv}
		v.sizing = Sizing{Precision: p, WeightsGB: weights, KVCacheGB: kv, ShardedGB: v.sharded, OverheadGBPerGPU: overhead}
		if w.MeasuredVRAMGB > 0 {
			v.measured, v.sharded, v.perGPU = true, w.MeasuredVRAMGB, 0
			v.sizing.ShardedGB, v.sizing.OverheadGBPerGPU, v.sizing.MeasuredGB = w.MeasuredVRAMGB, 0, w.MeasuredVRAMGB
		}
		variants = append(variants, v)
	}
	return variants
}

// trainingVariants sizes a training job at each of its precisions: weights and training
// state, sharded; the runtime overhead and the activations on every GPU; and the FLOPs of
// one run. A measured footprint replaces the memory.
func (o *Options) trainingVariants(w *Workload, overhead float64) []variant {
	weights, state := o.trainingStateGB(w)
	act := o.activationsGB(w)
	flops := o.trainingFLOPs(w)
	variants := make([]variant, 0, len(w.Precisions))
	for _, p := range trainingPrecisionsOf(w) {
		v := variant{precision: p, sharded: weights + state, perGPU: overhead + act, flops: flops}
		v.sizing = Sizing{
			Precision: p, WeightsGB: weights, StateGB: state, ShardedGB: v.sharded,
			ActivationsGBPerGPU: act, OverheadGBPerGPU: overhead, TrainingPFLOPs: v.flops / 1e15,
		}
		if w.MeasuredVRAMGB > 0 {
			v.measured, v.sharded, v.perGPU = true, w.MeasuredVRAMGB, 0
			v.sizing.ShardedGB, v.sizing.ActivationsGBPerGPU, v.sizing.OverheadGBPerGPU, v.sizing.MeasuredGB = w.MeasuredVRAMGB, 0, 0, w.MeasuredVRAMGB
		}
		variants = append(variants, v)
	}
	return variants
}

// trainingStateGB is what a training job shards across GPUs: the weights (the frozen base
// for LoRA and QLoRA, else the bf16 working copy) and the state (adapters with their
// gradients and optimizer state, else the fp32 master weights, gradients and AdamW state).
func (o *Options) trainingStateGB(w *Workload) (weights, state float64) {
	switch w.Kind {
	case LoRA, QLoRA:
		base := o.LoRABaseBytesPerParam
		if w.Kind == QLoRA {
			base = o.QLoRABaseBytesPerParam
		}
		return w.ParamsB * base, w.ParamsB * o.AdapterFraction * o.AdapterBytesPerParam
	}
	return w.ParamsB * 2, w.ParamsB * max(o.FullTrainingBytesPerParam-2, 0) // 2: the bf16 working copy
}

// activationsGB is the activation memory on every GPU of a training job: as the workload
// states it, else with full activation checkpointing seq × micro-batch × hidden ×
// (2 per layer for the checkpoints + ActivationLayerBytes for the layer recomputed) bytes.
func (o *Options) activationsGB(w *Workload) float64 {
	if w.ActivationsGB != 0 {
		return w.ActivationsGB
	}
	layers, hidden := o.shape(w)
	seq, mb := o.TrainingSeqLen, o.TrainingMicroBatch
	if w.SeqLen > 0 {
		seq = w.SeqLen
	}
	if w.MicroBatch > 0 {
		mb = w.MicroBatch
	}
	return float64(seq) * float64(mb) * hidden * (2*layers + o.ActivationLayerBytes) / 1e9
}

// customVariants sizes custom work as it states its VRAM, raw: one variant per precision it
// names (one without a precision when it names none), with no headroom added.
func customVariants(w *Workload) []variant {
	ps := w.Precisions
	if len(ps) == 0 {
		ps = []Precision{""}
	}
	variants := make([]variant, 0, len(ps))
	for _, p := range ps {
		v := variant{precision: p, sharded: w.MinTotalVRAMGB, measured: true}
		v.sizing = Sizing{Precision: p, ShardedGB: w.MinTotalVRAMGB, NeededGBOneGPU: max(w.MinTotalVRAMGB, w.MinVRAMGBPerGPU)}
		variants = append(variants, v)
	}
	return variants
}

// trainingPrecisionsOf is a training workload's precisions: bf16 when it names none.
func trainingPrecisionsOf(w *Workload) []Precision {
	if len(w.Precisions) == 0 {
		return []Precision{BF16}
	}
	return w.Precisions
}

// finishSizing fills in each variant's sizing the VRAM one GPU would need: (sharded +
// per-GPU) / utilization.
func finishSizing(o *Options, variants []variant) []variant {
	for i := range variants {
		v := &variants[i]
		v.sizing.NeededGBOneGPU = (v.sharded + v.perGPU) / o.utilization(v)
	}
	return variants
}

// utilization is the fraction of VRAM a variant may fill: all of it for a measured footprint,
// which already holds the runtime's own headroom.
func (o *Options) utilization(v *variant) float64 {
	if v.measured {
		return 1
	}
	return o.GPUMemoryUtilization
}

// shape returns the number of layers and the hidden size: from the workload when it gives the
// layers (h = √(N / 12L)), else estimated from N ≈ 12·L·h² with h = HiddenPerLayer·L.
func (o *Options) shape(w *Workload) (layers, hidden float64) {
	n := w.ParamsB * 1e9
	if w.Layers > 0 {
		layers = float64(w.Layers)
		return layers, math.Sqrt(n / (12 * layers))
	}
	hidden = math.Cbrt(o.HiddenPerLayer * n / 12)
	return max(1, math.Round(hidden/o.HiddenPerLayer)), hidden
}

// kvCacheGB is the KV cache of docs/gpus.md §1.2: 2 × bytes_per_elem × layers × kv_heads ×
// head_dim × tokens_in_flight.
func (o *Options) kvCacheGB(w *Workload) float64 {
	if w.KVCacheGB > 0 {
		return w.KVCacheGB
	}
	layers, _ := o.shape(w)
	heads, dim := float64(o.DefaultKVHeads), float64(o.DefaultHeadDim)
	if w.KVHeads > 0 {
		heads = float64(w.KVHeads)
	}
	if w.HeadDim > 0 {
		dim = float64(w.HeadDim)
	}
	p := w.KVPrecision
	if p == "" {
		p = FP16
	}
	perToken := 2 * kvBytes(p) * layers * heads * dim
	return perToken * float64(w.ContextTokens) * float64(w.Concurrency) / 1e9
}

// trainingFLOPs is k·N·D (docs/gpus.md §1.4, §2.1), or the reference GPU-hours times the
// reference GPU's effective rate (dense TFLOPS at the first precision it computes × MFU).
func (o *Options) trainingFLOPs(w *Workload) float64 {
	if w.TrainTokens > 0 {
		k := o.FullFLOPsPerParamToken
		if w.Kind == LoRA || w.Kind == QLoRA {
			k = o.LoRAFLOPsPerParamToken
		}
		return k * w.ParamsB * 1e9 * w.TrainTokens
	}
	ref, _ := gpus.Lookup(w.ReferenceGPU)
	return w.GPUHours * 3600 * referenceTFLOPS(ref, trainingPrecisionsOf(w)) * 1e12 * o.mfu(ref.FormFactor)
}

// referenceTFLOPS is the dense rate of the first of ps the reference GPU computes (the work was
// measured there, so it ran in one of them), else its FP32 rate.
func referenceTFLOPS(ref gpus.Model, ps []Precision) float64 {
	for _, p := range ps {
		if ref.Computes(p) == nil {
			return ref.TFLOPS.Of(p)
		}
	}
	return ref.TFLOPS.FP32
}

// mfu is the model FLOPs utilization of a GPU of form factor f (Options.MFU).
func (o *Options) mfu(f gpus.FormFactor) float64 {
	switch f {
	case gpus.SXM:
		return o.MFU.SXM
	case gpus.OAM:
		return o.MFU.OAM
	case gpus.NVL:
		return o.MFU.NVL
	case gpus.Consumer:
		return o.MFU.Consumer
	}
	return o.MFU.PCIe
}

// minGPUs is the fewest GPUs with vramGB each that hold variant v of w: the smallest n with
// sharded + n × perGPU ≤ n × VRAM × utilization (docs/gpus.md §1.3), rounded up to a power of
// two for tensor-parallel inference. ok is false when no count can.
func (o *Options) minGPUs(w *Workload, v *variant, vramGB float64) (n int, ok bool) {
	if w.Kind == Custom {
		if vramGB < w.MinVRAMGBPerGPU {
			return 0, false
		}
		n = max(w.GPUs, 1)
		if w.MinTotalVRAMGB > 0 {
			n = max(n, ceilInt(w.MinTotalVRAMGB/vramGB))
		}
		return n, n <= maxGPUCount
	}
	usable := vramGB*o.utilization(v) - v.perGPU
	if usable <= 0 {
		return 0, false
	}
	n = max(ceilInt(v.sharded/usable), 1)
	if n > maxGPUCount {
		return 0, false
	}
	if w.Kind == Inference && o.TensorParallelPowerOfTwo {
		n = nextPow2(n)
	}
	return n, true
}

// neededGB is the raw VRAM n GPUs need for variant v, overhead and headroom included.
func (o *Options) neededGB(w *Workload, v *variant, n int) float64 {
	if w.Kind == Custom {
		return max(w.MinTotalVRAMGB, float64(n)*w.MinVRAMGBPerGPU)
	}
	return (v.sharded + float64(n)*v.perGPU) / o.utilization(v)
}

// Size estimates w's memory and compute, one Sizing per acceptable precision (Fits empty).
func (o Options) Size(w *Workload) []Sizing {
	variants := o.size(w)
	out := make([]Sizing, len(variants))
	for i := range variants {
		out[i] = roundSizing(variants[i].sizing)
	}
	return out
}

// Fits reports, for each acceptable precision of w, how many GPUs of model m it needs and
// the interconnect that count needs: none for one GPU; for inference with tensor parallelism
// NVLink preferred (or required, by option); for training state sharded over several GPUs
// NVLink/NVSwitch; InfiniBand/RoCE beyond Options.MaxGPUsPerNode. Memory only: offers, prices
// and deadlines are Optimize's business.
func (o Options) Fits(w *Workload, m gpus.Model) []Fit {
	variants := o.size(w)
	out := make([]Fit, 0, len(variants))
	for i := range variants {
		out = append(out, o.fit(w, &variants[i], m))
	}
	return out
}

// fit is how variant v of w fits GPU model m by memory alone: the fewest GPUs, the nodes
// and links that count needs, and why it cannot when it cannot.
func (o *Options) fit(w *Workload, v *variant, m gpus.Model) Fit {
	f := Fit{GPUModel: m.Name, Precision: v.precision, IntraNode: LinkNone, InterNode: LinkNone}
	if st, why := gpuCheck(w, v, m); st != stageOK {
		f.Reason = fmt.Sprintf("%s: %s", m.Name, why)
		return f
	}
	n, ok := o.minGPUs(w, v, m.VRAMGB)
	if !ok {
		if w.Kind == Custom && m.VRAMGB < w.MinVRAMGBPerGPU {
			f.Reason = fmt.Sprintf("%s: %s GB per GPU < %s GB needed per GPU", m.Name, formatGB(m.VRAMGB), formatGB(w.MinVRAMGBPerGPU))
		} else {
			f.Reason = fmt.Sprintf("%s: %s GB per GPU is used up by the %s GB every GPU needs (overhead, activations) at %.0f%% utilization",
				m.Name, formatGB(m.VRAMGB), formatGB(v.perGPU), o.utilization(v)*100)
		}
		return f
	}
	f.GPUs = n
	f.Nodes = ceilDiv(n, o.MaxGPUsPerNode)
	f.NeededGB = round2(o.neededGB(w, v, n))
	if n > 1 {
		switch {
		case w.Kind == Inference && o.InferenceTPRequiresNVLink:
			f.IntraNode = LinkNVLink
		case w.Kind == Inference:
			f.IntraNode = LinkNVLinkPreferred
		case w.Kind == Custom:
			f.IntraNode = w.Interconnect
			if f.IntraNode == LinkNone {
				f.IntraNode = LinkAny
			}
		case o.ShardedTrainingRequiresNVLink:
			f.IntraNode = LinkNVLink
		default:
			f.IntraNode = LinkAny
		}
	}
	if f.Nodes > 1 {
		f.InterNode = LinkRDMA
	}
	head := fmt.Sprintf("%s ×%d", m.Name, n)
	inNode := min(n, o.MaxGPUsPerNode)
	switch {
	case f.Nodes > 1 && (w.Kind == Inference || (w.Kind == Custom && !w.MultiNode)):
		f.Reason = fmt.Sprintf("%s: %s GB needed, more than one node of %d holds; %s does not span nodes",
			head, formatGB(f.NeededGB), o.MaxGPUsPerNode, w.Kind)
	case f.Nodes > o.MaxNodes:
		f.Reason = fmt.Sprintf("%s: needs %d nodes, more than the %d allowed", head, f.Nodes, o.MaxNodes)
	case f.IntraNode == LinkNVSwitch && n > 1 && m.Topology != gpus.TopologyNVSwitch:
		f.Reason = fmt.Sprintf("%s: no NVSwitch (its fabric: %s), %s", head, m.Topology, needsLink(w))
	case f.IntraNode == LinkNVLink || f.IntraNode == LinkNVSwitch:
		if why := fabricShort(m, inNode); why != "" {
			f.Reason = fmt.Sprintf("%s: %s, %s", head, why, needsLink(w))
			break
		}
		f.Feasible = true
	case w.Kind == Inference && n > 2 && !m.Linkable() && !m.PeerToPeer:
		f.Reason = fmt.Sprintf("%s: %s", head, noPeerToPeer(m))
	default:
		f.Feasible = true
	}
	return f
}

// fabricShort says why n GPUs of model m in one node cannot all be on one GPU fabric, or "".
func fabricShort(m gpus.Model, n int) string {
	switch {
	case !m.Linkable():
		return "no NVLink"
	case n > m.NVLinkDomain:
		return fmt.Sprintf("its %s joins %d GPUs, not the %d the work is split over", m.Topology, m.NVLinkDomain, n)
	}
	return ""
}

// noPeerToPeer explains why tensor parallelism beyond two cards without a fabric or P2P is
// refused.
func noPeerToPeer(m gpus.Model) string {
	return fmt.Sprintf("no NVLink and no PCIe peer-to-peer on %s: tensor parallelism beyond 2 GPUs would move every activation through host memory", m.Family)
}

// gpuCheck applies the checks that depend on the GPU model alone: the workload's GPU lists and
// compute capability, its serving engine, and whether the GPU computes the variant's
// precision. It returns stageOK, or the failing stage and why.
func gpuCheck(w *Workload, v *variant, m gpus.Model) (stage, string) {
	switch {
	case len(w.GPUsAllowed) > 0 && !matchesGPU(m, w.GPUsAllowed):
		return stageGPU, "not in gpus_allowed"
	case matchesGPU(m, w.GPUsExcluded):
		return stageGPU, "in gpus_excluded"
	case w.MinCapability != (gpus.Capability{}) && m.Vendor != gpus.NVIDIA:
		return stageGPU, fmt.Sprintf("an %s GPU (%s, %s), the workload needs CUDA compute capability %s", strings.ToUpper(string(m.Vendor)), m.Vendor.Stack(), m.GFX, w.MinCapability)
	case w.MinCapability != (gpus.Capability{}) && !m.Capability.AtLeast(w.MinCapability.Major, w.MinCapability.Minor):
		return stageGPU, fmt.Sprintf("compute capability %s < %s, the workload's min_compute_capability", m.Capability, w.MinCapability)
	}
	if e := w.Engine; e != "" && e != NoEngine {
		if err := m.Runs(e); err != nil {
			return stageGPU, err.Error()
		}
	}
	if v.precision != "" {
		if err := m.Computes(v.precision); err != nil {
			return stagePrecision, fmt.Sprintf("%v; %s", err, precisionUse(w, v.precision))
		}
	}
	if err := scaleByPrecision(w, m); err != nil {
		return stagePrecision, fmt.Sprintf("%v; the work scales by its %s rate", err, w.ScaleBy)
	}
	return stageOK, ""
}

// precisionUse says what a workload does in precision p, for reasons.
func precisionUse(w *Workload, p Precision) string {
	switch {
	case w.Kind == Inference:
		return fmt.Sprintf("the weights are %s", p)
	case w.Kind.Training():
		return fmt.Sprintf("the job trains in %s", p)
	}
	return fmt.Sprintf("the workload computes in %s", p)
}

// needsLink names who needs NVLink, for reasons: "training needs it".
func needsLink(w *Workload) string {
	switch w.Kind {
	case Inference:
		return "tensor parallelism is configured to need it"
	case Custom:
		return "the workload asks for " + string(w.Interconnect)
	}
	return "training needs it"
}

// ceilInt rounds x up to an integer (within 1e-9), at most maxGPUCount + 1.
func ceilInt(x float64) int {
	if x > maxGPUCount {
		return maxGPUCount + 1
	}
	return int(math.Ceil(x - 1e-9))
}

// ceilDiv is a / b rounded up.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// nextPow2 is the smallest power of two ≥ n.
func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// round2 rounds x to two decimals.
func round2(x float64) float64 { return math.Round(x*100) / 100 }

// formatGB formats a size in GB with at most one decimal: 24, 41.3.
func formatGB(x float64) string { return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64) }

// roundSizing rounds the reported sizes to 0.01 GB so plans carry no float noise.
func roundSizing(s Sizing) Sizing {
	s.WeightsGB = round2(s.WeightsGB)
	s.KVCacheGB = round2(s.KVCacheGB)
	s.StateGB = round2(s.StateGB)
	s.ShardedGB = round2(s.ShardedGB)
	s.ActivationsGBPerGPU = round2(s.ActivationsGBPerGPU)
	s.OverheadGBPerGPU = round2(s.OverheadGBPerGPU)
	s.NeededGBOneGPU = round2(s.NeededGBOneGPU)
	s.TrainingPFLOPs = math.Round(s.TrainingPFLOPs)
	return s
}
