package selection

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// The GPU specs of `gpucost offers --gpu`, in the shapes dstack's --gpu takes. A spec is parts
// joined by ':', each known by its shape:
//
//	H100              a name: a catalog model (H100-SXM-80GB), or a family and whatever form
//	                  and memory the name says (H100, H100-SXM, A100-80GB, RTX4090), as
//	                  gpus.Named reads it; always the first part
//	8, 1..4, 2.., ..4 a GPU count per offer, or an inclusive range of them (1 to MaxGPUCount)
//	80GB, 24GB..80GB  VRAM per GPU, or an inclusive range (48GB.., ..80GB)
//	nvidia, amd       the vendor: its catalog models
//
// so H100:8, A100:80GB:1..4, 24GB..80GB, :2.. and amd:MI300X are specs. Specs are separated by
// commas or given in several flags; names listed before a spec with a count or a memory share
// them, as in dstack: A100,H100:8 is an A100 or an H100, eight of them, where A100 --gpu H100:8
// (two flags) is any A100 offer or one of eight H100s.

// MaxGPUCount is the largest GPU count a spec may give: more than any offer has (clusters of
// nodes are sold by the node or by a few hundred GPUs), and below the numbers that name a GPU
// (4090), which would otherwise read as a count.
const MaxGPUCount = 1024

// maxSpecVRAMGB bounds the memory of a spec, as --min-vram is bounded.
const maxSpecVRAMGB = 10000

// GPUSpecs reads the --gpu values of `gpucost offers` (each a comma-separated list of specs)
// as specs of the catalog's models; a bad spec is an *Error of "gpu" that names the part that
// is wrong. No values, or blanks only, is no spec: every GPU.
func GPUSpecs(values []string) ([]schema.GPUSpec, error) {
	var out []schema.GPUSpec
	for _, v := range values {
		var names []string // names waiting for the count or memory of a spec after them
		for _, item := range List(v) {
			p, err := parseSpec(item)
			if err != nil {
				return nil, bad("gpu", "%s: %v", Quote(item), err)
			}
			if p.name != "" {
				names = append(names, p.name)
			}
			if p.nameOnly() {
				continue
			}
			spec, err := p.spec(names)
			if err != nil {
				return nil, bad("gpu", "%s: %v", Quote(item), err)
			}
			out = append(out, spec)
			names = nil
		}
		if len(names) > 0 {
			spec, err := specParts{}.spec(names)
			if err != nil {
				return nil, bad("gpu", "%v", err)
			}
			out = append(out, spec)
		}
	}
	return out, nil
}

// specParts is one spec taken apart.
type specParts struct {
	name               string
	vendor             gpus.Vendor
	count, memory      bool
	minCount, maxCount uint16
	minVRAM, maxVRAM   float64
}

// nameOnly reports whether the spec is a name and nothing else, to share what a later spec
// gives.
func (p specParts) nameOnly() bool {
	return p.name != "" && p.vendor == "" && !p.count && !p.memory
}

// parseSpec takes a spec apart, each part by its shape.
func parseSpec(spec string) (specParts, error) {
	var p specParts
	if strings.Trim(spec, ": ") == "" {
		return p, fmt.Errorf("an empty spec")
	}
	for i, part := range strings.Split(spec, ":") {
		part = strings.TrimSpace(part)
		lower := strings.ToLower(part)
		numeric := part != "" && (part[0] == '.' || part[0] >= '0' && part[0] <= '9')
		switch {
		case part == "" && i == 0: // ":2..": no name
		case part == "":
			return p, fmt.Errorf("an empty part")
		case numeric && strings.ContainsAny(lower, "gmtb"): // a size: 80GB, or 80G, 80GiB, 1TB to refuse
			if p.memory {
				return p, fmt.Errorf("%s is a second memory size", Quote(part))
			}
			lo, hi, err := vramRange(part)
			if err != nil {
				return p, err
			}
			p.memory, p.minVRAM, p.maxVRAM = true, lo, hi
		case strings.Trim(part, "0123456789.") == "":
			if p.count {
				return p, fmt.Errorf("%s is a second GPU count", Quote(part))
			}
			lo, hi, err := countRange(part)
			if err != nil {
				return p, err
			}
			p.count, p.minCount, p.maxCount = true, lo, hi
		case lower == string(gpus.NVIDIA) || lower == string(gpus.AMD):
			if p.vendor != "" {
				return p, fmt.Errorf("%s is a second vendor", Quote(part))
			}
			p.vendor = gpus.Vendor(lower)
		case p.name == "" && !p.count && !p.memory && (i == 0 || p.vendor != "" && i == 1): // first, or after the vendor
			p.name = part
		default:
			return p, fmt.Errorf("%s is neither a GPU count (8, 1..4, 2..), a memory size (80GB, 24GB..80GB, 48GB..) nor a vendor (nvidia, amd); a GPU's name comes first",
				Quote(part))
		}
	}
	return p, nil
}

