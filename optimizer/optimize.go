package optimizer

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Input is everything a plan is made from. Optimize reads it and changes nothing.
type Input struct {
	// Now is the plan time: freshness is measured against it and it becomes
	// Plan.GeneratedAt. Required (the optimizer never reads the clock).
	Now time.Time
	// Workloads is the parsed workloads file.
	Workloads *File
	// Offers are today's offers (the latest offer per key), scraped or imported, from any
	// number of providers. An offer's price holds until its ValidUntil, or for
	// Options.MaxOfferAgeHours after its ObservedAt when the source gave no end: older offers
	// are left out and counted (Plan.Market.Stale), and a provider with no fresh offer is
	// listed in Plan.ExcludedProviders.
	Offers []schema.Offer
}

// Optimize plans every workload of in.Workloads on in.Offers. It fails only on unusable
// input (no time, invalid options, a workload that ParseWorkloads would have rejected); a
// workload that nothing fits gets status no_fit and a reason.
func Optimize(in Input, opts Options) (*Plan, error) {
	if in.Now.IsZero() {
		return nil, errors.New("optimize: Input.Now is required")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("optimize: %w", err)
	}
	if err := in.Workloads.validate(); err != nil {
		return nil, fmt.Errorf("optimize: %w", err)
	}
	now := in.Now.UTC()
	p := &planner{opts: &opts, now: now, k: 1 + opts.Alternatives}
	need := make(map[currentKey]bool)
	for _, t := range in.Workloads.Teams {
		for _, w := range t.Workloads {
			if c := w.Current; c != nil {
				if m, ok := gpus.Lookup(c.GPUModel); ok {
					need[currentKey{c.Provider, m.Name, c.PriceType}] = true
				}
			}
		}
	}
	p.m = buildMarket(in.Offers, now, p.opts, need)
	p.models = make([]modelState, len(p.m.models))

	plan := &Plan{
		GeneratedAt:       now,
		Options:           opts,
		Teams:             make([]TeamPlan, 0, len(in.Workloads.Teams)),
		ExcludedProviders: p.m.excluded,
		Market:            p.m.summary,
	}
	if plan.ExcludedProviders == nil {
		plan.ExcludedProviders = []ExcludedProvider{}
	}
	for _, t := range in.Workloads.Teams {
		tp := TeamPlan{Name: t.Name, Email: t.Email, Workloads: make([]WorkloadPlan, 0, len(t.Workloads))}
		for i := range t.Workloads {
			wp := p.plan(&t.Workloads[i])
			tp.Workloads = append(tp.Workloads, wp)
			tp.Totals.add(&tp.Workloads[len(tp.Workloads)-1])
		}
		tp.Totals.finish()
		plan.Totals.merge(tp.Totals)
		plan.Teams = append(plan.Teams, tp)
	}
	plan.Totals.finish()
	return plan, nil
}

// stage is how far a candidate got through the checks, in the order they run. A rejected GPU
// model is explained by its candidate that got furthest.
type stage int

const (
	stNone      stage = iota
	stGPU             // gpus_allowed/excluded, compute capability, serving engine
	stPrecision       // the GPU has no hardware path for the precision
	stMemory
	stInterconnect
	stMultiNode
	stPriceType
	stThroughput
	stDeadline
	stProvider
	stHost // host tier or reliability
	stRegion
	stAvailability
	stOK
)

func (s stage) String() string {
	return [...]string{"", "gpu", "precision", "memory", "interconnect", "multi_node", "price_type", "throughput", "deadline", "provider", "host", "region", "availability", "ok"}[s]
}

// eval is a class judged for one workload variant: the count to rent and what it costs.
type eval struct {
	k        int     // offers (nodes) rented
	nodes    int     // nodes spanned
	tp       int     // tensor-parallel GPUs (inference)
	hoursRun float64 // wall-clock hours of one run, rounded to 0.01 (jobs); 0 otherwise
	// hoursMonth is the hours billed per month per offer rented, rounded to 0.01.
	hoursMonth float64
	// f multiplies the offer's hourly price into the monthly cost: k × hoursMonth.
	f        float64
	speed    float64 // per-sequence decode tokens/s (inference)
	tpOnPCIe bool
	eff      float64 // scaling efficiency used (jobs)
	// work is the work done per hour rented, in the workload's own unit (tokens, FLOPs, units
	// of custom work): at equal cost, more work wins.
	work float64
}

// modelState tracks, per market GPU model, whether a workload found it feasible and, if not,
// the furthest rejection.
type modelState struct {
	feasible bool
	rej      rejection
}

type rejection struct {
	st    stage
	tie   float64 // larger wins within a stage; then the lower class index
	c     *class
	vi    int
	off   *schema.Offer
	extra int // k needed, for availability
}

type placementKey struct {
	provider, model string
	gpus            int
	priceType       schema.PriceType
	vi              int
}

type candidate struct {
	cost  float64 // float monthly cost: pruning only
	cents int64   // the monthly cost reported, in cents: the ranking key
	off   offerRef
	c     *class
	ev    eval
	vi    int
	pkey  placementKey
}

type planner struct {
	opts   *Options
	now    time.Time
	m      *market
	k      int // candidates kept: 1 + alternatives
	models []modelState
	top    []candidate
}

// policy is what a workload asks of the offers themselves: host tiers and reliability, and
// where they run.
type policy struct {
	tiers                        []schema.Tier // nil: any
	minReliability               float64
	continents, exceptContinents []string
	countries, exceptCountries   []string
}

// servingTiers are the hosts always-on serving runs on unless the workload says otherwise:
// datacenters and vetted hosts, not community machines that may vanish.
var servingTiers = []schema.Tier{schema.TierDatacenter, schema.TierSecure, schema.TierVerified}

func policyOf(w *Workload) policy {
	pol := policy{tiers: w.HostTiers, minReliability: w.MinReliability,
		continents: w.Regions, exceptContinents: w.ExcludeRegions, countries: w.Countries, exceptCountries: w.ExcludeCountries}
	if pol.tiers == nil && w.alwaysOnServing() {
		pol.tiers = servingTiers
	}
	if len(pol.tiers) == len(schema.Tiers) {
		pol.tiers = nil
	}
	return pol
}

// alwaysOnServing reports whether w is a service that answers users around the clock.
func (w *Workload) alwaysOnServing() bool { return w.Kind == Inference && w.ReferenceGPU == "" }

// pruneMargin covers the difference between a float ranking cost and its decimal, which is
// rounded to cents from hours rounded the same way: half a cent each side and float noise.
const pruneMargin = 0.011

