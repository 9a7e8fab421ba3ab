package optimizer_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// fixtureNow is the plan time of the fixed offer set (offers observed an hour earlier).
var fixtureNow = time.Date(2025, 11, 29, 13, 0, 0, 0, time.UTC)

// MustParse parses a workloads document or fails the test.
func MustParse(tb testing.TB, name, doc string) *optimizer.File {
	tb.Helper()
	f, err := optimizer.ParseWorkloads(name, []byte(doc))
	if err != nil {
		tb.Fatalf("ParseWorkloads(%s): %v", name, err)
	}
	return f
}

// MustReadSample parses the sample workloads file the repo ships (plans/workloads.sample.yaml).
func MustReadSample(tb testing.TB) *optimizer.File {
	tb.Helper()
	const name = "workloads.sample.yaml"
	data, err := os.ReadFile(filepath.Join("..", "plans", name))
	if err != nil {
		tb.Fatal(err)
	}
	f, err := optimizer.ParseWorkloads(name, data)
	if err != nil {
		tb.Fatalf("ParseWorkloads(%s): %v", name, err)
	}
	return f
}

// MustOffers loads the fixed offer set.
func MustOffers(tb testing.TB) []schema.Offer {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "offers.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var offers []schema.Offer
	if err := json.Unmarshal(data, &offers); err != nil {
		tb.Fatal(err)
	}
	return offers
}

// MustOptimize plans or fails the test.
func MustOptimize(tb testing.TB, in optimizer.Input, opts optimizer.Options) *optimizer.Plan {
	tb.Helper()
	if in.Now.IsZero() {
		in.Now = fixtureNow
	}
	p, err := optimizer.Optimize(in, opts)
	if err != nil {
		tb.Fatalf("Optimize: %v", err)
	}
	return p
}

// offerSpec builds a test offer tersely: per-GPU price as a decimal string.
type offerSpec struct {
	provider, id, model string
	gpus                uint16
	pt                  schema.PriceType
	perGPU              string
	intra               schema.IntraNode
	inter               schema.InterNode
	region              string
	avail               *uint32
}

func (s offerSpec) offer() schema.Offer {
	m, _ := gpus.Lookup(s.model)
	per := decimal.RequireFromString(s.perGPU)
	o := schema.Offer{
		ObservedAt: fixtureNow.Add(-time.Hour), RunID: "test", Provider: s.provider, OfferID: s.id,
		Tier: schema.TierDatacenter, Region: s.region, GPUModel: s.model, GPUNameRaw: s.model,
		GPUCount: s.gpus, VRAMGB: m.VRAMGB, PriceType: s.pt,
		PriceUSDPerHour: per.Mul(decimal.NewFromInt(int64(s.gpus))), PriceUSDPerGPUHour: per,
		IntraNode: s.intra, InterNode: s.inter, AvailableCount: s.avail, Stock: schema.StockUnknown,
	}
	if o.PriceType == "" {
		o.PriceType = schema.OnDemand
	}
	if o.IntraNode == "" {
		o.IntraNode = schema.IntraPCIe
	}
	if o.InterNode == "" {
		o.InterNode = schema.InterNone
	}
	return o
}

func offers(specs ...offerSpec) []schema.Offer {
	out := make([]schema.Offer, len(specs))
	for i, s := range specs {
		out[i] = s.offer()
	}
	return out
}

// planOne plans one workload (given as YAML of a workload item) on offers.
func planOne(tb testing.TB, workloadYAML string, offs []schema.Offer, opts optimizer.Options) optimizer.WorkloadPlan {
	tb.Helper()
	doc := "teams:\n  - name: t\n    email: t@example.com\n    workloads:\n" + indent(workloadYAML, "      ")
	p := MustOptimize(tb, optimizer.Input{Workloads: MustParse(tb, "test.yaml", doc), Offers: offs}, opts)
	return p.Teams[0].Workloads[0]
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// placementID names a placement for assertions: provider/offer ×GPUs price type.
func placementID(p *optimizer.Placement) string {
	if p == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s/%s ×%d %s", p.Provider, p.OfferID, p.GPUCount, p.PriceType)
}
