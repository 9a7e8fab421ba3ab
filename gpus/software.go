package gpus

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Precision is a numeric format of weights and tensor math.
type Precision string

// Precisions. INT4 is weight-only (GPTQ/AWQ/Marlin): the math runs in FP16.
const (
	FP32 Precision = "fp32"
	TF32 Precision = "tf32"
	FP16 Precision = "fp16"
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
	INT8 Precision = "int8"
	INT4 Precision = "int4"
	FP4  Precision = "fp4"
)

// Of is the dense tensor rate at precision p, in TFLOPS (0 when the GPU has no path for it).
// INT4 weights are dequantized to FP16, so they compute at the FP16 rate.
func (t Throughput) Of(p Precision) float64 {
	switch p {
	case FP32:
		return t.FP32
	case TF32:
		return t.TF32
	case FP16, INT4:
		return t.FP16
	case BF16:
		return t.BF16
	case FP8:
		return t.FP8
	case INT8:
		return t.INT8
	case FP4:
		return t.FP4
	}
	return 0
}

// Computes returns nil when the GPU has a hardware path for precision p, else the reason.
// The rules, from the vendors' documents: BF16 from Ampere (sm_80) and CDNA2; FP8 from Ada
// (sm_89), Hopper and MI300; FP4 on Blackwell; INT8 tensor math from Turing (Volta has none,
// and Blackwell Ultra cut it to a sliver of its FP8 rate); INT4 weight-only kernels from
// Turing. Pascal has no tensor cores, and the P40 runs FP16 at 1/64 rate, so none of these.
func (m Model) Computes(p Precision) error {
	rate := m.TFLOPS.Of(p)
	switch {
	case p == INT8 && rate > 0 && rate < m.TFLOPS.FP8/4:
		return fmt.Errorf("INT8 tensor math cut to %s TOPS on %s (use an FP8 or FP4 build)", strconv.FormatFloat(rate, 'f', -1, 64), m.Arch)
	case p == INT4 && m.Vendor == NVIDIA && !m.Capability.AtLeast(7, 5):
		return fmt.Errorf("no INT4 weight-only kernels before Turing (%s is sm_%d%d)", m.Arch, m.Capability.Major, m.Capability.Minor)
	case rate > 0:
		return nil
	case p == FP16 || p == INT4:
		return fmt.Errorf("no FP16 tensor cores (%s)", m.archName())
	}
	return fmt.Errorf("no %s support (%s)", strings.ToUpper(string(p)), m.archName())
}

// RunsAt returns the precision work in p runs at on the GPU: p where the GPU has a hardware path
// for it (Computes), else FP16 (the same math in FP16, or weight-only kernels that dequantize
// FP8, INT8 or FP4 weights to FP16), else FP32 for a GPU without FP16 tensor cores. TF32 work
// is FP32 math on tensor cores: without TF32 it runs at FP32.
func (m Model) RunsAt(p Precision) Precision {
	switch {
	case m.Computes(p) == nil:
		return p
	case p != TF32 && m.Computes(FP16) == nil:
		return FP16
	}
	return FP32
}

// Engine is a serving engine an inference workload runs on.
type Engine string

// Serving engines.
const (
	VLLM        Engine = "vllm"
	SGLang      Engine = "sglang"
	TensorRTLLM Engine = "tensorrt-llm"
	TGI         Engine = "tgi"
)

// Engines lists every engine, in a stable order.
var Engines = []Engine{VLLM, SGLang, TensorRTLLM, TGI}

// String is the engine's name as its project writes it: vLLM, SGLang, TensorRT-LLM, TGI.
func (e Engine) String() string {
	switch e {
	case VLLM:
		return "vLLM"
	case SGLang:
		return "SGLang"
	case TensorRTLLM:
		return "TensorRT-LLM"
	case TGI:
		return "TGI"
	}
	return string(e)
}

// Runs returns nil when the engine supports the GPU, else the reason. From the engines' own
// support pages: vLLM needs compute capability 7.5 (V100 was dropped) or ROCm on MI200, MI300,
// MI350 or Radeon RDNA3; SGLang builds on CUDA 13 (sm_75 and newer) and supports MI300 and
// MI350 on ROCm; TensorRT-LLM supports Blackwell, Hopper, Ada's L40/L40S and the A100 (others
// get community support only); TGI's flash kernels need Ampere, or ROCm on MI200/MI300.
func (m Model) Runs(e Engine) error {
	nvidia := m.Vendor == NVIDIA
	switch e {
	case VLLM:
		if nvidia && m.Capability.AtLeast(7, 5) || slices.Contains([]string{"gfx90a", "gfx942", "gfx950", "gfx1100"}, m.GFX) {
			return nil
		}
		if nvidia {
			return fmt.Errorf("vLLM needs compute capability 7.5 or newer (%s is %s)", m.Family, m.Capability)
		}
	case SGLang:
		if nvidia && m.Capability.AtLeast(7, 5) || slices.Contains([]string{"gfx942", "gfx950"}, m.GFX) {
			return nil
		}
		if nvidia {
			return fmt.Errorf("SGLang needs compute capability 7.5 or newer (%s is %s)", m.Family, m.Capability)
		}
	case TensorRTLLM:
		if nvidia && (m.Capability.Major >= 10 && m.Capability.Major < 12 || m.Capability == Capability{9, 0} ||
			slices.Contains([]string{"L40S", "L40", "A100"}, m.Family)) {
			return nil
		}
		if nvidia {
			return fmt.Errorf("TensorRT-LLM supports Blackwell, Hopper, L40/L40S and A100 only (%s is %s)", m.Family, m.archName())
		}
	case TGI:
		if nvidia && m.Capability.AtLeast(8, 0) || slices.Contains([]string{"gfx90a", "gfx942"}, m.GFX) {
			return nil
		}
		if nvidia {
			return fmt.Errorf("TGI's flash kernels need Ampere or newer (%s is %s)", m.Family, m.archName())
		}
	default:
		return fmt.Errorf("unknown engine %q", e)
	}
	return fmt.Errorf("%s does not support %s (%s)", e, m.Family, m.CapabilityString())
}

// FlashAttention2 reports whether FlashAttention-2 runs on the GPU: Ampere, Ada, Hopper and
// Blackwell on CUDA; MI200 and MI300 on ROCm. Older GPUs fall back to slower attention
// kernels that also need more memory for long contexts.
func (m Model) FlashAttention2() bool {
	if m.Vendor == AMD {
		return m.GFX == "gfx90a" || m.GFX == "gfx942"
	}
	return m.Capability.AtLeast(8, 0)
}

func (m Model) archName() string {
	if m.Vendor == NVIDIA {
		return fmt.Sprintf("%s, sm_%d%d", m.Arch, m.Capability.Major, m.Capability.Minor)
	}
	return fmt.Sprintf("%s, %s", m.Arch, m.GFX)
}
