package optimizer

import (
	"errors"
	"fmt"
	"math"
	"net/mail"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

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
	// sequence × concurrent sequences), which sizes the KV cache (§1.2).
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
	// concurrency, from the memory-bandwidth bound (§2.1). 0 means no target.
	MinDecodeTokensPerSecond float64 `json:"min_decode_tokens_per_second,omitempty"`

	// HoursPerMonth is how long an inference or custom workload runs each month (730 = always
	// on; 0 means Options.HoursPerMonth). With a ReferenceGPU it is the hours the work takes
	// there each month, and scales to other GPUs: by memory bandwidth for inference, by ScaleBy
	// for custom work.
	HoursPerMonth float64 `json:"hours_per_month,omitempty"`

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
}

// InputError is a problem in a workloads file, located by file, line and field.
type InputError struct {
	File   string `json:"file"`
	Line   int    `json:"line"`   // 1-based; 0 when unknown
	Column int    `json:"column"` // 1-based; 0 when unknown
	Field  string `json:"field"`  // path of the field, e.g. teams[0].workloads[2].kind
	Msg    string `json:"msg"`
}

// Error formats the error as file:line:column: field: message.
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ParseWorkloads parses a workloads file strictly: unknown keys, wrong types, duplicate keys,
// unknown kinds, precisions, price types and GPU models, and fields that do not apply to a
// workload's kind are errors. Every problem found is returned (joined), each an *InputError
// naming filename, line and field. Defaults are filled in: runs_per_month 1, gpus 1,
// gpu_count 1, price_type on_demand, kv_precision fp16; hours_per_month stays 0, which means
// Options.HoursPerMonth (730).
func ParseWorkloads(filename string, data []byte) (*File, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(filename, err)
	}
	var raw rawFile
	if len(f.Docs) > 1 {
		return nil, &InputError{File: filename, Msg: "more than one YAML document"}
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, &InputError{File: filename, Line: 1, Msg: "empty file: want a teams list"}
	}
	if err := yaml.NodeToValue(f.Docs[0].Body, &raw, yaml.DisallowUnknownField()); err != nil {
		return nil, yamlError(filename, err)
	}
	c := &converter{file: filename, ast: f}
	out := c.file1(&raw)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return out, nil
}

// Raw decoding targets: numbers that must be integers are float64 here because the YAML
// library truncates 3.5 into an int silently; converter checks them.

type rawFile struct {
	Teams []rawTeam `yaml:"teams"`
}

type rawTeam struct {
	Name      string        `yaml:"name"`
	Email     string        `yaml:"email"`
	Workloads []rawWorkload `yaml:"workloads"`
}

