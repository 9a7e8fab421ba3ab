package optimizer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

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

// describeType names the kind of YAML value a Go decoding target wants, for errors.
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

// editDistance is the Levenshtein distance between a and b, in bytes.
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
