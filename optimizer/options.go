package optimizer

import (
	"errors"
	"fmt"
)

// Options holds every assumption of the sizing and cost model. DefaultOptions returns the
// documented defaults; callers (the CLI config, tests) override fields and call Validate. Section
// numbers (§) refer to docs/gpus.md, which states each rule and its source; docs/gpu-model.md
// says how the optimizer applies them.
type Options struct {
	// Memory (§1.1–§1.3).

	// GPUMemoryUtilization is the fraction of each GPU's VRAM a workload may fill, named after
	// vLLM's gpu_memory_utilization; that and TensorRT-LLM's free_gpu_memory_fraction both
	// default to 0.9 (§1.3). Not a workload's utilization, its share of busy hours. Default 0.90.
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization" yaml:"gpu_memory_utilization"`
	// OverheadGiBPerGPU is the fixed CUDA context and allocator overhead on every GPU, in GiB
	// (§1.3: 0.3–2 GiB). Default 1.0, with which 70B FP16 on 2×80 GB (§1.4) fits.
	OverheadGiBPerGPU float64 `json:"overhead_gib_per_gpu" yaml:"overhead_gib_per_gpu"`
	// WeightBytes is the bytes per parameter of inference weights at each precision (§1.1 table).
	WeightBytes PrecisionBytes `json:"weight_bytes" yaml:"weight_bytes"`
	// DefaultKVHeads is the number of KV heads assumed when a workload gives no kv_heads: 8, the
	// grouped-query attention of Llama-3, Mistral and Qwen-2.5 (§1.2). Models with multi-head
	// attention (Llama-2) must say kv_heads, or their cache is underestimated by the group size.
	DefaultKVHeads int `json:"default_kv_heads" yaml:"default_kv_heads"`
	// DefaultHeadDim is the attention head dimension assumed when a workload gives none.
	// Default 128 (the grouped-query models of §1.2).
	DefaultHeadDim int `json:"default_head_dim" yaml:"default_head_dim"`
	// HiddenPerLayer is the model aspect ratio (hidden size / layers) used to estimate layers and
	// hidden size from the parameter count when a workload gives no layers, with N ≈ 12·L·h².
	// Default 128 (Llama-2 7B: 4096/32, 13B: 5120/40).
	HiddenPerLayer float64 `json:"hidden_per_layer" yaml:"hidden_per_layer"`

	// FullTrainingBytesPerParam is the memory per parameter of weights, gradients and AdamW
	// state for full fine-tuning and pretraining, sharded across GPUs (ZeRO-3/FSDP). §1.1 gives
	// 16–18; default 18 (bf16 and fp32 weights 6, AdamW 8, fp32 gradients 4), the upper end,
	// because too few GPUs fail with OOM while one GPU too many only costs money.
	FullTrainingBytesPerParam float64 `json:"full_training_bytes_per_param" yaml:"full_training_bytes_per_param"`
	// LoRABaseBytesPerParam is the frozen base model of LoRA, in bf16. Default 2 (§1.1).
	LoRABaseBytesPerParam float64 `json:"lora_base_bytes_per_param" yaml:"lora_base_bytes_per_param"`
	// QLoRABaseBytesPerParam is the NF4 base of QLoRA plus double-quantization constants:
	// 0.5 + 0.2 bit/8 = 0.525 (§1.1).
	QLoRABaseBytesPerParam float64 `json:"qlora_base_bytes_per_param" yaml:"qlora_base_bytes_per_param"`
	// AdapterFraction is the size of LoRA adapters as a fraction of the base model's
	// parameters. Default 0.003 (§1.1: 0.3%).
	AdapterFraction float64 `json:"adapter_fraction" yaml:"adapter_fraction"`
	// AdapterBytesPerParam is the memory per adapter parameter (weights, gradients, AdamW).
	// Default 16 (§1.1).
	AdapterBytesPerParam float64 `json:"adapter_bytes_per_param" yaml:"adapter_bytes_per_param"`
	// TrainingSeqLen and TrainingMicroBatch size the activations of training kinds when a
	// workload gives neither seq_len nor micro_batch nor activations_gb. Defaults 2048 and 1.
	TrainingSeqLen     int `json:"training_seq_len" yaml:"training_seq_len"`
	TrainingMicroBatch int `json:"training_micro_batch" yaml:"training_micro_batch"`
	// ActivationLayerBytes is the working set of the one transformer layer being recomputed,
	// in bytes per token per hidden unit, with full activation checkpointing and flash
	// attention (§1.1, after Korthikanti et al. 2022: 34·s·b·h per layer).
	// The checkpoints add 2 bytes per token per hidden unit per layer. Activations are per GPU
	// (each data-parallel rank runs its own micro-batch). Default 34.
	ActivationLayerBytes float64 `json:"activation_layer_bytes" yaml:"activation_layer_bytes"`

	// Topology.

	// MaxGPUsPerNode is the largest GPU count in one node; more needs several nodes and
	// InfiniBand/RoCE between them. Default 8 (HGX/DGX).
	MaxGPUsPerNode int `json:"max_gpus_per_node" yaml:"max_gpus_per_node"`
	// MaxNodes caps a multi-node plan, also when the provider does not publish availability.
	// Default 128 (1,024 GPUs at 8 per node, within the range §1.4 gives for 70B pretraining).
	MaxNodes int `json:"max_nodes" yaml:"max_nodes"`
	// TensorParallelPowerOfTwo rounds an inference GPU count up to a power of two: tensor
	// parallelism splits attention heads evenly, and head counts are powers of two. Default true.
	TensorParallelPowerOfTwo bool `json:"tensor_parallel_power_of_two" yaml:"tensor_parallel_power_of_two"`
	// InferenceTPRequiresNVLink makes NVLink a requirement for tensor-parallel inference instead
	// of a throughput penalty (§1.4: over PCIe it works, more slowly). Default false.
	InferenceTPRequiresNVLink bool `json:"inference_tp_requires_nvlink" yaml:"inference_tp_requires_nvlink"`
	// ShardedTrainingRequiresNVLink requires NVLink/NVSwitch (or AMD Infinity Fabric) inside a
	// node when training state is sharded over several GPUs (§1.4: ZeRO-3 gathers the weights
	// every step). Data-parallel copies of a model that fits one GPU run over PCIe. Default true.
	ShardedTrainingRequiresNVLink bool `json:"sharded_training_requires_nvlink" yaml:"sharded_training_requires_nvlink"`
	// AllowCommitments admits reserved and term prices for every workload; they need a
	// commitment the plan cannot make for the team. Default false: a workload's commit_up_to
	// admits the term prices of that term or a shorter one.
	AllowCommitments bool `json:"allow_commitments" yaml:"allow_commitments"`

	// Throughput (§2.1).

	// MFU is the model FLOPs utilization by form factor, for training time
	// k·N·D / (n·TFLOPS·MFU·scaling). Defaults (§2.1): 0.40 on SXM and OAM boards, 0.35 on
	// PCIe and NVL cards, 0.30 on GeForce.
	MFU MFUByFormFactor `json:"mfu" yaml:"mfu"`
	// Scaling is the efficiency of several GPUs working on one job, by interconnect.
	Scaling ScalingEfficiency `json:"scaling" yaml:"scaling"`
	// FullFLOPsPerParamToken is k for full fine-tuning and pretraining (C ≈ 6·N·D, §1.4).
	FullFLOPsPerParamToken float64 `json:"full_flops_per_param_token" yaml:"full_flops_per_param_token"`
	// LoRAFLOPsPerParamToken is k for LoRA and QLoRA (≈ 4·N, no weight gradients for the
	// frozen base, §1.4).
	LoRAFLOPsPerParamToken float64 `json:"lora_flops_per_param_token" yaml:"lora_flops_per_param_token"`
	// SpotRestartOverhead is the extra run time of a job on spot capacity: checkpoints, restarts
	// and work lost between the last checkpoint and a preemption. Default 0.10 (§2.1; an
	// assumption to calibrate against your own preemption rate).
	SpotRestartOverhead float64 `json:"spot_restart_overhead" yaml:"spot_restart_overhead"`
	// MaxJobHours is the longest wall-clock run a plan may propose when the workload sets no
	// deadline (a 70B pretraining on one node would take years). Default 1440 (60 days).
	MaxJobHours float64 `json:"max_job_hours" yaml:"max_job_hours"`

	// Market.

	// HoursPerMonth converts hourly prices to monthly ones and is the default hours_per_month
	// of always-on workloads. Default 730 (365 × 24 / 12, §2.1).
	HoursPerMonth float64 `json:"hours_per_month" yaml:"hours_per_month"`
	// MaxOfferAgeHours is how long a price holds after it was observed, when its source gives
	// no end (an imported price table may: valid_until). Scraped and imported offers alike are
	// left out of the plan once their price no longer holds, and a provider with none that
	// holds is listed as excluded. Scrapes are hourly; a day without one means the scraper is
	// broken and its prices are not today's. Default 24.
	MaxOfferAgeHours float64 `json:"max_offer_age_hours" yaml:"max_offer_age_hours"`
	// ServerlessColdStartSeconds is the billed start-up of each wake of a serverless
	// deployment from zero: the container starting and the model loading onto the GPUs.
	// Default 30.
	ServerlessColdStartSeconds float64 `json:"serverless_cold_start_seconds" yaml:"serverless_cold_start_seconds"`
	// ServerlessWakesPerDay is how many times a day a serverless deployment starts from zero:
	// traffic in bursts, scaled to zero between them. Default 24 (hourly bursts).
	ServerlessWakesPerDay float64 `json:"serverless_wakes_per_day" yaml:"serverless_wakes_per_day"`
	// ServerlessMinimumBilledSeconds is the shortest stretch a wake is billed for, however
	// short its work. Default 0: the providers read (Verda) bill by the second.
	ServerlessMinimumBilledSeconds float64 `json:"serverless_minimum_billed_seconds" yaml:"serverless_minimum_billed_seconds"`
	// Alternatives is how many runners-up each workload keeps. Default 3.
	Alternatives int `json:"alternatives" yaml:"alternatives"`
	// DistinctAlternatives keeps at most one runner-up per placement (provider, GPU model, GPU
	// count, price type, precision): a marketplace lists many near-identical hosts, and a reader
	// wants to see other providers and GPUs. Default true.
	DistinctAlternatives bool `json:"distinct_alternatives" yaml:"distinct_alternatives"`

	// Ownership is what owning GPUs costs besides buying them, for the rent-or-buy case of
	// every workload (docs/economics.md §2–§3).
	Ownership OwnershipOptions `json:"ownership" yaml:"ownership"`
}