type rawWorkload struct {
	Name                     string       `yaml:"name"`
	Kind                     string       `yaml:"kind"`
	ParamsB                  *float64     `yaml:"params_b"`
	Precision                stringOrList `yaml:"precision"`
	ContextTokens            *float64     `yaml:"context_tokens"`
	Concurrency              *float64     `yaml:"concurrency"`
	KVCacheGB                *float64     `yaml:"kv_cache_gb"`
	KVPrecision              *string      `yaml:"kv_precision"`
	Layers                   *float64     `yaml:"layers"`
	KVHeads                  *float64     `yaml:"kv_heads"`
	HeadDim                  *float64     `yaml:"head_dim"`
	MinDecodeTokensPerSecond *float64     `yaml:"min_decode_tokens_per_second"`
	HoursPerMonth            *float64     `yaml:"hours_per_month"`
	TrainTokens              *float64     `yaml:"train_tokens"`
	GPUHours                 *float64     `yaml:"gpu_hours"`
	ReferenceGPU             *string      `yaml:"reference_gpu"`
	ReferenceGPUs            *float64     `yaml:"reference_gpus"`
	Deadline                 *string      `yaml:"deadline"`
	RunsPerMonth             *float64     `yaml:"runs_per_month"`
	SeqLen                   *float64     `yaml:"seq_len"`
	MicroBatch               *float64     `yaml:"micro_batch"`
	ActivationsGB            *float64     `yaml:"activations_gb"`
	MinVRAMGBPerGPU          *float64     `yaml:"min_vram_gb_per_gpu"`
	MinTotalVRAMGB           *float64     `yaml:"min_total_vram_gb"`
	GPUs                     *float64     `yaml:"gpus"`
	Interconnect             *string      `yaml:"interconnect"`
	MultiNode                *bool        `yaml:"multi_node"`
	ScaleBy                  *string      `yaml:"scale_by"`
	UnitsPerMonth            *float64     `yaml:"units_per_month"`
	UnitsPerHour             *float64     `yaml:"units_per_hour"`
	Unit                     *string      `yaml:"unit"`
	MeasuredVRAMGB           *float64     `yaml:"measured_vram_gb"`
	Engine                   *string      `yaml:"engine"`
	GPUsAllowed              []string     `yaml:"gpus_allowed"`
	GPUsExcluded             []string     `yaml:"gpus_excluded"`
	MinComputeCapability     *string      `yaml:"min_compute_capability"`
	HostTiers                []string     `yaml:"host_tiers"`
	MinReliability           *float64     `yaml:"min_reliability"`
	Interruptible            bool         `yaml:"interruptible"`
	Providers                []string     `yaml:"providers"`
	ExcludeProviders         []string     `yaml:"exclude_providers"`
	Regions                  []string     `yaml:"regions"`
	ExcludeRegions           []string     `yaml:"exclude_regions"`
	Countries                []string     `yaml:"countries"`
	ExcludeCountries         []string     `yaml:"exclude_countries"`
	Current                  *rawCurrent  `yaml:"current"`
}

type rawCurrent struct {
	Provider          string   `yaml:"provider"`
	Region            string   `yaml:"region"`
	GPUModel          string   `yaml:"gpu_model"`
	GPUCount          *float64 `yaml:"gpu_count"`
	PriceType         string   `yaml:"price_type"`
	PaidUSDPerGPUHour *string  `yaml:"paid_usd_per_gpu_hour"`
	PaidUSDPerHour    *string  `yaml:"paid_usd_per_hour"`
}

// stringOrList decodes "fp16" and [fp16, fp8] alike.
type stringOrList []string

// UnmarshalYAML implements yaml.InterfaceUnmarshaler.
func (s *stringOrList) UnmarshalYAML(unmarshal func(any) error) error {
	var one string
	if err := unmarshal(&one); err == nil {
		*s = stringOrList{one}
		return nil
	}
	var many []string
	if err := unmarshal(&many); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*s = many
	return nil
}

// knownKeys are every key the file accepts, for "did you mean" hints.
var knownKeys = []string{
	"teams", "name", "email", "workloads", "kind", "params_b", "precision", "context_tokens",
	"concurrency", "kv_cache_gb", "kv_precision", "layers", "kv_heads", "head_dim",
	"min_decode_tokens_per_second", "hours_per_month", "train_tokens", "gpu_hours",
	"reference_gpu", "reference_gpus", "deadline", "runs_per_month", "seq_len", "micro_batch",
	"activations_gb", "min_vram_gb_per_gpu", "min_total_vram_gb", "gpus", "interconnect",
	"multi_node", "scale_by", "units_per_month", "units_per_hour", "unit", "measured_vram_gb",
	"engine", "gpus_allowed", "gpus_excluded", "min_compute_capability", "host_tiers",
	"min_reliability", "interruptible", "providers", "exclude_providers", "regions",
	"exclude_regions", "countries", "exclude_countries", "current", "provider", "region",
	"gpu_model", "gpu_count", "price_type", "paid_usd_per_gpu_hour", "paid_usd_per_hour",
}

