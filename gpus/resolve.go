package gpus

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Match is the outcome of resolving a provider's GPU name.
type Match struct {
	Model Model // the catalog model; zero (Name "") when Known is false
	Known bool  // the name resolved to exactly one catalog model
	// Snapped says a reported VRAM differed from the one recorded and was snapped to it: to the
	// catalog's when Known, else to the market label nearest it (VRAMLabel).
	Snapped bool
	// VRAMGB is the per-GPU VRAM to record: the catalog value when Known; else the market label of
	// the reported VRAM (VRAMLabel), or what was reported (or named) when no label is near it.
	VRAMGB float64
}

// SnapTolerance is how far (relative) a reported VRAM may be from the catalog value and still
// count as that model, as gpuhunt does (±7%). The reported figure is compared both as decimal GB
// and as GiB labelled GB, because providers mix the two (Vast's 81559 MiB H100 is 85.5 GB, or
// 79.6 GiB; a 24 GB card reports 24576 MiB, which is 25.8 GB).
const SnapTolerance = 0.07

// vramLabels are the per-GPU memory sizes GPUs are sold with, in the market's GB (powers of two
// and their sums, which is what GDDR and HBM come in, plus the HBM parts' own figures): every
// catalog model's, and those of cards outside it (GTX 1080 Ti 11, MI210 64, MI250 and Gaudi 3
// 128, GH200 144). A test keeps every catalog VRAM among them.
var vramLabels = []float64{1, 2, 3, 4, 5, 6, 8, 10, 11, 12, 16, 20, 24, 32, 40, 48, 64, 80, 94, 96,
	128, 141, 144, 180, 186, 192, 256, 288}

// LabelTolerance is how far (relative) a reported VRAM may be from a market label and still be
// given it (VRAMLabel). It is tighter than SnapTolerance, which compares a report with one
// model's VRAM, because labels lie close together (10, 11 and 12 GB are 9–10% apart), yet wide
// enough for the memory cards show: a 48 GB card reports 45 GiB, which is 48.3 decimal GB.
const LabelTolerance = 0.05

// VRAMLabel is the market's label for a per-GPU VRAM reported in decimal GB (MiBToGB of a MiB
// figure) by a GPU the catalog does not know: the label nearest the report, read as decimal GB
// or as GiB labelled GB as Resolve reads VRAM (Vast's 49152 MiB is 51.5 GB or 48 GiB: 48),
// when it lies within LabelTolerance. Else ok is false and the report stands (7 GiB is
// neither 6 nor 8 GB).
func VRAMLabel(reportedGB float64) (label float64, ok bool) {
	if reportedGB <= 0 {
		return 0, false
	}
	best := math.Inf(1)
	for _, l := range vramLabels {
		for _, r := range []float64{reportedGB, reportedGB / GiB} {
			if d := math.Abs(r-l) / l; d < best {
				best, label = d, l
			}
		}
	}
	if best > LabelTolerance {
		return 0, false
	}
	return label, true
}

// Resolve maps a provider's raw GPU name plus the reported per-GPU VRAM in decimal GB (0 = not
// reported) to a catalog model.
//
// Names are matched on their tokens, case and punctuation insensitive, so "H100 SXM",
// "H100_SXM", "NVIDIA H100 80GB HBM3", "gpu_1x_h100_sxm5", "8x H100 (80 GB SXM5)" and
// "NVIDIA HGX H100" all find the H100 family; vendor words (NVIDIA, Tesla, GeForce, AMD,
// Instinct, Quadro, "Ada Generation", "Server Edition") and GPU counts are ignored. After the
// family, the form factor and the memory must leave exactly one candidate:
//
//   - The form factor comes from the name (SXM, SXM2..SXM6, PCIe, NVL, OAM, HGX/DGX = SXM). An
//     H100 named "HBM3" without a form is the SXM or NVL part (the PCIe card is HBM2e; this is
//     how nvidia-smi and RunPod name the SXM card). A bare "H200" is the SXM part: NVIDIA's NVL
//     variant is always labelled. On CoreWeave a bare "A100" is the HGX A100 (SXM, NVLink), as
//     docs/providers.md §4.5 documents. Everywhere else a family sold in several forms without a
//     form in the name (Lambda "H100 80GB", Vast "Tesla V100") stays unknown: the caller may
//     add a form it can prove (Vast's bw_nvlink) and resolve again.
//   - The memory comes from the name ("80GB", "(40 GB SXM4)") or else from vramGB; it must lie
//     within SnapTolerance of the candidate's. A reported VRAM that fits no candidate (a 48 GB
//     "RTX 4090") makes the match unknown rather than a wrong model.
//
// Unknown names (including MIG slices) return Known=false and a zero Model: the caller keeps
// the offer verbatim and flags it; Resolve never drops or guesses. What memory settles is kept
// all the same: an unknown GPU's VRAM is the market's label of the reported figure (VRAMLabel),
// Snapped when it differs from it, so that a "Tesla V100" of 32768 MiB is recorded as 32 GB
// (both V100 32 GB forms have it) though its form, and so its model, stays open.
func Resolve(provider, rawName string, vramGB float64) Match {
	p := parseName(rawName)
	unknown := Match{VRAMGB: p.memGB}
	if vramGB > 0 {
		unknown.VRAMGB = vramGB
		if label, ok := VRAMLabel(vramGB); ok {
			unknown = Match{Snapped: math.Abs(vramGB-label) > 0.005, VRAMGB: label}
		}
	}
	if p.family == "" || p.mig {
		return unknown
	}

	var cands []Model
	for _, m := range models {
		if m.Family == p.family {
			cands = append(cands, m)
		}
	}
	forms := p.forms(strings.ToLower(strings.TrimSpace(provider)))
	if len(forms) > 0 {
		cands = filter(cands, func(m Model) bool { return containsForm(forms, m.FormFactor) })
	}
	if p.memGB > 0 {
		cands = filter(cands, func(m Model) bool { return fits(p.memGB, m.VRAMGB) })
	}
	if vramGB > 0 {
		cands = filter(cands, func(m Model) bool { return fits(vramGB, m.VRAMGB) })
	}
	if len(cands) != 1 {
		return unknown
	}
	m := cands[0]
	return Match{
		Model:   m,
		Known:   true,
		Snapped: vramGB > 0 && math.Abs(vramGB-m.VRAMGB) > 0.005,
		VRAMGB:  m.VRAMGB,
	}
}

