package gpus

import (
	"math"
	"regexp"
	"slices"
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
// "H100_SXM", "NVIDIA H100 80GB HBM3", "gpu_1x_h100_sxm5", "8x H100 (80 GB SXM5)",
// "H100-80G-SXM5", "h100-sxm5-80gb" and "NVIDIA HGX H100" all find the H100 family; vendor
// words (NVIDIA, Tesla, GeForce, AMD, Instinct, Quadro, Radeon, "Ada Generation", "Server
// Edition", also glued: "teslav100", "geforcertx4090"), editions, cooling, "CC" (confidential
// computing), "spot", a "with Intel CPU" host and GPU counts are ignored; "Max-Q" and "SFF"
// name models of their own. After the family, the form factor and the memory must leave
// exactly one candidate:
//
//   - The form factor comes from the name (SXM, SXM2..SXM6, PCIe, NVL, OAM, HGX/DGX = SXM; a
//     PCIe card may be a GeForce one). An H100 named "HBM3" without a form is the SXM or NVL
//     part (the PCIe card is HBM2e; this is how nvidia-smi and RunPod name the SXM card). A bare
//     "H200" is the SXM part: NVIDIA's NVL variant is always labelled. "NVLink" in a name leaves
//     the models that have a fabric (a V100 with NVLink is the SXM2 module). A few providers
//     say what their names without a form are (defaultForm: CoreWeave's A100, Hyperstack's
//     PCIe cards, OCI's HGX shapes). Everywhere else a family sold in several forms without a
//     form in the name (Lambda "H100 80GB", Vast "Tesla V100", DigitalOcean "gpu-h100x1-80gb")
//     stays unknown: the caller may add a form it can prove (Vast's bw_nvlink) and resolve
//     again.
//   - The memory comes from the name ("80GB", "(40 GB SXM4)", "80G"; a slug's total divided by
//     the GPUs glued to its model: "gpu-mi300x8-1536gb" is 192 each) or else from vramGB; it
//     must lie within SnapTolerance of the candidate's. A reported VRAM that fits no candidate
//     (a 48 GB "RTX 4090") makes the match unknown rather than a wrong model.
//
// Provider ids of their own syntax (OCI shapes, Nebius platforms) and look-alike names
// (Nebius's and DigitalOcean's "RTX 6000") are read as those providers mean them
// (providerName, providerKeys).
//
// Unknown names (including MIG slices) return Known=false and a zero Model: the caller keeps
// the offer verbatim and flags it; Resolve never drops or guesses. What memory settles is kept
// all the same: an unknown GPU's VRAM is the market's label of the reported figure (VRAMLabel),
// Snapped when it differs from it, so that a "Tesla V100" of 32768 MiB is recorded as 32 GB
// (both V100 32 GB forms have it) though its form, and so its model, stays open.
func Resolve(provider, rawName string, vramGB float64) Match {
	provider = strings.ToLower(strings.TrimSpace(provider))
	p := parseName(providerName(provider, rawName))
	if f, ok := providerKeys[provider][p.key]; ok {
		p.family = f
	}
	unknown := Match{VRAMGB: p.memGB}
	if vramGB > 0 {
		unknown.VRAMGB = vramGB
		// A report that is the label the name itself carries ("B300 SXM6 262GB" at 262) is the
		// provider's own label of the card: it stays, whichever other label lies near it.
		if label, ok := VRAMLabel(vramGB); ok && !(p.memGB > 0 && math.Abs(vramGB-p.memGB) <= 0.005) {
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
	if forms := p.forms(); len(forms) > 0 {
		cands = filter(cands, func(m Model) bool { return slices.Contains(forms, m.FormFactor) })
	} else if f := defaultForm(provider, cands); f != "" {
		cands = filter(cands, func(m Model) bool { return m.FormFactor == f })
	}
	if p.nvlink {
		cands = filter(cands, Model.Linkable)
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

// Named returns the catalog models a person's name for a GPU stands for, sorted by name: the
// model of a canonical name (H100-SXM-80GB, in any case); else every model of the family the
// name reads as, with Resolve's reading of names ("h100", "RTX4090", "Tesla V100", "NVIDIA
// H100 80GB HBM3"), narrowed by the form factor and the memory the name carries ("H100-SXM",
// "A100-PCIe", "A100-80GB"; an H100 named HBM3 is the SXM or NVL part). Unlike Resolve it does not pick one: "H100" is the SXM, PCIe and
// NVL parts alike, "H200" both H200s, and no provider's rules apply. A name of no family, or a
// MIG slice, stands for none.
func Named(name string) []Model {
	if m, ok := Lookup(name); ok {
		return []Model{m}
	}
	p := parseName(name)
	if p.family == "" || p.mig {
		return nil
	}
	// Any form, unless the name says one: not the form of a bare H200, which Resolve takes for
	// the SXM part.
	var forms []FormFactor
	if p.form != "" || p.hbm3 {
		forms = p.forms()
	}
	var out []Model
	for _, m := range models {
		if m.Family == p.family && (forms == nil || slices.Contains(forms, m.FormFactor)) &&
			(!p.nvlink || m.Linkable()) && (p.memGB == 0 || fits(p.memGB, m.VRAMGB)) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
	return out
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

// parsedName is a raw GPU name taken apart.
type parsedName struct {
	key    string     // the significant tokens, joined by spaces ("RTX 6000 ADA")
	family string     // catalog family of key, "" when it names none
	form   FormFactor // explicit form factor, "" when the name has none
	memGB  float64    // memory per GPU named in the text ("80GB", "80 GB", "80G"), 0 when none
	hbm3   bool       // the name says HBM3 (not HBM3e)
	nvlink bool       // the name says NVLink: the GPU has a fabric (bridges or a board)
	mig    bool       // a MIG slice, not a whole GPU
}

// forms returns the form factors the name allows, [] meaning any. A PCIe card may be a GeForce
// card (TensorDock's geforcertx4090-pcie-24gb).
func (p parsedName) forms() []FormFactor {
	switch {
	case p.form == PCIe:
		return []FormFactor{PCIe, Consumer}
	case p.form != "":
		return []FormFactor{p.form}
	case p.family == "H100" && p.hbm3:
		return []FormFactor{SXM, NVL}
	case p.family == "H200":
		return []FormFactor{SXM}
	}
	return nil
}

// defaultForm is the form a provider's name without one stands for, when the family's
// candidates include it ("" when the provider has no such rule, or the family is not sold in
// that form, so that Hyperstack's B200 stays the SXM part it only comes as):
//   - CoreWeave: a bare A100 is the HGX A100 (docs/providers.md §4.5).
//   - Hyperstack: a bare H100 or A100, and one named NVLink, is the PCIe card (with bridges);
//     Hyperstack names its SXM parts SXM (H100-80G-PCIe-NVLink, H100-80G-SXM5).
//   - OCI: GPU shapes of a family whose SXM part sits on an NVSwitch board are those HGX boards
//     (BM.GPU.H100.8, BM.GPU4.8, "GPU - H100"); V100, whose SXM2 board is a cube mesh, gets no
//     such rule, for OCI does not say its VM.GPU3 shapes are SXM2.
func defaultForm(provider string, cands []Model) FormFactor {
	want := map[string]func(Model) bool{
		"coreweave":  func(m Model) bool { return m.Family == "A100" && m.FormFactor == SXM },
		"hyperstack": func(m Model) bool { return m.FormFactor == PCIe },
		"oci":        func(m Model) bool { return m.FormFactor == SXM && m.Topology == TopologyNVSwitch },
	}[provider]
	if want == nil {
		return ""
	}
	for _, m := range cands {
		if want(m) {
			return m.FormFactor
		}
	}
	return ""
}

// providerKeys are the look-alike names a provider uses for another family than the one the
// same tokens name everywhere else: Nebius's gpu-rtx6000 is the RTX PRO 6000 (96 GB), not the
// 24 GB Quadro; the DigitalOcean pricing page's "NVIDIA RTX 6000" and "NVIDIA RTX 4000" are
// the Ada cards its droplet slugs name (gpu-6000adax1-48gb, gpu-4000adax1-20gb). Elsewhere a
// bare "RTX 4000" (Quadro RTX 4000 or RTX 4000 Ada) names no family.
var providerKeys = map[string]map[string]string{
	"nebius":       {"RTX 6000": "RTX PRO 6000"},
	"digitalocean": {"RTX 6000": "RTX 6000 Ada", "RTX 4000": "RTX 4000 Ada"},
}

var (
	nebiusVariant = regexp.MustCompile(`(?i)^(gpu-[a-z0-9-]+)-[a-z]$`)
	ociShape      = regexp.MustCompile(`(?i)^(?:BM|VM)\.GPU(\d?)(?:\.([A-Z0-9-]+))?\.\d+(?:\s*\(.*\))?$`)
)

// providerName rewrites the names of a provider whose GPU names are ids of its own syntax into
// a name the tokens read:
//   - Nebius platform ids end in a one-letter variant that names no GPU: gpu-b200-sxm-a (a
//     region's build), gpu-l40s-a and gpu-l40s-d (AMD and Intel hosts).
//   - OCI shapes (BM.GPU.H100.8, VM.GPU.A10.2, BM.GPU.GB200.4 (NVL72)) name the chip between
//     the dots, or by generation: GPU2 is the P100, GPU3 the V100 16 GB, GPU4 the A100 40 GB;
//     A100-v2 is the A100 80 GB and RTXPRO the RTX PRO 6000.
func providerName(provider, raw string) string {
	raw = strings.TrimSpace(raw)
	switch provider {
	case "nebius":
		if m := nebiusVariant.FindStringSubmatch(raw); m != nil {
			return m[1]
		}
	case "oci":
		m := ociShape.FindStringSubmatch(raw)
		if m == nil {
			return raw
		}
		if chip, ok := map[string]string{"2": "P100", "3": "V100 16GB", "4": "A100 40GB"}[m[1]]; ok {
			return chip
		}
		if chip, ok := map[string]string{"A100-V2": "A100 80GB", "RTXPRO": "RTX PRO 6000"}[strings.ToUpper(m[2])]; ok {
			return chip
		}
		return m[2]
	}
	return raw
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
	"6000 ADA":          "RTX 6000 Ada", // DigitalOcean gpu-6000adax1-48gb
	"RTX 5000 ADA":      "RTX 5000 Ada",
	"RTX 4000 ADA":      "RTX 4000 Ada",
	"4000 ADA":          "RTX 4000 Ada", // DigitalOcean gpu-4000adax1-20gb
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
	"A16":               "A16",
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
	"RTX 3060 TI":       "RTX 3060 Ti",
	"RTX 6000":          "Quadro RTX 6000", // Vast "Q RTX 6000", Lambda gpu_1x_rtx6000 (24 GB Turing)
	"TITAN RTX":         "TITAN RTX",
	"T4":                "T4",
	"V100":              "V100",
	"P40":               "P40",
	"GTX 1070":          "GTX 1070",
	"MI300X":            "MI300X",
	"MI325X":            "MI325X",
	"MI350X":            "MI350X",
	"MI355X":            "MI355X",
	"RX 7900 XTX":       "RX 7900 XTX",
	"7900 XTX":          "RX 7900 XTX", // Verda "1x AMD 7900XTX"
}

// noise are tokens that carry no identity: vendor and product-line words, memory types, and
// the words providers add for editions, cooling, confidential computing (Verda "CC") and price
// tiers ("-spot" names).
var noise = map[string]bool{
	"NVIDIA": true, "TESLA": true, "GEFORCE": true, "AMD": true, "INSTINCT": true, "QUADRO": true, "RADEON": true,
	"Q": true, "MAX": true, "GPU": true, "GENERATION": true, "BLACKWELL": true, "SERVER": true,
	"WORKSTATION": true, "WS": true, "EDITION": true, "SE": true, "AC": true, "GB": true, "LHR": true,
	"CC": true, "AIR": true, "LIQUID": true, "COOLED": true, "SPOT": true,
	"HBM2": true, "HBM2E": true, "HBM3E": true, "GDDR6": true, "GDDR6X": true, "GDDR7": true,
}

var (
	nonAlnum  = regexp.MustCompile(`[^A-Z0-9.]+`)
	memRe     = regexp.MustCompile(`^(\d+(?:\.\d+)?)GB?$`)
	numRe     = regexp.MustCompile(`^\d+(?:\.\d+)?$`)
	countRe   = regexp.MustCompile(`^\d+X$`)
	rtxRe     = regexp.MustCompile(`^(RTX|GTX)(\d+)([A-Z]*)$`)
	rtxAlphaR = regexp.MustCompile(`^RTX([A-Z]\d+)$`)
	proRe     = regexp.MustCompile(`^PRO(\d+)$`)
	adaRe     = regexp.MustCompile(`^(\d+)(ADA)$`)
	radeonRe  = regexp.MustCompile(`^(\d{4})(XTX|XT)$`)
	glued     = regexp.MustCompile(`^([A-Z]+\d+[A-Z]?)(NVL|PCIE|SXM\d*)$`)
	slugCount = regexp.MustCompile(`^([A-Z0-9]*\d[A-Z0-9]*)X(\d{1,3})$`)
	sxmRe     = regexp.MustCompile(`^SXM\d*[A-Z]*$`)
	rackNVLRe = regexp.MustCompile(`^NVL\d+$`)
)

// suffixes are the words glued to a model number ("RTX3080TI", "RTX4080SUPER", "RTX6000ADA",
// "RTX3060TILHR").
var suffixes = []string{"SUPER", "ADA", "LHR", "TI"}

// vendorPrefixes are the vendor words glued to a model ("teslav100", "geforcertx4090").
var vendorPrefixes = []string{"GEFORCE", "TESLA", "QUADRO", "RADEON"}

// splitSuffix splits the letters after a model number into suffixes, the rest kept whole.
func splitSuffix(s string) []string {
	var out []string
	for s != "" {
		i := slices.IndexFunc(suffixes, func(w string) bool { return strings.HasPrefix(s, w) })
		if i < 0 {
			return append(out, s)
		}
		out, s = append(out, suffixes[i]), s[len(suffixes[i]):]
	}
	return out
}

func parseName(raw string) parsedName {
	var p parsedName
	fields := strings.Fields(nonAlnum.ReplaceAllString(strings.ToUpper(raw), " "))
	// Split glued spellings ("RTX6000ADA", "6000ADA", "H100NVL", "teslav100", DigitalOcean's
	// "h100x8" of a slug) into their parts first.
	var toks []string
	count := 0 // GPUs glued to the model in a slug, whose memory is then the slug's total
	for _, f := range fields {
		f = strings.Trim(f, ".")
		for _, v := range vendorPrefixes {
			if len(f) > len(v) && strings.HasPrefix(f, v) {
				f = f[len(v):]
			}
		}
		if m := slugCount.FindStringSubmatch(f); m != nil && !rtxRe.MatchString(f) && !rtxAlphaR.MatchString(f) {
			count, _ = strconv.Atoi(m[2])
			f = m[1]
			if _, ok := familyKeys[f+"X"]; ok { // mi300x8: an MI300X, not an "MI300"
				f += "X"
			}
		}
		switch {
		case f == "":
		case rtxRe.MatchString(f):
			m := rtxRe.FindStringSubmatch(f)
			toks = append(toks, m[1], m[2])
			toks = append(toks, splitSuffix(m[3])...)
		case rtxAlphaR.MatchString(f):
			toks = append(toks, "RTX", rtxAlphaR.FindStringSubmatch(f)[1])
		case proRe.MatchString(f):
			toks = append(toks, "PRO", proRe.FindStringSubmatch(f)[1])
		case adaRe.MatchString(f):
			m := adaRe.FindStringSubmatch(f)
			toks = append(toks, m[1], m[2])
		case radeonRe.MatchString(f):
			m := radeonRe.FindStringSubmatch(f)
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
		case t == "NVLINK":
			p.nvlink = true
		case rackNVLRe.MatchString(t): // NVL72: rack-scale NVLink of GB200/GB300, not a card form
		case t == "HBM3":
			p.hbm3 = true
		case t == "MIG":
			p.mig = true
		case t == "MAX" && i+1 < len(toks) && toks[i+1] == "Q": // Max-Q, the 300 W RTX PRO 6000
			rest = append(rest, "MAXQ")
			i++
		case t == "WITH" && i+2 < len(toks) && toks[i+2] == "CPU": // Nebius "L40S with Intel CPU"
			i += 2
		case noise[t]:
		default:
			rest = append(rest, t)
		}
	}
	if count > 1 {
		p.memGB /= float64(count)
	}
	p.key = strings.Join(rest, " ")
	p.family = familyKeys[p.key]
	return p
}
