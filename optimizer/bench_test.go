package optimizer_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

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

// benchInputs caches the drawn inputs by size: drawing a million offers takes seconds, and
// every -count run of a benchmark would draw them again.
var benchInputs = map[[2]int]optimizer.Input{}

// cachedBenchInput is benchInput(workloads, offerCount), drawn once per test binary.
func cachedBenchInput(workloads, offerCount int) optimizer.Input {
	key := [2]int{workloads, offerCount}
	in, ok := benchInputs[key]
	if !ok {
		in = benchInput(workloads, offerCount)
		benchInputs[key] = in
	}
	return in
}

// planSizes are the workloads × offers the plan is benchmarked at: the market scale
// is 1,000 workloads over 100k and 1M offers.
var planSizes = []struct{ workloads, offers int }{
	{100, 10_000}, {100, 100_000}, {1000, 10_000}, {1000, 100_000}, {1000, 1_000_000},
}

// BenchmarkPlan plans workloads × offers end to end (index build included) and reports
// ms/plan and cpu-ms/plan, the CPU time of the whole process (the collector's included),
// which other benchmarks running beside move much less than the wall clock. The targets on a
// 2-core machine: 1,000 workloads × 100,000 offers under 250 ms, × 1,000,000 offers under 1 s,
// growing at most about ×10 with the offers (linear). A size whose tenth of the offers was
// measured just before in the same run also reports growth-per-10x-offers, its cpu-ms/plan
// over that one's.
//
//	go test ./optimizer -run '^$' -bench BenchmarkPlan -benchmem
func BenchmarkPlan(b *testing.B) {
	cpuMsPerPlan := map[[2]int]float64{}
	for _, size := range planSizes {
		b.Run(fmt.Sprintf("workloads=%d/offers=%d", size.workloads, size.offers), func(b *testing.B) {
			in := cachedBenchInput(size.workloads, size.offers)
			opts := optimizer.DefaultOptions()
			timeGrowth(b, "ms/plan", cpuMsPerPlan, [2]int{size.workloads, size.offers}, func() error {
				_, err := optimizer.Optimize(in, opts)
				return err
			})
		})
	}
}

// BenchmarkIndexMarket times the market index alone (buildMarket), which is the part of a
// plan that grows with the offers, at 100k and 1M offers, and reports ms/index, cpu-ms/index
// and growth-per-10x-offers as BenchmarkPlan does (10 is linear).
//
//	go test ./optimizer -run '^$' -bench BenchmarkIndexMarket -benchmem
func BenchmarkIndexMarket(b *testing.B) {
	cpuMsPerIndex := map[[2]int]float64{}
	for _, offers := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("offers=%d", offers), func(b *testing.B) {
			in := cachedBenchInput(1000, offers)
			opts := optimizer.DefaultOptions()
			timeGrowth(b, "ms/index", cpuMsPerIndex, [2]int{1000, offers}, func() error {
				if optimizer.IndexMarket(in, opts) == 0 {
					return errors.New("no class indexed")
				}
				return nil
			})
		})
	}
}

// timeGrowth runs op in b's loop, reports its times (reportTimes) and, when the size of a tenth
// of the offers of size (workloads, offers) ran before it, growth-per-10x-offers: its
// cpu-ms over that one's.
func timeGrowth(b *testing.B, unit string, cpuMs map[[2]int]float64, size [2]int, op func() error) {
	b.ReportAllocs()
	cpuStart := processCPU(b)
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	ms := reportTimes(b, cpuStart, unit)
	cpuMs[size] = ms
	if tenth, ok := cpuMs[[2]int{size[0], size[1] / 10}]; ok {
		b.ReportMetric(ms/tenth, "growth-per-10x-offers")
	}
}

// reportTimes reports the wall and CPU milliseconds per iteration of b's loop, as unit and
// cpu-unit (the process's CPU time since cpuStart), and returns the CPU figure.
func reportTimes(b *testing.B, cpuStart time.Duration, unit string) float64 {
	n := float64(b.N)
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/n, unit)
	cpuMs := float64((processCPU(b) - cpuStart).Microseconds()) / 1000 / n
	b.ReportMetric(cpuMs, "cpu-"+unit)
	return cpuMs
}

// processCPU is the CPU time, user and system, the test process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
