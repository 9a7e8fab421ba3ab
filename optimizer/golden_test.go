package optimizer_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/optimizer"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestGoldenSamplePlan plans the shipped sample workloads against the fixed offer set
// (testdata/offers.json) and compares the JSON plan with testdata/sample.plan.golden.json.
// Run with -update after an intended change and review the diff: every line of the plan can
// be checked by hand against the offers.
func TestGoldenSamplePlan(t *testing.T) {
	plan := MustOptimize(t, optimizer.Input{
		Workloads: MustReadSample(t),
		Offers:    MustOffers(t),
	}, optimizer.DefaultOptions())
	got, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "sample.plan.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./optimizer -run TestGoldenSamplePlan -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("plan differs from %s (-want +got), rerun with -update if intended:\n%s", golden, diff)
	}
}
