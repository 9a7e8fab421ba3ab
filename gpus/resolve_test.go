package gpus_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/gpus"
)

func TestResolve(t *testing.T) {
	type want struct {
		Name    string
		Known   bool
		Snapped bool
		VRAMGB  float64
	}
	h100 := gpus.MiBToGB(81559)
	tests := []struct {
		name     string
		provider string
		raw      string
		vramGB   float64
		want     want
	}{
		// Vast.ai gpu_name values (docs/providers.md §1.6), VRAM in MiB converted to GB.
		{"vast H100 SXM 81559 MiB", "vastai", "H100 SXM", h100, want{"H100-SXM-80GB", true, true, 80}},
		{"vast H100 PCIE", "vastai", "H100 PCIE", h100, want{"H100-PCIE-80GB", true, true, 80}},
		{"vast H100 NVL", "vastai", "H100 NVL", gpus.MiBToGB(95830), want{"H100-NVL-94GB", true, true, 94}},
		{"vast A100 SXM4 80", "vastai", "A100 SXM4", gpus.MiBToGB(81920), want{"A100-SXM-80GB", true, true, 80}},
		{"vast A100 SXM4 40", "vastai", "A100 SXM4", gpus.MiBToGB(40960), want{"A100-SXM-40GB", true, true, 40}},
		{"vast A100 PCIE 40", "vastai", "A100 PCIE", gpus.MiBToGB(40960), want{"A100-PCIE-40GB", true, true, 40}},
		{"vast A100 PCIE 80", "vastai", "A100 PCIE", gpus.MiBToGB(81920), want{"A100-PCIE-80GB", true, true, 80}},
		{"vast RTX 3090", "vastai", "RTX 3090", gpus.MiBToGB(24576), want{"RTX-3090-24GB", true, true, 24}},
		{"vast RTX 4090", "vastai", "RTX 4090", gpus.MiBToGB(24564), want{"RTX-4090-24GB", true, true, 24}},
		{"vast RTX 5090", "vastai", "RTX 5090", gpus.MiBToGB(32607), want{"RTX-5090-32GB", true, true, 32}},
		{"vast RTX 6000Ada", "vastai", "RTX 6000Ada", gpus.MiBToGB(49140), want{"RTX-6000-ADA-48GB", true, true, 48}},
		{"vast Q RTX 6000", "vastai", "Q RTX 6000", gpus.MiBToGB(24576), want{"QUADRO-RTX-6000-24GB", true, true, 24}},
		{"vast Titan RTX", "vastai", "Titan RTX", gpus.MiBToGB(24576), want{"TITAN-RTX-24GB", true, true, 24}},
		{"vast Tesla P40", "vastai", "Tesla P40", gpus.MiBToGB(24576), want{"P40-24GB", true, true, 24}},
		{"vast H200", "vastai", "H200", gpus.MiBToGB(143771), want{"H200-SXM-141GB", true, true, 141}},
		{"vast H200 NVL", "vastai", "H200 NVL", gpus.MiBToGB(143771), want{"H200-NVL-141GB", true, true, 141}},
		{"vast RTX A6000", "vastai", "RTX A6000", gpus.MiBToGB(49140), want{"RTX-A6000-48GB", true, true, 48}},
		{"vast L40S", "vastai", "L40S", gpus.MiBToGB(46068), want{"L40S-48GB", true, true, 48}},
		// Memory settles what it can and no more: 32768 MiB leaves V100-PCIE-32GB and
		// V100-SXM2-32GB, two products (112 vs 125 TFLOPS, none vs a cube-mesh fabric) that
		// the name does not tell apart. The model stays unknown; its VRAM is the 32 GB both
		// rows have, snapped like a known GPU's. NVLink measured on the host proves SXM2.
		{"vast V100 32768 MiB: 32 GB, form undecided", "vastai", "Tesla V100", gpus.MiBToGB(32768), want{"", false, true, 32}},
		{"vast V100 16384 MiB: 16 GB, form undecided", "vastai", "Tesla V100", gpus.MiBToGB(16384), want{"", false, true, 16}},
		{"vast V100 with proven SXM", "vastai", "Tesla V100 SXM", gpus.MiBToGB(32768), want{"V100-SXM2-32GB", true, true, 32}},
		{"vast underscore spelling", "vastai", "H100_SXM", 80, want{"H100-SXM-80GB", true, false, 80}},
		{"vast empty name", "vastai", "", 24, want{"", false, false, 24}},
		{"vast empty name, MiB", "vastai", "", gpus.MiBToGB(8192), want{"", false, true, 8}},
		// Unknown GPUs get the market's label, not raw MiB as decimal GB (11264 MiB is 11.81).
		{"vast unknown GPU", "vastai", "GTX 1080 Ti", gpus.MiBToGB(11264), want{"", false, true, 11}},
		{"vast modded 48 GB 4090 is not a 4090", "vastai", "RTX 4090", gpus.MiBToGB(49152), want{"", false, true, 48}},
		{"vast RTX 4070 Ti", "vastai", "RTX 4070 Ti", gpus.MiBToGB(12282), want{"RTX-4070-TI-12GB", true, true, 12}},

		// RunPod ids and display names (docs/providers.md §2.5, §2.8), VRAM in GB.
		{"runpod H100 80GB HBM3 is SXM", "runpod", "NVIDIA H100 80GB HBM3", 80, want{"H100-SXM-80GB", true, false, 80}},
		{"runpod H100 PCIe", "runpod", "NVIDIA H100 PCIe", 80, want{"H100-PCIE-80GB", true, false, 80}},
		{"runpod H100 NVL", "runpod", "NVIDIA H100 NVL", 94, want{"H100-NVL-94GB", true, false, 94}},
		{"runpod display H100 SXM", "runpod", "H100 SXM", 80, want{"H100-SXM-80GB", true, false, 80}},
		{"runpod A100-SXM4-40GB", "runpod", "NVIDIA A100-SXM4-40GB", 40, want{"A100-SXM-40GB", true, false, 40}},
		{"runpod A100-SXM4-80GB", "runpod", "NVIDIA A100-SXM4-80GB", 80, want{"A100-SXM-80GB", true, false, 80}},
		{"runpod A100 80GB PCIe", "runpod", "NVIDIA A100 80GB PCIe", 80, want{"A100-PCIE-80GB", true, false, 80}},
		{"runpod display A100 SXM 40GB", "runpod", "A100 SXM 40GB", 40, want{"A100-SXM-40GB", true, false, 40}},
		{"runpod MI300X OAM", "runpod", "AMD Instinct MI300X OAM", 192, want{"MI300X-192GB", true, false, 192}},
		{"runpod RTX 4090", "runpod", "NVIDIA GeForce RTX 4090", 24, want{"RTX-4090-24GB", true, false, 24}},
		{"runpod RTX 3070", "runpod", "NVIDIA GeForce RTX 3070", 8, want{"RTX-3070-8GB", true, false, 8}},
		{"runpod B200", "runpod", "NVIDIA B200", 180, want{"B200-SXM-180GB", true, false, 180}},
		{"runpod B300 SXM6 AC", "runpod", "NVIDIA B300 SXM6 AC", 288, want{"B300-SXM-288GB", true, false, 288}},
		{"runpod H200", "runpod", "NVIDIA H200", 141, want{"H200-SXM-141GB", true, false, 141}},
		{"runpod H200 NVL 143", "runpod", "NVIDIA H200 NVL", 143, want{"H200-NVL-141GB", true, true, 141}},
		{"runpod RTX A4000", "runpod", "NVIDIA RTX A4000", 16, want{"RTX-A4000-16GB", true, false, 16}},
		{"runpod RTX A4500", "runpod", "NVIDIA RTX A4500", 20, want{"RTX-A4500-20GB", true, false, 20}},
		{"runpod RTX 6000 Ada Generation", "runpod", "NVIDIA RTX 6000 Ada Generation", 48, want{"RTX-6000-ADA-48GB", true, false, 48}},
		{"runpod RTX 2000 Ada Generation", "runpod", "NVIDIA RTX 2000 Ada Generation", 16, want{"RTX-2000-ADA-16GB", true, false, 16}},
		{"runpod V100-SXM2-16GB", "runpod", "Tesla V100-SXM2-16GB", 16, want{"V100-SXM2-16GB", true, false, 16}},
		{"runpod V100-FHHL-16GB", "runpod", "Tesla V100-FHHL-16GB", 16, want{"V100-PCIE-16GB", true, false, 16}},
		{"runpod L4", "runpod", "NVIDIA L4", 24, want{"L4-24GB", true, false, 24}},
		{"runpod L40", "runpod", "NVIDIA L40", 48, want{"L40-48GB", true, false, 48}},
		{"runpod A40", "runpod", "NVIDIA A40", 48, want{"A40-48GB", true, false, 48}},
		{"runpod A30", "runpod", "NVIDIA A30", 24, want{"A30-24GB", true, false, 24}},
		{"runpod RTX PRO 6000 server", "runpod", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 96, want{"RTX-PRO-6000-96GB", true, false, 96}},
		{"vast RTX PRO 6000 WS", "vastai", "RTX PRO 6000 WS", gpus.MiBToGB(97887), want{"RTX-PRO-6000-96GB", true, true, 96}},
		{"runpod RTX PRO 6000 workstation", "runpod", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 96, want{"RTX-PRO-6000-96GB", true, false, 96}},
		{"runpod RTX PRO 6000 display", "runpod", "RTX PRO 6000", 96, want{"RTX-PRO-6000-96GB", true, false, 96}},
		// The Max-Q card is the 300 W one: its own model, whatever the spelling of Max-Q.
		{"runpod RTX PRO 6000 Max-Q", "runpod", "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 96, want{"RTX-PRO-6000-MAX-Q-96GB", true, false, 96}},
		{"runpod RTX PRO 6000 Max-Q Workstation", "runpod", "RTX PRO 6000 Max-Q Workstation", 96, want{"RTX-PRO-6000-MAX-Q-96GB", true, false, 96}},
		{"runpod RTX PRO 6000 MaxQ display", "runpod", "RTX PRO 6000 MaxQ", 96, want{"RTX-PRO-6000-MAX-Q-96GB", true, false, 96}},
		{"runpod RTX PRO 6000 MIG slice", "runpod", "NVIDIA RTX PRO 6000 Blackwell MIG 1g.24gb", 24, want{"", false, false, 24}},
		{"runpod RTX PRO 5000", "runpod", "NVIDIA RTX PRO 5000 Blackwell", 48, want{"RTX-PRO-5000-48GB", true, false, 48}},
		{"runpod RTX PRO 4500", "runpod", "NVIDIA RTX PRO 4500 Blackwell", 32, want{"RTX-PRO-4500-32GB", true, false, 32}},
		{"runpod RTX PRO 4500 display", "runpod", "RTX PRO 4500", 32, want{"RTX-PRO-4500-32GB", true, false, 32}},
		{"runpod RTX PRO 4000", "runpod", "NVIDIA RTX PRO 4000 Blackwell", 24, want{"RTX-PRO-4000-24GB", true, false, 24}},
		{"runpod RTX 3080", "runpod", "NVIDIA GeForce RTX 3080", 10, want{"RTX-3080-10GB", true, false, 10}},
		{"runpod RTX 3080 Ti", "runpod", "NVIDIA GeForce RTX 3080 Ti", 12, want{"RTX-3080-TI-12GB", true, false, 12}},
		{"runpod RTX 3090 Ti", "runpod", "NVIDIA GeForce RTX 3090 Ti", 24, want{"RTX-3090-TI-24GB", true, false, 24}},
		{"runpod RTX 4070 Ti", "runpod", "NVIDIA GeForce RTX 4070 Ti", 12, want{"RTX-4070-TI-12GB", true, false, 12}},
		{"runpod RTX 4080", "runpod", "NVIDIA GeForce RTX 4080", 16, want{"RTX-4080-16GB", true, false, 16}},
		{"runpod RTX 4080 SUPER", "runpod", "NVIDIA GeForce RTX 4080 SUPER", 16, want{"RTX-4080-SUPER-16GB", true, false, 16}},
		{"runpod RTX 4080 SUPER display", "runpod", "RTX 4080 SUPER", 16, want{"RTX-4080-SUPER-16GB", true, false, 16}},
		{"runpod RTX 5080", "runpod", "NVIDIA GeForce RTX 5080", 16, want{"RTX-5080-16GB", true, false, 16}},
		{"runpod RTX 4000 SFF Ada", "runpod", "NVIDIA RTX 4000 SFF Ada Generation", 20, want{"RTX-4000-SFF-ADA-20GB", true, false, 20}},
		{"runpod RTX 4000 Ada is not the SFF", "runpod", "NVIDIA RTX 4000 Ada Generation", 20, want{"RTX-4000-ADA-20GB", true, false, 20}},
		{"runpod RTX A2000 6 GB", "runpod", "NVIDIA RTX A2000", 6, want{"RTX-A2000-6GB", true, false, 6}},
		{"runpod RTX A2000 12 GB", "runpod", "NVIDIA RTX A2000", 12, want{"RTX-A2000-12GB", true, false, 12}},
		{"runpod MI350X OAM", "runpod", "AMD Instinct MI350X OAM", 288, want{"MI350X-288GB", true, false, 288}},
		{"runpod MI350X display", "runpod", "MI350X", 288, want{"MI350X-288GB", true, false, 288}},
		{"runpod unknown row", "runpod", "unknown", 0, want{"", false, false, 0}},

		// Lambda descriptions and instance-type names (docs/providers.md §3.4, §3.7).
		{"lambda description SXM5", "lambda", "8x H100 (80 GB SXM5)", 0, want{"H100-SXM-80GB", true, false, 80}},
		{"lambda gpu_description PCIe", "lambda", "H100 (80 GB PCIe)", 0, want{"H100-PCIE-80GB", true, false, 80}},
		{"lambda A100 40 SXM4", "lambda", "1x A100 (40 GB SXM4)", 0, want{"A100-SXM-40GB", true, false, 40}},
		{"lambda B200 SXM6", "lambda", "8x B200 (180 GB SXM6)", 0, want{"B200-SXM-180GB", true, false, 180}},
		{"lambda GH200", "lambda", "1x GH200 (96 GB)", 0, want{"GH200-96GB", true, false, 96}},
		{"lambda A10 PCIe", "lambda", "1x A10 (24 GB PCIe)", 0, want{"A10-24GB", true, false, 24}},
		{"lambda name gpu_1x_h100_sxm5", "lambda", "gpu_1x_h100_sxm5", 0, want{"H100-SXM-80GB", true, false, 80}},
		{"lambda name gpu_8x_h100_sxm5gdr", "lambda", "gpu_8x_h100_sxm5gdr", 80, want{"H100-SXM-80GB", true, false, 80}},
		{"lambda name gpu_8x_a100_80gb_sxm4", "lambda", "gpu_8x_a100_80gb_sxm4", 0, want{"A100-SXM-80GB", true, false, 80}},
		{"lambda name gpu_1x_a6000", "lambda", "gpu_1x_a6000", 48, want{"RTX-A6000-48GB", true, false, 48}},
		{"lambda name gpu_1x_rtx6000", "lambda", "gpu_1x_rtx6000", 24, want{"QUADRO-RTX-6000-24GB", true, false, 24}},
		{"lambda H100 without form stays unknown", "lambda", "H100 80GB", 80, want{"", false, false, 80}},
		{"lambda A100 without form or memory", "lambda", "gpu_1x_a100", 0, want{"", false, false, 0}},
		{"lambda CPU type", "lambda", "4x CPU cores", 0, want{"", false, false, 0}},
		{"lambda page plan", "lambda", "NVIDIA B200 SXM6", 180, want{"B200-SXM-180GB", true, false, 180}},

		// CoreWeave page names (docs/providers.md §4.7).
		{"coreweave HGX H100", "coreweave", "NVIDIA HGX H100", 80, want{"H100-SXM-80GB", true, false, 80}},
		{"coreweave HGX H200", "coreweave", "NVIDIA HGX H200", 141, want{"H200-SXM-141GB", true, false, 141}},
		{"coreweave HGX B200", "coreweave", "NVIDIA HGX B200", 180, want{"B200-SXM-180GB", true, false, 180}},
		{"coreweave HGX B300 270", "coreweave", "NVIDIA HGX B300", 270, want{"B300-SXM-288GB", true, true, 288}},
		{"coreweave GB200 NVL72", "coreweave", "NVIDIA GB200 NVL72", 186, want{"GB200-186GB", true, false, 186}},
		{"coreweave GB300 NVL72", "coreweave", "NVIDIA GB300 NVL72", 279, want{"GB300-288GB", true, true, 288}},
		{"coreweave GH200", "coreweave", "NVIDIA GH200", 96, want{"GH200-96GB", true, false, 96}},
		{"coreweave L40S", "coreweave", "NVIDIA L40S", 48, want{"L40S-48GB", true, false, 48}},
		{"coreweave bare A100 is HGX", "coreweave", "NVIDIA A100", 80, want{"A100-SXM-80GB", true, false, 80}},
		{"coreweave RTX PRO 6000 BSE", "coreweave", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 96, want{"RTX-PRO-6000-96GB", true, false, 96}},
		{"bare A100 elsewhere stays unknown", "vastai", "A100", 80, want{"", false, false, 80}},

		// Conflicts and edges.
		{"name memory contradicts report", "runpod", "NVIDIA A100-SXM4-80GB", 40, want{"", false, false, 40}},
		{"H100 HBM3 94 GB is the NVL", "runpod", "NVIDIA H100 94GB HBM3", 94, want{"H100-NVL-94GB", true, false, 94}},
		{"case and spacing", "VastAI", "  h100   sxm ", 80, want{"H100-SXM-80GB", true, false, 80}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := gpus.Resolve(tt.provider, tt.raw, tt.vramGB)
			got := want{Name: m.Model.Name, Known: m.Known, Snapped: m.Snapped, VRAMGB: m.VRAMGB}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Resolve(%q, %q, %v) mismatch (-want +got):\n%s", tt.provider, tt.raw, tt.vramGB, diff)
			}
			if m.Known {
				if lm, ok := gpus.Lookup(m.Model.Name); !ok || lm != m.Model {
					t.Errorf("Lookup(%q) = %+v, %v; want the resolved model", m.Model.Name, lm, ok)
				}
			} else if m.Model != (gpus.Model{}) {
				t.Errorf("unknown match carries a model: %+v", m.Model)
			}
		})
	}
}

