package optimizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// alwaysOnServing reports whether w is a service that answers users around the clock.
func (w *Workload) alwaysOnServing() bool { return w.Kind == Inference && w.ReferenceGPU == "" }

// Kind is what a workload does, which decides how it is sized and costed.
type Kind string

// Workload kinds.
const (
	Inference    Kind = "inference"     // serving: weights + KV cache; $/month at its hours
	LoRA         Kind = "lora"          // LoRA fine-tuning of a bf16 base
	QLoRA        Kind = "qlora"         // LoRA on an NF4-quantized base
	FullFinetune Kind = "full_finetune" // all weights, mixed precision + AdamW
	Pretrain     Kind = "pretrain"      // as full fine-tuning, at scale, multi-node
	Custom       Kind = "custom"        // explicit VRAM, GPU count, interconnect; hours fixed or scaled from a reference GPU
)

// Kinds lists every kind, in a stable order.
var Kinds = []Kind{Inference, LoRA, QLoRA, FullFinetune, Pretrain, Custom}

// Training reports whether the kind is a training job costed by FLOPs.
func (k Kind) Training() bool {
	return k == LoRA || k == QLoRA || k == FullFinetune || k == Pretrain
}

// Precision is the numeric format of weights and math: inference weights (and the KV cache),
// training math, or what a custom workload computes in. The GPU model says which it runs.
type Precision = gpus.Precision

// Precisions a workload may name.
const (
	FP32 = gpus.FP32
	FP16 = gpus.FP16
	BF16 = gpus.BF16
	FP8  = gpus.FP8
	INT8 = gpus.INT8
	INT4 = gpus.INT4
	FP4  = gpus.FP4
)

// Precisions lists every precision of inference weights, in a stable order.
var Precisions = []Precision{FP32, FP16, BF16, FP8, INT8, INT4, FP4}

// trainingPrecisions are the precisions training math can run in (mixed precision with FP32
// master weights; FP8 with a scaling recipe).
var trainingPrecisions = []Precision{BF16, FP16, FP8, FP32}

// ScaleBy says how a custom workload's hours on its reference GPU become hours on another GPU:
// by the dense rate at a precision, by memory bandwidth, or not at all.
type ScaleBy string

// ScaleBy values other than a precision name.
const (
	ScaleByBandwidth ScaleBy = "memory_bandwidth"
	ScaleByNone      ScaleBy = "none"
)

// NoEngine is the engine value of a workload that brings its own software.
const NoEngine gpus.Engine = "none"

// kvBytes is the size of one KV-cache element at precision p (a physical fact, not an
// assumption: a 4-bit cache is not offered by the serving engines, so INT4 has none).
func kvBytes(p Precision) float64 {
	switch p {
	case FP32:
		return 4
	case FP16, BF16:
		return 2
	case FP8, INT8:
		return 1
	}
	return 0
}

// Link is an interconnect a placement needs.
type Link string

// Interconnect needs, inside a node (IntraNode) and between nodes (InterNode).
const (
	LinkNone            Link = "none"             // one GPU, or one node
	LinkAny             Link = "any"              // several GPUs, any interconnect (data parallel)
	LinkNVLinkPreferred Link = "nvlink_preferred" // tensor-parallel inference: PCIe costs throughput
	LinkNVLink          Link = "nvlink"           // NVLink/NVSwitch (or AMD Infinity Fabric) required
	LinkNVSwitch        Link = "nvswitch"         // all-to-all NVSwitch required (custom only)
	LinkRDMA            Link = "rdma"             // InfiniBand or RoCE between nodes
)

// File is a parsed workloads file.
type File struct {
	Name  string `json:"name"` // the file name errors are reported against
	Teams []Team `json:"teams"`
}

// Team owns workloads and receives their savings report.
type Team struct {
	Name      string     `json:"name"`
	Email     string     `json:"email"`
	Workloads []Workload `json:"workloads"`
	Line      int        `json:"line,omitempty"` // line in the file; 0 when built in code
}