// spec makes the spec of names (none: any GPU) with p's vendor, count and memory: the names'
// models narrowed by vendor and memory, each name to at least one model.
func (p specParts) spec(names []string) (schema.GPUSpec, error) {
	s := schema.GPUSpec{MinCount: p.minCount, MaxCount: p.maxCount}
	keep := func(m gpus.Model) bool {
		return (p.vendor == "" || m.Vendor == p.vendor) && (p.minVRAM == 0 || m.VRAMGB >= p.minVRAM) && (p.maxVRAM == 0 || m.VRAMGB <= p.maxVRAM)
	}
	if len(names) == 0 {
		if p.vendor == "" { // memory of any GPU, in or outside the catalog
			s.MinVRAMGB, s.MaxVRAMGB = p.minVRAM, p.maxVRAM
			return s, nil
		}
		for _, m := range gpus.Models() {
			if keep(m) {
				s.Models = append(s.Models, m.Name)
			}
		}
		if len(s.Models) == 0 {
			return s, fmt.Errorf("no %s GPU in the catalog has %s", p.vendor, vramText(p.minVRAM, p.maxVRAM))
		}
		return s, nil
	}
	for _, name := range names {
		named := gpus.Named(name)
		if len(named) == 0 {
			return s, unknownGPU(name)
		}
		var kept []string
		for _, m := range named {
			if keep(m) {
				kept = append(kept, m.Name)
			}
		}
		if len(kept) == 0 {
			return s, fmt.Errorf("%s", why(named, p))
		}
		s.Models = append(s.Models, kept...)
	}
	slices.Sort(s.Models)
	s.Models = slices.Compact(s.Models)
	return s, nil
}

// why says why none of the models a name stands for fits the vendor and memory of p.
func why(named []gpus.Model, p specParts) string {
	var what []string
	for _, m := range named {
		if p.vendor != "" && m.Vendor != p.vendor {
			return fmt.Sprintf("%s is not an %s GPU", m.Family, p.vendor)
		}
		what = append(what, m.Name)
	}
	return fmt.Sprintf("none of %s has %s", strings.Join(what, ", "), vramText(p.minVRAM, p.maxVRAM))
}

// vramText writes a memory range as a spec gives it: 80GB, 24GB to 80GB, at least 48GB.
func vramText(lo, hi float64) string {
	gb := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) + "GB" }
	switch {
	case lo == hi:
		return gb(lo)
	case hi == 0:
		return "at least " + gb(lo)
	case lo == 0:
		return "at most " + gb(hi)
	}
	return gb(lo) + " to " + gb(hi)
}

// unknownGPU is the error of a name that stands for no catalog model.
func unknownGPU(name string) error {
	msg := Quote(name) + " is no GPU of the catalog"
	if like := SimilarGPUs(name); len(like) > 0 {
		msg += " (did you mean " + strings.Join(like, ", ") + "?)"
	} else {
		msg += " (names look like H100, H100-SXM, A100-80GB or RTX4090: gpucost gpus lists them)"
	}
	return fmt.Errorf("%s; offers of GPUs outside the catalog are shown with --unknown", msg)
}

// countRange reads a GPU count or an inclusive range of counts: 8, 1..4, 2.., ..4. An open end
// is 0.
func countRange(s string) (lo, hi uint16, err error) {
	return inclusiveRange(s, "1..4, 2.., ..4", func(x string) (uint16, error) {
		n, err := strconv.Atoi(x)
		switch {
		case err != nil:
			return 0, fmt.Errorf("%s is not a whole number of GPUs", Quote(x))
		case n < 1:
			return 0, fmt.Errorf("%s GPUs: a count starts at 1", x)
		case n > MaxGPUCount:
			msg := fmt.Sprintf("%s GPUs is more than an offer has (at most %d)", x, MaxGPUCount)
			if like := SimilarGPUs(x); len(like) > 0 {
				msg += "; a GPU named so is written like " + like[0]
			}
			return 0, fmt.Errorf("%s", msg)
		}
		return uint16(n), nil
	})
}

// vramRange reads VRAM per GPU or an inclusive range of it: 80GB, 24GB..80GB, 48GB.., ..80GB.
// An open end is 0.
func vramRange(s string) (lo, hi float64, err error) {
	return inclusiveRange(s, "24GB..80GB, 48GB.., ..80GB", func(x string) (float64, error) {
		num, unit := strings.TrimSpace(x), ""
		if i := strings.IndexFunc(num, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); i >= 0 {
			num, unit = num[:i], strings.TrimSpace(num[i:])
		}
		if !strings.EqualFold(unit, "GB") {
			return 0, fmt.Errorf("%s is not a memory size in GB, like 80GB", Quote(x))
		}
		gb, err := strconv.ParseFloat(num, 64)
		if err != nil || gb <= 0 || gb > maxSpecVRAMGB {
			return 0, fmt.Errorf("%s is not a memory size between 0 and %dGB", Quote(x), maxSpecVRAMGB)
		}
		return gb, nil
	})
}

// inclusiveRange reads one value (both ends the same) or an inclusive range a..b of values
// read by one, either end open (0); examples show a reader the ranges there are.
func inclusiveRange[T uint16 | float64](s, examples string, one func(string) (T, error)) (lo, hi T, err error) {
	a, b, isRange := strings.Cut(s, "..")
	if !isRange {
		lo, err = one(s)
		return lo, lo, err
	}
	if a == "" && b == "" {
		return 0, 0, fmt.Errorf(`".." is a range without ends (%s)`, examples)
	}
	if a != "" {
		if lo, err = one(a); err != nil {
			return 0, 0, err
		}
	}
	if b != "" {
		if hi, err = one(b); err != nil {
			return 0, 0, err
		}
	}
	if hi > 0 && lo > hi {
		return 0, 0, fmt.Errorf("%s is an inverted range (from %v down to %v)", Quote(s), lo, hi)
	}
	return lo, hi, nil
}
