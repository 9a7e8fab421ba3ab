package optimizer

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// names reads a list of names, lower case, each once; empty names are errors.
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

// gpuModel reads a catalog GPU model and returns its canonical name.
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

// knownGPUName reports whether name (upper case) is a catalog model or family.
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

// nonNegative returns *v, which must be ≥ 0 (0 when v is nil).
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

// hoursPerMonth reads hours_per_month: positive and at most the hours of the longest month;
// 0 when it is not given.
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

// maxHoursPerMonth is the hours of a 31-day month.
const maxHoursPerMonth = 744

// money reads a positive amount of dollars, with or without a leading $; nil when v is nil.
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

// ParseUtilization parses a utilization, the share of their hours GPUs are busy: a share (0.2)
// or a percentage ("20%"), above 0 and at most 1. Workloads files and gpucost tco read it.
func ParseUtilization(input string) (float64, error) {
	s := strings.TrimSpace(input)
	scale := 1.0
	if strings.HasSuffix(s, "%") {
		s, scale = strings.TrimSpace(strings.TrimSuffix(s, "%")), 0.01
	}
	v, err := strconv.ParseFloat(s, 64)
	v *= scale
	if err != nil || !(v > 0 && v <= 1) {
		return 0, fmt.Errorf("utilization %q: want a share of the hours the GPUs are busy, above 0 and at most 1 (0.2 or 20%%)", input)
	}
	return v, nil
}

// labelMatcher is one Prometheus label matcher: a label name, an operator (=, !=, =~, !~) and a
// quoted value ("…", '…' or `…`); labelMatchers is a comma-separated list of them, without the
// braces of a series selector.
var (
	labelMatcher  = `[A-Za-z_][A-Za-z0-9_]*\s*(=~|!~|!=|=)\s*("(\\.|[^"\\\n])*"|'(\\.|[^'\\\n])*'|` + "`[^`]*`" + `)`
	labelMatchers = regexp.MustCompile(`^\s*` + labelMatcher + `(\s*,\s*` + labelMatcher + `)*\s*,?\s*$`)
)

// metricsSelector reads a current placement's metrics_selector: the Prometheus label matchers,
// without braces, that pick today's GPUs out of the DCGM exporter's series. Checking them here
// names the line of a typo, and keeps anything but matchers out of the query they go into.
func (c *converter) metricsSelector(p, raw string) string {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		c.errorf(p, `empty: want Prometheus label matchers such as namespace="search",pod=~"chat-7b-.*"`)
	case strings.HasPrefix(s, "{"):
		c.errorf(p, "%q: write the label matchers without the braces", raw)
	case !labelMatchers.MatchString(s):
		c.errorf(p, `%q is not Prometheus label matchers: want name="value", name!="value", name=~"regex" or name!~"regex", comma-separated`, raw)
	}
	return s
}

// parseCommitment parses commit_up_to, the longest commitment a workload may take, into months:
// "1w", "3m", "1y" (weeks, months, years; a bare number is months) or "none".
func parseCommitment(input string) (float64, error) {
	s := strings.ToLower(strings.TrimSpace(input))
	if s == "none" || s == "0" {
		return 0, nil
	}
	unit := 1.0
	switch {
	case strings.HasSuffix(s, "w"):
		s, unit = strings.TrimSuffix(s, "w"), schema.MonthsPerWeek
	case strings.HasSuffix(s, "m"):
		s = strings.TrimSuffix(s, "m")
	case strings.HasSuffix(s, "y"):
		s, unit = strings.TrimSuffix(s, "y"), 12
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v > 0) || v*unit > 120 {
		return 0, fmt.Errorf("commit_up_to %q: want a term such as 1w, 3m, 6m, 1y (at most 10 years) or none", input)
	}
	return v * unit, nil
}

// lastKey is the last key of a YAML path: "params_b" of "teams[0].workloads[1].params_b".
func lastKey(p string) string {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[i+1:]
	}
	return p
}

// kindStrings lists Kinds as strings.
func kindStrings() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = string(k)
	}
	return out
}
