package optimizer

import (
	"slices"
	"strings"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// inference reads an inference workload's fields: the model size and precisions, the serving
// engine (default vllm), the KV cache (context_tokens and concurrency, or kv_cache_gb) and its
// precision (default fp16), the model's shape, a decode speed target, its hours a month and a
// reference GPU for batch jobs.
func (c *converter) inference(p string, r *rawWorkload, w *Workload) {
	w.ParamsB = c.positive(p+".params_b", r.ParamsB, true)
	if len(r.Precision) == 0 {
		c.errorf(p+".precision", "missing precision (want one of %s, or a list of them)", schema.List(Precisions))
	}
	w.Precisions = c.precisions(p, r.Precision, Precisions)
	if w.Engine == "" {
		w.Engine = gpus.VLLM
	}
	w.KVCacheGB = c.positive(p+".kv_cache_gb", r.KVCacheGB, false)
	w.ContextTokens = c.count(p+".context_tokens", r.ContextTokens)
	w.Concurrency = c.count(p+".concurrency", r.Concurrency)
	switch {
	case r.KVCacheGB != nil && (r.ContextTokens != nil || r.Concurrency != nil):
		c.errorf(p+".kv_cache_gb", "give either kv_cache_gb or context_tokens and concurrency, not both")
	case r.KVCacheGB == nil && (r.ContextTokens == nil || r.Concurrency == nil):
		c.errorf(p, "inference needs context_tokens and concurrency (or kv_cache_gb) to size the KV cache")
	}
	w.KVPrecision = FP16
	if r.KVPrecision != nil {
		kp := Precision(strings.ToLower(strings.TrimSpace(*r.KVPrecision)))
		if kvBytes(kp) == 0 {
			c.errorf(p+".kv_precision", "unknown KV-cache precision %q (want fp32, fp16, bf16, fp8 or int8)", *r.KVPrecision)
		}
		w.KVPrecision = kp
	}
	w.Layers = c.count(p+".layers", r.Layers)
	w.KVHeads = c.count(p+".kv_heads", r.KVHeads)
	w.HeadDim = c.count(p+".head_dim", r.HeadDim)
	w.MinDecodeTokensPerSecond = c.positive(p+".min_decode_tokens_per_second", r.MinDecodeTokensPerSecond, false)
	w.HoursPerMonth = c.hoursPerMonth(p, r.HoursPerMonth)
	if r.ReferenceGPU != nil {
		w.ReferenceGPU = c.gpuModel(p+".reference_gpu", *r.ReferenceGPU)
	}
	w.ReferenceGPUs = c.count(p+".reference_gpus", r.ReferenceGPUs)
	if r.ReferenceGPUs != nil && r.ReferenceGPU == nil {
		c.errorf(p+".reference_gpus", "reference_gpus needs reference_gpu")
	}
}

// training reads a training job's fields: the model size, its precisions (default bf16), the
// size of a run (train_tokens, or gpu_hours on a reference_gpu), deadline, runs a month
// (default 1) and what sizes the activations.
func (c *converter) training(p string, r *rawWorkload, w *Workload) {
	w.ParamsB = c.positive(p+".params_b", r.ParamsB, true)
	w.Precisions = []Precision{BF16}
	if len(r.Precision) > 0 {
		w.Precisions = c.precisions(p, r.Precision, trainingPrecisions)
	}
	w.TrainTokens = c.positive(p+".train_tokens", r.TrainTokens, false)
	w.GPUHours = c.positive(p+".gpu_hours", r.GPUHours, false)
	switch {
	case r.TrainTokens != nil && r.GPUHours != nil:
		c.errorf(p+".gpu_hours", "give either train_tokens or gpu_hours with reference_gpu, not both")
	case r.TrainTokens == nil && r.GPUHours == nil:
		c.errorf(p, "%s needs train_tokens (per run), or gpu_hours with reference_gpu", w.Kind)
	case r.GPUHours != nil && r.ReferenceGPU == nil:
		c.errorf(p+".gpu_hours", "gpu_hours needs reference_gpu (the catalog GPU they were measured on)")
	case r.TrainTokens != nil && r.ReferenceGPU != nil:
		c.errorf(p+".reference_gpu", "reference_gpu goes with gpu_hours, not train_tokens")
	}
	if r.ReferenceGPU != nil {
		w.ReferenceGPU = c.gpuModel(p+".reference_gpu", *r.ReferenceGPU)
	}
	if r.Deadline != nil {
		h, err := parseHours(*r.Deadline)
		if err != nil {
			c.errorf(p+".deadline", "%v", err)
		}
		w.DeadlineHours = h
	}
	w.RunsPerMonth = 1
	if r.RunsPerMonth != nil {
		w.RunsPerMonth = c.positive(p+".runs_per_month", r.RunsPerMonth, true)
	}
	w.Layers = c.count(p+".layers", r.Layers)
	w.SeqLen = c.count(p+".seq_len", r.SeqLen)
	w.MicroBatch = c.count(p+".micro_batch", r.MicroBatch)
	w.ActivationsGB = c.nonNegative(p+".activations_gb", r.ActivationsGB)
	if r.ActivationsGB != nil && (r.SeqLen != nil || r.MicroBatch != nil) {
		c.errorf(p+".activations_gb", "give either activations_gb or seq_len/micro_batch, not both")
	}
}

// custom reads a custom workload's fields: its VRAM per GPU and in total, GPU count (default
// 1), interconnect (default none), multi_node, hours a month, precisions, and the work it does
// (customWork).
func (c *converter) custom(p string, r *rawWorkload, w *Workload) {
	w.MinVRAMGBPerGPU = c.positive(p+".min_vram_gb_per_gpu", r.MinVRAMGBPerGPU, false)
	w.MinTotalVRAMGB = c.positive(p+".min_total_vram_gb", r.MinTotalVRAMGB, false)
	if r.MinVRAMGBPerGPU == nil && r.MinTotalVRAMGB == nil {
		c.errorf(p, "custom needs min_vram_gb_per_gpu or min_total_vram_gb")
	}
	w.GPUs = 1
	if r.GPUs != nil {
		w.GPUs = c.count(p+".gpus", r.GPUs)
	}
	w.Interconnect = LinkNone
	if r.Interconnect != nil {
		l := Link(strings.ToLower(strings.TrimSpace(*r.Interconnect)))
		switch l {
		case LinkNone, LinkNVLink, LinkNVSwitch:
			w.Interconnect = l
		default:
			c.errorf(p+".interconnect", "unknown interconnect %q (want none, nvlink or nvswitch; multi_node: true adds InfiniBand/RoCE)", *r.Interconnect)
		}
	}
	if r.MultiNode != nil {
		w.MultiNode = *r.MultiNode
	}
	w.HoursPerMonth = c.hoursPerMonth(p, r.HoursPerMonth)
	w.Precisions = c.precisions(p, r.Precision, Precisions)
	c.customWork(p, r, w)
}

// customWork reads how much work a custom workload does: fixed hours, or hours or units of
// work measured on a reference GPU and scaled to each GPU by scale_by.
func (c *converter) customWork(p string, r *rawWorkload, w *Workload) {
	w.UnitsPerMonth = c.positive(p+".units_per_month", r.UnitsPerMonth, false)
	w.UnitsPerHour = c.positive(p+".units_per_hour", r.UnitsPerHour, false)
	if r.Unit != nil {
		w.Unit = strings.TrimSpace(*r.Unit)
		if w.Unit == "" {
			c.errorf(p+".unit", "empty unit: name what is produced (images, videos, renders)")
		}
	}
	switch {
	case (r.UnitsPerMonth == nil) != (r.UnitsPerHour == nil):
		c.errorf(p, "units_per_month and units_per_hour go together: the work, and its rate on the reference GPU")
	case r.UnitsPerMonth != nil && r.HoursPerMonth != nil:
		c.errorf(p+".hours_per_month", "give either hours_per_month or units_per_month with units_per_hour, not both")
	case r.Unit != nil && r.UnitsPerMonth == nil:
		c.errorf(p+".unit", "unit names the units of units_per_month, which is missing")
	}
	if r.ReferenceGPU == nil {
		if r.UnitsPerMonth != nil || r.ScaleBy != nil || r.ReferenceGPUs != nil {
			c.errorf(p, "units_per_hour, scale_by and reference_gpus are measured on a reference_gpu, which is missing")
		}
		return
	}
	w.ReferenceGPU = c.gpuModel(p+".reference_gpu", *r.ReferenceGPU)
	w.ReferenceGPUs = c.count(p+".reference_gpus", r.ReferenceGPUs)
	if r.UnitsPerMonth == nil && r.HoursPerMonth == nil {
		c.errorf(p, "custom work on a reference_gpu needs hours_per_month (on it) or units_per_month with units_per_hour")
	}
	switch {
	case r.ScaleBy != nil:
		sb := ScaleBy(strings.ToLower(strings.TrimSpace(*r.ScaleBy)))
		if sb != ScaleByBandwidth && sb != ScaleByNone && !slices.Contains(Precisions, Precision(sb)) {
			c.errorf(p+".scale_by", "unknown scale_by %q (want a precision such as bf16, memory_bandwidth, or none)", *r.ScaleBy)
		}
		w.ScaleBy = sb
	case len(w.Precisions) > 0:
		w.ScaleBy = ScaleBy(w.Precisions[0])
	default:
		c.errorf(p+".scale_by", "custom work on a reference_gpu needs scale_by (a precision such as bf16: its dense rate; memory_bandwidth; or none) or a precision")
	}
	if ref, ok := gpus.Lookup(w.ReferenceGPU); ok && slices.Contains(Precisions, Precision(w.ScaleBy)) {
		if err := scaleByPrecision(w, ref); err != nil {
			c.errorf(p+".scale_by", "the reference_gpu %s has %v, so no %s rate to scale from", ref.Name, err, w.ScaleBy)
		}
	}
}