// yamlError turns a go-yaml error into an *InputError with the position and the YAML field
// name (not the Go one).
func yamlError(file string, err error) error {
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return &InputError{File: file, Msg: err.Error()}
	}
	tk := ye.GetToken()
	e := &InputError{File: file, Msg: ye.GetMessage()}
	if tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
	}
	var unknown *yaml.UnknownFieldError
	var typeErr *yaml.TypeError
	switch {
	case errors.As(err, &unknown):
		name := ""
		if tk != nil {
			name = tk.Value
		}
		e.Field = name
		e.Msg = "unknown field"
		if s := suggest(name, knownKeys); s != "" {
			e.Msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
	case errors.As(err, &typeErr):
		e.Field = keyOf(tk)
		val := ""
		if tk != nil {
			val = tk.Value
		}
		e.Msg = fmt.Sprintf("cannot use %q as %s", val, describeType(typeErr.DstType.String()))
	default:
		e.Field = keyOf(tk)
	}
	return e
}

// keyOf returns the mapping key a token is, or its value belongs to, or "".
func keyOf(tk *token.Token) string {
	if tk == nil {
		return ""
	}
	if tk.Next != nil && tk.Next.Type == token.MappingValueType {
		return tk.Value
	}
	for p := tk; p != nil; p = p.Prev {
		if p.Type == token.MappingValueType && p.Prev != nil {
			return p.Prev.Value
		}
		if p != tk && (p.Type == token.SequenceEntryType || p.Position.Line != tk.Position.Line) {
			return ""
		}
	}
	return ""
}

func describeType(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "float64", "int":
		return "a number"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	}
	if strings.HasPrefix(goType, "[]") {
		return "a list"
	}
	return "a mapping"
}

// suggest returns the candidate closest to s within edit distance 2, or "".
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// converter validates raw values into the public types, collecting located errors.
type converter struct {
	file string
	ast  *ast.File
	errs []error
}

// errorf records an error at the YAML path (e.g. "teams[0].workloads[1].kind"); when the
// field is absent the nearest enclosing node that exists gives the line.
func (c *converter) errorf(path, format string, args ...any) {
	e := &InputError{File: c.file, Field: path, Msg: fmt.Sprintf(format, args...)}
	e.Line, e.Column = c.position(path)
	c.errs = append(c.errs, e)
}

func (c *converter) position(path string) (line, col int) {
	for p := path; ; {
		if yp, err := yaml.PathString("$." + p); err == nil {
			if n, err := yp.FilterFile(c.ast); err == nil && n != nil {
				if tk := n.GetToken(); tk != nil && tk.Position != nil {
					return tk.Position.Line, tk.Position.Column
				}
			}
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			return 0, 0
		}
		p = p[:i]
	}
}

func (c *converter) line(path string) int {
	l, _ := c.position(path)
	return l
}

func (c *converter) file1(raw *rawFile) *File {
	out := &File{Name: c.file}
	if len(raw.Teams) == 0 {
		c.errorf("teams", "no teams: want a list of teams with name, email and workloads")
	}
	seen := map[string]bool{}
	for i := range raw.Teams {
		p := fmt.Sprintf("teams[%d]", i)
		t := c.team(p, &raw.Teams[i])
		if t.Name != "" && seen[t.Name] {
			c.errorf(p+".name", "duplicate team %q", t.Name)
		}
		seen[t.Name] = true
		out.Teams = append(out.Teams, t)
	}
	return out
}

func (c *converter) team(p string, r *rawTeam) Team {
	t := Team{Name: strings.TrimSpace(r.Name), Email: strings.TrimSpace(r.Email), Line: c.line(p)}
	if t.Name == "" {
		c.errorf(p+".name", "missing team name")
	}
	if t.Email == "" {
		c.errorf(p+".email", "missing email")
	} else if a, err := mail.ParseAddress(t.Email); err != nil || a.Address != t.Email {
		c.errorf(p+".email", "%q is not an email address", t.Email)
	}
	if len(r.Workloads) == 0 {
		c.errorf(p+".workloads", "team %q has no workloads", t.Name)
	}
	seen := map[string]bool{}
	for j := range r.Workloads {
		wp := fmt.Sprintf("%s.workloads[%d]", p, j)
		w := c.workload(wp, &r.Workloads[j])
		if w.Name != "" && seen[w.Name] {
			c.errorf(wp+".name", "duplicate workload %q in team %q", w.Name, t.Name)
		}
		seen[w.Name] = true
		t.Workloads = append(t.Workloads, w)
	}
	return t
}