// fits reports whether a reported VRAM (decimal GB, or GiB labelled GB) is within SnapTolerance
// of the catalog value.
func fits(reported, catalogGB float64) bool {
	d := math.Min(math.Abs(reported-catalogGB), math.Abs(reported/GiB-catalogGB))
	return d <= SnapTolerance*catalogGB
}

func filter(ms []Model, keep func(Model) bool) []Model {
	var out []Model
	for _, m := range ms {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

func containsForm(forms []FormFactor, f FormFactor) bool {
	for _, g := range forms {
		if g == f {
			return true
		}
	}
	return false
}

// parsedName is a raw GPU name taken apart.
type parsedName struct {
	family string     // catalog family, "" when the remaining tokens name none
	form   FormFactor // explicit form factor, "" when the name has none
	memGB  float64    // memory named in the text ("80GB", "80 GB"), 0 when none
	hbm3   bool       // the name says HBM3 (not HBM3e)
	mig    bool       // a MIG slice, not a whole GPU
}

// forms returns the form factors the name allows, [] meaning any.
func (p parsedName) forms(provider string) []FormFactor {
	switch {
	case p.form != "":
		return []FormFactor{p.form}
	case p.family == "H100" && p.hbm3:
		return []FormFactor{SXM, NVL}
	case p.family == "H200":
		return []FormFactor{SXM}
	case p.family == "A100" && provider == "coreweave":
		return []FormFactor{SXM}
	}
	return nil
}

// familyKeys maps the significant tokens of a name, joined by spaces, to a catalog family.
var familyKeys = map[string]string{
	"B200":              "B200",
	"B300":              "B300",
	"GB200":             "GB200",
	"GB300":             "GB300",
	"RTX PRO 6000":      "RTX PRO 6000",
	"RTX PRO 6000 MAXQ": "RTX PRO 6000 Max-Q",
	"RTX PRO 5000":      "RTX PRO 5000",
	"RTX PRO 4500":      "RTX PRO 4500",
	"RTX PRO 4000":      "RTX PRO 4000",
	"RTX 5090":          "RTX 5090",
	"RTX 5080":          "RTX 5080",
	"H200":              "H200",
	"H100":              "H100",
	"GH200":             "GH200",
	"L40S":              "L40S",
	"L40":               "L40",
	"L4":                "L4",
	"RTX 6000 ADA":      "RTX 6000 Ada",
	"RTX 5000 ADA":      "RTX 5000 Ada",
	"RTX 4000 ADA":      "RTX 4000 Ada",
	"RTX 4000 SFF ADA":  "RTX 4000 SFF Ada",
	"RTX 4000 ADA SFF":  "RTX 4000 SFF Ada",
	"RTX 2000 ADA":      "RTX 2000 Ada",
	"RTX 4090":          "RTX 4090",
	"RTX 4080 SUPER":    "RTX 4080 SUPER",
	"RTX 4080":          "RTX 4080",
	"RTX 4070 TI":       "RTX 4070 Ti",
	"A100":              "A100",
	"A40":               "A40",
	"A10":               "A10",
	"A30":               "A30",
	"RTX A6000":         "RTX A6000",
	"A6000":             "RTX A6000",
	"RTX A5000":         "RTX A5000",
	"A5000":             "RTX A5000",
	"RTX A4500":         "RTX A4500",
	"A4500":             "RTX A4500",
	"RTX A4000":         "RTX A4000",
	"A4000":             "RTX A4000",
	"RTX A2000":         "RTX A2000",
	"A2000":             "RTX A2000",
	"RTX 3090 TI":       "RTX 3090 Ti",
	"RTX 3090":          "RTX 3090",
	"RTX 3080 TI":       "RTX 3080 Ti",
	"RTX 3080":          "RTX 3080",
	"RTX 3070":          "RTX 3070",
	"RTX 6000":          "Quadro RTX 6000", // Vast "Q RTX 6000", Lambda gpu_1x_rtx6000 (24 GB Turing)
	"TITAN RTX":         "TITAN RTX",
	"T4":                "T4",
	"V100":              "V100",
	"P40":               "P40",
	"MI300X":            "MI300X",
	"MI350X":            "MI350X",
}

// noise are tokens that carry no identity.
var noise = map[string]bool{
	"NVIDIA": true, "TESLA": true, "GEFORCE": true, "AMD": true, "INSTINCT": true, "QUADRO": true,
	"Q": true, "MAX": true, "GPU": true, "GENERATION": true, "BLACKWELL": true, "SERVER": true,
	"WORKSTATION": true, "WS": true, "EDITION": true, "AC": true, "GB": true,
	"HBM2": true, "HBM2E": true, "HBM3E": true, "GDDR6": true, "GDDR6X": true, "GDDR7": true,
}

var (
	nonAlnum  = regexp.MustCompile(`[^A-Z0-9.]+`)
	memRe     = regexp.MustCompile(`^(\d+(?:\.\d+)?)GB$`)
	numRe     = regexp.MustCompile(`^\d+(?:\.\d+)?$`)
	countRe   = regexp.MustCompile(`^\d+X$`)
	rtxRe     = regexp.MustCompile(`^RTX(\d+)([A-Z]*)$`)
	adaRe     = regexp.MustCompile(`^(\d+)(ADA)$`)
	glued     = regexp.MustCompile(`^([A-Z]+\d+[A-Z]?)(NVL|PCIE|SXM\d*)$`)
	sxmRe     = regexp.MustCompile(`^SXM\d*[A-Z]*$`)
	rackNVLRe = regexp.MustCompile(`^NVL\d+$`)
)

func parseName(raw string) parsedName {
	var p parsedName
	fields := strings.Fields(nonAlnum.ReplaceAllString(strings.ToUpper(raw), " "))
	// Split glued spellings ("RTX6000ADA", "6000ADA", "H100NVL") into their parts first.
	var toks []string
	for _, f := range fields {
		f = strings.Trim(f, ".")
		switch {
		case f == "":
		case rtxRe.MatchString(f):
			m := rtxRe.FindStringSubmatch(f)
			toks = append(toks, "RTX", m[1])
			if m[2] != "" {
				toks = append(toks, m[2])
			}
		case adaRe.MatchString(f):
			m := adaRe.FindStringSubmatch(f)
			toks = append(toks, m[1], m[2])
		case glued.MatchString(f):
			m := glued.FindStringSubmatch(f)
			toks = append(toks, m[1], m[2])
		default:
			toks = append(toks, f)
		}
	}
	var rest []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case memRe.MatchString(t):
			p.memGB, _ = strconv.ParseFloat(memRe.FindStringSubmatch(t)[1], 64)
		case numRe.MatchString(t) && i+1 < len(toks) && toks[i+1] == "GB":
			p.memGB, _ = strconv.ParseFloat(t, 64)
			i++
		case countRe.MatchString(t):
		case sxmRe.MatchString(t), t == "HGX", t == "DGX":
			p.form = SXM
		case t == "PCIE", t == "FHHL":
			p.form = PCIe
		case t == "NVL":
			p.form = NVL
		case t == "OAM":
			p.form = OAM
		case rackNVLRe.MatchString(t): // NVL72: rack-scale NVLink of GB200/GB300, not a card form
		case t == "HBM3":
			p.hbm3 = true
		case t == "MIG":
			p.mig = true
		case t == "MAX" && i+1 < len(toks) && toks[i+1] == "Q": // Max-Q, the 300 W RTX PRO 6000
			rest = append(rest, "MAXQ")
			i++
		case noise[t]:
		default:
			rest = append(rest, t)
		}
	}
	p.family = familyKeys[strings.Join(rest, " ")]
	return p
}
