package scrapers

import (
	"testing"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// TestCoreWeaveInterconnect: a fabric is named only where the product carries it. An 8-GPU
// SXM board is NVSwitch only when the model's board is (HGX A100); a GH200 superchip names no
// fabric between superchips, and V100 SXM2 boards are a hybrid cube mesh of NVLink.
func TestCoreWeaveInterconnect(t *testing.T) {
	tests := []struct {
		name, model string
		count       int
		intra       schema.IntraNode
		inter       schema.InterNode
	}{
		{"NVIDIA HGX H100", "H100-SXM-80GB", 8, schema.IntraNVSwitch, schema.InterInfiniBand},
		{"NVIDIA A100 80GB SXM", "A100-SXM-80GB", 8, schema.IntraNVSwitch, schema.InterUnknown},
		{"NVIDIA V100 SXM2", "V100-SXM2-32GB", 8, schema.IntraNVLink, schema.InterUnknown},
		{"NVIDIA GH200", "GH200-96GB", 8, schema.IntraUnknown, schema.InterUnknown},
		{"NVIDIA L40S", "L40S-48GB", 8, schema.IntraPCIe, schema.InterUnknown},
		{"NVIDIA A100 80GB SXM", "A100-SXM-80GB", 1, schema.IntraUnknown, schema.InterUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := gpus.Lookup(tt.model)
			if !ok {
				t.Fatalf("%s is not in the catalog", tt.model)
			}
			intra, inter := coreweaveInterconnect(tt.name, gpus.Match{Model: m, Known: true}, tt.count)
			if intra != tt.intra || inter != tt.inter {
				t.Errorf("%s ×%d: %s/%s, want %s/%s", tt.name, tt.count, intra, inter, tt.intra, tt.inter)
			}
		})
	}
}
