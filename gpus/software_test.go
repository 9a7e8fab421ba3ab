package gpus_test

import (
	"strings"
	"testing"

	"github.com/gpucost/gpucost/gpus"
)

func model(t *testing.T, name string) gpus.Model {
	t.Helper()
	m, ok := gpus.Lookup(name)
	if !ok {
		t.Fatalf("%s is not in the catalog", name)
	}
	return m
}

func TestComputes(t *testing.T) {
	tests := []struct {
		gpu  string
		p    gpus.Precision
		want string // "" = supported; else a part of the reason
	}{
		{"H100-SXM-80GB", gpus.FP8, ""},
		{"H100-SXM-80GB", gpus.BF16, ""},
		{"H100-SXM-80GB", gpus.FP4, "no FP4 support (Hopper, sm_90)"},
		{"B200-SXM-180GB", gpus.FP4, ""},
		{"RTX-5090-32GB", gpus.FP4, ""},
		{"A100-SXM-80GB", gpus.FP8, "no FP8 support (Ampere, sm_80)"},
		{"A100-SXM-80GB", gpus.INT8, ""},
		{"L40S-48GB", gpus.FP8, ""},              // Ada has FP8
		{"V100-SXM2-32GB", gpus.BF16, "no BF16"}, // Volta: FP16 tensor cores only
		{"V100-SXM2-32GB", gpus.FP16, ""},
		{"V100-SXM2-32GB", gpus.INT8, "no INT8 support (Volta, sm_70)"},
		{"V100-SXM2-32GB", gpus.INT4, "no INT4 weight-only kernels before Turing"},
		{"T4-16GB", gpus.BF16, "no BF16 support (Turing, sm_75)"},
		{"T4-16GB", gpus.INT4, ""},
		{"P40-24GB", gpus.FP16, "no FP16 tensor cores (Pascal, sm_61)"}, // FP16 at 1/64 rate
		{"P40-24GB", gpus.FP32, ""},
		{"B300-SXM-288GB", gpus.INT8, "INT8 tensor math cut to 150 TOPS"},
		{"MI300X-192GB", gpus.FP8, ""},
		{"MI300X-192GB", gpus.FP4, "no FP4 support (CDNA3, gfx942)"},
	}
	for _, tt := range tests {
		t.Run(tt.gpu+"/"+string(tt.p), func(t *testing.T) {
			err := model(t, tt.gpu).Computes(tt.p)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Computes(%s) = %v, want supported", tt.p, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Computes(%s) = %v, want an error with %q", tt.p, err, tt.want)
			}
		})
	}
}

// TestRunsAt pins the precision work runs at on a GPU without a path for the one it asks for.
func TestRunsAt(t *testing.T) {
	tests := []struct {
		gpu  string
		p    gpus.Precision
		want gpus.Precision
	}{
		{"H100-SXM-80GB", gpus.FP8, gpus.FP8},
		{"H100-SXM-80GB", gpus.FP4, gpus.FP16},   // FP4 weights dequantized to FP16 on Hopper
		{"A100-SXM-80GB", gpus.FP8, gpus.FP16},   // weight-only FP8 on Ampere
		{"V100-SXM2-32GB", gpus.BF16, gpus.FP16}, // Volta: FP16 tensor cores only
		{"V100-SXM2-32GB", gpus.INT8, gpus.FP16},
		{"B300-SXM-288GB", gpus.INT8, gpus.FP16}, // INT8 cut to a sliver: FP16 is faster
		{"T4-16GB", gpus.TF32, gpus.FP32},        // TF32 is FP32 math: never FP16
		{"P40-24GB", gpus.BF16, gpus.FP32},       // no tensor cores at all
		{"P40-24GB", gpus.FP32, gpus.FP32},
	}
	for _, tt := range tests {
		t.Run(tt.gpu+"/"+string(tt.p), func(t *testing.T) {
			if got := model(t, tt.gpu).RunsAt(tt.p); got != tt.want {
				t.Errorf("RunsAt(%s) = %s, want %s", tt.p, got, tt.want)
			}
		})
	}
}

func TestRuns(t *testing.T) {
	tests := []struct {
		gpu    string
		engine gpus.Engine
		want   string
	}{
		{"T4-16GB", gpus.VLLM, ""}, // compute capability 7.5: the oldest vLLM supports
		{"V100-SXM2-32GB", gpus.VLLM, "vLLM needs compute capability 7.5 or newer (V100 is 7.0)"},
		{"P40-24GB", gpus.VLLM, "is 6.1"},
		{"P40-24GB", gpus.SGLang, "SGLang needs compute capability 7.5"},
		{"MI300X-192GB", gpus.VLLM, ""},
		{"MI300X-192GB", gpus.SGLang, ""},
		{"MI300X-192GB", gpus.TensorRTLLM, "TensorRT-LLM does not support MI300X (gfx942)"},
		{"H100-SXM-80GB", gpus.TensorRTLLM, ""},
		{"B200-SXM-180GB", gpus.TensorRTLLM, ""},
		{"L40S-48GB", gpus.TensorRTLLM, ""},
		{"A100-PCIE-40GB", gpus.TensorRTLLM, ""},
		{"RTX-4090-24GB", gpus.TensorRTLLM, "TensorRT-LLM supports Blackwell, Hopper, L40/L40S and A100 only"},
		{"RTX-5090-32GB", gpus.TensorRTLLM, "TensorRT-LLM supports"}, // sm_120 is not datacenter Blackwell
		{"A10-24GB", gpus.TGI, ""},
		{"T4-16GB", gpus.TGI, "TGI's flash kernels need Ampere or newer"},
	}
	for _, tt := range tests {
		t.Run(tt.gpu+"/"+string(tt.engine), func(t *testing.T) {
			err := model(t, tt.gpu).Runs(tt.engine)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Runs(%s) = %v, want supported", tt.engine, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Runs(%s) = %v, want an error with %q", tt.engine, err, tt.want)
			}
		})
	}
}

func TestFlashAttention2(t *testing.T) {
	for gpu, want := range map[string]bool{"T4-16GB": false, "V100-SXM2-32GB": false, "A10-24GB": true, "RTX-4090-24GB": true, "H100-SXM-80GB": true, "MI300X-192GB": true} {
		if got := model(t, gpu).FlashAttention2(); got != want {
			t.Errorf("%s: FlashAttention2 = %v, want %v", gpu, got, want)
		}
	}
}

func TestParseCapability(t *testing.T) {
	for in, want := range map[string]gpus.Capability{"8.0": {8, 0}, "sm_80": {8, 0}, " 9.0 ": {9, 0}, "sm_120": {12, 0}, "7.5": {7, 5}} {
		if got, err := gpus.ParseCapability(in); err != nil || got != want {
			t.Errorf("ParseCapability(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "eight", "8", "8.10", "sm_8", "-1.0", "0.5"} {
		if got, err := gpus.ParseCapability(in); err == nil {
			t.Errorf("ParseCapability(%q) = %v, want an error", in, got)
		}
	}
}