// PrecisionBytes is a number of bytes per parameter for each inference precision.
type PrecisionBytes struct {
	FP32 float64 `json:"fp32" yaml:"fp32"` // 4
	FP16 float64 `json:"fp16" yaml:"fp16"` // 2
	BF16 float64 `json:"bf16" yaml:"bf16"` // 2
	FP8  float64 `json:"fp8" yaml:"fp8"`   // 1
	INT8 float64 `json:"int8" yaml:"int8"` // 1
	// INT4 is 0.5 plus group scales and zero points (§1.1; §1.4: about 38 GB for 70B).
	// Default 0.55.
	INT4 float64 `json:"int4" yaml:"int4"`
	// FP4 is NVFP4: 4 bits and one FP8 scale per 16 values, 4.5 bits. Default 0.5625.
	FP4 float64 `json:"fp4" yaml:"fp4"`
}

// Of returns the bytes per parameter of precision p, or 0 for an unknown precision.
func (b PrecisionBytes) Of(p Precision) float64 {
	switch p {
	case FP32:
		return b.FP32
	case FP16:
		return b.FP16
	case BF16:
		return b.BF16
	case FP8:
		return b.FP8
	case INT8:
		return b.INT8
	case INT4:
		return b.INT4
	case FP4:
		return b.FP4
	}
	return 0
}