func (p *planner) plan(w *Workload) WorkloadPlan {
	o := p.opts
	vs := o.size(w)
	wp := WorkloadPlan{Name: w.Name, Kind: w.Kind, Alternatives: []Placement{}, Rejected: []Rejection{}, Caveats: []string{}}
	for i := range vs {
		s := vs[i].sizing
		s.Fits = make([]Fit, 0, len(p.m.models))
		for _, md := range p.m.models {
			s.Fits = append(s.Fits, o.fit(w, &vs[i], md))
		}
		wp.Sizing = append(wp.Sizing, roundSizing(s))
	}

	clear(p.models)
	p.top = p.top[:0]
	pol := policyOf(w)
	allowedProvider := func(pr string) bool {
		return (len(w.Providers) == 0 || slices.Contains(w.Providers, strings.ToLower(pr))) &&
			!slices.Contains(w.ExcludeProviders, strings.ToLower(pr))
	}
	for _, c := range p.m.visit {
		ms := &p.models[c.modelIdx]
		// The cheapest variant that passes the class checks.
		best, bestVi := eval{}, -1
		for vi := range vs {
			ev, st := p.evalClass(w, vs, vi, c)
			if st == stOK {
				if bestVi < 0 || ev.f < best.f {
					best, bestVi = ev, vi
				}
				continue
			}
			if !ms.feasible {
				p.noteReject(ms, rejection{st: st, tie: rejTie(c), c: c, vi: vi})
			}
		}
		if bestVi < 0 {
			continue
		}
		pruneClass := len(p.top) == p.k && c.minPrice*best.f > p.top[p.k-1].cost+pruneMargin
		if pruneClass && ms.feasible {
			continue
		}
		for bi := range c.buckets {
			b := &c.buckets[bi]
			if !allowedProvider(b.provider) {
				if !ms.feasible {
					p.noteReject(ms, rejection{st: stProvider, c: c, vi: bestVi, off: b.offers[0].o})
				}
				continue
			}
			if pruneClass {
				// Feasible by class but dearer than every candidate kept. Region and
				// availability are not checked, so such a model is never listed as rejected.
				ms.feasible = true
				break
			}
			for _, ref := range b.offers {
				cost := ref.price * best.f
				if len(p.top) == p.k && cost > p.top[p.k-1].cost+pruneMargin {
					ms.feasible = true
					break
				}
				if st := offerCheck(&pol, ref, best.k); st != stOK {
					if !ms.feasible {
						p.noteReject(ms, rejection{st: st, c: c, vi: bestVi, off: ref.o, extra: best.k})
					}
					continue
				}
				ms.feasible = true
				cand := candidate{cost: cost, off: ref, c: c, ev: best, vi: bestVi}
				p.insert(&cand)
				if o.DistinctAlternatives {
					break
				}
			}
		}
	}

	if len(p.top) > 0 {
		wp.Status = StatusOK
		rec := p.placement(w, vs, &p.top[0])
		wp.Recommended = &rec
		for i := 1; i < len(p.top); i++ {
			wp.Alternatives = append(wp.Alternatives, p.placement(w, vs, &p.top[i]))
		}
	}
	for i := range p.models {
		ms := &p.models[i]
		if ms.feasible || ms.rej.st == stNone {
			continue
		}
		wp.Rejected = append(wp.Rejected, p.explain(w, vs, ms.rej))
	}
	if wp.Recommended == nil {
		wp.Status = StatusNoFit
		wp.Reason = p.noFitReason(w, vs, wp.Rejected)
	}
	p.current(w, vs, &wp)
	p.caveats(w, &wp)
	return wp
}

// rejTie ranks rejections within a stage: the configuration with the most memory, the one
// closest to fitting, explains best ("×8: no NVLink" rather than "×1: needs 6 nodes").
func rejTie(c *class) float64 {
	return float64(c.gpus) * c.vram
}

func (p *planner) noteReject(ms *modelState, r rejection) {
	cur := &ms.rej
	a, b := r.st.rank(), cur.st.rank()
	if a > b || (a == b && (r.tie > cur.tie || (r.tie == cur.tie && r.c.idx < cur.c.idx))) {
		*cur = r
	}
}

// rank orders stages for "got furthest": a missing fabric inside the node and between nodes
// are equally far, so the configuration closest to fitting (rejTie) decides between them.
func (s stage) rank() stage {
	if s == stMultiNode {
		return stInterconnect
	}
	return s
}

// offerCheck applies the per-offer constraints: host tier and reliability, location, and
// availability. An offer whose provider publishes no location passes the location checks (the
// placement then says so): dropping it would silently drop whole providers.
func offerCheck(pol *policy, ref offerRef, k int) stage {
	o := ref.o
	switch {
	case pol.tiers != nil && !slices.Contains(pol.tiers, o.Tier):
		return stHost
	case pol.minReliability > 0 && o.Reliability != nil && *o.Reliability < pol.minReliability:
		return stHost
	}
	if ref.continent != "" {
		if len(pol.continents) > 0 && !slices.Contains(pol.continents, ref.continent) || slices.Contains(pol.exceptContinents, ref.continent) {
			return stRegion
		}
	}
	if o.Country != "" {
		if len(pol.countries) > 0 && !slices.Contains(pol.countries, o.Country) || slices.Contains(pol.exceptCountries, o.Country) {
			return stRegion
		}
	} else if len(pol.countries) > 0 && ref.continent != "" && !slices.ContainsFunc(pol.countries, func(c string) bool {
		return (&schema.Offer{Country: c}).Continent() == ref.continent
	}) {
		return stRegion // no country, but on a continent none of the countries is on
	}
	if ref.avail == 0 || (ref.avail > 0 && ref.avail < int64(k)) {
		return stAvailability
	}
	return stOK
}

// located reports whether the offer says where it runs as precisely as the workload asks.
func located(pol *policy, ref offerRef) bool {
	if len(pol.countries) > 0 || len(pol.exceptCountries) > 0 {
		return ref.o.Country != ""
	}
	return len(pol.continents) == 0 && len(pol.exceptContinents) == 0 || ref.continent != ""
}

func (p *planner) placementKey(off *schema.Offer, c *class, ev eval, vi int) placementKey {
	if !p.opts.DistinctAlternatives {
		// Every offer is its own placement.
		return placementKey{provider: off.Provider + "\x00" + off.OfferID + "\x00" + off.Region, model: c.model.Name, gpus: c.gpus * ev.k, priceType: c.priceType, vi: vi}
	}
	return placementKey{provider: off.Provider, model: c.model.Name, gpus: c.gpus * ev.k, priceType: c.priceType, vi: vi}
}

// insert adds a candidate to the kept top-k, which is ordered by the monthly cost in cents and
// then the stable key, and holds at most one candidate per placement key. k is small (1 +
// alternatives), so linear scans beat anything cleverer.
func (p *planner) insert(cand *candidate) {
	cand.cents = monthlyCents(cand.off, cand.ev.k, cand.ev.hoursMonth)
	if len(p.top) == p.k && cand.cents > p.top[p.k-1].cents {
		return
	}
	cand.pkey = p.placementKey(cand.off.o, cand.c, cand.ev, cand.vi)
	for i := range p.top {
		if p.top[i].pkey == cand.pkey {
			if compareCandidates(cand, &p.top[i]) >= 0 {
				return
			}
			p.top = slices.Delete(p.top, i, i+1)
			break
		}
	}
	i := 0
	for i < len(p.top) && compareCandidates(&p.top[i], cand) < 0 {
		i++
	}
	if i >= p.k {
		return
	}
	if len(p.top) < p.k {
		p.top = append(p.top, candidate{})
	}
	copy(p.top[i+1:], p.top[i:len(p.top)-1])
	p.top[i] = *cand
}

