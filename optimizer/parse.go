package optimizer

import (
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

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
	c := &converter{filename: filename, tree: f}
	out := c.convertFile(&raw)
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return out, nil
}

// Raw decoding targets: numbers that must be integers are float64 here because the YAML
// library truncates 3.5 into an int silently; converter checks them.

// rawFile is a workloads file as decoded.
type rawFile struct {
	Teams []rawTeam `yaml:"teams"`
}

// rawTeam is a team as decoded.
type rawTeam struct {
	Name      string        `yaml:"name"`
	Email     string        `yaml:"email"`
	Workloads []rawWorkload `yaml:"workloads"`
}

// rawWorkload is a workload as decoded: nil pointers are fields not given.
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
	Utilization              *string      `yaml:"utilization"`
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
	CommitUpTo               *string      `yaml:"commit_up_to"`
	Providers                []string     `yaml:"providers"`
	ExcludeProviders         []string     `yaml:"exclude_providers"`
	Regions                  []string     `yaml:"regions"`
	ExcludeRegions           []string     `yaml:"exclude_regions"`
	Countries                []string     `yaml:"countries"`
	ExcludeCountries         []string     `yaml:"exclude_countries"`
	Current                  *rawCurrent  `yaml:"current"`
}

// rawCurrent is a current placement as decoded.
type rawCurrent struct {
	Provider          string   `yaml:"provider"`
	Region            string   `yaml:"region"`
	GPUModel          string   `yaml:"gpu_model"`
	GPUCount          *float64 `yaml:"gpu_count"`
	PriceType         string   `yaml:"price_type"`
	PaidUSDPerGPUHour *string  `yaml:"paid_usd_per_gpu_hour"`
	PaidUSDPerHour    *string  `yaml:"paid_usd_per_hour"`
	MetricsSelector   *string  `yaml:"metrics_selector"`
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

// converter validates raw values into the public types, collecting located errors.
type converter struct {
	filename string
	tree     *ast.File
	errs     []error
}

// errorf records an error at the YAML path (e.g. "teams[0].workloads[1].kind"); when the
// field is absent the nearest enclosing node that exists gives the line.
func (c *converter) errorf(path, format string, args ...any) {
	e := &InputError{File: c.filename, Field: path, Msg: fmt.Sprintf(format, args...)}
	e.Line, e.Column = c.position(path)
	c.errs = append(c.errs, e)
}

// position is the line and column of the YAML path, or of the nearest enclosing node that
// exists; 0, 0 when none does.
func (c *converter) position(path string) (line, col int) {
	for p := path; ; {
		if yp, err := yaml.PathString("$." + p); err == nil {
			if n, err := yp.FilterFile(c.tree); err == nil && n != nil {
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

// line is the line of the YAML path (see position).
func (c *converter) line(path string) int {
	l, _ := c.position(path)
	return l
}

// convertFile converts the whole file: at least one team, each name once.
func (c *converter) convertFile(raw *rawFile) *File {
	out := &File{Name: c.filename}
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

// team converts the team at YAML path p: a name, an email address, and at least one
// workload, each name once.
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

// kindField describes one optional raw field for the "applies to this kind" check.
type kindField struct {
	key   string
	set   bool
	kinds []Kind // kinds it applies to; nil = all
}

// Kinds a field applies to.
var (
	trainingKinds = []Kind{LoRA, QLoRA, FullFinetune, Pretrain}
	sizedKinds    = []Kind{Inference, LoRA, QLoRA, FullFinetune, Pretrain}
)

// workload converts the workload at YAML path p: the rules every kind shares, then those of
// its kind, then where it runs today.
func (c *converter) workload(p string, r *rawWorkload) Workload {
	w := Workload{Name: strings.TrimSpace(r.Name), Kind: Kind(strings.TrimSpace(r.Kind)), Line: c.line(p)}
	if w.Name == "" {
		c.errorf(p+".name", "missing workload name")
	}
	if !c.knownKind(p, r.Kind) {
		return w
	}
	c.fieldsApply(p, r, w.Kind)
	w.Interruptible = r.Interruptible
	if r.Utilization != nil {
		u, err := ParseUtilization(*r.Utilization)
		if err != nil {
			c.errorf(p+".utilization", "%v", err)
		}
		w.Utilization = u
		if u > 0 && r.ReferenceGPU != nil {
			c.errorf(p+".utilization", "a workload measured on a reference_gpu is busy all its hours: utilization applies to a service")
		}
	}
	if r.CommitUpTo != nil {
		months, err := parseCommitment(*r.CommitUpTo)
		if err != nil {
			c.errorf(p+".commit_up_to", "%v", err)
		}
		w.CommitUpToMonths = months
	}
	c.placeRules(p, r, &w)
	c.gpuRules(p, r, &w)
	c.hostRules(p, r, &w)
	c.measuredVRAM(p, r, &w)
	if r.Engine != nil {
		w.Engine = c.engine(p+".engine", *r.Engine)
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

// knownKind checks that the workload names one of Kinds, suggesting the closest when it
// does not.
func (c *converter) knownKind(p, raw string) bool {
	switch {
	case raw == "":
		c.errorf(p+".kind", "missing kind (want one of %s)", schema.List(Kinds))
		return false
	case !slices.Contains(Kinds, Kind(strings.TrimSpace(raw))):
		msg := fmt.Sprintf("unknown kind %q (want one of %s)", raw, schema.List(Kinds))
		if s := suggest(raw, kindStrings()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		c.errorf(p+".kind", "%s", msg)
		return false
	}
	return true
}

// fieldsApply reports every field the workload sets that does not apply to its kind.
func (c *converter) fieldsApply(p string, r *rawWorkload, kind Kind) {
	fields := []kindField{
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
		{"utilization", r.Utilization != nil, []Kind{Inference, Custom}},
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
		if f.set && f.kinds != nil && !slices.Contains(f.kinds, kind) {
			c.errorf(p+"."+f.key, "does not apply to kind %s", kind)
		}
	}
}

// placeRules reads where the workload may run: providers, regions (continents) and
// countries, each allowed or excluded, never both.
func (c *converter) placeRules(p string, r *rawWorkload, w *Workload) {
	w.Providers = c.names(p+".providers", r.Providers)
	w.ExcludeProviders = c.names(p+".exclude_providers", r.ExcludeProviders)
	c.disjoint(p+".exclude_providers", "provider", w.Providers, w.ExcludeProviders)
	w.Regions = c.continents(p+".regions", r.Regions)
	w.ExcludeRegions = c.continents(p+".exclude_regions", r.ExcludeRegions)
	c.disjoint(p+".exclude_regions", "region", w.Regions, w.ExcludeRegions)
	w.Countries = c.countries(p+".countries", r.Countries)
	w.ExcludeCountries = c.countries(p+".exclude_countries", r.ExcludeCountries)
	c.disjoint(p+".exclude_countries", "country", w.Countries, w.ExcludeCountries)
}

// gpuRules reads which GPU models the workload may run on: gpus_allowed, gpus_excluded and
// min_compute_capability.
func (c *converter) gpuRules(p string, r *rawWorkload, w *Workload) {
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
}

// hostRules reads which hosts the workload may run on: host_tiers (any alone means every
// tier) and min_reliability, a share of time in (0, 1].
func (c *converter) hostRules(p string, r *rawWorkload, w *Workload) {
	for i, t := range r.HostTiers {
		fp := fmt.Sprintf("%s.host_tiers[%d]", p, i)
		switch tier := schema.Tier(strings.ToLower(strings.TrimSpace(t))); {
		case tier == "any":
			if len(r.HostTiers) > 1 {
				c.errorf(fp, "any allows every tier: list it alone")
			}
			w.HostTiers = slices.Clone(schema.Tiers)
		case !slices.Contains(schema.Tiers, tier):
			c.errorf(fp, "unknown host tier %q (want any, or some of %s)", t, schema.List(schema.Tiers))
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
}

// measuredVRAM reads a measured footprint, which for inference is of one precision.
func (c *converter) measuredVRAM(p string, r *rawWorkload, w *Workload) {
	if r.MeasuredVRAMGB == nil {
		return
	}
	w.MeasuredVRAMGB = c.positive(p+".measured_vram_gb", r.MeasuredVRAMGB, false)
	if w.Kind == Inference && len(r.Precision) > 1 {
		c.errorf(p+".measured_vram_gb", "a measured footprint is of one precision: list only the precision it was measured at")
	}
}

// engine reads a serving engine: one of gpus.Engines, or none for the workload's own
// software.
func (c *converter) engine(p, raw string) gpus.Engine {
	e := gpus.Engine(strings.ToLower(strings.TrimSpace(raw)))
	if e != NoEngine && !slices.Contains(gpus.Engines, e) {
		c.errorf(p, "unknown engine %q (want one of %s, or none for the workload's own software)", raw, schema.List(gpus.Engines))
	}
	return e
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
			c.errorf(fp, "unknown precision %q (want one of %s)", s, schema.List(allowed))
		case slices.Contains(out, pr):
			c.errorf(fp, "precision %q listed twice", s)
		default:
			out = append(out, pr)
		}
	}
	return out
}

// current converts a current placement: a provider and GPU model (kept as written when the
// catalog lacks it), a GPU count (default 1), a price type (default on_demand) and at most
// one paid price.
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
	if r.MetricsSelector != nil {
		cur.MetricsSelector = c.metricsSelector(p+".metrics_selector", *r.MetricsSelector)
	}
	return cur
}
