package pipeline_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
)

// TestNormalizeFlagsTheGPUAsScrapersDo: a source that leaves the GPU model to the pipeline gets
// the flags a scraper sets when it resolves the model itself (scrapers/normalize.go's applyGPU):
// vram_snapped for a reported VRAM the catalog's differs from, vram_missing when it reported none,
// unknown_gpu for a name the catalog does not know, and vram_snapped again when such a GPU's
// VRAM is given the market's label.
func TestNormalizeFlagsTheGPUAsScrapersDo(t *testing.T) {
	r := newRunner(t, pipeline.Config{}, nil, pipeline.Options{DryRun: true}, returning("p",
		rawGPU("exact", "H100 SXM", 80),
		rawGPU("snapped", "H100 SXM", 85.52), // Vast's 81559 MiB
		rawGPU("missing", "H100 (80 GB SXM5)", 0),
		rawGPU("unknown", "H1000", 80),
		rawGPU("unknown-mib", "H1000", 51.54), // 49152 MiB
	))
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type gpu struct {
		Model string
		VRAM  float64
		Flags []schema.DQFlag
	}
	got := map[string]gpu{}
	for _, o := range rep.Batches[0].Offers {
		got[o.OfferID] = gpu{o.GPUModel, o.VRAMGB, o.DQFlags}
	}
	want := map[string]gpu{
		"exact":       {"H100-SXM-80GB", 80, nil},
		"snapped":     {"H100-SXM-80GB", 80, []schema.DQFlag{schema.FlagVRAMSnapped}},
		"missing":     {"H100-SXM-80GB", 80, []schema.DQFlag{schema.FlagVRAMMissing}},
		"unknown":     {"", 80, []schema.DQFlag{schema.FlagUnknownGPU}},
		"unknown-mib": {"", 48, []schema.DQFlag{schema.FlagUnknownGPU, schema.FlagVRAMSnapped}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GPU of each offer (-want +got):\n%s", diff)
	}
}