func compareCandidates(a, b *candidate) int {
	if c := cmp.Compare(a.cents, b.cents); c != 0 {
		return c
	}
	if c := cmp.Compare(b.ev.work, a.ev.work); c != 0 { // at one price, the most work wins
		return c
	}
	if c := compareOfferKeys(a.off.o, b.off.o); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.vi, b.vi), cmp.Compare(a.off.seq, b.off.seq))
}

// monthlyCents = hourly offer price × offers rented × hours billed per month, rounded to the
// cent (half away from zero, as decimal.Round): exact integer arithmetic on micro-dollars and
// hundredths of hours, with decimals when the product does not fit 64 bits.
func monthlyCents(ref offerRef, k int, hoursMonth float64) int64 {
	centiHours := int64(math.Round(hoursMonth * 100))
	if ref.micros >= 0 && centiHours >= 0 {
		hi, lo := bits.Mul64(uint64(ref.micros), uint64(k)*uint64(centiHours))
		if hi == 0 && lo < 1<<62 {
			return int64((lo + 500_000) / 1_000_000) // 1e-8 dollars → cents
		}
	}
	d := ref.o.PriceUSDPerHour.Mul(decimal.NewFromInt(int64(k))).Mul(decimal.New(centiHours, -2)).Round(2)
	return d.Shift(2).IntPart()
}

// evalClass runs the class-level checks for variant vi of w, in stage order, and costs the
// class when it passes.
func (p *planner) evalClass(w *Workload, vs []variant, vi int, c *class) (eval, stage) {
	o := p.opts
	v := &vs[vi]
	g := c.gpus
	if st, _ := gpuCheck(w, v, c.model); st != stOK {
		return eval{}, st
	}
	n, ok := o.minGPUs(w, v, c.vram)
	if !ok {
		return eval{}, stMemory
	}
	multiNodeOK := w.Kind.Training() || (w.Kind == Custom && w.MultiNode)
	ev := eval{k: 1, nodes: 1}
	if n > g {
		if !multiNodeOK {
			return ev, stMemory
		}
		ev.k = ceilDiv(n, g)
	}
	used := g * ev.k
	if w.Kind == Inference {
		if n > o.MaxGPUsPerNode {
			return ev, stMemory
		}
		ev.tp, used = n, n
	}

	// Interconnect inside a node: the offer's fabric, as far as the model's domain reaches.
	inNode := min(g, n)
	if w.Kind == Inference {
		inNode = n
	}
	intra, linked := reach(c.model, c.intra, inNode)
	switch {
	case w.Kind == Inference && n > 1:
		// Tensor parallelism needs to know how the GPUs talk: an interconnect the source does
		// not publish may be no link at all (several hosts sold as one offer).
		if c.intra == schema.IntraUnknown || (o.InferenceTPRequiresNVLink && !linked) {
			return ev, stInterconnect
		}
		if !linked && !c.model.PeerToPeer && n > 2 {
			return ev, stInterconnect
		}
		ev.tpOnPCIe = !linked
	case w.Kind.Training() && n > 1 && g > 1 && o.ShardedTrainingRequiresNVLink:
		if !linked {
			return ev, stInterconnect
		}
	case w.Kind == Custom && n > 1 && g > 1:
		if (w.Interconnect == LinkNVLink && !linked) || (w.Interconnect == LinkNVSwitch && (c.intra != schema.IntraNVSwitch || !linked)) {
			return ev, stInterconnect
		}
	}

	// Several nodes.
	if w.Kind != Inference {
		ev.nodes = ceilDiv(used, o.MaxGPUsPerNode)
		if ev.k > 1 {
			ev.nodes = max(ev.nodes, ev.k)
		}
	}
	if ev.nodes > 1 && (!c.inter.RDMA() || ev.k > o.MaxNodes) {
		return ev, stMultiNode
	}

	// Price type.
	spot := c.priceType.Interruptible()
	if spot && !w.Interruptible {
		return ev, stPriceType
	}

	switch w.Kind {
	case Inference:
		ev.speed = p.decodeSpeed(v, c.model, n, intra)
		if w.MinDecodeTokensPerSecond > 0 && ev.speed < w.MinDecodeTokensPerSecond {
			return ev, stThroughput
		}
		hours := p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hours = p.inferenceJobHours(w, vs, vi, c.model, g, n, intra, spot)
			if hours > o.HoursPerMonth {
				return ev, stDeadline
			}
		}
		ev.hoursMonth = roundHours(hours)
		ev.work = ev.speed * float64(max(w.Concurrency, 1)) * float64(max(g/n, 1)) // tokens/s
	case Custom:
		hours := p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hours = p.customHours(w, c.model, used, intra, ev.nodes > 1, spot)
			if hours > o.HoursPerMonth {
				return ev, stDeadline
			}
		}
		ev.hoursMonth = roundHours(hours)
		ev.work = p.customRate(w, c.model, used, intra, ev.nodes > 1)
	default:
		deadline := o.MaxJobHours
		if w.DeadlineHours > 0 {
			deadline = w.DeadlineHours
		}
		h, eff := p.trainHours(v, c.model, used, intra, ev.nodes > 1, spot)
		if h > deadline {
			if !c.inter.RDMA() {
				return ev, stDeadline
			}
			// Add nodes until the run fits the deadline: the cheapest plan that finishes in
			// time rents the fewest nodes that do (cost per run is flat in nodes beyond one).
			one, _ := p.trainHours(v, c.model, g, intra, true, spot)
			k := max(ev.k, 2, ceilInt(one/deadline))
			for k <= o.MaxNodes {
				if hk, _ := p.trainHours(v, c.model, g*k, intra, true, spot); hk <= deadline {
					break
				}
				k++
			}
			if k > o.MaxNodes {
				return ev, stDeadline
			}
			ev.k = k
			used = g * k
			ev.nodes = max(ceilDiv(used, o.MaxGPUsPerNode), k)
			h, eff = p.trainHours(v, c.model, used, intra, true, spot)
		}
		ev.eff = eff
		ev.hoursRun = max(roundHours(h), 0.01)
		ev.hoursMonth = roundHours(ev.hoursRun * p.runs(w))
		ev.work = v.flops / ev.hoursRun // FLOPs per hour of the run
	}
	ev.f = float64(ev.k) * ev.hoursMonth
	return ev, stOK
}

func (p *planner) hoursPerMonth(w *Workload) float64 {
	if w.HoursPerMonth > 0 {
		return w.HoursPerMonth
	}
	return p.opts.HoursPerMonth
}

func (p *planner) runs(w *Workload) float64 {
	if w.RunsPerMonth > 0 {
		return w.RunsPerMonth
	}
	return 1
}

