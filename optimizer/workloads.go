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
	Custom       Kind = "custom"        // explicit VRAM, GPU count, interconnect and hours
)

// Kinds lists every kind, in a stable order.
var Kinds = []Kind{Inference, LoRA, QLoRA, FullFinetune, Pretrain, Custom}

// Training reports whether the kind is a training job costed by FLOPs.
func (k Kind) Training() bool {
	return k == LoRA || k == QLoRA || k == FullFinetune || k == Pretrain
}

// Precision is the numeric format of inference weights (or of the KV cache).
type Precision string

// Precisions.
const (
	FP32 Precision = "fp32"
	FP16 Precision = "fp16"
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
	INT8 Precision = "int8"
	INT4 Precision = "int4"
)

// Precisions lists every precision, in a stable order.
var Precisions = []Precision{FP32, FP16, BF16, FP8, INT8, INT4}

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

	// Inference.

	// Precisions are the acceptable weight precisions, most preferred first.
	Precisions []Precision `json:"precisions,omitempty"`
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
	// on; 0 means Options.HoursPerMonth). For inference with a ReferenceGPU it is the hours the
	// job takes there each month, and scales with memory bandwidth.
	HoursPerMonth float64 `json:"hours_per_month,omitempty"`

	// Jobs.

	// TrainTokens is the number of training tokens per run (training kinds).
	TrainTokens float64 `json:"train_tokens,omitempty"`
	// GPUHours is the size of one run in GPU-hours on ReferenceGPU, instead of TrainTokens.
	GPUHours float64 `json:"gpu_hours,omitempty"`
	// ReferenceGPU is a catalog model the GPUHours (training) or HoursPerMonth (inference batch
	// jobs) were measured on; ReferenceGPUs is how many of them (inference; default the fewest
	// that fit).
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

	// Every kind.

	// Interruptible admits spot capacity.
	Interruptible bool `json:"interruptible"`
	// Providers and Regions, when not empty, are the only ones allowed; ExcludeProviders and
	// ExcludeRegions are never used. Regions compare case-insensitively with Offer.Region.
	Providers        []string `json:"providers,omitempty"`
	ExcludeProviders []string `json:"exclude_providers,omitempty"`
	Regions          []string `json:"regions,omitempty"`
	ExcludeRegions   []string `json:"exclude_regions,omitempty"`
	// Current is where the workload runs today, if anywhere.
	Current *Current `json:"current,omitempty"`
}

// Current is a workload's placement today.
type Current struct {
	Provider  string           `json:"provider"`
	Region    string           `json:"region,omitempty"`
	GPUModel  string           `json:"gpu_model"` // canonical catalog name
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
	Interruptible            bool         `yaml:"interruptible"`
	Providers                []string     `yaml:"providers"`
	ExcludeProviders         []string     `yaml:"exclude_providers"`
	Regions                  []string     `yaml:"regions"`
	ExcludeRegions           []string     `yaml:"exclude_regions"`
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
	"multi_node", "interruptible", "providers", "exclude_providers", "regions",
	"exclude_regions", "current", "provider", "region", "gpu_model", "gpu_count", "price_type",
	"paid_usd_per_gpu_hour", "paid_usd_per_hour",
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
		{"precision", r.Precision != nil, []Kind{Inference}},
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
		{"reference_gpu", r.ReferenceGPU != nil, sizedKinds},
		{"reference_gpus", r.ReferenceGPUs != nil, []Kind{Inference}},
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
	}
	for _, f := range fields {
		if f.set && f.kinds != nil && !slices.Contains(f.kinds, w.Kind) {
			c.errorf(p+"."+f.key, "does not apply to kind %s", w.Kind)
		}
	}

	w.Interruptible = r.Interruptible
	w.Providers = c.names(p+".providers", r.Providers)
	w.ExcludeProviders = c.names(p+".exclude_providers", r.ExcludeProviders)
	w.Regions = c.names(p+".regions", r.Regions)
	w.ExcludeRegions = c.names(p+".exclude_regions", r.ExcludeRegions)
	for _, pr := range w.Providers {
		if slices.Contains(w.ExcludeProviders, pr) {
			c.errorf(p+".exclude_providers", "provider %q is both allowed and excluded", pr)
		}
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

func (c *converter) inference(p string, r *rawWorkload, w *Workload) {
	w.ParamsB = c.positive(p+".params_b", r.ParamsB, true)
	if len(r.Precision) == 0 {
		c.errorf(p+".precision", "missing precision (want one of %s, or a list of them)", joinPrecisions())
	}
	for i, s := range r.Precision {
		pr := Precision(strings.ToLower(strings.TrimSpace(s)))
		fp := p + ".precision"
		if len(r.Precision) > 1 {
			fp = fmt.Sprintf("%s[%d]", fp, i)
		}
		switch {
		case !slices.Contains(Precisions, pr):
			c.errorf(fp, "unknown precision %q (want one of %s)", s, joinPrecisions())
		case slices.Contains(w.Precisions, pr):
			c.errorf(fp, "precision %q listed twice", s)
		default:
			w.Precisions = append(w.Precisions, pr)
		}
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
	} else {
		cur.GPUModel = c.gpuModel(p+".gpu_model", r.GPUModel)
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
		names := make([]string, 0, 64)
		for _, m := range gpus.Models() {
			names = append(names, m.Name)
		}
		msg := fmt.Sprintf("unknown GPU model %q: use a canonical catalog name", name)
		if s := suggest(strings.ToUpper(strings.TrimSpace(name)), names); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		c.errorf(p, "%s", msg)
		return strings.TrimSpace(name)
	}
	return m.Name
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

func joinPrecisions() string {
	out := make([]string, len(Precisions))
	for i, p := range Precisions {
		out[i] = string(p)
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
		for _, p := range w.Precisions {
			if !slices.Contains(Precisions, p) {
				return fmt.Errorf("unknown precision %q", p)
			}
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
	if w.Current != nil {
		if _, ok := gpus.Lookup(w.Current.GPUModel); !ok {
			return fmt.Errorf("current: unknown gpu_model %q", w.Current.GPUModel)
		}
	}
	return nil
}
