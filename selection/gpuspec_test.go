package selection

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
)

// TestGPUSpecs is the grammar of `gpucost offers --gpu`: each good spec as the store's filter
// (catalog models, counts, memory), each bad one with the message the user reads after
// "--gpu: ", naming the part that is wrong.
func TestGPUSpecs(t *testing.T) {
	h100 := []string{"H100-NVL-94GB", "H100-PCIE-80GB", "H100-SXM-80GB"}
	a100 := []string{"A100-PCIE-40GB", "A100-PCIE-80GB", "A100-SXM-40GB", "A100-SXM-80GB"}
	amd := []string{"MI300X-192GB", "MI325X-256GB", "MI350X-288GB", "MI355X-288GB", "RX-7900-XTX-24GB"}
	tests := []struct {
		name    string
		values  []string
		want    []schema.GPUSpec
		wantErr string
	}{
		{"none", nil, nil, ""},
		{"blanks only", []string{"", " , "}, nil, ""},
		{"a family is every form", []string{"H100"}, []schema.GPUSpec{{Models: h100}}, ""},
		{"any case", []string{"h100"}, []schema.GPUSpec{{Models: h100}}, ""},
		{"a form narrows", []string{"H100-SXM"}, []schema.GPUSpec{{Models: []string{"H100-SXM-80GB"}}}, ""},
		{"the canonical name", []string{"h100-sxm-80gb"}, []schema.GPUSpec{{Models: []string{"H100-SXM-80GB"}}}, ""},
		{"a provider's spelling", []string{"NVIDIA GeForce RTX 4090"}, []schema.GPUSpec{{Models: []string{"RTX-4090-24GB"}}}, ""},
		{"glued", []string{"RTX4090"}, []schema.GPUSpec{{Models: []string{"RTX-4090-24GB"}}}, ""},
		{"memory in the name", []string{"A100-80GB"}, []schema.GPUSpec{{Models: []string{"A100-PCIE-80GB", "A100-SXM-80GB"}}}, ""},
		{"a count", []string{"H100:8"}, []schema.GPUSpec{{Models: h100, MinCount: 8, MaxCount: 8}}, ""},
		{"a count range", []string{"A100:1..4"}, []schema.GPUSpec{{Models: a100, MinCount: 1, MaxCount: 4}}, ""},
		{"at least", []string{":2.."}, []schema.GPUSpec{{MinCount: 2}}, ""},
		{"at most", []string{"..4"}, []schema.GPUSpec{{MaxCount: 4}}, ""},
		{"memory narrows the models", []string{"A100:80GB"}, []schema.GPUSpec{{Models: []string{"A100-PCIE-80GB", "A100-SXM-80GB"}}}, ""},
		{"memory and a count, either order", []string{"A100:2:40gb"}, []schema.GPUSpec{{Models: []string{"A100-PCIE-40GB", "A100-SXM-40GB"}, MinCount: 2, MaxCount: 2}}, ""},
		// Without a name, memory is a filter on every offer's VRAM, GPUs outside the catalog too.
		{"a memory range alone", []string{"24GB..80GB"}, []schema.GPUSpec{{MinVRAMGB: 24, MaxVRAMGB: 80}}, ""},
		{"at least some memory", []string{"48GB.."}, []schema.GPUSpec{{MinVRAMGB: 48}}, ""},
		{"at most some memory, decimals", []string{"..7.5GB"}, []schema.GPUSpec{{MaxVRAMGB: 7.5}}, ""},
		{"a vendor alone", []string{"amd"}, []schema.GPUSpec{{Models: amd}}, ""},
		{"a vendor and memory", []string{"AMD:200GB.."}, []schema.GPUSpec{{Models: []string{"MI325X-256GB", "MI350X-288GB", "MI355X-288GB"}}}, ""},
		{"the vendor first", []string{"amd:MI300X:8"}, []schema.GPUSpec{{Models: []string{"MI300X-192GB"}, MinCount: 8, MaxCount: 8}}, ""},
		// As in dstack, names before a spec share its count and memory.
		{"names share what follows", []string{"A100,H100:8"},
			[]schema.GPUSpec{{Models: append(append([]string{}, a100...), h100...), MinCount: 8, MaxCount: 8}}, ""},
		{"names share memory", []string{"A100,H100:80GB"},
			[]schema.GPUSpec{{Models: []string{"A100-PCIE-80GB", "A100-SXM-80GB", "H100-PCIE-80GB", "H100-SXM-80GB"}}}, ""},
		{"a list of specs", []string{"H100:8, L40S"},
			[]schema.GPUSpec{{Models: h100, MinCount: 8, MaxCount: 8}, {Models: []string{"L40S-48GB"}}}, ""},
		{"flags are specs of their own", []string{"A100", "H100:8"},
			[]schema.GPUSpec{{Models: a100}, {Models: h100, MinCount: 8, MaxCount: 8}}, ""},
		{"names listed twice", []string{"H100,h100-sxm"}, []schema.GPUSpec{{Models: h100}}, ""},

		{"an unknown GPU", []string{"H10"}, nil,
			`"H10" is no GPU of the catalog (did you mean H100-NVL-94GB, H100-PCIE-80GB, H100-SXM-80GB?); offers of GPUs outside the catalog are shown with --unknown`},
		{"a GPU outside the catalog", []string{"GTX 1080 Ti"}, nil,
			`"GTX 1080 Ti" is no GPU of the catalog (names look like H100, H100-SXM, A100-80GB or RTX4090: gpucost gpus lists them); offers of GPUs outside the catalog are shown with --unknown`},
		{"a bad part", []string{"H100:8x"}, nil,
			`"H100:8x": "8x" is neither a GPU count (8, 1..4, 2..), a memory size (80GB, 24GB..80GB, 48GB..) nor a vendor (nvidia, amd); a GPU's name comes first`},
		{"a name after a count", []string{"8:H100"}, nil,
			`"8:H100": "H100" is neither a GPU count (8, 1..4, 2..), a memory size (80GB, 24GB..80GB, 48GB..) nor a vendor (nvidia, amd); a GPU's name comes first`},
		{"no count", []string{"H100:0"}, nil, `"H100:0": 0 GPUs: a count starts at 1`},
		{"a count with a fraction", []string{"H100:1.5"}, nil, `"H100:1.5": "1.5" is not a whole number of GPUs`},
		{"an inverted count", []string{"A100:4..2"}, nil, `"A100:4..2": "4..2" is an inverted range (from 4 down to 2)`},
		{"a range without ends", []string{"A100:.."}, nil, `"A100:..": ".." is a range without ends (1..4, 2.., ..4)`},
		{"a GPU's number read as a count", []string{"4090"}, nil,
			`"4090": 4090 GPUs is more than an offer has (at most 1024); a GPU named so is written like RTX-4090-24GB`},
		{"two counts", []string{"H100:8:4"}, nil, `"H100:8:4": "4" is a second GPU count`},
		{"two memory sizes", []string{"H100:80GB:94GB"}, nil, `"H100:80GB:94GB": "94GB" is a second memory size`},
		{"memory without its unit on one end", []string{"24..80GB"}, nil, `"24..80GB": "24" is not a memory size in GB, like 80GB`},
		{"memory in another unit", []string{"H100:80GiB"}, nil, `"H100:80GiB": "80GiB" is not a memory size in GB, like 80GB`},
		{"no memory", []string{"0GB.."}, nil, `"0GB..": "0GB" is not a memory size between 0 and 10000GB`},
		{"an inverted memory range", []string{"80GB..24GB"}, nil, `"80GB..24GB": "80GB..24GB" is an inverted range (from 80 down to 24)`},
		{"memory no such GPU has", []string{"A100:48GB"}, nil,
			`"A100:48GB": none of A100-PCIE-40GB, A100-PCIE-80GB, A100-SXM-40GB, A100-SXM-80GB has 48GB`},
		{"memory no GPU of a vendor has", []string{"amd:16GB"}, nil, `"amd:16GB": no amd GPU in the catalog has 16GB`},
		{"a GPU of another vendor", []string{"nvidia:MI300X"}, nil, `"nvidia:MI300X": MI300X is not an nvidia GPU`},
		{"an empty part", []string{"H100::8"}, nil, `"H100::8": an empty part`},
		{"an empty spec", []string{":"}, nil, `":": an empty spec`},
		{"a size in another unit", []string{"1TB"}, nil, `"1TB": "1TB" is not a memory size in GB, like 80GB`},
		{"an unknown name in a list", []string{"A100,H10:8"}, nil,
			`"H10:8": "H10" is no GPU of the catalog (did you mean H100-NVL-94GB, H100-PCIE-80GB, H100-SXM-80GB?); offers of GPUs outside the catalog are shown with --unknown`},
		{"the first bad one of a list", []string{"H100:8,A100:0"}, nil, `"A100:0": 0 GPUs: a count starts at 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := GPUSpecs(tt.values)
			if tt.wantErr != "" {
				var se *Error
				if !errors.As(err, &se) || se.Param != "gpu" || err.Error() != tt.wantErr {
					t.Fatalf("GPUSpecs(%q) error = %v\nwant %s", tt.values, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("GPUSpecs(%q): %v", tt.values, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GPUSpecs(%q) (-want +got):\n%s", tt.values, diff)
			}
		})
	}
}