// efficiency is the scaling efficiency of n GPUs of model m joined by intra, across nodes when
// multiNode.
func (o *Options) efficiency(m gpus.Model, n int, intra schema.IntraNode, multiNode bool) float64 {
	eff := o.scaling(m, n, intra)
	if multiNode {
		eff *= o.Scaling.InterNode
	}
	return eff
}

// customScale is what custom work scales with on model m: the dense rate at the ScaleBy
// precision, or memory bandwidth; for fixed hours (none), the dense BF16/FP16 rate, which only
// breaks ties between offers at one price.
func customScale(w *Workload, m gpus.Model) float64 {
	switch w.ScaleBy {
	case ScaleByBandwidth:
		return m.MemBandwidthGBps
	case ScaleByNone, "":
		return max(m.TFLOPS.BF16, m.TFLOPS.FP16)
	}
	if scaleByPrecision(w, m) != nil {
		// Only today's placement can lack the path (offers without it are rejected, and so is
		// such a reference GPU): it runs at its best rate instead.
		return m.TFLOPS.Of(bestPrecision(m, Precision(w.ScaleBy)))
	}
	return m.TFLOPS.Of(Precision(w.ScaleBy))
}

// scaleByPrecision returns nil unless the custom work scales by a precision's rate that model m
// has no path for, and then why.
func scaleByPrecision(w *Workload, m gpus.Model) error {
	switch w.ScaleBy {
	case ScaleByBandwidth, ScaleByNone, "":
		return nil
	}
	return m.Computes(Precision(w.ScaleBy))
}

// shardGroup is how many of a node's GPUs share the work's state, as evalClass counts them:
// the fewest that hold it, at most the node.
func shardGroup(o *Options, w *Workload, v *variant, m gpus.Model, nodeGPUs int) int {
	if n, ok := o.minGPUs(w, v, m.VRAMGB); ok {
		return min(n, nodeGPUs)
	}
	return nodeGPUs
}

// reach is how a group of n GPUs of model m joined by intra talk: over the fabric when the
// group fits in its NVLink domain (linked), beyond it over PCIe.
func reach(m gpus.Model, intra schema.IntraNode, n int) (_ schema.IntraNode, linked bool) {
	switch {
	case intra.Linked() && n <= m.NVLinkDomain:
		return intra, true
	case intra.Linked():
		return schema.IntraPCIe, false
	}
	return intra, false
}

// customRate is the speed of custom work on n GPUs of model m: scale × GPUs × scaling.
func (p *planner) customRate(w *Workload, m gpus.Model, n int, intra schema.IntraNode, multiNode bool) float64 {
	return customScale(w, m) * float64(n) * p.opts.efficiency(m, n, intra, multiNode)
}

// customHours is the hours a month custom work takes on n GPUs of model m: its hours on the
// reference GPUs (or units ÷ units per hour there) × the reference's rate ÷ this rate, plus
// the spot restart overhead; unscaled when scale_by is none.
func (p *planner) customHours(w *Workload, m gpus.Model, n int, intra schema.IntraNode, multiNode, spot bool) float64 {
	h := w.HoursPerMonth
	if w.UnitsPerMonth > 0 {
		h = w.UnitsPerMonth / w.UnitsPerHour
	}
	if w.ScaleBy != ScaleByNone {
		ref, _ := gpus.Lookup(w.ReferenceGPU)
		nRef := w.ReferenceGPUs
		if nRef == 0 {
			nRef = max(w.GPUs, 1)
		}
		h *= p.customRate(w, ref, nRef, referenceIntra(ref, nRef), false) / p.customRate(w, m, n, intra, multiNode)
	}
	if spot {
		h *= 1 + p.opts.SpotRestartOverhead
	}
	return h
}

// referenceIntra is how n reference GPUs were joined when the work was measured: by the
// model's own fabric where it comes with the board, else over PCIe (the safe assumption: the
// reference rate is then not overstated).
func referenceIntra(ref gpus.Model, n int) schema.IntraNode {
	if n > 1 && ref.BoardFabric {
		return ref.BoardIntraNode()
	}
	return schema.IntraPCIe
}

// scaling is the efficiency of n GPUs of model m in one node joined by intra: over PCIe
// without peer-to-peer (GeForce RTX 40/50) their traffic goes through host memory.
func (o *Options) scaling(m gpus.Model, n int, intra schema.IntraNode) float64 {
	if n <= 1 {
		return 1
	}
	switch {
	case intra == schema.IntraNVSwitch:
		return o.Scaling.NVSwitch
	case intra.Linked():
		return o.Scaling.NVLink
	case !m.PeerToPeer:
		return o.Scaling.HostMemory
	}
	return o.Scaling.PCIe
}

// trainHours is §2.1: k·N·D / (n × dense TFLOPS at the training precision × MFU × scaling),
// plus the spot restart overhead. It returns the hours and the scaling efficiency used.
func (p *planner) trainHours(v *variant, m gpus.Model, n int, intra schema.IntraNode, multiNode, spot bool) (float64, float64) {
	o := p.opts
	eff := o.efficiency(m, n, intra, multiNode)
	rate := float64(n) * m.TFLOPS.Of(v.precision) * 1e12 * o.mfu(m.FormFactor) * eff
	h := v.flops / rate / 3600
	if spot {
		h *= 1 + o.SpotRestartOverhead
	}
	return h, eff
}

// decodeSpeed is the memory-bandwidth bound on per-sequence decode speed (§2.1): each step
// reads the weights and the whole KV cache once, over tp GPUs' bandwidth.
func (p *planner) decodeSpeed(v *variant, m gpus.Model, tp int, intra schema.IntraNode) float64 {
	if v.decodeGB <= 0 {
		return 0
	}
	return m.MemBandwidthGBps * float64(tp) * p.opts.scaling(m, tp, intra) / v.decodeGB
}

// inferenceJobHours scales the hours an inference batch job takes on its reference GPU by
// decode throughput: replicas × tp × bandwidth × scaling / bytes per step.
func (p *planner) inferenceJobHours(w *Workload, vs []variant, vi int, m gpus.Model, g, tp int, intra schema.IntraNode, spot bool) float64 {
	o := p.opts
	ref, _ := gpus.Lookup(w.ReferenceGPU)
	v0 := &vs[0]
	nRef := w.ReferenceGPUs
	if nRef == 0 && w.Current != nil && w.Current.GPUModel == ref.Name {
		nRef = w.Current.GPUCount // measured where it runs today
	}
	if nRef == 0 {
		nRef, _ = o.minGPUs(w, v0, ref.VRAMGB)
		nRef = max(nRef, 1)
	}
	refThr := p.decodeSpeed(v0, ref, nRef, referenceIntra(ref, nRef))
	replicas := max(g/tp, 1)
	thr := float64(replicas) * p.decodeSpeed(&vs[vi], m, tp, intra)
	h := p.hoursPerMonth(w) * refThr / thr
	if spot {
		h *= 1 + o.SpotRestartOverhead
	}
	return h
}

func roundHours(h float64) float64 { return math.Round(h*100) / 100 }

