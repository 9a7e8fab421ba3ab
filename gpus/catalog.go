// Package gpus is gpucost's catalog of GPU models: canonical names; what decides how much real
// work a GPU does (dense tensor throughput per precision, memory and bandwidth, compute
// capability and software stack, the GPU-to-GPU fabric it supports, host CPU, power); the
// software rules that say which precisions and serving engines run on it, with the reason when
// one does not (software.go); what buying one costs, sourced and dated (purchase.go); and
// Resolve, which maps every provider spelling of a GPU to one catalog model.
//
// Canonical names are upper case, dash separated, and carry the form factor where the family
// has more than one (H100-SXM-80GB, H100-PCIE-80GB, H100-NVL-94GB: different products with
// different prices and interconnects), then the marketing VRAM per GPU.
//
// Every figure is the vendor's datasheet or whitepaper number, dense (without 2:4 sparsity,
// which datasheets headline: halve those), or derived from the chip's units and clocks where
// the vendor publishes no tensor figure. Each row names its source and how well it is sourced
// (Grade); docs/gpus.md lists them all, and a test keeps that table equal to this one.
//
// gpus imports only schema of gpucost. The catalog is read-only: every function returns copies.
package gpus

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucost/gpucost/schema"
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

// Vendor makes the GPU and decides its software stack.
type Vendor string

// Vendors.
const (
	NVIDIA Vendor = "nvidia" // CUDA
	AMD    Vendor = "amd"    // ROCm
)

// Stack is the vendor's compute software the engines build on.
func (v Vendor) Stack() string {
	if v == AMD {
		return "rocm"
	}
	return "cuda"
}

// Topology is the GPU-to-GPU fabric a GPU model supports.
type Topology string

// Topologies.
const (
	TopologyNone Topology = "none" // no GPU-to-GPU link: PCIe only
	// TopologyBridge: NVLink bridges join cards, Model.NVLinkDomain at a time (pairs; four
	// for H200 NVL). A cloud offer rarely says whether the bridges are fitted.
	TopologyBridge Topology = "bridge"
	// TopologyHybridCubeMesh: the 8 SXM2 modules of a DGX-1 board; some pairs have two links,
	// some one, some none (not all-to-all), so all-reduce is slower than on NVSwitch.
	TopologyHybridCubeMesh Topology = "hybrid_cube_mesh"
	// TopologyNVSwitch: all-to-all NVLink through NVSwitch chips, Model.NVLinkDomain GPUs
	// (8 on an HGX board, 72 in an NVL72 rack, up to 256 with the NVLink Switch System).
	TopologyNVSwitch Topology = "nvswitch"
	// TopologyInfinityFabric: AMD's 8-GPU fully connected mesh of OAM modules.
	TopologyInfinityFabric Topology = "infinity_fabric"
)

// CPUArch is the instruction set of a GPU's host CPU, where the product fixes it.
type CPUArch string

// Host CPU architectures.
const (
	AnyHost CPUArch = ""        // a PCIe card or board in any server: x86_64 in every cloud offer seen
	ARM64   CPUArch = "aarch64" // Grace (GH200, GB200, GB300): x86-only containers and wheels fail
)

// Grade says how well a row's figures are sourced.
type Grade string

// Grades.
const (
	Confirmed Grade = "confirmed" // two or more independent copies of the vendor's figures agree
	OneSource Grade = "one source"
	Derived   Grade = "derived"  // units × boost clock × per-unit rate, checked against one vendor figure
	Recalled  Grade = "recalled" // the datasheet value as remembered; no copy of the datasheet was found
	Disputed  Grade = "disputed" // sources disagree; the row takes the vendor's datasheet figure
)

// Capability is an NVIDIA compute capability (sm_XY): zero for other vendors.
type Capability struct{ Major, Minor int }

// String is "8.9", or "" for zero.
func (c Capability) String() string {
	if c == (Capability{}) {
		return ""
	}
	return fmt.Sprintf("%d.%d", c.Major, c.Minor)
}

// MarshalText writes String, so JSON and YAML show "8.9".
func (c Capability) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads what MarshalText writes ("" is zero).
func (c *Capability) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*c = Capability{}
		return nil
	}
	v, err := ParseCapability(string(b))
	*c = v
	return err
}

// AtLeast reports whether c is major.minor or newer.
func (c Capability) AtLeast(major, minor int) bool {
	return c.Major > major || (c.Major == major && c.Minor >= minor)
}

