package optimizer_test

import (
	"bytes"
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
		Workloads:      MustReadFile(t, "workloads.sample.yaml"),
		Offers:         MustOffers(t),
		LastGoodScrape: fixtureScrapes(),
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

// TestSampleShipped checks that the sample shipped in deploy/ is the one the tests plan.
func TestSampleShipped(t *testing.T) {
	a, err := os.ReadFile(filepath.Join("testdata", "workloads.sample.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "deploy", "workloads.sample.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("deploy/workloads.sample.yaml differs from optimizer/testdata/workloads.sample.yaml; copy one over the other")
	}
}