// placement renders a kept candidate.
func (p *planner) placement(w *Workload, vs []variant, cand *candidate) Placement {
	o := p.opts
	off, c, ev := cand.off.o, cand.c, cand.ev
	k := decimal.NewFromInt(int64(ev.k))
	price := off.PriceUSDPerHour.Mul(k)
	pl := Placement{
		Provider:           off.Provider,
		Region:             off.Region,
		OfferID:            off.OfferID,
		Tier:               off.Tier,
		GPUModel:           c.model.Name,
		GPUCount:           c.gpus * ev.k,
		GPUsPerNode:        min(c.gpus, o.MaxGPUsPerNode),
		Nodes:              ev.nodes,
		PriceType:          c.priceType,
		Precision:          vs[cand.vi].precision,
		IntraNode:          c.intra,
		InterNode:          c.inter,
		PriceUSDPerHour:    price,
		PriceUSDPerGPUHour: price.DivRound(decimal.NewFromInt(int64(c.gpus*ev.k)), schema.PriceDecimals),
		PriceSource:        PriceMarket,
		HoursPerMonth:      decimal.New(int64(math.Round(ev.hoursMonth*100)), -2),
		CostUSDPerMonth:    decimal.New(cand.cents, -2),
		ObservedAt:         off.ObservedAt,
		Notes:              []string{},
	}
	if w.Kind == Inference {
		pl.DecodeTokensPerSecond = math.Round(ev.speed*10) / 10
	}
	if ev.hoursRun > 0 {
		h := decimal.NewFromFloat(ev.hoursRun)
		run := price.Mul(h).Round(2)
		pl.HoursPerRun, pl.CostUSDPerRun = &h, &run
	}
	pl.UnitCost = p.unitCost(w, &pl, ev.speed, max(c.gpus/max(ev.tp, 1), 1))
	pl.Notes = p.notes(w, vs, cand.vi, c, ev, cand.off)
	return pl
}

// unitCost prices one unit of the workload's finished work on a placement: a million output
// tokens at the planned concurrency (inference; replicas × concurrency × decode speed), a run
// (training), a unit of custom work or an hour of it on the reference GPUs. Nil when the
// workload says too little to count its work.
func (p *planner) unitCost(w *Workload, pl *Placement, speed float64, replicas int) *UnitCost {
	switch {
	case w.Kind == Inference && w.Concurrency > 0 && speed > 0:
		perHour := speed * float64(w.Concurrency) * float64(replicas) * 3600
		usd := pl.PriceUSDPerHour.Mul(decimal.NewFromInt(1_000_000)).Div(decimal.NewFromFloat(perHour))
		return &UnitCost{Unit: "1M output tokens", USD: usd.Round(6)}
	case w.Kind.Training() && pl.CostUSDPerRun != nil:
		return &UnitCost{Unit: "run", USD: *pl.CostUSDPerRun}
	case w.Kind == Custom && w.UnitsPerMonth > 0:
		unit := w.Unit
		if unit == "" {
			unit = "unit"
		}
		return &UnitCost{Unit: unit, USD: pl.CostUSDPerMonth.Div(decimal.NewFromFloat(w.UnitsPerMonth)).Round(6)}
	case w.Kind == Custom && w.ReferenceGPU != "" && w.HoursPerMonth > 0:
		nRef := w.ReferenceGPUs
		if nRef == 0 {
			nRef = max(w.GPUs, 1)
		}
		return &UnitCost{Unit: fmt.Sprintf("hour of work on %d× %s", nRef, w.ReferenceGPU),
			USD: pl.CostUSDPerMonth.Div(decimal.NewFromFloat(w.HoursPerMonth)).Round(6)}
	}
	return nil
}

// notes say what a placement's numbers assume, so a reader can check them by hand.
func (p *planner) notes(w *Workload, vs []variant, vi int, c *class, ev eval, ref offerRef) []string {
	o := p.opts
	notes := []string{}
	if pol := policyOf(w); !located(&pol, ref) {
		notes = append(notes, fmt.Sprintf("%s does not publish where this offer runs: check it is in %s", ref.o.Provider, where(&pol)))
	}
	if c.model.HostCPU == gpus.ARM64 {
		notes = append(notes, "the Grace host CPU is aarch64: x86-only containers and wheels do not run")
	}
	if ev.tpOnPCIe {
		notes = append(notes, fmt.Sprintf("tensor parallel ×%d over PCIe: about %.0f%% less throughput than with NVLink", ev.tp, (1-o.scaling(c.model, ev.tp, schema.IntraPCIe)/o.Scaling.NVLink)*100))
	}
	if ev.k > 1 && ref.avail < 0 {
		notes = append(notes, fmt.Sprintf("%d nodes needed; the provider does not publish availability", ev.k))
	}
	spot := c.priceType.Interruptible()
	switch {
	case w.Kind.Training() || w.ReferenceGPU != "": // a job, or work measured on a reference GPU
		if spot {
			notes = append(notes, fmt.Sprintf("spot: hours include %.0f%% for checkpoints and restarts", o.SpotRestartOverhead*100))
		}
	case spot:
		notes = append(notes, "spot capacity can be reclaimed: keep a fallback for serving")
	}
	if w.Kind.Training() {
		v := &vs[vi]
		notes = append(notes, fmt.Sprintf("%.3g FLOPs / (%d × %g %s TFLOPS × MFU %.2f × scaling %.3g) = %.2f h per run",
			v.flops, c.gpus*ev.k, c.model.TFLOPS.Of(v.precision), v.precision, o.mfu(c.model.FormFactor), ev.eff, ev.hoursRun/spotFactor(o, spot)))
		if w.DeadlineHours > 0 {
			notes = append(notes, fmt.Sprintf("deadline %s h per run", trimFloat(w.DeadlineHours)))
		}
	}
	return notes
}

// where names the locations a workload allows, for notes.
func where(pol *policy) string {
	var in []string
	in = append(in, pol.continents...)
	in = append(in, pol.countries...)
	if len(in) == 0 {
		return "none of " + strings.Join(append(slices.Clone(pol.exceptContinents), pol.exceptCountries...), ", ")
	}
	return strings.Join(in, ", ")
}

func spotFactor(o *Options, spot bool) float64 {
	if spot {
		return 1 + o.SpotRestartOverhead
	}
	return 1
}

