package optimizer_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// gen draws random but plausible workloads and offers from a seed, so a failure can be
// replayed by its seed.
type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))} }

func pick[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

var propModels = []string{
	"RTX-4090-24GB", "L4-24GB", "L40S-48GB", "RTX-A6000-48GB", "A100-SXM-40GB", "A100-SXM-80GB",
	"H100-SXM-80GB", "H100-PCIE-80GB", "H200-SXM-141GB", "MI300X-192GB", "B200-SXM-180GB",
}

func (g *gen) offer(i int) schema.Offer {
	s := offerSpec{
		provider: pick(g, "p1", "p2", "p3", "p4"),
		id:       fmt.Sprintf("o%d", i),
		model:    pick(g, propModels...),
		gpus:     pick[uint16](g, 1, 1, 2, 4, 8, 8),
		pt:       pick(g, schema.OnDemand, schema.OnDemand, schema.Spot),
		// Few distinct prices, so ties happen.
		perGPU: pick(g, "0.20", "0.35", "0.50", "0.79", "1.10", "1.39", "1.99", "2.49", "2.79", "3.50"),
		intra:  pick(g, schema.IntraPCIe, schema.IntraNVLink, schema.IntraNVSwitch, schema.IntraUnknown),
		inter:  pick(g, schema.InterNone, schema.InterEthernet, schema.InterInfiniBand, schema.InterRoCE),
		region: pick(g, "", "north-america", "europe", "us-east-1", "asia-south-1"),
	}
	switch g.r.IntN(5) {
	case 0:
		n := uint32(g.r.IntN(4))
		s.avail = &n
	case 1:
		n := uint32(100)
		s.avail = &n
	}
	o := s.offer()
	o.Tier = pick(g, schema.TierDatacenter, schema.TierSecure, schema.TierCommunity, schema.TierVerified, schema.TierUnverified)
	return o
}

func (g *gen) workload() optimizer.Workload {
	w := optimizer.Workload{Name: "w", Interruptible: g.r.IntN(2) == 0}
	switch g.r.IntN(4) {
	case 0, 1:
		w.Kind = optimizer.Inference
		w.ParamsB = pick(g, 1.0, 7, 13, 34, 70)
		w.Precisions = pick(g,
			[]optimizer.Precision{optimizer.FP16},
			[]optimizer.Precision{optimizer.FP16, optimizer.FP8},
			[]optimizer.Precision{optimizer.INT4, optimizer.INT8})
		w.KVCacheGB = pick(g, 1.0, 5, 20)
		w.HoursPerMonth = pick(g, 0.0, 200)
		if g.r.IntN(4) == 0 {
			w.MinDecodeTokensPerSecond = 20
		}
		if g.r.IntN(4) == 0 {
			w.ReferenceGPU, w.HoursPerMonth = "A100-SXM-80GB", 100
		}
	case 2:
		w.Kind = pick(g, optimizer.LoRA, optimizer.QLoRA, optimizer.FullFinetune, optimizer.Pretrain)
		w.ParamsB = pick(g, 1.0, 7, 13, 70)
		w.TrainTokens = pick(g, 1e8, 1e9, 1e10)
		w.DeadlineHours = pick(g, 0.0, 24, 100, 720)
		w.RunsPerMonth = pick(g, 1.0, 4)
	default:
		w.Kind = optimizer.Custom
		w.MinVRAMGBPerGPU = pick(g, 16.0, 40, 80)
		w.GPUs = pick(g, 1, 2, 4, 8)
		w.Interconnect = pick(g, optimizer.LinkNone, optimizer.LinkNVLink, optimizer.LinkNVSwitch)
		w.MultiNode = g.r.IntN(3) == 0
		w.HoursPerMonth = 300
	}
	switch g.r.IntN(4) {
	case 0:
		w.Providers = []string{"p1", "p2"}
	case 1:
		w.ExcludeProviders = []string{"p3"}
	case 2:
		w.Regions = []string{"north-america"}
	}
	return w
}

func planWith(tb testing.TB, w optimizer.Workload, offs []schema.Offer, opts optimizer.Options) optimizer.WorkloadPlan {
	tb.Helper()
	f := &optimizer.File{Name: "gen", Teams: []optimizer.Team{{Name: "t", Email: "t@example.com", Workloads: []optimizer.Workload{w}}}}
	return MustOptimize(tb, optimizer.Input{Workloads: f, Offers: offs}, opts).Teams[0].Workloads[0]
}

// offerOf finds the offer a placement was made from.
func offerOf(offs []schema.Offer, p *optimizer.Placement) (int, bool) {
	for i, o := range offs {
		if o.Provider == p.Provider && o.OfferID == p.OfferID && o.PriceType == p.PriceType && o.Region == p.Region {
			return i, true
		}
	}
	return 0, false
}

// checkFeasible re-checks a placement against the workload with the rules stated
// independently of the optimizer's code paths.
func checkFeasible(w optimizer.Workload, o schema.Offer, p *optimizer.Placement, opts optimizer.Options) error {
	m, _ := gpus.Lookup(o.GPUModel)
	var errs []string
	fail := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	if o.PriceType == schema.Spot && !w.Interruptible {
		fail("spot for a non-interruptible workload")
	}
	if len(w.Providers) > 0 && !slices.Contains(w.Providers, o.Provider) || slices.Contains(w.ExcludeProviders, o.Provider) {
		fail("provider %s not allowed", o.Provider)
	}
	if c := o.Continent(); len(w.Regions) > 0 && c != "" && !slices.Contains(w.Regions, c) {
		fail("region %q (%s) not allowed", o.Region, c)
	}
	serving := []schema.Tier{schema.TierDatacenter, schema.TierSecure, schema.TierVerified}
	if w.Kind == optimizer.Inference && w.ReferenceGPU == "" && w.HostTiers == nil && !slices.Contains(serving, o.Tier) {
		fail("always-on serving on a %s host", o.Tier)
	}
	if p.Precision != "" && m.Computes(p.Precision) != nil {
		fail("%s on %s: %v", p.Precision, m.Name, m.Computes(p.Precision))
	}
	if o.AvailableCount != nil && int(*o.AvailableCount) < max(1, p.GPUCount/int(o.GPUCount)) {
		fail("%d available, %d offers rented", *o.AvailableCount, p.GPUCount/int(o.GPUCount))
	}
	if p.GPUCount%int(o.GPUCount) != 0 {
		fail("rents %d GPUs of %d-GPU offers", p.GPUCount, o.GPUCount)
	}
	rented := float64(p.GPUCount)
	if w.Kind == optimizer.Custom {
		if o.VRAMGB < w.MinVRAMGBPerGPU || p.GPUCount < w.GPUs {
			fail("custom: %d × %v GB", p.GPUCount, o.VRAMGB)
		}
	} else {
		// Some acceptable precision fits: sharded + n × per-GPU ≤ n × VRAM × utilization on the
		// GPUs it uses (inference uses the tensor-parallel count, at most the GPUs in one offer).
		ok := false
		for _, s := range opts.Size(&w) {
			if p.Precision != "" && s.Precision != p.Precision {
				continue
			}
			perGPU := s.OverheadGBPerGPU + s.ActivationsGBPerGPU
			if rented*o.VRAMGB*opts.GPUMemoryUtilization+0.02 >= s.ShardedGB+rented*perGPU || (w.Kind == optimizer.Inference && fitsSome(s, o, opts)) {
				ok = true
			}
		}
		if !ok {
			fail("memory: %d × %v GB too small", p.GPUCount, o.VRAMGB)
		}
	}
	if p.Nodes > 1 && !o.InterNode.RDMA() {
		fail("%d nodes without RDMA", p.Nodes)
	}
	if w.Kind.Training() && w.DeadlineHours > 0 && p.HoursPerRun.InexactFloat64() > w.DeadlineHours+0.01 {
		fail("run %s h > deadline %v h", p.HoursPerRun, w.DeadlineHours)
	}
	if want := p.PriceUSDPerHour.Mul(p.HoursPerMonth).Round(2); !want.Equal(p.CostUSDPerMonth) {
		fail("cost %s ≠ price × hours %s", p.CostUSDPerMonth, want)
	}
	if !p.PriceUSDPerHour.Equal(o.PriceUSDPerHour.Mul(decimal.NewFromInt(int64(p.GPUCount / int(o.GPUCount))))) {
		fail("price %s is not the offer's price × offers rented", p.PriceUSDPerHour)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func fitsSome(s optimizer.Sizing, o schema.Offer, opts optimizer.Options) bool {
	for n := 1; n <= int(o.GPUCount); n++ {
		if float64(n)*o.VRAMGB*opts.GPUMemoryUtilization+0.02 >= s.ShardedGB+float64(n)*s.OverheadGBPerGPU {
			return true
		}
	}
	return false
}

func cost(p *optimizer.Placement) decimal.Decimal { return p.CostUSDPerMonth }

// TestProperties checks, on seeded random markets and workloads: the chosen offer is feasible;
// no feasible offer is cheaper (each offer planned alone is the brute-force oracle for the
// index, pruning and ranking); adding an offer never makes the plan dearer; removing the
// chosen offer yields the runner-up.
func TestProperties(t *testing.T) {
	iterations := 400
	if testing.Short() {
		iterations = 60
	}
	strict := optimizer.DefaultOptions()
	strict.DistinctAlternatives = false
	distinct := optimizer.DefaultOptions()
	planned := 0
	for seed := uint64(1); seed <= uint64(iterations); seed++ {
		g := newGen(seed)
		w := g.workload()
		offs := make([]schema.Offer, 5+g.r.IntN(30))
		for i := range offs {
			offs[i] = g.offer(i)
		}
		for _, opts := range []optimizer.Options{strict, distinct} {
			wp := planWith(t, w, offs, opts)
			tag := fmt.Sprintf("seed %d, distinct %v, workload %+v", seed, opts.DistinctAlternatives, w)

			// Brute force: each offer alone.
			var best *decimal.Decimal
			for i := range offs {
				alone := planWith(t, w, offs[i:i+1], opts)
				if alone.Recommended == nil {
					continue
				}
				c := cost(alone.Recommended)
				if best == nil || c.LessThan(*best) {
					best = &c
				}
			}
			if wp.Recommended == nil {
				if best != nil {
					t.Fatalf("%s: no plan, but an offer alone costs %s", tag, best)
				}
				if wp.Status != optimizer.StatusNoFit || wp.Reason == "" {
					t.Fatalf("%s: no plan and no reason", tag)
				}
				continue
			}
			planned++
			rec := wp.Recommended
			i, ok := offerOf(offs, rec)
			if !ok {
				t.Fatalf("%s: recommended %s is not an offer", tag, placementID(rec))
			}
			if err := checkFeasible(w, offs[i], rec, opts); err != nil {
				t.Fatalf("%s: recommended %s is not feasible: %v", tag, placementID(rec), err)
			}
			if best == nil || !cost(rec).Equal(*best) {
				t.Fatalf("%s: recommended costs %s, cheapest feasible offer alone %v", tag, cost(rec), best)
			}
			prev := cost(rec)
			for _, a := range wp.Alternatives {
				j, ok := offerOf(offs, &a)
				if !ok {
					t.Fatalf("%s: alternative %s is not an offer", tag, placementID(&a))
				}
				if err := checkFeasible(w, offs[j], &a, opts); err != nil {
					t.Fatalf("%s: alternative %s is not feasible: %v", tag, placementID(&a), err)
				}
				if cost(&a).LessThan(prev) {
					t.Fatalf("%s: alternatives out of order", tag)
				}
				prev = cost(&a)
			}

			// Adding an offer never makes the plan dearer.
			more := append(slices.Clone(offs), g.offer(len(offs)))
			if wp2 := planWith(t, w, more, opts); wp2.Recommended == nil || cost(wp2.Recommended).GreaterThan(cost(rec)) {
				t.Fatalf("%s: adding an offer made the plan dearer or infeasible", tag)
			}

			// Removing the chosen offer yields the runner-up.
			fewer := slices.Delete(slices.Clone(offs), i, i+1)
			wp3 := planWith(t, w, fewer, opts)
			switch {
			case len(wp.Alternatives) == 0 && wp3.Recommended != nil && !opts.DistinctAlternatives:
				t.Fatalf("%s: no runner-up, yet removing the chosen offer leaves %s", tag, placementID(wp3.Recommended))
			case len(wp.Alternatives) == 0:
			case wp3.Recommended == nil:
				t.Fatalf("%s: removing the chosen offer leaves nothing, runner-up was %s", tag, placementID(&wp.Alternatives[0]))
			case !opts.DistinctAlternatives:
				if got, want := placementID(wp3.Recommended), placementID(&wp.Alternatives[0]); got != want || !cost(wp3.Recommended).Equal(cost(&wp.Alternatives[0])) {
					t.Fatalf("%s: after removing the chosen offer got %s (%s), runner-up was %s (%s)", tag, got, cost(wp3.Recommended), want, cost(&wp.Alternatives[0]))
				}
			default:
				// One runner-up per placement: the new choice is the runner-up, or another offer
				// of the removed one's placement that costs no more than it.
				r3, alt := wp3.Recommended, &wp.Alternatives[0]
				same := r3.Provider == rec.Provider && r3.GPUModel == rec.GPUModel && r3.GPUCount == rec.GPUCount && r3.PriceType == rec.PriceType
				if placementID(r3) != placementID(alt) && !(same && !cost(r3).GreaterThan(cost(alt))) {
					t.Fatalf("%s: after removing the chosen offer got %s, runner-up was %s", tag, placementID(r3), placementID(alt))
				}
			}
		}
	}
	if planned < iterations/2 {
		t.Errorf("only %d of %d generated cases had a plan: the generator is too strict", planned, 2*iterations)
	}
}