// field describes one optional raw field for the "applies to this kind" check.
type field struct {
	key   string
	set   bool
	kinds []Kind // kinds it applies to; nil = all
}

var (
	trainingKinds = []Kind{LoRA, QLoRA, FullFinetune, Pretrain}
	sizedKinds    = []Kind{Inference, LoRA, QLoRA, FullFinetune, Pretrain}
)

func (c *converter) workload(p string, r *rawWorkload) Workload {
	w := Workload{Name: strings.TrimSpace(r.Name), Kind: Kind(strings.TrimSpace(r.Kind)), Line: c.line(p)}
	if w.Name == "" {
		c.errorf(p+".name", "missing workload name")
	}
	switch {
	case r.Kind == "":
		c.errorf(p+".kind", "missing kind (want one of %s)", joinKinds())
		return w
	case !slices.Contains(Kinds, w.Kind):
		msg := fmt.Sprintf("unknown kind %q (want one of %s)", r.Kind, joinKinds())
		if s := suggest(r.Kind, kindStrings()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		c.errorf(p+".kind", "%s", msg)
		return w
	}

	fields := []field{
		{"params_b", r.ParamsB != nil, sizedKinds},
		{"precision", r.Precision != nil, nil},
		{"measured_vram_gb", r.MeasuredVRAMGB != nil, sizedKinds},
		{"engine", r.Engine != nil, []Kind{Inference, Custom}},
		{"context_tokens", r.ContextTokens != nil, []Kind{Inference}},
		{"concurrency", r.Concurrency != nil, []Kind{Inference}},
		{"kv_cache_gb", r.KVCacheGB != nil, []Kind{Inference}},
		{"kv_precision", r.KVPrecision != nil, []Kind{Inference}},
		{"layers", r.Layers != nil, sizedKinds},
		{"kv_heads", r.KVHeads != nil, []Kind{Inference}},
		{"head_dim", r.HeadDim != nil, []Kind{Inference}},
		{"min_decode_tokens_per_second", r.MinDecodeTokensPerSecond != nil, []Kind{Inference}},
		{"hours_per_month", r.HoursPerMonth != nil, []Kind{Inference, Custom}},
		{"train_tokens", r.TrainTokens != nil, trainingKinds},
		{"gpu_hours", r.GPUHours != nil, trainingKinds},
		{"reference_gpu", r.ReferenceGPU != nil, nil},
		{"reference_gpus", r.ReferenceGPUs != nil, []Kind{Inference, Custom}},
		{"deadline", r.Deadline != nil, trainingKinds},
		{"runs_per_month", r.RunsPerMonth != nil, trainingKinds},
		{"seq_len", r.SeqLen != nil, trainingKinds},
		{"micro_batch", r.MicroBatch != nil, trainingKinds},
		{"activations_gb", r.ActivationsGB != nil, trainingKinds},
		{"min_vram_gb_per_gpu", r.MinVRAMGBPerGPU != nil, []Kind{Custom}},
		{"min_total_vram_gb", r.MinTotalVRAMGB != nil, []Kind{Custom}},
		{"gpus", r.GPUs != nil, []Kind{Custom}},
		{"interconnect", r.Interconnect != nil, []Kind{Custom}},
		{"multi_node", r.MultiNode != nil, []Kind{Custom}},
		{"scale_by", r.ScaleBy != nil, []Kind{Custom}},
		{"units_per_month", r.UnitsPerMonth != nil, []Kind{Custom}},
		{"units_per_hour", r.UnitsPerHour != nil, []Kind{Custom}},
		{"unit", r.Unit != nil, []Kind{Custom}},
	}
	for _, f := range fields {
		if f.set && f.kinds != nil && !slices.Contains(f.kinds, w.Kind) {
			c.errorf(p+"."+f.key, "does not apply to kind %s", w.Kind)
		}
	}

	w.Interruptible = r.Interruptible
	w.Providers = c.names(p+".providers", r.Providers)
	w.ExcludeProviders = c.names(p+".exclude_providers", r.ExcludeProviders)
	c.disjoint(p+".exclude_providers", "provider", w.Providers, w.ExcludeProviders)
	w.Regions = c.continents(p+".regions", r.Regions)
	w.ExcludeRegions = c.continents(p+".exclude_regions", r.ExcludeRegions)
	c.disjoint(p+".exclude_regions", "region", w.Regions, w.ExcludeRegions)
	w.Countries = c.countries(p+".countries", r.Countries)
	w.ExcludeCountries = c.countries(p+".exclude_countries", r.ExcludeCountries)
	c.disjoint(p+".exclude_countries", "country", w.Countries, w.ExcludeCountries)
	w.GPUsAllowed = c.gpuNames(p+".gpus_allowed", r.GPUsAllowed)
	w.GPUsExcluded = c.gpuNames(p+".gpus_excluded", r.GPUsExcluded)
	c.disjoint(p+".gpus_excluded", "GPU", w.GPUsAllowed, w.GPUsExcluded)
	if r.MinComputeCapability != nil {
		cc, err := gpus.ParseCapability(*r.MinComputeCapability)
		if err != nil {
			c.errorf(p+".min_compute_capability", "%v", err)
		}
		w.MinCapability = cc
	}
	for i, t := range r.HostTiers {
		fp := fmt.Sprintf("%s.host_tiers[%d]", p, i)
		switch tier := schema.Tier(strings.ToLower(strings.TrimSpace(t))); {
		case tier == "any":
			if len(r.HostTiers) > 1 {
				c.errorf(fp, "any allows every tier: list it alone")
			}
			w.HostTiers = slices.Clone(schema.Tiers)
		case !slices.Contains(schema.Tiers, tier):
			c.errorf(fp, "unknown host tier %q (want any, or some of %s)", t, joinTiers())
		case !slices.Contains(w.HostTiers, tier):
			w.HostTiers = append(w.HostTiers, tier)
		}
	}
	if r.MinReliability != nil {
		if v := *r.MinReliability; !(v > 0 && v <= 1) {
			c.errorf(p+".min_reliability", "%v must be in (0, 1]: the share of time the host has been up", v)
		} else {
			w.MinReliability = v
		}
	}
	if r.MeasuredVRAMGB != nil {
		w.MeasuredVRAMGB = c.positive(p+".measured_vram_gb", r.MeasuredVRAMGB, false)
		if w.Kind == Inference && len(r.Precision) > 1 {
			c.errorf(p+".measured_vram_gb", "a measured footprint is of one precision: list only the precision it was measured at")
		}
	}
	if r.Engine != nil {
		e := gpus.Engine(strings.ToLower(strings.TrimSpace(*r.Engine)))
		if e != NoEngine && !slices.Contains(gpus.Engines, e) {
			c.errorf(p+".engine", "unknown engine %q (want one of %s, or none for the workload's own software)", *r.Engine, joinEngines())
		}
		w.Engine = e
	}

	switch w.Kind {
	case Inference:
		c.inference(p, r, &w)
	case Custom:
		c.custom(p, r, &w)
	default:
		c.training(p, r, &w)
	}
	if r.Current != nil {
		w.Current = c.current(p+".current", r.Current)
	}
	return w
}

// precisions reads the precision list against the precisions allowed for the kind.
func (c *converter) precisions(p string, raw stringOrList, allowed []Precision) []Precision {
	var out []Precision
	for i, s := range raw {
		pr := Precision(strings.ToLower(strings.TrimSpace(s)))
		fp := p + ".precision"
		if len(raw) > 1 {
			fp = fmt.Sprintf("%s[%d]", fp, i)
		}
		switch {
		case !slices.Contains(allowed, pr):
			c.errorf(fp, "unknown precision %q (want one of %s)", s, joinPrecisions(allowed))
		case slices.Contains(out, pr):
			c.errorf(fp, "precision %q listed twice", s)
		default:
			out = append(out, pr)
		}
	}
	return out
}

func (c *converter) inference(p string, r *rawWorkload, w *Workload) {
	w.ParamsB = c.positive(p+".params_b", r.ParamsB, true)
	if len(r.Precision) == 0 {
		c.errorf(p+".precision", "missing precision (want one of %s, or a list of them)", joinPrecisions(Precisions))
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

func (c *converter) current(p string, r *rawCurrent) *Current {
	cur := &Current{
		Provider:  strings.TrimSpace(r.Provider),
		Region:    strings.TrimSpace(r.Region),
		GPUCount:  1,
		PriceType: schema.OnDemand,
	}
	if cur.Provider == "" {
		c.errorf(p+".provider", "missing provider")
	}
	if strings.TrimSpace(r.GPUModel) == "" {
		c.errorf(p+".gpu_model", "missing gpu_model (a canonical catalog name such as H100-SXM-80GB)")
	} else if m, ok := gpus.Lookup(r.GPUModel); ok {
		cur.GPUModel = m.Name
	} else {
		// Kept as written: the plan says this placement cannot be priced, and plans the rest.
		cur.GPUModel = strings.ToUpper(strings.TrimSpace(r.GPUModel))
	}
	if r.GPUCount != nil {
		cur.GPUCount = c.count(p+".gpu_count", r.GPUCount)
	}
	if r.PriceType != "" {
		pt, err := schema.ParsePriceType(strings.TrimSpace(r.PriceType))
		if err != nil {
			c.errorf(p+".price_type", "%v", err)
		}
		cur.PriceType = pt
	}
	cur.PaidUSDPerGPUHour = c.money(p+".paid_usd_per_gpu_hour", r.PaidUSDPerGPUHour)
	cur.PaidUSDPerHour = c.money(p+".paid_usd_per_hour", r.PaidUSDPerHour)
	if cur.PaidUSDPerGPUHour != nil && cur.PaidUSDPerHour != nil {
		c.errorf(p+".paid_usd_per_hour", "give either paid_usd_per_gpu_hour or paid_usd_per_hour, not both")
	}
	return cur
}

func (c *converter) names(p string, in []string) []string {
	var out []string
	for i, s := range in {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			c.errorf(fmt.Sprintf("%s[%d]", p, i), "empty name")
			continue
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func (c *converter) gpuModel(p, name string) string {
	m, ok := gpus.Lookup(name)
	if !ok {
		c.errorf(p, "%s", unknownGPU(name))
		return strings.TrimSpace(name)
	}
	return m.Name
}

// unknownGPU says that a name is not in the catalog, with the closest one.
func unknownGPU(name string) string {
	names := make([]string, 0, 64)
	for _, m := range gpus.Models() {
		names = append(names, m.Name)
	}
	msg := fmt.Sprintf("unknown GPU model %q: use a canonical catalog name (gpucost gpus lists them)", name)
	if s := suggest(strings.ToUpper(strings.TrimSpace(name)), names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

// gpuNames reads a list of catalog names or families, upper case.
func (c *converter) gpuNames(p string, in []string) []string {
	var out []string
	for i, s := range in {
		name := strings.ToUpper(strings.TrimSpace(s))
		if !knownGPUName(name) {
			c.errorf(fmt.Sprintf("%s[%d]", p, i), "%q is neither a catalog GPU model nor a family (gpucost gpus lists both)", s)
			continue
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func knownGPUName(name string) bool {
	if _, ok := gpus.Lookup(name); ok {
		return true
	}
	for _, m := range gpus.Models() {
		if strings.ToUpper(m.Family) == name {
			return true
		}
	}
	return false
}

// matchesGPU reports whether model m is one of names (catalog names or families, upper case).
func matchesGPU(m gpus.Model, names []string) bool {
	return slices.Contains(names, m.Name) || slices.Contains(names, strings.ToUpper(m.Family))
}

// continents reads a list of continents (schema.Continents).
func (c *converter) continents(p string, in []string) []string {
	out := c.names(p, in)
	for i, s := range out {
		if !slices.Contains(schema.Continents, s) {
			c.errorf(fmt.Sprintf("%s[%d]", p, i), "unknown region %q: regions are continents (%s); name countries with countries", s, strings.Join(schema.Continents, ", "))
		}
	}
	return out
}

// countries reads a list of ISO 3166-1 alpha-2 country codes.
func (c *converter) countries(p string, in []string) []string {
	var out []string
	for i, s := range in {
		code := strings.ToUpper(strings.TrimSpace(s))
		if !schema.KnownCountry(code) {
			c.errorf(fmt.Sprintf("%s[%d]", p, i), "unknown country %q: want an ISO 3166-1 code such as US, DE or JP", s)
			continue
		}
		if !slices.Contains(out, code) {
			out = append(out, code)
		}
	}
	return out
}

// disjoint reports values both allowed and excluded.
func (c *converter) disjoint(p, what string, allowed, excluded []string) {
	for _, v := range allowed {
		if slices.Contains(excluded, v) {
			c.errorf(p, "%s %q is both allowed and excluded", what, v)
		}
	}
}

// positive returns *v, which must be > 0; a nil v is an error when required.
func (c *converter) positive(p string, v *float64, required bool) float64 {
	if v == nil {
		if required {
			c.errorf(p, "missing %s", lastKey(p))
		}
		return 0
	}
	if !(*v > 0) || math.IsInf(*v, 0) {
		c.errorf(p, "%v must be a positive number", *v)
		return 0
	}
	return *v
}

func (c *converter) nonNegative(p string, v *float64) float64 {
	if v == nil {
		return 0
	}
	if !(*v >= 0) || math.IsInf(*v, 0) {
		c.errorf(p, "%v must not be negative", *v)
		return 0
	}
	return *v
}

// count returns *v as a positive integer (0 when v is nil).
func (c *converter) count(p string, v *float64) int {
	if v == nil {
		return 0
	}
	if *v != math.Trunc(*v) || *v < 1 || *v > 1e12 {
		c.errorf(p, "%v must be a whole number ≥ 1", *v)
		return 0
	}
	return int(*v)
}

func (c *converter) hoursPerMonth(p string, v *float64) float64 {
	if v == nil {
		return 0 // Options.HoursPerMonth applies
	}
	h := c.positive(p+".hours_per_month", v, false)
	if h > maxHoursPerMonth {
		c.errorf(p+".hours_per_month", "%v is more than the %v hours of the longest month", h, maxHoursPerMonth)
	}
	return h
}

func (c *converter) money(p string, v *string) *decimal.Decimal {
	if v == nil {
		return nil
	}
	d, err := decimal.NewFromString(strings.TrimPrefix(strings.TrimSpace(*v), "$"))
	if err != nil || !d.IsPositive() {
		c.errorf(p, "%q is not a positive amount of dollars", *v)
		return nil
	}
	return &d
}

// maxHoursPerMonth is the hours of a 31-day month.
const maxHoursPerMonth = 744

// parseHours parses a deadline: "36h", "21d", "2w" or a bare number of hours.
func parseHours(input string) (float64, error) {
	s := strings.ToLower(strings.TrimSpace(input))
	unit := 1.0
	switch {
	case strings.HasSuffix(s, "h"):
		s = strings.TrimSuffix(s, "h")
	case strings.HasSuffix(s, "d"):
		s, unit = strings.TrimSuffix(s, "d"), 24
	case strings.HasSuffix(s, "w"):
		s, unit = strings.TrimSuffix(s, "w"), 168
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("deadline %q: want a positive duration such as 36h, 21d or 2w", input)
	}
	return v * unit, nil
}

func lastKey(p string) string {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[i+1:]
	}
	return p
}

func kindStrings() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = string(k)
	}
	return out
}

func joinKinds() string { return strings.Join(kindStrings(), ", ") }

func joinPrecisions(ps []Precision) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return strings.Join(out, ", ")
}

func joinEngines() string {
	out := make([]string, len(gpus.Engines))
	for i, e := range gpus.Engines {
		out[i] = string(e)
	}
	return strings.Join(out, ", ")
}

func joinTiers() string {
	out := make([]string, len(schema.Tiers))
	for i, t := range schema.Tiers {
		out[i] = string(t)
	}
	return strings.Join(out, ", ")
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
	return nil
}
