// Package gpus is gpucost's catalog of GPU models: canonical names, the specs the optimizer
// normalizes throughput with (VRAM, dense BF16/FP16 tensor TFLOPS, memory bandwidth, FP8), form
// factor and NVLink capability, and Resolve, which maps every provider spelling of a GPU to one
// catalog model.
//
// Canonical names are upper case, dash separated, and carry the form factor where the family
// has more than one (H100-SXM-80GB, H100-PCIE-80GB, H100-NVL-94GB: different products with
// different prices and interconnects), then the marketing VRAM per GPU.
//
// Specs come from ../shared/reference/gpus.md (section 2) unless a comment on the row says
// "unverified": those figures are vendor datasheet numbers quoted from memory, not re-checked
// against a source, and should be confirmed before anyone relies on them to the percent.
//
// gpus imports nothing of gpucost. The catalog is read-only: every function returns copies.
package gpus

import (
	"slices"
	"strings"
)

// FormFactor is the physical form of a GPU, which bounds how it can be interconnected.
type FormFactor string

// Form factors.
const (
	SXM      FormFactor = "sxm"      // socketed module on an HGX/DGX board (NVLink, usually NVSwitch); also Grace superchips
	PCIe     FormFactor = "pcie"     // PCIe add-in card; NVLink only through a bridge, when the card has one
	NVL      FormFactor = "nvl"      // PCIe dual-card product sold with NVLink bridges (H100 NVL, H200 NVL)
	OAM      FormFactor = "oam"      // OCP accelerator module (AMD MI300X)
	Consumer FormFactor = "consumer" // GeForce / TITAN cards
)

// Model is one catalog GPU.
type Model struct {
	Name             string     `json:"name"`   // canonical, e.g. H100-SXM-80GB
	Family           string     `json:"family"` // e.g. H100, A100, RTX 4090
	VRAMGB           float64    `json:"vram_gb"`
	FormFactor       FormFactor `json:"form_factor"`
	NVLink           bool       `json:"nvlink"`             // can be NVLinked at all (bridge or switch)
	DenseTFLOPS      float64    `json:"dense_tflops"`       // dense BF16/FP16 tensor TFLOPS; FP32-accumulate rate for GeForce
	MemBandwidthGBps float64    `json:"mem_bandwidth_gbps"` // GB/s
	FP8              bool       `json:"fp8"`                // hardware FP8 tensor support
}