// Workload is one job or service of a team. Which fields apply depends on Kind; ParseWorkloads
// rejects fields that do not apply and fills defaults. Optimize checks a File built in code
// the same way before planning it.
type Workload struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	Line int    `json:"line,omitempty"` // line in the file; 0 when built in code

	// ParamsB is the model size in billions of parameters (all kinds but custom).
	ParamsB float64 `json:"params_b,omitempty"`

	// Precisions are the acceptable precisions, most preferred first: of the weights
	// (inference), of the training math (default bf16: mixed precision; fp16 as a fallback only
	// when listed), or what a custom workload computes in (optional). A GPU that has no hardware
	// path for a precision is rejected for it, with the reason.
	Precisions []Precision `json:"precisions,omitempty"`
	// MeasuredVRAMGB is a footprint measured on real hardware, in total across GPUs: it
	// replaces the memory estimate (inference at one precision, training kinds).
	MeasuredVRAMGB float64 `json:"measured_vram_gb,omitempty"`

	// Inference.

	// Engine is the serving engine (inference; default vllm), whose hardware support is a
	// requirement; NoEngine ("none") for software of the workload's own.
	Engine gpus.Engine `json:"engine,omitempty"`
	// ContextTokens × Concurrency is the number of tokens in flight (prompt + generated per
	// sequence × concurrent sequences), which sizes the KV cache (docs/gpus.md §1.2).
	ContextTokens int `json:"context_tokens,omitempty"`
	Concurrency   int `json:"concurrency,omitempty"`
	// KVCacheGB replaces the KV-cache formula with an explicit size.
	KVCacheGB float64 `json:"kv_cache_gb,omitempty"`
	// KVPrecision is the KV-cache element type. Default fp16.
	KVPrecision Precision `json:"kv_precision,omitempty"`
	// Layers, KVHeads and HeadDim make the KV cache exact; missing ones are estimated (Options).
	Layers  int `json:"layers,omitempty"`
	KVHeads int `json:"kv_heads,omitempty"`
	HeadDim int `json:"head_dim,omitempty"`
	// MinDecodeTokensPerSecond is a per-sequence decode speed the placement must reach at full
	// concurrency, from the memory-bandwidth bound (docs/gpus.md §2.1). 0 means no target.
	MinDecodeTokensPerSecond float64 `json:"min_decode_tokens_per_second,omitempty"`

	// HoursPerMonth is how long an inference or custom workload runs each month (730 = always
	// on; 0 means Options.HoursPerMonth). With a ReferenceGPU it is the hours the work takes
	// there each month, and scales to other GPUs: by memory bandwidth for inference, by ScaleBy
	// for custom work.
	HoursPerMonth float64 `json:"hours_per_month,omitempty"`
	// Utilization is the share of those hours the GPUs are busy (serving or custom work
	// without a reference GPU), 0–1; 0 means busy all of them. An instance is billed for every
	// hour it is up; a serverless deployment only for the busy ones and its cold starts, so
	// this decides between the two (docs/economics.md §1). It also prices a unit of work:
	// idle hours are paid for by the work done in the busy ones. Unset, a measured share
	// (Measured) stands in for it.
	Utilization float64 `json:"utilization,omitempty"`

	// Jobs.

	// TrainTokens is the number of training tokens per run (training kinds).
	TrainTokens float64 `json:"train_tokens,omitempty"`
	// GPUHours is the size of one run in GPU-hours on ReferenceGPU, instead of TrainTokens.
	GPUHours float64 `json:"gpu_hours,omitempty"`
	// ReferenceGPU is a catalog model the GPUHours (training), HoursPerMonth (inference batch
	// jobs, custom work) or UnitsPerHour (custom work) were measured on; ReferenceGPUs is how
	// many of them (inference: default the fewest that fit; custom: default GPUs).
	ReferenceGPU  string `json:"reference_gpu,omitempty"`
	ReferenceGPUs int    `json:"reference_gpus,omitempty"`
	// DeadlineHours is the longest acceptable wall-clock time of one run; 0 means none (then
	// Options.MaxJobHours applies).
	DeadlineHours float64 `json:"deadline_hours,omitempty"`
	// RunsPerMonth converts the cost of one run to a monthly cost. Default 1.
	RunsPerMonth float64 `json:"runs_per_month,omitempty"`
	// SeqLen and MicroBatch size training activations; ActivationsGB replaces the estimate
	// (per GPU).
	SeqLen        int     `json:"seq_len,omitempty"`
	MicroBatch    int     `json:"micro_batch,omitempty"`
	ActivationsGB float64 `json:"activations_gb,omitempty"`

	// Custom.

	// MinVRAMGBPerGPU and MinTotalVRAMGB are raw VRAM needs (no headroom is added).
	MinVRAMGBPerGPU float64 `json:"min_vram_gb_per_gpu,omitempty"`
	MinTotalVRAMGB  float64 `json:"min_total_vram_gb,omitempty"`
	// GPUs is the minimum GPU count (custom). Default 1.
	GPUs int `json:"gpus,omitempty"`
	// Interconnect is the custom workload's intra-node need: none, nvlink or nvswitch.
	Interconnect Link `json:"interconnect,omitempty"`
	// MultiNode lets a custom workload span nodes (over InfiniBand/RoCE).
	MultiNode bool `json:"multi_node,omitempty"`
	// ScaleBy turns hours on the ReferenceGPU into hours on another GPU: a precision's dense
	// rate (default the first of Precisions), memory_bandwidth, or none (fixed hours).
	ScaleBy ScaleBy `json:"scale_by,omitempty"`
	// UnitsPerMonth units of work (Unit: "images", "videos"…) at UnitsPerHour on the
	// ReferenceGPUs make the hours of work, instead of HoursPerMonth; the plan then prices a unit.
	UnitsPerMonth float64 `json:"units_per_month,omitempty"`
	UnitsPerHour  float64 `json:"units_per_hour,omitempty"`
	Unit          string  `json:"unit,omitempty"`

	// Every kind.

	// GPUsAllowed, when not empty, are the only GPU models used; GPUsExcluded are never used.
	// Each is a catalog name (H100-SXM-80GB) or a family (H100, RTX 4090), upper case.
	GPUsAllowed  []string `json:"gpus_allowed,omitempty"`
	GPUsExcluded []string `json:"gpus_excluded,omitempty"`
	// MinCapability is the oldest NVIDIA compute capability the workload's kernels run on;
	// zero for none. GPUs of other vendors do not meet it.
	MinCapability gpus.Capability `json:"min_compute_capability,omitzero"`
	// HostTiers, when not empty, are the host tiers allowed; nil means the default policy:
	// always-on serving (inference without a reference GPU) runs only on datacenter, secure
	// and verified hosts, everything else anywhere. MinReliability (0–1, 0 = none) rejects
	// offers whose published host reliability is lower; offers that publish none pass.
	HostTiers      []schema.Tier `json:"host_tiers,omitempty"`
	MinReliability float64       `json:"min_reliability,omitempty"`
	// Interruptible admits spot capacity.
	Interruptible bool `json:"interruptible"`
	// CommitUpToMonths is the longest commitment the team will make for the workload, in
	// months (a week is schema.MonthsPerWeek; 0 for none): term prices of that term or a
	// shorter one are weighed against on-demand and spot, each billed every hour of its
	// term, busy or not. Options.AllowCommitments admits every commitment instead.
	CommitUpToMonths float64 `json:"commit_up_to_months,omitempty"`
	// Providers, when not empty, are the only ones allowed; ExcludeProviders are never used.
	Providers        []string `json:"providers,omitempty"`
	ExcludeProviders []string `json:"exclude_providers,omitempty"`
	// Regions are continents (schema.Continents) and Countries ISO 3166-1 codes the workload may
	// run in; ExcludeRegions and ExcludeCountries never. An offer whose location the provider
	// does not publish is kept, with a note saying so.
	Regions          []string `json:"regions,omitempty"`
	ExcludeRegions   []string `json:"exclude_regions,omitempty"`
	Countries        []string `json:"countries,omitempty"`
	ExcludeCountries []string `json:"exclude_countries,omitempty"`
	// Current is where the workload runs today, if anywhere.
	Current *Current `json:"current,omitempty"`

	// Measured is how busy today's GPUs were, measured (package plans reads it from Prometheus
	// with the current placement's MetricsSelector); nil when not measured. A service with no
	// Utilization of its own is planned at the measured share. Not read from the file.
	Measured *schema.GPUUsage `json:"measured,omitempty"`
	// Unmeasured says why measuring today's GPUs failed; "" when it did not fail or was not
	// tried. Not read from the file.
	Unmeasured string `json:"unmeasured,omitempty"`
}