// ParseCapability reads "8.0" or "sm_80".
func ParseCapability(s string) (Capability, error) {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "sm_")
	var c Capability
	if n, err := fmt.Sscanf(t, "%d.%d", &c.Major, &c.Minor); err == nil && n == 2 && c.Major > 0 && c.Minor >= 0 && c.Minor < 10 {
		return c, nil
	}
	if len(t) == 2 || len(t) == 3 {
		if n, err := fmt.Sscanf(t, "%d", &c.Major); err == nil && n == 1 && c.Major >= 10 {
			return Capability{c.Major / 10, c.Major % 10}, nil
		}
	}
	return Capability{}, fmt.Errorf("compute capability %q: want major.minor such as 8.0 (or sm_80)", s)
}

// Throughput is dense tensor (matrix) throughput per precision, in TFLOPS (TOPS for INT8); 0
// means the GPU has no hardware path for it. FP32 is the vector (CUDA core) rate. For GeForce
// cards FP16 is the rate with FP32 accumulate, as training and BF16 (which always accumulates
// in FP32) get it; inference kernels that accumulate in FP16 run twice as fast.
type Throughput struct {
	FP32 float64 `json:"fp32"`
	TF32 float64 `json:"tf32"`
	FP16 float64 `json:"fp16"`
	BF16 float64 `json:"bf16"`
	FP8  float64 `json:"fp8"`
	INT8 float64 `json:"int8"`
	FP4  float64 `json:"fp4"`
}

// Model is one catalog GPU.
type Model struct {
	Name   string `json:"name"`   // canonical, e.g. H100-SXM-80GB
	Family string `json:"family"` // e.g. H100, A100, RTX 4090
	Vendor Vendor `json:"vendor"`
	Arch   string `json:"arch"` // e.g. Hopper, Ada, CDNA3
	// Capability is the NVIDIA compute capability; GFX the AMD target (gfx942). One is set.
	Capability       Capability `json:"compute_capability"`
	GFX              string     `json:"gfx,omitempty"`
	VRAMGB           float64    `json:"vram_gb"`
	MemBandwidthGBps float64    `json:"mem_bandwidth_gbps"`
	FormFactor       FormFactor `json:"form_factor"`
	TFLOPS           Throughput `json:"dense_tflops"`
	Topology         Topology   `json:"topology"`
	// NVLinkDomain is the most GPUs one NVLink (or Infinity Fabric) domain of this model
	// joins: 1 without a fabric, 2 for bridged pairs, 8 on an HGX board, 72 in an NVL72 rack.
	NVLinkDomain int `json:"nvlink_domain"`
	// BoardFabric says the fabric comes with the product: several of these GPUs in one node
	// are always joined by it (SXM modules live on NVLink boards, OAM modules on Infinity
	// Fabric, NVL cards are sold with their bridges), so a source that names the form names
	// the fabric. Other bridgeable cards (the bridges may not be fitted), and Grace superchips
	// (linked only through an external NVLink Switch System), are not.
	BoardFabric bool `json:"board_fabric"`
	// PeerToPeer is PCIe peer-to-peer between cards under the stock driver; GeForce RTX 40
	// and 50 have none, so multi-GPU traffic without a fabric goes through host memory.
	PeerToPeer bool    `json:"pcie_peer_to_peer"`
	HostCPU    CPUArch `json:"host_cpu,omitempty"`
	TDPWatts   int     `json:"tdp_watts"`
	Source     string  `json:"source"`
	Grade      Grade   `json:"grade"`
}

// CapabilityString is the compute capability ("8.9") or the AMD target ("gfx942").
func (m Model) CapabilityString() string {
	if m.GFX != "" {
		return m.GFX
	}
	return m.Capability.String()
}

// Linkable reports whether GPUs of this model can be joined by a GPU-to-GPU fabric at all.
func (m Model) Linkable() bool { return m.Topology != TopologyNone }

// BoardIntraNode is the intra-node class of the model's own fabric: NVSwitch on HGX boards and
// NVL72 racks, NVLink for V100's hybrid cube mesh and for bridges, Infinity Fabric on AMD
// boards, PCIe without one. It is what a node of several of these GPUs has when BoardFabric.
func (m Model) BoardIntraNode() schema.IntraNode {
	switch m.Topology {
	case TopologyNVSwitch:
		return schema.IntraNVSwitch
	case TopologyInfinityFabric:
		return schema.IntraInfinityFabric
	case TopologyNone:
		return schema.IntraPCIe
	}
	return schema.IntraNVLink
}