// TestResolveNewProviders: every GPU spelling the other providers use (their APIs, pages and
// ids, as docs/providers.md §7 lists them) resolves to its catalog model, or stays unknown
// where the source does not say which model it is (want ""): the form of DigitalOcean's,
// Vultr's and Verda's bare H100 / A100 / V100 names, OCI's V100 (VM.GPU3) and P100 (VM.GPU2),
// OCI's H100T, a GPU that is not an H100.
func TestResolveNewProviders(t *testing.T) {
	tests := []struct {
		provider string
		raw      string
		vramGB   float64 // per GPU, 0 = not reported
		want     string
	}{
		// Verda (DataCrunch): gpu.description and the pricing page's offer names.
		{"verda", "1x H100 SXM5 80GB", 80, "H100-SXM-80GB"},
		{"verda", "8x H200 SXM5 141GB", 141, "H200-SXM-141GB"},
		{"verda", "1x B200 SXM6 180GB", 180, "B200-SXM-180GB"},
		{"verda", "1x B200 CC SXM6 180GB", 180, "B200-SXM-180GB"},
		{"verda", "1x B300 SXM6 268GB", 0, "B300-SXM-288GB"},
		{"verda", "1x GB300 SXM6 288GB", 0, "GB300-288GB"},
		{"verda", "1x A100 SXM4 80GB", 80, "A100-SXM-80GB"},
		{"verda", "1x A100 SXM4 40GB", 40, "A100-SXM-40GB"},
		{"verda", "1x L40S 48GB", 48, "L40S-48GB"},
		{"verda", "1x RTX 6000 Ada 48GB", 48, "RTX-6000-ADA-48GB"},
		{"verda", "RTX6000 Ada 48GB", 48, "RTX-6000-ADA-48GB"},
		{"verda", "1x RTX A6000 48GB", 48, "RTX-A6000-48GB"},
		{"verda", "NVidia RTX A6000 48GB", 48, "RTX-A6000-48GB"},
		{"verda", "1x RTX PRO 6000 96GB", 96, "RTX-PRO-6000-96GB"},
		{"verda", "1x RTX PRO 6000 CC 96GB", 96, "RTX-PRO-6000-96GB"},
		{"verda", "1x AMD 7900XTX", 24, "RX-7900-XTX-24GB"},
		{"verda", "1x Tesla V100 16GB", 16, ""}, // SXM2 or PCIe: not said

		// Nebius: platform ids and the pricing page.
		{"nebius", "gpu-h100-sxm", 80, "H100-SXM-80GB"},
		{"nebius", "gpu-h200-sxm", 141, "H200-SXM-141GB"},
		{"nebius", "gpu-b200-sxm", 180, "B200-SXM-180GB"},
		{"nebius", "gpu-b200-sxm-a", 180, "B200-SXM-180GB"},
		{"nebius", "gpu-b300-sxm", 0, "B300-SXM-288GB"},
		{"nebius", "gpu-l40s-a", 48, "L40S-48GB"},
		{"nebius", "gpu-l40s-d", 48, "L40S-48GB"},
		{"nebius", "gpu-rtx6000", 0, "RTX-PRO-6000-96GB"},
		{"nebius", "NVIDIA HGX H100", 0, "H100-SXM-80GB"},
		{"nebius", "NVIDIA HGX H200", 0, "H200-SXM-141GB"},
		{"nebius", "NVIDIA HGX B200", 0, "B200-SXM-180GB"},
		{"nebius", "NVIDIA HGX B300", 0, "B300-SXM-288GB"},
		{"nebius", "NVIDIA GB200 NVL72", 0, "GB200-186GB"},
		{"nebius", "NVIDIA GB300 NVL72", 0, "GB300-288GB"},
		{"nebius", "NVIDIA RTX PRO 6000", 0, "RTX-PRO-6000-96GB"},
		{"nebius", "NVIDIA L40S with Intel CPU", 0, "L40S-48GB"},
		{"nebius", "NVIDIA L40S with AMD CPU", 0, "L40S-48GB"},

		// Hyperstack: API flavor gpus (per-GPU VRAM in the name), then the page's labels.
		{"hyperstack", "A100-80G-PCIe", 0, "A100-PCIE-80GB"},
		{"hyperstack", "A100-80G-PCIe-NVLink", 0, "A100-PCIE-80GB"},
		{"hyperstack", "A100-80G-SXM4", 0, "A100-SXM-80GB"},
		{"hyperstack", "H100-80G-PCIe", 0, "H100-PCIE-80GB"},
		{"hyperstack", "H100-80G-PCIe-NVLink", 0, "H100-PCIE-80GB"},
		{"hyperstack", "H100-80G-SXM5", 0, "H100-SXM-80GB"},
		{"hyperstack", "H200-141G-SXM5", 0, "H200-SXM-141GB"},
		{"hyperstack", "B200-SXM", 0, "B200-SXM-180GB"},
		{"hyperstack", "B300-SXM", 0, "B300-SXM-288GB"},
		{"hyperstack", "L40", 48, "L40-48GB"},
		{"hyperstack", "L40-spot", 48, "L40-48GB"},
		{"hyperstack", "RTX-A4000", 16, "RTX-A4000-16GB"},
		{"hyperstack", "RTX-A6000", 48, "RTX-A6000-48GB"},
		{"hyperstack", "RTX-4090", 24, "RTX-4090-24GB"},
		{"hyperstack", "RTX-5090", 32, "RTX-5090-32GB"},
		{"hyperstack", "RTX-PRO6000-SE", 96, "RTX-PRO-6000-96GB"},
		{"hyperstack", "NVIDIA B300", 288, "B300-SXM-288GB"},
		{"hyperstack", "NVIDIA B200", 192, "B200-SXM-180GB"}, // Hyperstack quotes 192
		{"hyperstack", "NVIDIA H200 SXM", 141, "H200-SXM-141GB"},
		{"hyperstack", "NVIDIA H100 SXM", 80, "H100-SXM-80GB"},
		{"hyperstack", "NVIDIA H100 NVLink", 80, "H100-PCIE-80GB"}, // PCIe cards with bridges
		{"hyperstack", "NVIDIA H100", 80, "H100-PCIE-80GB"},
		{"hyperstack", "NVIDIA RTX Pro 6000 SE", 96, "RTX-PRO-6000-96GB"},
		{"hyperstack", "NVIDIA A100 SXM", 80, "A100-SXM-80GB"},
		{"hyperstack", "NVIDIA A100 NVLink", 80, "A100-PCIE-80GB"},
		{"hyperstack", "NVIDIA A100", 80, "A100-PCIE-80GB"},
		{"hyperstack", "NVIDIA L40", 48, "L40-48GB"},
		{"hyperstack", "NVIDIA A6000", 48, "RTX-A6000-48GB"},
		{"hyperstack", "NVIDIA A4000", 16, "RTX-A4000-16GB"},

		// OCI: shape names; bare-metal GPU shapes of HGX families are those boards.
		{"oci", "BM.GPU.H100.8", 0, "H100-SXM-80GB"},
		{"oci", "BM.GPU.H200.8", 0, "H200-SXM-141GB"},
		{"oci", "BM.GPU.B200.8", 0, "B200-SXM-180GB"},
		{"oci", "BM.GPU.B300.8", 0, "B300-SXM-288GB"},
		{"oci", "BM.GPU.GB200.4 (NVL72)", 0, "GB200-186GB"},
		{"oci", "BM.GPU.GB300.4", 0, "GB300-288GB"},
		{"oci", "BM.GPU.RTXPRO.8", 0, "RTX-PRO-6000-96GB"},
		{"oci", "BM.GPU.A100-v2.8", 0, "A100-SXM-80GB"},
		{"oci", "BM.GPU4.8", 0, "A100-SXM-40GB"},
		{"oci", "VM.GPU.A10.2", 0, "A10-24GB"},
		{"oci", "BM.GPU.MI355X.8", 0, "MI355X-288GB"},
		{"oci", "BM.GPU.MI300X.8", 0, "MI300X-192GB"},
		{"oci", "BM.GPU.L40S.4", 0, "L40S-48GB"},
		{"oci", "H100", 80, "H100-SXM-80GB"}, // the price list's "GPU - H100"
		{"oci", "VM.GPU3.4", 0, ""},          // V100 16 GB, form not said
		{"oci", "VM.GPU2.1", 0, ""},          // P100: not in the catalog
		{"oci", "H100T", 80, ""},             // a SKU of its own, never folded into H100

		// Vultr: plan gpu_type values (per-GPU VRAM given to Resolve).
		{"vultr", "NVIDIA_A100_SXM", 80, "A100-SXM-80GB"},
		{"vultr", "NVIDIA_A100_PCIE", 80, "A100-PCIE-80GB"},
		{"vultr", "NVIDIA_A100", 80, ""}, // 40 or 80 GB, PCIe or SXM: sources disagree
		{"vultr", "NVIDIA_A40", 48, "A40-48GB"},
		{"vultr", "NVIDIA_A16", 16, "A16-16GB"},
		{"vultr", "NVIDIA_L40S", 48, "L40S-48GB"},
		{"vultr", "NVIDIA_H100", 80, ""}, // form not said
		{"vultr", "NVIDIA_B200", 192, "B200-SXM-180GB"},
		{"vultr", "NVIDIA_GH200", 96, "GH200-96GB"},
		{"vultr", "AMD_MI300X", 192, "MI300X-192GB"},
		{"vultr", "AMD_MI325X", 256, "MI325X-256GB"},
		{"vultr", "AMD_MI355X", 288, "MI355X-288GB"},

		// DigitalOcean: size slugs (the memory in a slug is the droplet's total), gpu_info
		// models, and the pricing page's labels.
		{"digitalocean", "gpu-h100x1-80gb", 0, ""}, // form not said
		{"digitalocean", "gpu-h100x8-640gb", 0, ""},
		{"digitalocean", "gpu-h200x1-141gb", 0, "H200-SXM-141GB"},
		{"digitalocean", "gpu-l40sx1-48gb", 0, "L40S-48GB"},
		{"digitalocean", "gpu-4000adax1-20gb", 0, "RTX-4000-ADA-20GB"},
		{"digitalocean", "gpu-6000adax1-48gb", 0, "RTX-6000-ADA-48GB"},
		{"digitalocean", "gpu-mi300x1-192gb", 0, "MI300X-192GB"},
		{"digitalocean", "gpu-mi300x8-1536gb", 0, "MI300X-192GB"},
		{"digitalocean", "gpu-mi355x1-288gb-spot", 0, "MI355X-288GB"},
		{"digitalocean", "nvidia_h100", 80, ""},
		{"digitalocean", "amd_mi300x", 192, "MI300X-192GB"},
		{"digitalocean", "nvidia_rtx6000_ada", 48, "RTX-6000-ADA-48GB"},
		{"digitalocean", "nvidia_rtx4000_ada", 20, "RTX-4000-ADA-20GB"},
		{"digitalocean", "nvidia_h200", 141, "H200-SXM-141GB"},
		{"digitalocean", "nvidia_l40s", 48, "L40S-48GB"},
		{"digitalocean", "nvidia_b300", 288, "B300-SXM-288GB"},
		{"digitalocean", "amd_mi325x", 256, "MI325X-256GB"},
		{"digitalocean", "amd_mi350x", 288, "MI350X-288GB"},
		{"digitalocean", "amd_mi355x", 288, "MI355X-288GB"},
		{"digitalocean", "NVIDIA H100", 80, ""}, // the page's H100 at its droplets' 80 GB: still no form
		{"digitalocean", "NVIDIA H200", 0, "H200-SXM-141GB"},
		{"digitalocean", "AMD MI325X", 0, "MI325X-256GB"},
		{"digitalocean", "NVIDIA H100", 0, ""},
		{"digitalocean", "NVIDIA H200 (8x)", 0, "H200-SXM-141GB"},
		{"digitalocean", "NVIDIA L40s", 0, "L40S-48GB"},
		{"digitalocean", "AMD MI300X", 0, "MI300X-192GB"},
		{"digitalocean", "NVIDIA RTX 4000", 0, "RTX-4000-ADA-20GB"},
		{"digitalocean", "NVIDIA RTX 6000", 0, "RTX-6000-ADA-48GB"},
		{"digitalocean", "NVIDIA B300, air-cooled", 0, "B300-SXM-288GB"},
		{"digitalocean", "NVIDIA B300, liquid-cooled", 0, "B300-SXM-288GB"},
		{"digitalocean", "NVIDIA B300, air-cooled (8x)", 0, "B300-SXM-288GB"},
		{"digitalocean", "AMD MI350X", 0, "MI350X-288GB"},
		{"digitalocean", "AMD MI355X (8x)", 0, "MI355X-288GB"},

		// TensorDock: v0Name ids (form and per-GPU VRAM in the id) and display names.
		{"tensordock", "h100-sxm5-80gb", 0, "H100-SXM-80GB"},
		{"tensordock", "a100-pcie-80gb", 0, "A100-PCIE-80GB"},
		{"tensordock", "a100-sxm4-80gb", 0, "A100-SXM-80GB"},
		{"tensordock", "l40-pcie-48gb", 0, "L40-48GB"},
		{"tensordock", "rtxa6000-pcie-48gb", 0, "RTX-A6000-48GB"},
		{"tensordock", "rtxa5000-pcie-24gb", 0, "RTX-A5000-24GB"},
		{"tensordock", "rtxa4000-pcie-16gb", 0, "RTX-A4000-16GB"},
		{"tensordock", "v100-pcie-16gb", 0, "V100-PCIE-16GB"},
		{"tensordock", "teslav100-pcie-16gb", 0, "V100-PCIE-16GB"},
		{"tensordock", "geforcertx4090-pcie-24gb", 0, "RTX-4090-24GB"},
		{"tensordock", "geforcertx3090-pcie-24gb", 0, "RTX-3090-24GB"},
		{"tensordock", "geforcertx3080ti-pcie-12gb", 0, "RTX-3080-TI-12GB"},
		{"tensordock", "geforcertx3060tilhr-pcie-8gb", 0, "RTX-3060-TI-8GB"},
		{"tensordock", "geforcegtx1070-pcie-8gb", 0, "GTX-1070-8GB"},
		{"tensordock", "H100 SXM5 80GB", 0, "H100-SXM-80GB"},
		{"tensordock", "RTX 4090", 24, "RTX-4090-24GB"},
		{"tensordock", "RTX 4090 24GB", 0, "RTX-4090-24GB"},
		{"tensordock", "RTX3080Ti", 12, "RTX-3080-TI-12GB"}, // gpuhunt's converted name
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.raw, func(t *testing.T) {
			m := gpus.Resolve(tt.provider, tt.raw, tt.vramGB)
			if m.Model.Name != tt.want || m.Known != (tt.want != "") {
				t.Errorf("Resolve(%q, %q, %v) = %q (known %v), want %q", tt.provider, tt.raw, tt.vramGB, m.Model.Name, m.Known, tt.want)
			}
		})
	}
}