// explain turns the furthest rejection of a GPU model into a sentence.
func (p *planner) explain(w *Workload, vs []variant, r rejection) Rejection {
	o := p.opts
	c, v := r.c, &vs[r.vi]
	g := c.gpus
	prec := ""
	if len(vs) > 1 {
		prec = " " + string(v.precision)
	}
	head := func(n int) string { return fmt.Sprintf("%s ×%d%s", c.model.Name, n, prec) }
	out := Rejection{GPUModel: c.model.Name, GPUCount: g, Stage: r.st.String()}
	n, ok := o.minGPUs(w, v, c.vram)
	switch r.st {
	case stGPU, stPrecision:
		_, why := gpuCheck(w, v, c.model)
		out.Reason = fmt.Sprintf("%s: %s", head(g), why)
	case stMemory:
		switch {
		case w.Kind == Custom && c.vram < w.MinVRAMGBPerGPU:
			out.Reason = fmt.Sprintf("%s: %s GB per GPU < %s GB needed per GPU", head(g), gb(c.vram), gb(w.MinVRAMGBPerGPU))
		case w.Kind == Custom && n > g && w.GPUs > g:
			out.Reason = fmt.Sprintf("%s: only %d in the offer, %d needed in one node", head(g), g, w.GPUs)
		case w.Kind == Custom:
			out.Reason = fmt.Sprintf("%s: %s GB < %s GB needed in one node", head(g), gb(float64(g)*c.vram), gb(w.MinTotalVRAMGB))
		case !ok:
			out.Reason = fmt.Sprintf("%s: %s GB per GPU is used up by the %s GB every GPU needs (overhead, activations)", head(g), gb(c.vram), gb(v.perGPU))
		case w.Kind == Inference && n > o.MaxGPUsPerNode:
			out.Reason = fmt.Sprintf("%s: needs %d GPUs, more than one node of %d holds; inference does not span nodes", head(g), n, o.MaxGPUsPerNode)
		default:
			out.Reason = fmt.Sprintf("%s: %s GB < %s GB needed", head(g), gb(float64(g)*c.vram), gb(o.neededGB(w, v, g)))
		}
	case stInterconnect:
		inNode := min(g, max(n, 1))
		if w.Kind == Inference {
			inNode = max(n, 1)
		}
		switch {
		case w.Kind == Custom && w.Interconnect == LinkNVSwitch && c.intra != schema.IntraNVSwitch:
			out.Reason = fmt.Sprintf("%s: no NVSwitch (%s), the workload asks for nvswitch", head(g), c.intra)
		case c.intra == schema.IntraUnknown && w.Kind == Inference:
			out.Reason = fmt.Sprintf("%s: interconnect not published: tensor parallelism is never planned on a link nobody vouches for", head(inNode))
		case c.intra == schema.IntraUnknown:
			out.Reason = fmt.Sprintf("%s: interconnect not published, so not NVLink, and %s", head(g), needsLink(w))
		case c.intra.Linked() && inNode > c.model.NVLinkDomain:
			out.Reason = fmt.Sprintf("%s: its %s joins %d GPUs, not the %d the work is split over; %s", head(g), c.model.Topology, c.model.NVLinkDomain, inNode, needsLink(w))
		case w.Kind == Inference && !c.model.PeerToPeer && !o.InferenceTPRequiresNVLink:
			out.Reason = fmt.Sprintf("%s: %s", head(inNode), noPeerToPeer(c.model))
		default:
			out.Reason = fmt.Sprintf("%s: no NVLink, %s", head(g), needsLink(w))
		}
	case stMultiNode:
		k := max(ceilDiv(n, g), 2)
		if c.inter.RDMA() {
			out.Reason = fmt.Sprintf("%s: needs %d nodes, more than the %d allowed", head(g), k, o.MaxNodes)
		} else {
			out.Reason = fmt.Sprintf("%s: needs %d nodes (%d GPUs), and the offer has no InfiniBand/RoCE between nodes (%s)", head(g), k, n, c.inter)
		}
	case stPriceType:
		if c.priceType.Interruptible() {
			out.Reason = fmt.Sprintf("%s: only %s offers, and the workload is not interruptible", head(g), c.priceType)
		} else {
			out.Reason = fmt.Sprintf("%s: only %s offers, which need a commitment", head(g), c.priceType)
		}
	case stThroughput:
		intra, _ := reach(c.model, c.intra, max(n, 1))
		speed := p.decodeSpeed(v, c.model, max(n, 1), intra)
		out.Reason = fmt.Sprintf("%s: ~%.0f tokens/s per sequence < %s needed", head(max(n, 1)), speed, trimFloat(w.MinDecodeTokensPerSecond))
	case stDeadline:
		spot := c.priceType.Interruptible()
		switch w.Kind {
		case Inference:
			intra, _ := reach(c.model, c.intra, max(n, 1))
			h := p.inferenceJobHours(w, vs, r.vi, c.model, g, max(n, 1), intra, spot)
			out.Reason = fmt.Sprintf("%s: %s h of work a month at this throughput, more than the %s h in a month", head(g), trimFloat(roundHours(h)), trimFloat(o.HoursPerMonth))
			return out
		case Custom:
			intra, _ := reach(c.model, c.intra, min(g, max(n, 1)))
			h := p.customHours(w, c.model, g, intra, false, spot)
			out.Reason = fmt.Sprintf("%s: %s h of work a month at its %s, more than the %s h in a month", head(g), trimFloat(roundHours(h)), w.ScaleBy, trimFloat(o.HoursPerMonth))
			return out
		}
		deadline, what := o.MaxJobHours, "longest run a plan may propose (max_job_hours)"
		if w.DeadlineHours > 0 {
			deadline, what = w.DeadlineHours, "deadline"
		}
		used := g * max(ceilDiv(n, g), 1)
		if c.inter.RDMA() {
			used = g * o.MaxNodes
		}
		intra, _ := reach(c.model, c.intra, min(g, used))
		h, _ := p.trainHours(v, c.model, used, intra, used > min(g, o.MaxGPUsPerNode), spot)
		out.Reason = fmt.Sprintf("%s: %s h per run > %s h %s", head(used), trimFloat(roundHours(h)), trimFloat(deadline), what)
		if c.inter.RDMA() {
			out.Reason += fmt.Sprintf(" on %d nodes, the most allowed", o.MaxNodes)
		} else {
			out.Reason += "; more nodes need InfiniBand/RoCE"
		}
	case stProvider:
		out.Reason = fmt.Sprintf("%s: offered by %s, which the workload does not allow", head(g), r.off.Provider)
	case stHost:
		pol := policyOf(w)
		switch {
		case pol.tiers != nil && !slices.Contains(pol.tiers, r.off.Tier):
			out.Reason = fmt.Sprintf("%s: only on %s hosts at %s; %s", head(g), r.off.Tier, r.off.Provider, tierPolicy(w, pol.tiers))
		default:
			out.Reason = fmt.Sprintf("%s: host reliability %.3g at %s < %.3g (min_reliability)", head(g), *r.off.Reliability, r.off.Provider, pol.minReliability)
		}
	case stRegion:
		out.Reason = fmt.Sprintf("%s: offered in %s (%s), where the workload does not run", head(g), location(r.off), r.off.Provider)
	case stAvailability:
		if r.off.AvailableCount != nil && *r.off.AvailableCount == 0 {
			out.Reason = fmt.Sprintf("%s: none available at %s", head(g), r.off.Provider)
		} else {
			out.Reason = fmt.Sprintf("%s: %d nodes needed, %d available at %s", head(g), r.extra, *r.off.AvailableCount, r.off.Provider)
		}
	}
	return out
}

// location names where an offer runs: country, region and continent as far as known.
func location(o *schema.Offer) string {
	var parts []string
	for _, s := range []string{o.Region, o.Country, o.Continent()} {
		if s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "an unnamed place"
	}
	return strings.Join(parts, ", ")
}