// Sources of the catalog rows, by short name. docs/gpus.md says where each is found.
const (
	srcB  = "NVIDIA Blackwell datasheets; Blackwell per-GPU tables (verda, glennklockwood); MLPerf v6.0/v6.1 system descriptions"
	srcBU = "NVIDIA Blackwell Ultra per-GPU tables (verda, glennklockwood); GB300 NVL72 rack figures"
	srcH  = "NVIDIA H100/H200 datasheets; AnandTech SC23 table; MLPerf v4.1 H200 system description"
	srcHN = "NVIDIA H100 NVL / H200 NVL product briefs (one copy each)"
	srcGH = "NVIDIA GH200 product page; compute as H100 SXM"
	srcA  = "NVIDIA A100, A30, A40, A10 datasheets (astroC86, WZ gpu-specs, GPUInfo copies)"
	srcAD = "NVIDIA Ada whitepaper v2.1 and Ada ProViz whitepaper; L40S/L4 datasheets"
	srcGA = "NVIDIA GA102 whitepaper (Appendix A); RTX A-series datasheets"
	srcTU = "NVIDIA Turing whitepaper; T4 datasheet"
	srcV  = "NVIDIA Volta whitepaper; V100 datasheet"
	srcP  = "NVIDIA Tesla P40 datasheet"
	srcGB = "NVIDIA Blackwell RTX specs: 3,352 / 4,000 AI TOPS (FP4 sparse) ÷ 8 with 170 / 188 SMs"
	srcMI = "AMD Instinct MI300X datasheet; MI325X tables with the same compute"

	srcMQ  = "RTX PRO 6000 Max-Q: 300 W, 110.1 TFLOPS FP32, 2,288 MHz boost (technical.city, Fixstars); tensor rates 188 SMs × that clock × the RTX PRO 6000's per-SM rates"
	srcPRO = "NVIDIA RTX PRO Blackwell datasheets as remembered, no copy found: 1,247 / 1,687 / 2,064 AI TOPS (FP4 sparse) ÷ 8 for FP16, FP32 a quarter of that as on the RTX PRO 6000"
	srcGF  = "NVIDIA GA102 and Ada whitepapers' GeForce tables (GPUInfo copy)"
	srcGFd = "SMs × boost clock × the Ada / Blackwell RTX per-SM rates (4080 SUPER 80 × 2.55 GHz, 4070 Ti 60 × 2.61 GHz, 5080 84 × 2.62 GHz); gpuhunt memory"
	srcSFF = "NVIDIA RTX 4000 SFF Ada datasheet (GPUInfo copy, which misstates 130 W); technical.city (70 W, 19.17 TFLOPS)"
	srcA2  = "NVIDIA RTX A2000 datasheet as remembered, no copy found (6 and 12 GB versions)"
	srcA16 = "NVIDIA A16 datasheet as remembered, no copy found; gpuhunt memory (16 GB per GPU, a quarter of the board)"
	srcOld = "NVIDIA GeForce specifications as remembered, no copy found (GTX 1070 1,920 cores at 1.68 GHz; RTX 3060 Ti 38 SMs at 1.665 GHz × the GA10x per-SM rate)"
	srcM35 = "AMD Instinct MI355X (aiwiki: 288 GB, 8 TB/s, 1,400 W) and MI350X (wccftech Hot Chips 2025: 1,000 W, 2.2 vs 2.4 GHz, figures scaled by it); whether 2.5 / 5 PF are dense is disputed (yobitel)"
	srcRX  = "AMD Radeon RX 7900 XTX specifications as remembered, no copy found; gfx1100 as the Radeon PRO W7900 (vLLM ROCm docs)"
)