// TestProviderRulesStayWithTheirProvider: a provider's reading of a name is not everyone's.
func TestProviderRulesStayWithTheirProvider(t *testing.T) {
	tests := []struct {
		provider, raw string
		vramGB        float64
		want          string
	}{
		{"vastai", "NVIDIA H100", 80, ""},                        // Hyperstack's bare H100 is PCIe; elsewhere not said
		{"lambda", "gpu_1x_rtx6000", 24, "QUADRO-RTX-6000-24GB"}, // Nebius's and DigitalOcean's RTX 6000 are others
		{"vastai", "RTX 4000", 20, ""},                           // Quadro RTX 4000 or RTX 4000 Ada
		{"vastai", "BM.GPU.H100.8", 0, ""},                       // OCI's shape syntax
		{"vastai", "gpu-l40s-a", 48, ""},                         // Nebius's variant letter
		{"vastai", "Tesla V100 NVLink", 32, "V100-SXM2-32GB"},    // NVLink: only SXM2 V100s have it
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.raw, func(t *testing.T) {
			if m := gpus.Resolve(tt.provider, tt.raw, tt.vramGB); m.Model.Name != tt.want {
				t.Errorf("Resolve(%q, %q, %v) = %q, want %q", tt.provider, tt.raw, tt.vramGB, m.Model.Name, tt.want)
			}
		})
	}
}