// tierPolicy says which host tiers a workload runs on, and why when it is the default.
func tierPolicy(w *Workload, tiers []schema.Tier) string {
	names := make([]string, len(tiers))
	for i, t := range tiers {
		names[i] = string(t)
	}
	if w.HostTiers == nil {
		return fmt.Sprintf("always-on serving runs on %s hosts unless host_tiers says otherwise", strings.Join(names, ", "))
	}
	return fmt.Sprintf("host_tiers allows %s", strings.Join(names, ", "))
}

// noFitReason summarizes why nothing on the market fits: the sizing, then the closest GPU
// models, and the offers that would have fitted but whose prices no longer hold. (Readers put
// "nothing on the market fits" before it.)
func (p *planner) noFitReason(w *Workload, vs []variant, rej []Rejection) string {
	expired, newest := p.expiredFitting(w, vs)
	if len(p.m.classes) == 0 {
		if p.m.summary.Stale > 0 {
			return fmt.Sprintf("no offer's price holds now: %d of the %d offers on the market are older than the %s h a price holds (optimize.options.max_offer_age_hours) or past their valid_until; scrape or import again, or raise the limit",
				p.m.summary.Stale, p.m.summary.Offers, trimFloat(p.opts.MaxOfferAgeHours))
		}
		return "no offers on the market (no offers given)"
	}
	v := &vs[len(vs)-1]
	var b strings.Builder
	if w.Kind == Custom {
		fmt.Fprintf(&b, "needs %s GB per GPU and %s GB in total", gb(w.MinVRAMGBPerGPU), gb(w.MinTotalVRAMGB))
	} else {
		fmt.Fprintf(&b, "needs %s GB across GPUs plus %s GB on each GPU, at %.0f%% utilization",
			gb(v.sharded), gb(v.perGPU), p.opts.Utilization*100)
	}
	if expired > 0 {
		fmt.Fprintf(&b, "; %d offers of GPU models that would fit are left out because their prices no longer hold (the newest observed %s ago; optimize.options.max_offer_age_hours is %s)",
			expired, age(p.now.Sub(newest)), trimFloat(p.opts.MaxOfferAgeHours))
	}
	// The rejections that got furthest first.
	sorted := slices.Clone(rej)
	slices.SortStableFunc(sorted, func(a, b Rejection) int { return stageOf(b.Stage) - stageOf(a.Stage) })
	for i, r := range sorted {
		if i == 3 {
			break
		}
		if i == 0 {
			b.WriteString("; closest: ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(r.Reason)
	}
	return b.String()
}

// expiredFitting counts the offers left out for age whose GPU model would hold the workload,
// with the newest observation among them.
func (p *planner) expiredFitting(w *Workload, vs []variant) (offers int, newest time.Time) {
	for name, e := range p.m.expired {
		m, _ := gpus.Lookup(name)
		for i := range vs {
			if p.opts.fit(w, &vs[i], m).Feasible {
				offers += e.offers
				if e.newest.After(newest) {
					newest = e.newest
				}
				break
			}
		}
	}
	return offers, newest
}

func stageOf(s string) int {
	for st := stNone; st <= stOK; st++ {
		if st.String() == s {
			return int(st)
		}
	}
	return 0
}

// current prices the workload's current placement at today's market (or the price paid),
// costs it with the same model on the node shape it runs on, and fills the savings.
func (p *planner) current(w *Workload, vs []variant, wp *WorkloadPlan) {
	cur := w.Current
	if cur == nil {
		return
	}
	o := p.opts
	nodeGPUs := min(cur.GPUCount, o.MaxGPUsPerNode)
	pl := Placement{
		Provider:    cur.Provider,
		Region:      cur.Region,
		GPUModel:    cur.GPUModel,
		GPUCount:    cur.GPUCount,
		GPUsPerNode: nodeGPUs,
		Nodes:       ceilDiv(cur.GPUCount, o.MaxGPUsPerNode),
		PriceType:   cur.PriceType,
		IntraNode:   schema.IntraUnknown,
		InterNode:   schema.InterUnknown,
		PriceSource: PriceNone,
		Notes:       []string{},
	}
	wp.Current = &pl
	model, ok := gpus.Lookup(cur.GPUModel)
	if !ok {
		wp.Caveats = append(wp.Caveats, "current placement not priced: "+unknownGPU(cur.GPUModel)+"; its memory and speed are not known")
		return
	}
	// The offer it is priced from: the cheapest per GPU of the provider, model and price type
	// (and region), of the placement's own shape when there is one, else of its node's.
	shape := func(off *schema.Offer) int {
		switch int(off.GPUCount) {
		case cur.GPUCount:
			return 0
		case nodeGPUs:
			return 1
		}
		return 2
	}
	var match *schema.Offer
	for _, off := range p.m.currentOffers(currentKey{cur.Provider, model.Name, cur.PriceType}) {
		if cur.Region != "" && !strings.EqualFold(cur.Region, off.Region) {
			continue
		}
		if match == nil || shape(off) < shape(match) {
			match = off
		}
	}
	count := decimal.NewFromInt(int64(cur.GPUCount))
	if match != nil {
		market := perGPUPrice(match)
		pl.PriceUSDPerGPUHour = market
		pl.PriceUSDPerHour = market.Mul(count)
		pl.PriceSource = PriceMarket
		pl.OfferID, pl.Tier, pl.ObservedAt = match.OfferID, match.Tier, match.ObservedAt
		if pl.Region == "" {
			pl.Region = match.Region
		}
		switch {
		case match.Holds(p.now, p.m.maxAge):
		case match.ValidUntil != nil:
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement priced from a %s price that held until %s (its valid_until)",
				cur.Provider, match.ValidUntil.UTC().Format("2006-01-02 15:04 UTC")))
		default:
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement priced from a %s price observed %s ago, which no longer holds (max_offer_age_hours %s)",
				cur.Provider, age(p.now.Sub(match.ObservedAt)), trimFloat(o.MaxOfferAgeHours)))
		}
		pl.MarketUSDPerGPUHour = &market
	}
	switch {
	case cur.PaidUSDPerGPUHour != nil:
		pl.PriceUSDPerGPUHour = *cur.PaidUSDPerGPUHour
		pl.PriceUSDPerHour = cur.PaidUSDPerGPUHour.Mul(count)
		pl.PriceSource = PricePaid
	case cur.PaidUSDPerHour != nil:
		pl.PriceUSDPerHour = *cur.PaidUSDPerHour
		pl.PriceUSDPerGPUHour = cur.PaidUSDPerHour.DivRound(count, schema.PriceDecimals)
		pl.PriceSource = PricePaid
	default:
		pl.MarketUSDPerGPUHour = nil // it is the price itself
	}

	// The node it runs on: the fabric the matching node offer publishes, else the one the
	// model's board carries; InfiniBand between nodes, since it runs across them today.
	intra := schema.IntraPCIe
	switch {
	case nodeGPUs == 1:
	case match != nil && shape(match) < 2 && match.IntraNode != schema.IntraUnknown && match.IntraNode != "":
		intra = match.IntraNode
	case model.BoardFabric:
		intra = model.BoardIntraNode()
	default:
		pl.Notes = append(pl.Notes, "intra-node link of today's nodes not known: PCIe assumed")
	}
	pl.IntraNode = intra
	if pl.Nodes > 1 {
		pl.InterNode = schema.InterInfiniBand
		switch {
		case match != nil && match.InterNode.RDMA():
			pl.InterNode = match.InterNode
		default:
			pl.Notes = append(pl.Notes, fmt.Sprintf("runs on %d nodes today: InfiniBand between them assumed", pl.Nodes))
		}
	} else if match != nil && shape(match) == 0 {
		pl.InterNode = match.InterNode
	}

	// Cost it: the preferred precision the GPUs compute and hold, else the first they
	// compute, on one offer of all its GPUs.
	vi, fits := -1, false
	for i := range vs {
		if vs[i].precision != "" && model.Computes(vs[i].precision) != nil {
			continue
		}
		if vi < 0 {
			vi = i
		}
		if n, ok := o.minGPUs(w, &vs[i], model.VRAMGB); ok && n <= cur.GPUCount {
			vi, fits = i, true
			break
		}
	}
	computes := vi >= 0
	vi = max(vi, 0)
	v := vs[vi]
	pl.Precision = v.precision
	if !computes {
		why := model.Computes(v.precision)
		v.precision = bestPrecision(model, v.precision)
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("today's %s has %v (%s): costed at its %s rate", model.Name, why, precisionUse(w, vs[vi].precision), v.precision))
	}
	if !fits {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement does not fit by this sizing: %d× %s has %s GB, %s GB needed",
			cur.GPUCount, model.Name, gb(float64(cur.GPUCount)*model.VRAMGB), gb(o.neededGB(w, &v, cur.GPUCount))))
	}
	spot := cur.PriceType.Interruptible()
	var hoursMonth, speed float64
	replicas := 1
	switch {
	case w.Kind.Training():
		linkedIntra, _ := reach(model, intra, shardGroup(o, w, &v, model, nodeGPUs))
		h, _ := p.trainHours(&v, model, cur.GPUCount, linkedIntra, pl.Nodes > 1, spot)
		hr := max(roundHours(h), 0.01)
		hd := decimal.NewFromFloat(hr)
		pl.HoursPerRun = &hd
		if w.DeadlineHours > 0 && hr > w.DeadlineHours {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("the current placement takes %s h per run, more than the %s h deadline", trimFloat(hr), trimFloat(w.DeadlineHours)))
		}
		hoursMonth = roundHours(hr * p.runs(w))
		if pl.PriceSource != PriceNone {
			run := pl.PriceUSDPerHour.Mul(hd).Round(2)
			pl.CostUSDPerRun = &run
		}
	case w.Kind == Inference:
		tp := cur.GPUCount
		if n, ok := o.minGPUs(w, &v, model.VRAMGB); ok && n <= cur.GPUCount {
			tp = n
		}
		replicas = max(cur.GPUCount/tp, 1)
		tpIntra, _ := reach(model, intra, tp)
		speed = p.decodeSpeed(&v, model, tp, tpIntra)
		pl.DecodeTokensPerSecond = math.Round(speed*10) / 10
		hoursMonth = p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hoursMonth = p.inferenceJobHours(w, vs, vi, model, cur.GPUCount, tp, tpIntra, spot)
		}
		hoursMonth = roundHours(hoursMonth)
	case w.ReferenceGPU != "":
		if err := scaleByPrecision(w, model); err != nil {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("today's %s has %v (the work scales by its %s rate): costed at its %s rate", model.Name, err, w.ScaleBy, bestPrecision(model, Precision(w.ScaleBy))))
		}
		linkedIntra, _ := reach(model, intra, shardGroup(o, w, &v, model, nodeGPUs))
		hoursMonth = roundHours(p.customHours(w, model, cur.GPUCount, linkedIntra, pl.Nodes > 1, spot))
	default:
		hoursMonth = roundHours(p.hoursPerMonth(w))
	}
	pl.HoursPerMonth = decimal.NewFromFloat(hoursMonth)
	if pl.PriceSource == PriceNone {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement not priced: no %s %s %s offer today and no paid price given", cur.Provider, model.Name, cur.PriceType))
		return
	}
	pl.CostUSDPerMonth = pl.PriceUSDPerHour.Mul(pl.HoursPerMonth).Round(2)
	pl.UnitCost = p.unitCost(w, &pl, speed, replicas)
	if wp.Recommended != nil {
		s := &Savings{USDPerMonth: pl.CostUSDPerMonth.Sub(wp.Recommended.CostUSDPerMonth)}
		s.Percent = percent(s.USDPerMonth, pl.CostUSDPerMonth)
		wp.Savings = s
		if s.USDPerMonth.IsNegative() {
			wp.Caveats = append(wp.Caveats, "the current placement costs less than any feasible offer (a paid price below market, or it breaks a constraint or the sizing)")
		}
	}
}