// catalog returns the catalog rows. Kept as a function so nothing outside can mutate the table.
func catalog() []Model {
	return []Model{
		// Blackwell.
		{Name: "B200-SXM-180GB", Family: "B200", VRAMGB: 180, FormFactor: SXM, NVLink: true, DenseTFLOPS: 2250, MemBandwidthGBps: 8000, FP8: true},
		// B300: 288 GB HBM3e marketing (RunPod lists 288, CoreWeave 270 visible). Unverified: TFLOPS
		// and bandwidth assumed equal to B200 (Blackwell Ultra raises FP4, not BF16).
		{Name: "B300-SXM-288GB", Family: "B300", VRAMGB: 288, FormFactor: SXM, NVLink: true, DenseTFLOPS: 2250, MemBandwidthGBps: 8000, FP8: true},
		// GB200 NVL72: 186 GB per GPU as CoreWeave lists it; 2,500 dense from gpus.md; bandwidth unverified.
		{Name: "GB200-186GB", Family: "GB200", VRAMGB: 186, FormFactor: SXM, NVLink: true, DenseTFLOPS: 2500, MemBandwidthGBps: 8000, FP8: true},
		// GB300 NVL72: 288 GB marketing (CoreWeave shows 279). Unverified: TFLOPS and bandwidth.
		{Name: "GB300-288GB", Family: "GB300", VRAMGB: 288, FormFactor: SXM, NVLink: true, DenseTFLOPS: 2500, MemBandwidthGBps: 8000, FP8: true},
		// Unverified: RTX PRO 6000 Blackwell (server/workstation) dense BF16 ~500 with FP32 accumulate.
		{Name: "RTX-PRO-6000-96GB", Family: "RTX PRO 6000", VRAMGB: 96, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 500, MemBandwidthGBps: 1792, FP8: true},
		{Name: "RTX-5090-32GB", Family: "RTX 5090", VRAMGB: 32, FormFactor: Consumer, NVLink: false, DenseTFLOPS: 209, MemBandwidthGBps: 1792, FP8: true}, // FP32-acc half rate inferred (gpus.md: verify)

		// Hopper.
		{Name: "H200-SXM-141GB", Family: "H200", VRAMGB: 141, FormFactor: SXM, NVLink: true, DenseTFLOPS: 989, MemBandwidthGBps: 4800, FP8: true},
		// Unverified: H200 NVL dense ~835 (1,671 sparse), 4.8 TB/s.
		{Name: "H200-NVL-141GB", Family: "H200", VRAMGB: 141, FormFactor: NVL, NVLink: true, DenseTFLOPS: 835, MemBandwidthGBps: 4800, FP8: true},
		{Name: "H100-SXM-80GB", Family: "H100", VRAMGB: 80, FormFactor: SXM, NVLink: true, DenseTFLOPS: 989, MemBandwidthGBps: 3350, FP8: true},
		{Name: "H100-PCIE-80GB", Family: "H100", VRAMGB: 80, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 756, MemBandwidthGBps: 2000, FP8: true},
		{Name: "H100-NVL-94GB", Family: "H100", VRAMGB: 94, FormFactor: NVL, NVLink: true, DenseTFLOPS: 835, MemBandwidthGBps: 3900, FP8: true}, // gpus.md: not re-verified
		// Unverified: GH200 96 GB HBM3 at 4.0 TB/s, H100 compute (989 dense).
		{Name: "GH200-96GB", Family: "GH200", VRAMGB: 96, FormFactor: SXM, NVLink: true, DenseTFLOPS: 989, MemBandwidthGBps: 4000, FP8: true},

		// Ada Lovelace.
		{Name: "L40S-48GB", Family: "L40S", VRAMGB: 48, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 362, MemBandwidthGBps: 864, FP8: true},
		// Unverified: L40 dense 181 (362 sparse).
		{Name: "L40-48GB", Family: "L40", VRAMGB: 48, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 181, MemBandwidthGBps: 864, FP8: true},
		{Name: "L4-24GB", Family: "L4", VRAMGB: 24, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 121, MemBandwidthGBps: 300, FP8: true},
		// Unverified: RTX 6000 Ada dense 364 (728 sparse), 960 GB/s.
		{Name: "RTX-6000-ADA-48GB", Family: "RTX 6000 Ada", VRAMGB: 48, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 364, MemBandwidthGBps: 960, FP8: true},
		// Unverified: RTX 4000 Ada dense ~107, 360 GB/s; RTX 2000 Ada dense ~48, 224 GB/s.
		// Unverified: RTX 5000 Ada dense ~130, 576 GB/s.
		{Name: "RTX-5000-ADA-32GB", Family: "RTX 5000 Ada", VRAMGB: 32, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 130, MemBandwidthGBps: 576, FP8: true},
		{Name: "RTX-4000-ADA-20GB", Family: "RTX 4000 Ada", VRAMGB: 20, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 107, MemBandwidthGBps: 360, FP8: true},
		{Name: "RTX-2000-ADA-16GB", Family: "RTX 2000 Ada", VRAMGB: 16, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 48, MemBandwidthGBps: 224, FP8: true},
		{Name: "RTX-4090-24GB", Family: "RTX 4090", VRAMGB: 24, FormFactor: Consumer, NVLink: false, DenseTFLOPS: 165, MemBandwidthGBps: 1008, FP8: true},

		// Ampere.
		{Name: "A100-SXM-80GB", Family: "A100", VRAMGB: 80, FormFactor: SXM, NVLink: true, DenseTFLOPS: 312, MemBandwidthGBps: 2039},
		{Name: "A100-SXM-40GB", Family: "A100", VRAMGB: 40, FormFactor: SXM, NVLink: true, DenseTFLOPS: 312, MemBandwidthGBps: 1555},
		{Name: "A100-PCIE-80GB", Family: "A100", VRAMGB: 80, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 312, MemBandwidthGBps: 1935},
		{Name: "A100-PCIE-40GB", Family: "A100", VRAMGB: 40, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 312, MemBandwidthGBps: 1555},
		{Name: "A40-48GB", Family: "A40", VRAMGB: 48, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 149.7, MemBandwidthGBps: 696},
		{Name: "A10-24GB", Family: "A10", VRAMGB: 24, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 125, MemBandwidthGBps: 600}, // tensor figure not re-verified (gpus.md)
		// Unverified: A30 dense 165, 933 GB/s, NVLink bridge.
		{Name: "A30-24GB", Family: "A30", VRAMGB: 24, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 165, MemBandwidthGBps: 933},
		{Name: "RTX-A6000-48GB", Family: "RTX A6000", VRAMGB: 48, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 155, MemBandwidthGBps: 768}, // tensor figure not re-verified (gpus.md)
		// Unverified: RTX A5000 dense ~111, 768 GB/s, NVLink bridge; RTX A4000 dense ~77, 448 GB/s.
		{Name: "RTX-A5000-24GB", Family: "RTX A5000", VRAMGB: 24, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 111, MemBandwidthGBps: 768},
		// Unverified: RTX A4500 dense ~95, 640 GB/s, NVLink bridge.
		{Name: "RTX-A4500-20GB", Family: "RTX A4500", VRAMGB: 20, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 95, MemBandwidthGBps: 640},
		{Name: "RTX-A4000-16GB", Family: "RTX A4000", VRAMGB: 16, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 77, MemBandwidthGBps: 448},
		{Name: "RTX-3090-24GB", Family: "RTX 3090", VRAMGB: 24, FormFactor: Consumer, NVLink: true, DenseTFLOPS: 71, MemBandwidthGBps: 936}, // tensor figures not re-verified (gpus.md)
		// Unverified: RTX 3070 ~20 dense FP32-acc, 448 GB/s.
		{Name: "RTX-3070-8GB", Family: "RTX 3070", VRAMGB: 8, FormFactor: Consumer, NVLink: false, DenseTFLOPS: 20, MemBandwidthGBps: 448},

		// Turing, Volta, Pascal. All unverified: datasheet figures from memory.
		{Name: "QUADRO-RTX-6000-24GB", Family: "Quadro RTX 6000", VRAMGB: 24, FormFactor: PCIe, NVLink: true, DenseTFLOPS: 130, MemBandwidthGBps: 672},
		{Name: "TITAN-RTX-24GB", Family: "TITAN RTX", VRAMGB: 24, FormFactor: Consumer, NVLink: true, DenseTFLOPS: 130, MemBandwidthGBps: 672},
		{Name: "T4-16GB", Family: "T4", VRAMGB: 16, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 65, MemBandwidthGBps: 320},
		{Name: "V100-SXM2-16GB", Family: "V100", VRAMGB: 16, FormFactor: SXM, NVLink: true, DenseTFLOPS: 125, MemBandwidthGBps: 900},
		{Name: "V100-SXM2-32GB", Family: "V100", VRAMGB: 32, FormFactor: SXM, NVLink: true, DenseTFLOPS: 125, MemBandwidthGBps: 900},
		{Name: "V100-PCIE-16GB", Family: "V100", VRAMGB: 16, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 112, MemBandwidthGBps: 900},
		{Name: "V100-PCIE-32GB", Family: "V100", VRAMGB: 32, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 112, MemBandwidthGBps: 900},
		// P40 has no tensor cores and crippled FP16: the figure is FP32 (11.8 TFLOPS).
		{Name: "P40-24GB", Family: "P40", VRAMGB: 24, FormFactor: PCIe, NVLink: false, DenseTFLOPS: 11.8, MemBandwidthGBps: 346},

		// AMD.
		{Name: "MI300X-192GB", Family: "MI300X", VRAMGB: 192, FormFactor: OAM, NVLink: false, DenseTFLOPS: 1307, MemBandwidthGBps: 5300, FP8: true},
	}
}

// models is the catalog, built once and never modified (Resolve scans it; Models copies it).
var models = catalog()

// byName indexes the catalog by canonical name. It is built once and never modified.
var byName = func() map[string]Model {
	m := make(map[string]Model, len(models))
	for _, g := range models {
		m[g.Name] = g
	}
	return m
}()

// Lookup returns the catalog model with the canonical name (case-insensitive).
func Lookup(canonical string) (Model, bool) {
	m, ok := byName[strings.ToUpper(strings.TrimSpace(canonical))]
	return m, ok
}

// Models returns every catalog model, sorted by Name.
func Models() []Model {
	ms := slices.Clone(models)
	slices.SortFunc(ms, func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
	return ms
}

// GiB is one gibibyte in decimal gigabytes, the unit of VRAM throughout gpucost.
const GiB = 1 << 30 / 1e9 // 1.073741824 GB

// MiBToGB converts mebibytes to decimal gigabytes (1 MiB = 1.048576 MB).
func MiBToGB(mib float64) float64 { return mib * 1.048576 / 1000 }
