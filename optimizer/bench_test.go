package optimizer_test

import (
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// benchInput draws n workloads (in teams of 10) and m offers from the property generator.
func benchInput(workloads, offerCount int) optimizer.Input {
	g := newGen(42)
	f := &optimizer.File{Name: "bench"}
	for i := 0; i < workloads; i++ {
		if i%10 == 0 {
			f.Teams = append(f.Teams, optimizer.Team{Name: fmt.Sprintf("team-%d", i/10), Email: "t@example.com"})
		}
		w := g.workload()
		w.Name = fmt.Sprintf("w-%d", i)
		if i%3 == 0 {
			w.Current = &optimizer.Current{Provider: "p1", GPUModel: "H100-SXM-80GB", GPUCount: 8, PriceType: schema.OnDemand}
		}
		t := &f.Teams[len(f.Teams)-1]
		t.Workloads = append(t.Workloads, w)
	}
	offs := make([]schema.Offer, offerCount)
	for i := range offs {
		offs[i] = g.marketOffer(i)
	}
	return optimizer.Input{Now: fixtureNow, Workloads: f, Offers: offs}
}

// marketOffer draws an offer shaped like the real market: prices spread around each GPU's
// going rate to the cent, SXM boards with NVSwitch, consumer cards on PCIe, InfiniBand only on
// the datacenter providers' 8-GPU nodes.
func (g *gen) marketOffer(i int) schema.Offer {
	rates := map[string]float64{
		"RTX-4090-24GB": 0.34, "L4-24GB": 0.43, "L40S-48GB": 0.90, "RTX-A6000-48GB": 0.50,
		"A100-SXM-40GB": 1.29, "A100-SXM-80GB": 1.60, "H100-SXM-80GB": 2.50, "H100-PCIE-80GB": 2.20,
		"H200-SXM-141GB": 3.60, "MI300X-192GB": 2.50, "B200-SXM-180GB": 4.70,
	}
	model := pick(g, propModels...)
	m, _ := gpus.Lookup(model)
	s := offerSpec{
		provider: pick(g, "vastai", "vastai", "vastai", "runpod", "runpod", "lambda", "coreweave", "tensordock"),
		id:       fmt.Sprintf("o%d", i),
		model:    model,
		gpus:     pick[uint16](g, 1, 1, 1, 2, 4, 8),
		pt:       pick(g, schema.OnDemand, schema.OnDemand, schema.Spot),
		perGPU:   decimal.NewFromFloat(rates[model] * (0.7 + 0.6*g.r.Float64())).Round(2).String(),
		intra:    schema.IntraPCIe,
		inter:    schema.InterNone,
		region:   pick(g, "", "us-east-1", "us-west-2", "eu-west-1", "US", "CZ"),
	}
	if s.gpus > 1 && m.BoardFabric && m.FormFactor == gpus.SXM {
		s.intra = schema.IntraNVSwitch
	}
	if s.gpus == 8 && (s.provider == "coreweave" || s.provider == "lambda") {
		s.inter = schema.InterInfiniBand
	}
	if g.r.IntN(4) == 0 {
		n := uint32(g.r.IntN(5))
		s.avail = &n
	}
	return s.offer()
}

// BenchmarkPlan plans workloads × offers end to end (index build included). The target: 1,000
// workloads × 100,000 offers under 250 ms on a 2-core machine.
//
//	go test ./optimizer -run '^$' -bench BenchmarkPlan -benchmem
func BenchmarkPlan(b *testing.B) {
	for _, nw := range []int{100, 1000} {
		for _, no := range []int{10_000, 100_000} {
			in := benchInput(nw, no)
			opts := optimizer.DefaultOptions()
			b.Run(fmt.Sprintf("workloads=%d/offers=%d", nw, no), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := optimizer.Optimize(in, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