// bestPrecision is the precision a GPU that lacks p runs the same work in: FP16, else FP32.
func bestPrecision(m gpus.Model, p Precision) Precision {
	if p != "" && m.Computes(p) == nil {
		return p
	}
	if m.Computes(FP16) == nil {
		return FP16
	}
	return FP32
}

// caveats adds workload-level warnings that do not belong to one placement.
func (p *planner) caveats(w *Workload, wp *WorkloadPlan) {
	for _, pr := range w.Providers {
		if !p.hasProvider(pr) {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("provider %q in providers has no offers", pr))
		} else if p.isStale(pr) {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("provider %q in providers is excluded for freshness", pr))
		}
	}
	if wp.Recommended != nil && wp.Recommended.PriceType.Interruptible() && w.Kind == Inference && w.ReferenceGPU == "" {
		wp.Caveats = append(wp.Caveats, "recommended capacity is spot: interruptions take the service down until it is rescheduled")
	}
}

func (p *planner) hasProvider(name string) bool {
	for pr := range p.m.providers {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}

func (p *planner) isStale(name string) bool {
	for pr := range p.m.stale {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}

// roundSizing rounds the reported sizes to 0.01 GB so plans carry no float noise.
func roundSizing(s Sizing) Sizing {
	s.WeightsGB = round2(s.WeightsGB)
	s.KVCacheGB = round2(s.KVCacheGB)
	s.StateGB = round2(s.StateGB)
	s.ShardedGB = round2(s.ShardedGB)
	s.ActivationsGBPerGPU = round2(s.ActivationsGBPerGPU)
	s.OverheadGBPerGPU = round2(s.OverheadGBPerGPU)
	s.NeededGBOneGPU = round2(s.NeededGBOneGPU)
	s.TrainingPFLOPs = math.Round(s.TrainingPFLOPs)
	return s
}

// trimFloat formats hours and counts with at most two decimals: 504, 1670.7, 4.49.
func trimFloat(x float64) string { return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64) }