// Current is a workload's placement today.
type Current struct {
	Provider string `json:"provider"`
	Region   string `json:"region,omitempty"`
	// GPUModel is a canonical catalog name; a GPU the catalog lacks is kept as written, and
	// the plan says the placement cannot be priced.
	GPUModel  string           `json:"gpu_model"`
	GPUCount  int              `json:"gpu_count"`
	PriceType schema.PriceType `json:"price_type"`
	// PaidUSDPerGPUHour or PaidUSDPerHour (for all GPUs) is what the team actually pays; when
	// both are nil the placement is priced at today's market.
	PaidUSDPerGPUHour *decimal.Decimal `json:"paid_usd_per_gpu_hour,omitempty"`
	PaidUSDPerHour    *decimal.Decimal `json:"paid_usd_per_hour,omitempty"`
	// MetricsSelector picks today's GPUs out of the DCGM exporter's series in Prometheus: label
	// matchers without braces (namespace="search",pod=~"chat-7b-.*"); "" when not measured.
	MetricsSelector string `json:"metrics_selector,omitempty"`
}

// validate checks a File built in code (not parsed) for the values Optimize cannot work with.
func (f *File) validate() error {
	if f == nil {
		return errors.New("no workloads")
	}
	var errs []error
	for i, t := range f.Teams {
		for j, w := range t.Workloads {
			if err := w.check(); err != nil {
				errs = append(errs, fmt.Errorf("teams[%d].workloads[%d] (%s/%s): %w", i, j, t.Name, w.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// check catches the values Optimize cannot work with; ParseWorkloads never produces them.
func (w *Workload) check() error {
	if !slices.Contains(Kinds, w.Kind) {
		return fmt.Errorf("unknown kind %q", w.Kind)
	}
	switch {
	case w.Kind == Custom:
		if w.MinVRAMGBPerGPU <= 0 && w.MinTotalVRAMGB <= 0 {
			return errors.New("custom needs min_vram_gb_per_gpu or min_total_vram_gb")
		}
	case w.ParamsB <= 0:
		return errors.New("params_b must be positive")
	case w.Kind == Inference:
		if len(w.Precisions) == 0 {
			return errors.New("no precision")
		}
		if w.KVCacheGB <= 0 && (w.ContextTokens <= 0 || w.Concurrency <= 0) {
			return errors.New("needs context_tokens and concurrency, or kv_cache_gb")
		}
	case w.Kind.Training():
		if w.TrainTokens <= 0 && w.GPUHours <= 0 {
			return errors.New("needs train_tokens or gpu_hours")
		}
		if w.GPUHours > 0 {
			if _, ok := gpus.Lookup(w.ReferenceGPU); !ok {
				return fmt.Errorf("gpu_hours needs a catalog reference_gpu, not %q", w.ReferenceGPU)
			}
		}
	}
	if w.ReferenceGPU != "" {
		if _, ok := gpus.Lookup(w.ReferenceGPU); !ok {
			return fmt.Errorf("unknown reference_gpu %q", w.ReferenceGPU)
		}
	}
	if w.Kind == Custom && w.ReferenceGPU != "" {
		if w.HoursPerMonth <= 0 && (w.UnitsPerMonth <= 0 || w.UnitsPerHour <= 0) {
			return errors.New("custom work on a reference_gpu needs hours_per_month or units_per_month and units_per_hour")
		}
		if w.ScaleBy != ScaleByBandwidth && w.ScaleBy != ScaleByNone && !slices.Contains(Precisions, Precision(w.ScaleBy)) {
			return fmt.Errorf("unknown scale_by %q", w.ScaleBy)
		}
	}
	for _, p := range w.Precisions {
		if !slices.Contains(Precisions, p) {
			return fmt.Errorf("unknown precision %q", p)
		}
	}
	if m := w.Measured; m != nil && (!(m.Share >= 0 && m.Share <= 1) || m.GPUs < 0) {
		return fmt.Errorf("measured utilization %g of %d GPUs: want a share between 0 and 1", m.Share, m.GPUs)
	}
	return nil
}

// matchesGPU reports whether model m is one of names (catalog names or families, upper case).
func matchesGPU(m gpus.Model, names []string) bool {
	return slices.Contains(names, m.Name) || slices.Contains(names, strings.ToUpper(m.Family))
}