// catalog returns the catalog rows. Kept as a function so nothing outside can mutate the table.
// Figures per row: VRAM (marketing GB), memory bandwidth (GB/s), dense TFLOPS FP32 / TF32 /
// FP16 / BF16 / FP8 / INT8 / FP4, fabric and its domain, TDP.
func catalog() []Model {
	nv := func(arch string, major, minor int) Model {
		return Model{Vendor: NVIDIA, Arch: arch, Capability: Capability{major, minor}, PeerToPeer: true, Topology: TopologyNone, NVLinkDomain: 1}
	}
	row := func(base Model, name, family string, vram, bw float64, ff FormFactor, t Throughput, tdp int, src string, g Grade) Model {
		base.Name, base.Family, base.VRAMGB, base.MemBandwidthGBps, base.FormFactor, base.TFLOPS, base.TDPWatts, base.Source, base.Grade =
			name, family, vram, bw, ff, t, tdp, src, g
		return base
	}
	fabric := func(m Model, t Topology, domain int, board bool) Model {
		m.Topology, m.NVLinkDomain, m.BoardFabric = t, domain, board
		return m
	}
	arm := func(m Model) Model { m.HostCPU = ARM64; return m }
	noP2P := func(m Model) Model { m.PeerToPeer = false; return m }
	hgx := func(m Model) Model { return fabric(m, TopologyNVSwitch, 8, true) }
	pairs := func(m Model) Model { return fabric(m, TopologyBridge, 2, false) }

	blackwell, ultra, rtxBlackwell := nv("Blackwell", 10, 0), nv("Blackwell Ultra", 10, 3), nv("Blackwell", 12, 0)
	hopper, ada, ampere, ga100 := nv("Hopper", 9, 0), nv("Ada", 8, 9), nv("Ampere", 8, 6), nv("Ampere", 8, 0)
	turing, volta, pascal := nv("Turing", 7, 5), nv("Volta", 7, 0), nv("Pascal", 6, 1)
	cdna3 := Model{Vendor: AMD, Arch: "CDNA3", GFX: "gfx942", PeerToPeer: true}
	cdna4 := Model{Vendor: AMD, Arch: "CDNA4", GFX: "gfx950", PeerToPeer: true}
	rdna3 := Model{Vendor: AMD, Arch: "RDNA3", GFX: "gfx1100", PeerToPeer: true, Topology: TopologyNone, NVLinkDomain: 1}
	infinity := func(m Model) Model { return fabric(m, TopologyInfinityFabric, 8, true) }

	return []Model{
		// Blackwell. B300/GB300 cut INT8 to ~150 TOPS: send them FP8 or FP4 builds, not W8A8.
		hgx(row(blackwell, "B200-SXM-180GB", "B200", 180, 8000, SXM, Throughput{80, 1100, 2250, 2250, 4500, 4500, 9000}, 1000, srcB, Confirmed)),
		hgx(row(ultra, "B300-SXM-288GB", "B300", 288, 8000, SXM, Throughput{75, 1100, 2250, 2250, 4500, 150, 13500}, 1100, srcBU, Disputed)),
		arm(fabric(row(blackwell, "GB200-186GB", "GB200", 186, 8000, SXM, Throughput{90, 1250, 2500, 2500, 5000, 5000, 10000}, 1200, srcB, Confirmed), TopologyNVSwitch, 72, true)),
		arm(fabric(row(ultra, "GB300-288GB", "GB300", 288, 8000, SXM, Throughput{80, 1250, 2500, 2500, 5000, 165, 15000}, 1400, srcBU, Confirmed), TopologyNVSwitch, 72, true)),
		// RTX PRO 6000: the 600 W Workstation and Server Editions; the Max-Q Workstation Edition is
		// the same 188 SMs and 96 GB held to 300 W, so a lower clock and its own row.
		row(rtxBlackwell, "RTX-PRO-6000-96GB", "RTX PRO 6000", 96, 1792, PCIe, Throughput{125, 250, 500, 500, 1000, 1000, 2000}, 600, srcGB, Derived),
		row(rtxBlackwell, "RTX-PRO-6000-MAX-Q-96GB", "RTX PRO 6000 Max-Q", 96, 1792, PCIe, Throughput{110, 220, 440, 440, 880, 880, 1760}, 300, srcMQ, Derived),
		row(rtxBlackwell, "RTX-PRO-5000-48GB", "RTX PRO 5000", 48, 1344, PCIe, Throughput{64.5, 129, 258, 258, 516, 516, 1032}, 300, srcPRO, Recalled),
		row(rtxBlackwell, "RTX-PRO-4500-32GB", "RTX PRO 4500", 32, 896, PCIe, Throughput{52.7, 105.4, 210.9, 210.9, 421.8, 421.8, 843.5}, 200, srcPRO, Recalled),
		row(rtxBlackwell, "RTX-PRO-4000-24GB", "RTX PRO 4000", 24, 672, PCIe, Throughput{39, 77.9, 155.9, 155.9, 311.8, 311.8, 623.5}, 140, srcPRO, Recalled),
		noP2P(row(rtxBlackwell, "RTX-5090-32GB", "RTX 5090", 32, 1792, Consumer, Throughput{104.8, 105, 209.5, 209.5, 419, 838, 1676}, 575, srcGB, Derived)),
		noP2P(row(rtxBlackwell, "RTX-5080-16GB", "RTX 5080", 16, 960, Consumer, Throughput{56.3, 56.3, 112.7, 112.7, 225, 451, 901}, 360, srcGFd, Derived)),

		// Hopper.
		hgx(row(hopper, "H200-SXM-141GB", "H200", 141, 4800, SXM, Throughput{67, 495, 989, 989, 1979, 1979, 0}, 700, srcH, Confirmed)),
		fabric(row(hopper, "H200-NVL-141GB", "H200", 141, 4800, NVL, Throughput{60, 418, 835, 835, 1671, 1671, 0}, 600, srcHN, OneSource), TopologyBridge, 4, true),
		hgx(row(hopper, "H100-SXM-80GB", "H100", 80, 3350, SXM, Throughput{67, 495, 989, 989, 1979, 1979, 0}, 700, srcH, Confirmed)),
		pairs(row(hopper, "H100-PCIE-80GB", "H100", 80, 2000, PCIe, Throughput{51, 378, 756, 756, 1513, 1513, 0}, 350, srcH, Confirmed)),
		fabric(row(hopper, "H100-NVL-94GB", "H100", 94, 3900, NVL, Throughput{60, 418, 835, 835, 1671, 1671, 0}, 400, srcHN, OneSource), TopologyBridge, 2, true),
		// One superchip per node in the clouds, nodes joined by InfiniBand or Ethernet; an NVLink
		// domain only through the NVLink Switch System (DGX GH200).
		arm(fabric(row(hopper, "GH200-96GB", "GH200", 96, 4000, SXM, Throughput{67, 495, 989, 989, 1979, 1979, 0}, 1000, srcGH, OneSource), TopologyNVSwitch, 256, false)),

		// Ada Lovelace. L40 is half the L40S's tensor rate (FP32 accumulate at half rate).
		row(ada, "L40S-48GB", "L40S", 48, 864, PCIe, Throughput{91.6, 183, 362, 362, 733, 733, 0}, 350, srcAD, Confirmed),
		row(ada, "L40-48GB", "L40", 48, 864, PCIe, Throughput{90.5, 90.5, 181, 181, 362, 362, 0}, 300, srcAD, OneSource),
		row(ada, "L4-24GB", "L4", 24, 300, PCIe, Throughput{30.3, 60, 121, 121, 242, 242, 0}, 72, srcAD, Confirmed),
		row(ada, "RTX-6000-ADA-48GB", "RTX 6000 Ada", 48, 960, PCIe, Throughput{91.1, 182, 364, 364, 728, 728, 0}, 300, srcAD, OneSource),
		row(ada, "RTX-5000-ADA-32GB", "RTX 5000 Ada", 32, 576, PCIe, Throughput{65.3, 131, 261, 261, 522, 522, 0}, 250, srcAD, Derived),
		// The boost-clock derivation gives 107; the datasheet's 327 AI TFLOPS (FP8 sparse) gives 82.
		row(ada, "RTX-4000-ADA-20GB", "RTX 4000 Ada", 20, 360, PCIe, Throughput{26.7, 41, 82, 82, 164, 164, 0}, 130, srcAD, Disputed),
		// The small-form-factor card: the RTX 4000 Ada's 20 GB on 70 W, a lower clock and bandwidth.
		row(ada, "RTX-4000-SFF-ADA-20GB", "RTX 4000 SFF Ada", 20, 280, PCIe, Throughput{19.2, 38, 76.7, 76.7, 153, 153, 0}, 70, srcSFF, Confirmed),
		row(ada, "RTX-2000-ADA-16GB", "RTX 2000 Ada", 16, 224, PCIe, Throughput{12, 24, 48, 48, 96, 96, 0}, 70, srcAD, Derived),
		noP2P(row(ada, "RTX-4090-24GB", "RTX 4090", 24, 1008, Consumer, Throughput{82.6, 82.6, 165.2, 165.2, 330, 661, 0}, 450, srcAD, Confirmed)),
		noP2P(row(ada, "RTX-4080-SUPER-16GB", "RTX 4080 SUPER", 16, 736, Consumer, Throughput{52.2, 52.2, 104.4, 104.4, 209, 418, 0}, 320, srcGFd, Derived)),
		noP2P(row(ada, "RTX-4080-16GB", "RTX 4080", 16, 717, Consumer, Throughput{48.7, 48.7, 97.5, 97.5, 195, 390, 0}, 320, srcGF, OneSource)),
		// The clock derivation gives 160.4 with FP16 accumulate; GPUInfo's copy says 154.8.
		noP2P(row(ada, "RTX-4070-TI-12GB", "RTX 4070 Ti", 12, 504, Consumer, Throughput{40.1, 40.1, 80.2, 80.2, 160.4, 321, 0}, 285, srcGFd, Disputed)),

		// Ampere. No FP8 anywhere: FP8 checkpoints run only as weight-only dequantization.
		hgx(row(ga100, "A100-SXM-80GB", "A100", 80, 2039, SXM, Throughput{19.5, 156, 312, 312, 0, 624, 0}, 400, srcA, Confirmed)),
		hgx(row(ga100, "A100-SXM-40GB", "A100", 40, 1555, SXM, Throughput{19.5, 156, 312, 312, 0, 624, 0}, 400, srcA, Confirmed)),
		pairs(row(ga100, "A100-PCIE-80GB", "A100", 80, 1935, PCIe, Throughput{19.5, 156, 312, 312, 0, 624, 0}, 300, srcA, Confirmed)),
		pairs(row(ga100, "A100-PCIE-40GB", "A100", 40, 1555, PCIe, Throughput{19.5, 156, 312, 312, 0, 624, 0}, 250, srcA, Confirmed)),
		pairs(row(ampere, "A40-48GB", "A40", 48, 696, PCIe, Throughput{37.4, 74.8, 149.7, 149.7, 0, 299, 0}, 300, srcA, Confirmed)),
		row(ampere, "A10-24GB", "A10", 24, 600, PCIe, Throughput{31.2, 62.5, 125, 125, 0, 250, 0}, 150, srcA, Confirmed),
		pairs(row(ga100, "A30-24GB", "A30", 24, 933, PCIe, Throughput{10.3, 82, 165, 165, 0, 330, 0}, 165, srcA, OneSource)),
		pairs(row(ampere, "RTX-A6000-48GB", "RTX A6000", 48, 768, PCIe, Throughput{38.7, 77.4, 154.8, 154.8, 0, 310, 0}, 300, srcGA, Confirmed)),
		pairs(row(ampere, "RTX-A5000-24GB", "RTX A5000", 24, 768, PCIe, Throughput{27.8, 55.6, 111.1, 111.1, 0, 222, 0}, 230, srcGA, OneSource)),
		pairs(row(ampere, "RTX-A4500-20GB", "RTX A4500", 20, 640, PCIe, Throughput{23.7, 47.3, 94.6, 94.6, 0, 189, 0}, 200, srcGA, OneSource)),
		row(ampere, "RTX-A4000-16GB", "RTX A4000", 16, 448, PCIe, Throughput{19.2, 38.4, 76.7, 76.7, 0, 153, 0}, 140, srcGA, Confirmed),
		row(ampere, "RTX-A2000-12GB", "RTX A2000", 12, 288, PCIe, Throughput{8, 16, 32, 32, 0, 64, 0}, 70, srcA2, Recalled),
		row(ampere, "RTX-A2000-6GB", "RTX A2000", 6, 288, PCIe, Throughput{8, 16, 32, 32, 0, 64, 0}, 70, srcA2, Recalled),
		// A16: four GPUs of 16 GB on one 250 W board, each a GPU of its own; the row is one of them.
		row(ampere, "A16-16GB", "A16", 16, 200, PCIe, Throughput{4.5, 9, 18, 18, 0, 36, 0}, 63, srcA16, Recalled),
		pairs(row(ampere, "RTX-3090-TI-24GB", "RTX 3090 Ti", 24, 1008, Consumer, Throughput{40, 40, 80, 80, 0, 320, 0}, 450, srcGF, OneSource)),
		pairs(row(ampere, "RTX-3090-24GB", "RTX 3090", 24, 936, Consumer, Throughput{35.6, 35.6, 71, 71, 0, 284, 0}, 350, srcGA, Confirmed)),
		row(ampere, "RTX-3080-TI-12GB", "RTX 3080 Ti", 12, 912, Consumer, Throughput{34.1, 34.1, 68.2, 68.2, 0, 273, 0}, 350, srcGF, OneSource),
		row(ampere, "RTX-3080-10GB", "RTX 3080", 10, 760, Consumer, Throughput{29.8, 29.8, 59.5, 59.5, 0, 238, 0}, 320, srcGF, OneSource),
		row(ampere, "RTX-3070-8GB", "RTX 3070", 8, 448, Consumer, Throughput{20.3, 20.3, 40.6, 40.6, 0, 163, 0}, 220, srcGA, OneSource),
		row(ampere, "RTX-3060-TI-8GB", "RTX 3060 Ti", 8, 448, Consumer, Throughput{16.2, 16.2, 32.4, 32.4, 0, 130, 0}, 200, srcOld, Recalled),

		// Turing and Volta: FP16 tensor cores but no BF16 (and no TF32); Volta has no INT8 tensor
		// path either. Pascal has no tensor cores, and the P40 runs FP16 at 1/64 rate: none here.
		pairs(row(turing, "QUADRO-RTX-6000-24GB", "Quadro RTX 6000", 24, 672, PCIe, Throughput{16.3, 0, 130.5, 0, 0, 261, 0}, 260, srcTU, OneSource)),
		pairs(row(turing, "TITAN-RTX-24GB", "TITAN RTX", 24, 672, Consumer, Throughput{16.3, 0, 130.5, 0, 0, 261, 0}, 280, srcTU, OneSource)),
		row(turing, "T4-16GB", "T4", 16, 320, PCIe, Throughput{8.1, 0, 65, 0, 0, 130, 0}, 70, srcTU, Confirmed),
		fabric(row(volta, "V100-SXM2-16GB", "V100", 16, 900, SXM, Throughput{15.7, 0, 125, 0, 0, 0, 0}, 300, srcV, Confirmed), TopologyHybridCubeMesh, 8, true),
		fabric(row(volta, "V100-SXM2-32GB", "V100", 32, 900, SXM, Throughput{15.7, 0, 125, 0, 0, 0, 0}, 300, srcV, Confirmed), TopologyHybridCubeMesh, 8, true),
		row(volta, "V100-PCIE-16GB", "V100", 16, 900, PCIe, Throughput{14, 0, 112, 0, 0, 0, 0}, 250, srcV, Confirmed),
		row(volta, "V100-PCIE-32GB", "V100", 32, 900, PCIe, Throughput{14, 0, 112, 0, 0, 0, 0}, 250, srcV, Confirmed),
		row(pascal, "P40-24GB", "P40", 24, 346, PCIe, Throughput{11.8, 0, 0, 0, 0, 0, 0}, 250, srcP, Recalled),
		row(pascal, "GTX-1070-8GB", "GTX 1070", 8, 256, Consumer, Throughput{6.5, 0, 0, 0, 0, 0, 0}, 150, srcOld, Recalled),

		// AMD. MI325X is MI300X's compute with 256 GB at 6 TB/s. CDNA4 (MI350X, MI355X) adds FP4
		// (and FP6) and drops TF32 matrix math, as remembered: 0 here.
		infinity(row(cdna3, "MI300X-192GB", "MI300X", 192, 5300, OAM, Throughput{163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 0}, 750, srcMI, Confirmed)),
		infinity(row(cdna3, "MI325X-256GB", "MI325X", 256, 6000, OAM, Throughput{163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 0}, 1000, srcMI, Confirmed)),
		infinity(row(cdna4, "MI355X-288GB", "MI355X", 288, 8000, OAM, Throughput{157.3, 0, 2500, 2500, 5000, 5000, 10000}, 1400, srcM35, Disputed)),
		infinity(row(cdna4, "MI350X-288GB", "MI350X", 288, 8000, OAM, Throughput{144.2, 0, 2300, 2300, 4600, 4600, 9200}, 1000, srcM35, Disputed)),
		row(rdna3, "RX-7900-XTX-24GB", "RX 7900 XTX", 24, 960, Consumer, Throughput{61.4, 0, 122.8, 122.8, 0, 122.8, 0}, 355, srcRX, Recalled),
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
