// Package optimizer puts each workload of each team on the cheapest GPU offer that really does
// its work, prices that per unit of finished work, and says how much it saves against what the
// team runs today. It is pure computation: no I/O, no clock, no globals. The caller parses a
// workloads file (ParseWorkloads), reads today's offers from the store, and calls Optimize; the
// Plan it returns is what reports render and the plans table stores.
//
// # The model
//
// Every number below is a field of Options; DefaultOptions documents each default and the
// section of docs/gpus.md it comes from: a section mark (§) in this package cites that file.
// docs/gpu-model.md walks through how the package applies the rules, file by file. What a GPU
// can do comes from the catalog (package gpus): dense throughput per precision, memory,
// fabric, and the software rules.
//
// 1. Size. A workload's memory splits into what is sharded across GPUs and what every GPU
// pays (§1.1–1.3):
//
//   - inference: weights (params × bytes per parameter at the precision: fp16 2, fp8/int8 1,
//     int4 0.55, fp4 0.5625) + KV cache (2 × bytes × layers × KV heads × head dim × context ×
//     concurrency, §1.2; layers, heads and head dim from the workload or estimated), sharded by
//     tensor parallelism; every GPU pays the runtime overhead (1 GiB);
//   - full fine-tuning and pretraining: 18 bytes per parameter of weights, gradients and AdamW
//     state, sharded by ZeRO-3/FSDP; LoRA: the bf16 base (2 B) + adapters (0.3% of the
//     parameters × 16 B); QLoRA: the NF4 base (0.525 B) + adapters. Every GPU pays the overhead
//     and its own activations (with gradient checkpointing, seq × micro-batch × hidden ×
//     (2·layers plus 34) bytes);
//   - a measured footprint (measured_vram_gb) replaces the estimate, with no headroom added;
//   - custom: the VRAM per GPU and in total the workload states, raw.
//
// A GPU model with V GB fits n GPUs when sharded + n × per-GPU ≤ n × V × 0.90 (§1.3); the
// smallest such n is the count (a power of two for tensor parallelism). That count needs no
// interconnect on one GPU, NVLink for training state sharded inside a node (NVLink is only
// preferred for tensor-parallel inference, at a throughput penalty on PCIe, unless
// Options.InferenceTPRequiresNVLink), and InfiniBand/RoCE beyond Options.MaxGPUsPerNode
// (8). Inference never spans nodes. Options.Fits reports this per GPU model.
//
// 2. Filter. Offers are indexed once per plan by class (GPU model, VRAM, GPUs per offer,
// interconnect, price type) and provider, cheapest first; an offer whose price no longer holds
// (its ValidUntil, else Options.MaxOfferAgeHours after it was observed) is left out and
// counted, and a provider with none that holds is listed in Plan.ExcludedProviders. Per
// workload and class the checks run in order (§4–§6):
//
//   - gpu: the workload's gpus_allowed/gpus_excluded and min_compute_capability, and its serving
//     engine's hardware support (vLLM by default for inference);
//   - precision: the GPU has a hardware path for it (gpus.Model.Computes; training in bf16
//     unless fp16 is listed as a fallback);
//   - memory, in one offer or in several offers' nodes for training when they have RDMA;
//   - interconnect: the offer's fabric as far as the model's NVLink domain reaches; an
//     interconnect the source does not publish is never NVLink, and tensor parallelism is not
//     planned on it; GeForce cards without PCIe peer-to-peer take tensor parallelism of 2 at
//     most;
//   - multi-node, price type (spot only for interruptible workloads; a term price only for a
//     workload whose commit_up_to is as long as the term, any reserved or term price with
//     Options.AllowCommitments; serverless only for a service, not a job), throughput (an
//     optional decode speed target),
//     deadline;
//
// then per offer: provider, host (always-on serving only on datacenter, secure and verified
// hosts unless host_tiers says otherwise; min_reliability), location (continents and ISO
// countries; an offer that publishes no location is kept, with a note), availability. The
// check a GPU model got furthest in explains its rejection ("RTX-4090-24GB ×1: 24 GB < 41.3 GB
// needed", "V100-SXM2-32GB ×8: vLLM needs compute capability 7.5 or newer (V100 is 7.0)").
//
// 3. Cost (§2.1). Always-on work costs the offer's hourly price × hours per month. Jobs cost
// price × hours of one run × runs per month, where a training run takes
// k·N·D / (GPUs × dense TFLOPS at the training precision × MFU × scaling) (k = 6 for full
// training, 4 for LoRA; the FLOPs may come from GPU-hours on a reference GPU instead), an
// inference batch job's hours on its reference GPU scale with decode throughput (memory
// bandwidth × GPUs / bytes read per step), and custom work's hours (or units) on its reference
// GPU scale with its scale_by: a precision's dense rate, memory bandwidth, or none. Spot jobs
// take Options.SpotRestartOverhead (10%) longer. A reserved or term price bills every hour of
// the month (Options.HoursPerMonth) for each offer rented, busy or not, so it wins only for
// work that keeps its GPUs most of the month; a serverless price bills a service's busy hours
// (its utilization: the file's, else the share measured on today's GPUs, else all of them) and
// cold starts (costmodel.Serverless), and the recommendation's note
// gives the break-even utilization between the cheapest instance and serverless placement
// (docs/economics.md). Today's placement is billed by the same rules. A training run longer than its deadline (or
// Options.MaxJobHours) rents more nodes, when the offer has RDMA, until it fits: the cheapest
// plan that finishes in time. Every placement also carries the price of a unit of its work:
// a million output tokens, a run, a unit of custom work.
//
// 4. Choose. Candidates are ranked by monthly cost in decimal dollars (hours rounded to 0.01,
// cost to the cent); at one cost the one that does more work per hour wins, then provider,
// offer id, price type, region and precision. The cheapest is recommended; the next
// Options.Alternatives are kept (one per provider, GPU, count, price type and precision with
// Options.DistinctAlternatives). The current placement is priced at the cheapest matching offer
// today (provider, GPU, price type, region if given; of its own shape, else of its node's,
// else of any) or
// at the price the team says it pays, and costed with the same model on the node it runs on
// (its fabric, InfiniBand between its nodes); a current GPU the catalog lacks leaves that one
// placement unpriced with the reason. The difference is the saving, per workload, per team and
// in total.
//
// 5. Own. When the catalog has a purchase price for the recommended GPU model
// (gpus.PurchaseOf), the plan weighs buying the recommendation's GPUs against renting it
// (WorkloadPlan.Ownership, Options.Own): the purchase at Options.Ownership.PurchasePoint, a
// month of owning by cost (costmodel.Ownership: depreciation less the residual over the
// write-off, energy and cooling while busy, colocation, operations, network and storage), the
// recommendation's monthly cost, and the break-even in months and busy hours. The GPUs work
// the recommendation's hours at the workload's busy share; a job works the hours of its runs.
// Owning pays when the purchase is paid back within the write-off and a month costs less
// owned than rented; then, and only then, an ownership advice says so (docs/economics.md §3).
//
// # Workloads file
//
// See plans/workloads.sample.yaml. Keys:
//
//	teams:
//	  - name, email, workloads:
//	      - name, kind: inference | lora | qlora | full_finetune | pretrain | custom
//	        inference: params_b, precision (one or a list, preferred first), context_tokens +
//	          concurrency or kv_cache_gb, kv_precision, layers, kv_heads, head_dim,
//	          hours_per_month, utilization, min_decode_tokens_per_second, reference_gpu, reference_gpus,
//	          engine (vllm | sglang | tensorrt-llm | tgi | none), measured_vram_gb
//	        lora, qlora, full_finetune, pretrain: params_b, train_tokens or gpu_hours +
//	          reference_gpu, precision (default bf16), deadline (36h, 21d, 2w),
//	          runs_per_month, seq_len, micro_batch, activations_gb, layers, measured_vram_gb
//	        custom: min_vram_gb_per_gpu, min_total_vram_gb, gpus, interconnect
//	          (none | nvlink | nvswitch), multi_node, hours_per_month, utilization, precision, engine,
//	          reference_gpu + reference_gpus + scale_by (a precision | memory_bandwidth | none),
//	          units_per_month + units_per_hour + unit
//	        every kind: interruptible, commit_up_to (1w, 3m, 1y … or none), gpus_allowed,
//	          gpus_excluded, min_compute_capability, host_tiers, min_reliability, providers,
//	          exclude_providers, regions,
//	          exclude_regions, countries, exclude_countries, current: {provider, region,
//	          gpu_model, gpu_count, price_type, paid_usd_per_gpu_hour | paid_usd_per_hour,
//	          metrics_selector}
//
// metrics_selector is Prometheus label matchers without braces (namespace="search",
// pod=~"chat-7b-.*") that pick today's GPUs out of the DCGM exporter's series. The file does
// not measure anything: the caller measures (package plans, from Prometheus) and sets
// Workload.Measured, or Workload.Unmeasured with the reason. A measured workload's plan carries
// the measurement (MeasuredUtilization) and one AdviceUtilization advice: what was measured ("Your
// 8 H100-SXM-80GB averaged 12% busy over the week to 2026-12-04 (8 GPUs measured).") and what
// the buying guides advise at that level (below 30%: pay for busy time only; 30–60%: committed
// capacity for the steady base, spot for the rest; above 60%: committed capacity or owning), with
// the plan's break-even or commitment where it has one. Caveats say when the measurement failed,
// when it is more than 20 points from the file's utilization (which wins), and when it counted
// other GPUs than today's. A job is not re-costed by it: a job is busy all the hours it runs.
//
// The file is parsed with github.com/goccy/go-yaml: it reports line and column for unknown
// keys, wrong types and duplicate keys out of the box, its DisallowUnknownField applies through
// nested structs, and its YAML paths locate any field for the semantic checks that follow, so
// every error names file:line:column and the field.
package optimizer