// MFUByFormFactor is a model FLOPs utilization for each GPU form factor (gpus.FormFactor).
type MFUByFormFactor struct {
	SXM      float64 `json:"sxm" yaml:"sxm"`           // 0.40 (§2.1; §1.4 uses 0.40)
	OAM      float64 `json:"oam" yaml:"oam"`           // 0.40, as SXM (an assumption: MI300X software is less mature)
	NVL      float64 `json:"nvl" yaml:"nvl"`           // 0.35, PCIe cards with NVLink bridges
	PCIe     float64 `json:"pcie" yaml:"pcie"`         // 0.35 (§2.1)
	Consumer float64 `json:"consumer" yaml:"consumer"` // 0.30 (§2.1)
}

// ScalingEfficiency is the fraction of linear speed-up several GPUs reach on one job.
type ScalingEfficiency struct {
	NVSwitch float64 `json:"nvswitch" yaml:"nvswitch"` // 0.90 within an NVSwitch node (§2.1)
	NVLink   float64 `json:"nvlink" yaml:"nvlink"`     // 0.85 with NVLink bridges (assumption: some traffic crosses PCIe)
	PCIe     float64 `json:"pcie" yaml:"pcie"`         // 0.60 over PCIe only (§2.1; an assumption)
	// HostMemory is the efficiency over PCIe between cards without peer-to-peer (GeForce RTX
	// 40/50): every transfer goes through host memory. Default 0.35 (§2.1; an assumption,
	// below PCIe's); tensor parallelism beyond 2 such cards is refused (§5).
	HostMemory float64 `json:"host_memory" yaml:"host_memory"`
	// InterNode multiplies the in-node efficiency when a job spans nodes over InfiniBand or RoCE
	// (§2.1). Default 0.85. Across nodes without RDMA a job is infeasible.
	InterNode float64 `json:"inter_node" yaml:"inter_node"`
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		GPUMemoryUtilization:      0.90,
		OverheadGiBPerGPU:         1.0,
		WeightBytes:               PrecisionBytes{FP32: 4, FP16: 2, BF16: 2, FP8: 1, INT8: 1, INT4: 0.55, FP4: 0.5625},
		DefaultKVHeads:            8,
		DefaultHeadDim:            128,
		HiddenPerLayer:            128,
		FullTrainingBytesPerParam: 18,
		LoRABaseBytesPerParam:     2,
		QLoRABaseBytesPerParam:    0.525,
		AdapterFraction:           0.003,
		AdapterBytesPerParam:      16,
		TrainingSeqLen:            2048,
		TrainingMicroBatch:        1,
		ActivationLayerBytes:      34,

		MaxGPUsPerNode:                8,
		MaxNodes:                      128,
		TensorParallelPowerOfTwo:      true,
		InferenceTPRequiresNVLink:     false,
		ShardedTrainingRequiresNVLink: true,
		AllowCommitments:              false,

		MFU:                    MFUByFormFactor{SXM: 0.40, OAM: 0.40, NVL: 0.35, PCIe: 0.35, Consumer: 0.30},
		Scaling:                ScalingEfficiency{NVSwitch: 0.90, NVLink: 0.85, PCIe: 0.60, HostMemory: 0.35, InterNode: 0.85},
		FullFLOPsPerParamToken: 6,
		LoRAFLOPsPerParamToken: 4,
		SpotRestartOverhead:    0.10,
		MaxJobHours:            1440,

		HoursPerMonth:        730,
		MaxOfferAgeHours:     24,
		Alternatives:         3,
		DistinctAlternatives: true,

		ServerlessColdStartSeconds:     30,
		ServerlessWakesPerDay:          24,
		ServerlessMinimumBilledSeconds: 0,

		Ownership: defaultOwnership(),
	}
}