// TestVRAMLabel pins the label rule for GPUs outside the catalog: the nearest market label
// within LabelTolerance, the report read as decimal GB or as GiB.
func TestVRAMLabel(t *testing.T) {
	tests := []struct {
		name     string
		reported float64
		want     float64
		ok       bool
	}{
		{"48 GiB in MiB (49152)", gpus.MiBToGB(49152), 48, true},
		{"32 GiB in MiB (32768)", gpus.MiBToGB(32768), 32, true},
		{"11 GiB (GTX 1080 Ti), not 12", gpus.MiBToGB(11264), 11, true},
		{"10 GiB, not 11", gpus.MiBToGB(10240), 10, true},
		{"12 GiB", gpus.MiBToGB(12288), 12, true},
		{"visible 45 GiB of 48", gpus.MiBToGB(46068), 48, true},
		{"decimal GB already a label", 24, 24, true},
		{"7 GiB is no label", gpus.MiBToGB(7168), 0, false},
		{"56 GiB is no label", gpus.MiBToGB(57344), 0, false},
		{"visible 7.5 GiB of 8", gpus.MiBToGB(7680), 8, true},
		{"zero", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := gpus.VRAMLabel(tt.reported)
			if got != tt.want || ok != tt.ok {
				t.Errorf("VRAMLabel(%v) = %v, %v; want %v, %v", tt.reported, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCatalog(t *testing.T) {
	ms := gpus.Models()
	if len(ms) == 0 {
		t.Fatal("empty catalog")
	}
	if !slices.IsSortedFunc(ms, func(a, b gpus.Model) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Models() not sorted by name")
	}
	forms := []gpus.FormFactor{gpus.SXM, gpus.PCIe, gpus.NVL, gpus.OAM, gpus.Consumer}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Name] {
			t.Errorf("duplicate model %s", m.Name)
		}
		seen[m.Name] = true
		if m.Name != strings.ToUpper(m.Name) || strings.ContainsAny(m.Name, " _") {
			t.Errorf("%s: canonical names are upper case and dash separated", m.Name)
		}
		if m.Family == "" || m.VRAMGB <= 0 || m.TFLOPS.FP32 <= 0 || m.MemBandwidthGBps <= 0 {
			t.Errorf("%s: incomplete specs %+v", m.Name, m)
		}
		if !slices.Contains(forms, m.FormFactor) {
			t.Errorf("%s: bad form factor %q", m.Name, m.FormFactor)
		}
		catalogRowIsComplete(t, m)
		// The catalog's own name must resolve back to itself.
		if r := gpus.Resolve("", m.Name, m.VRAMGB); !r.Known || r.Model.Name != m.Name {
			t.Errorf("Resolve(own name %s) = %+v", m.Name, r)
		}
		// Its VRAM is a market label, so an unknown GPU of that size is labelled alike.
		if l, ok := gpus.VRAMLabel(m.VRAMGB); !ok || l != m.VRAMGB {
			t.Errorf("%s: %v GB is not among the VRAM labels (VRAMLabel gives %v)", m.Name, m.VRAMGB, l)
		}
	}
	// Mutating the returned slice must not affect the catalog.
	ms[0].VRAMGB = -1
	if again := gpus.Models(); again[0].VRAMGB == -1 {
		t.Error("Models() exposes the catalog's backing array")
	}
}

// catalogRowIsComplete checks what the optimizer relies on: a vendor and an architecture with
// its capability or target; dense rates that are positive where supported and ordered as the
// hardware orders them; a fabric whose domain matches it; a source and a grade.
func catalogRowIsComplete(t *testing.T, m gpus.Model) {
	t.Helper()
	switch {
	case m.Vendor == gpus.NVIDIA && (m.Capability.Major == 0 || m.GFX != ""):
		t.Errorf("%s: an NVIDIA GPU needs a compute capability and no gfx target", m.Name)
	case m.Vendor == gpus.AMD && (m.GFX == "" || m.Capability != (gpus.Capability{})):
		t.Errorf("%s: an AMD GPU needs a gfx target and no compute capability", m.Name)
	case m.Vendor != gpus.NVIDIA && m.Vendor != gpus.AMD:
		t.Errorf("%s: vendor %q", m.Name, m.Vendor)
	}
	if m.Arch == "" || m.TDPWatts <= 0 || m.Source == "" {
		t.Errorf("%s: needs an architecture, a TDP and a source", m.Name)
	}
	if m.TFLOPS.FP32 <= 0 || m.MemBandwidthGBps <= 0 {
		t.Errorf("%s: needs an FP32 rate and a memory bandwidth (every value figure divides by one of them)", m.Name)
	}
	if !slices.Contains([]gpus.Grade{gpus.Confirmed, gpus.OneSource, gpus.Derived, gpus.Recalled, gpus.Disputed}, m.Grade) {
		t.Errorf("%s: grade %q", m.Name, m.Grade)
	}
	r := m.TFLOPS
	if r.BF16 > 0 && r.BF16 != r.FP16 {
		t.Errorf("%s: BF16 %v differs from FP16 %v: every GPU here runs them at one rate", m.Name, r.BF16, r.FP16)
	}
	if r.FP8 > 0 && r.FP8 < r.FP16 || r.FP4 > 0 && r.FP4 < r.FP8 || r.FP16 > 0 && r.FP16 < r.FP32 {
		t.Errorf("%s: rates out of the hardware's order (FP32 ≤ FP16 ≤ FP8 ≤ FP4): %+v", m.Name, r)
	}
	switch {
	case m.Topology == gpus.TopologyNone && (m.NVLinkDomain != 1 || m.BoardFabric):
		t.Errorf("%s: no fabric, so a domain of 1 and no board fabric (%d, %v)", m.Name, m.NVLinkDomain, m.BoardFabric)
	case m.Topology == gpus.TopologyBridge && (m.NVLinkDomain < 2 || m.NVLinkDomain > 4 || m.BoardFabric != (m.FormFactor == gpus.NVL)):
		t.Errorf("%s: bridges join 2 to 4 cards, and come with the product only as NVL (%d, %v)", m.Name, m.NVLinkDomain, m.BoardFabric)
	case m.Topology != gpus.TopologyNone && m.Topology != gpus.TopologyBridge && m.NVLinkDomain < 8:
		t.Errorf("%s: a %s fabric joins 8 GPUs or more, not %d", m.Name, m.Topology, m.NVLinkDomain)
	case m.BoardFabric && m.FormFactor != gpus.SXM && m.FormFactor != gpus.OAM && m.FormFactor != gpus.NVL:
		t.Errorf("%s: only SXM and OAM boards and NVL cards come with their fabric", m.Name)
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{"exact", "H100-SXM-80GB", "H100-SXM-80GB", true},
		{"case insensitive", "h100-pcie-80gb", "H100-PCIE-80GB", true},
		{"unknown", "H100", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := gpus.Lookup(tt.in)
			if ok != tt.ok || m.Name != tt.want {
				t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.in, m.Name, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestMiBToGB(t *testing.T) {
	tests := []struct {
		mib, want float64
	}{
		{81559, 85.52},
		{24576, 25.77},
		{0, 0},
	}
	for _, tt := range tests {
		if got := gpus.MiBToGB(tt.mib); math.Abs(got-tt.want) > 0.005 {
			t.Errorf("MiBToGB(%v) = %v, want %v", tt.mib, got, tt.want)
		}
	}
}

func ExampleResolve() {
	m := gpus.Resolve("vastai", "H100 SXM", gpus.MiBToGB(81559))
	fmt.Println(m.Model.Name, m.Known, m.Snapped, m.VRAMGB)
	// Output: H100-SXM-80GB true true 80
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"H100 SXM", "NVIDIA H100 80GB HBM3", "gpu_8x_a100_80gb_sxm4", "8x H100 (80 GB SXM5)",
		"RTX6000ADA", "Q RTX 6000", "NVIDIA GB200 NVL72", "", "unknown", "1.5.3 GB GB", "RTX PRO 6000 MIG 1g.24gb",
		"geforcertx3060tilhr-pcie-8gb", "RTX PRO 6000 Max-Q", "NVIDIA L40S with Intel CPU"} {
		f.Add("vastai", s, 80.0)
	}
	f.Add("digitalocean", "gpu-mi300x8-1536gb", 0.0)
	f.Add("oci", "BM.GPU.GB200.4 (NVL72)", 0.0)
	f.Add("nebius", "gpu-b200-sxm-a", 180.0)
	f.Add("hyperstack", "H100-80G-PCIe-NVLink", 80.0)
	f.Fuzz(func(t *testing.T, provider, raw string, vram float64) {
		m := gpus.Resolve(provider, raw, vram)
		if !m.Known {
			if m.Model != (gpus.Model{}) {
				t.Fatalf("unknown match %+v carries a model", m)
			}
			if l, ok := gpus.VRAMLabel(vram); m.Snapped && (!ok || l != m.VRAMGB) {
				t.Fatalf("unknown match %+v snapped to no label of %v", m, vram)
			}
			return
		}
		lm, ok := gpus.Lookup(m.Model.Name)
		if !ok || lm != m.Model || m.VRAMGB != lm.VRAMGB {
			t.Fatalf("known match %+v not the catalog's %+v", m, lm)
		}
	})
}

// TestNamed: what a person's name for a GPU stands for in the catalog. A family is every form
// of it, where Resolve, reading a provider's listing, must pick one or none.
func TestNamed(t *testing.T) {
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"H100-SXM-80GB", []string{"H100-SXM-80GB"}},
		{"h100-sxm-80gb", []string{"H100-SXM-80GB"}},
		{"H100", []string{"H100-NVL-94GB", "H100-PCIE-80GB", "H100-SXM-80GB"}},
		{"h100-sxm", []string{"H100-SXM-80GB"}},
		{"H100 PCIe", []string{"H100-PCIE-80GB"}},
		{"NVIDIA H100 80GB HBM3", []string{"H100-SXM-80GB"}},
		// Resolve takes a bare H200 for the SXM part; a person asking for H200 means both.
		{"H200", []string{"H200-NVL-141GB", "H200-SXM-141GB"}},
		{"A100-80GB", []string{"A100-PCIE-80GB", "A100-SXM-80GB"}},
		{"a100 pcie", []string{"A100-PCIE-40GB", "A100-PCIE-80GB"}},
		{"RTX4090", []string{"RTX-4090-24GB"}},
		{"rtx 4090", []string{"RTX-4090-24GB"}},
		{"Tesla V100", []string{"V100-PCIE-16GB", "V100-PCIE-32GB", "V100-SXM2-16GB", "V100-SXM2-32GB"}},
		{"V100 NVLink", []string{"V100-SXM2-16GB", "V100-SXM2-32GB"}},
		{"MI300X", []string{"MI300X-192GB"}},
		{"RTX PRO 6000", []string{"RTX-PRO-6000-96GB"}},
		{"A100-48GB", nil}, // no A100 has 48 GB
		{"GTX 1080 Ti", nil},
		{"A100 MIG 1g.10gb", nil},
		{"4090", nil},
		{"", nil},
	} {
		var got []string
		for _, m := range gpus.Named(tt.name) {
			got = append(got, m.Name)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Named(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
}