// Validate reports every out-of-range option, each naming its field.
func (o Options) Validate() error {
	var errs []error
	frac := func(name string, v float64) {
		if !(v > 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("option %s: %v not in (0, 1]", name, v))
		}
	}
	pos := func(name string, v float64) {
		if !(v > 0) {
			errs = append(errs, fmt.Errorf("option %s: %v must be positive", name, v))
		}
	}
	nonNeg := func(name string, v float64) {
		if !(v >= 0) {
			errs = append(errs, fmt.Errorf("option %s: %v must not be negative", name, v))
		}
	}
	frac("gpu_memory_utilization", o.GPUMemoryUtilization)
	nonNeg("overhead_gib_per_gpu", o.OverheadGiBPerGPU)
	pos("weight_bytes.fp32", o.WeightBytes.FP32)
	pos("weight_bytes.fp16", o.WeightBytes.FP16)
	pos("weight_bytes.bf16", o.WeightBytes.BF16)
	pos("weight_bytes.fp8", o.WeightBytes.FP8)
	pos("weight_bytes.int8", o.WeightBytes.INT8)
	pos("weight_bytes.int4", o.WeightBytes.INT4)
	pos("weight_bytes.fp4", o.WeightBytes.FP4)
	pos("default_kv_heads", float64(o.DefaultKVHeads))
	pos("default_head_dim", float64(o.DefaultHeadDim))
	pos("hidden_per_layer", o.HiddenPerLayer)
	pos("full_training_bytes_per_param", o.FullTrainingBytesPerParam)
	pos("lora_base_bytes_per_param", o.LoRABaseBytesPerParam)
	pos("qlora_base_bytes_per_param", o.QLoRABaseBytesPerParam)
	nonNeg("adapter_fraction", o.AdapterFraction)
	nonNeg("adapter_bytes_per_param", o.AdapterBytesPerParam)
	pos("training_seq_len", float64(o.TrainingSeqLen))
	pos("training_micro_batch", float64(o.TrainingMicroBatch))
	nonNeg("activation_layer_bytes", o.ActivationLayerBytes)
	pos("max_gpus_per_node", float64(o.MaxGPUsPerNode))
	pos("max_nodes", float64(o.MaxNodes))
	frac("mfu.sxm", o.MFU.SXM)
	frac("mfu.oam", o.MFU.OAM)
	frac("mfu.nvl", o.MFU.NVL)
	frac("mfu.pcie", o.MFU.PCIe)
	frac("mfu.consumer", o.MFU.Consumer)
	frac("scaling.nvswitch", o.Scaling.NVSwitch)
	frac("scaling.nvlink", o.Scaling.NVLink)
	frac("scaling.pcie", o.Scaling.PCIe)
	frac("scaling.host_memory", o.Scaling.HostMemory)
	frac("scaling.inter_node", o.Scaling.InterNode)
	pos("full_flops_per_param_token", o.FullFLOPsPerParamToken)
	pos("lora_flops_per_param_token", o.LoRAFLOPsPerParamToken)
	nonNeg("spot_restart_overhead", o.SpotRestartOverhead)
	pos("max_job_hours", o.MaxJobHours)
	pos("hours_per_month", o.HoursPerMonth)
	pos("max_offer_age_hours", o.MaxOfferAgeHours)
	nonNeg("alternatives", float64(o.Alternatives))
	nonNeg("serverless_cold_start_seconds", o.ServerlessColdStartSeconds)
	nonNeg("serverless_wakes_per_day", o.ServerlessWakesPerDay)
	nonNeg("serverless_minimum_billed_seconds", o.ServerlessMinimumBilledSeconds)
	errs = append(errs, o.Ownership.validate()...)
	return errors.Join(errs...)
}
