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
	// Offers are today's offers (the latest offer per key), from any number of providers.
	Offers []schema.Offer
	// LastGoodScrape is each provider's last good scrape time (LastGoodScrapes builds it from
	// the run log). A provider with offers but missing from a non-nil map is excluded. When
	// nil, a provider's freshness is its newest offer's ObservedAt.
	LastGoodScrape map[string]time.Time
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
	p := &planner{opts: &opts, k: 1 + opts.Alternatives}
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
	p.m = buildMarket(in.Offers, in.LastGoodScrape, now, p.opts, need)
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
	stNone stage = iota
	stPrecision
	stMemory
	stInterconnect
	stMultiNode
	stPriceType
	stThroughput
	stDeadline
	stProvider
	stRegion
	stAvailability
	stOK
)

func (s stage) String() string {
	return [...]string{"", "precision", "memory", "interconnect", "multi_node", "price_type", "throughput", "deadline", "provider", "region", "availability", "ok"}[s]
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
	m      *market
	k      int // candidates kept: 1 + alternatives
	models []modelState
	top    []candidate
}

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
				if st := offerCheck(w, ref, best.k); st != stOK {
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

// offerCheck applies the per-offer constraints: region and availability.
func offerCheck(w *Workload, ref offerRef, k int) stage {
	region := ref.region
	if len(w.Regions) > 0 && !slices.Contains(w.Regions, region) {
		return stRegion
	}
	if slices.Contains(w.ExcludeRegions, region) {
		return stRegion
	}
	if ref.avail == 0 || (ref.avail > 0 && ref.avail < int64(k)) {
		return stAvailability
	}
	return stOK
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
	if v.precision == FP8 && o.FP8NeedsHardware && c.model.TFLOPS.FP8 == 0 {
		return eval{}, stPrecision
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

	// Interconnect inside a node.
	linked := c.intra.Linked()
	switch {
	case w.Kind == Inference && n > 1:
		if o.InferenceTPRequiresNVLink && !linked {
			return ev, stInterconnect
		}
		ev.tpOnPCIe = !linked
	case w.Kind.Training() && n > 1 && g > 1 && o.ShardedTrainingRequiresNVLink:
		if !linked {
			return ev, stInterconnect
		}
	case w.Kind == Custom && n > 1 && g > 1:
		if (w.Interconnect == LinkNVLink && !linked) || (w.Interconnect == LinkNVSwitch && c.intra != schema.IntraNVSwitch) {
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
		ev.speed = p.decodeSpeed(v, c.model, n, c.intra)
		if w.MinDecodeTokensPerSecond > 0 && ev.speed < w.MinDecodeTokensPerSecond {
			return ev, stThroughput
		}
		hours := p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hours = p.inferenceJobHours(w, vs, vi, c.model, g, n, c.intra, spot)
			if hours > o.HoursPerMonth {
				return ev, stDeadline
			}
		}
		ev.hoursMonth = roundHours(hours)
	case Custom:
		ev.hoursMonth = roundHours(p.hoursPerMonth(w))
	default:
		deadline := o.MaxJobHours
		if w.DeadlineHours > 0 {
			deadline = w.DeadlineHours
		}
		h, eff := p.trainHours(v, c.model, used, c.intra, ev.nodes > 1, spot)
		if h > deadline {
			if !c.inter.RDMA() {
				return ev, stDeadline
			}
			// Add nodes until the run fits the deadline: the cheapest plan that finishes in
			// time rents the fewest nodes that do (cost per run is flat in nodes beyond one).
			one, _ := p.trainHours(v, c.model, g, c.intra, true, spot)
			k := max(ev.k, 2, ceilInt(one/deadline))
			for k <= o.MaxNodes {
				if hk, _ := p.trainHours(v, c.model, g*k, c.intra, true, spot); hk <= deadline {
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
			h, eff = p.trainHours(v, c.model, used, c.intra, true, spot)
		}
		ev.eff = eff
		ev.hoursRun = max(roundHours(h), 0.01)
		ev.hoursMonth = roundHours(ev.hoursRun * p.runs(w))
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

// scaling is the efficiency of n GPUs in one node joined by intra.
func (o *Options) scaling(n int, intra schema.IntraNode) float64 {
	if n <= 1 {
		return 1
	}
	switch intra {
	case schema.IntraNVSwitch:
		return o.Scaling.NVSwitch
	case schema.IntraNVLink:
		return o.Scaling.NVLink
	}
	return o.Scaling.PCIe
}

// trainHours is §2.1: k·N·D / (n × dense TFLOPS × MFU × scaling), plus the spot restart
// overhead. It returns the hours and the scaling efficiency used.
func (p *planner) trainHours(v *variant, m gpus.Model, n int, intra schema.IntraNode, multiNode, spot bool) (float64, float64) {
	o := p.opts
	eff := o.scaling(n, intra)
	if multiNode {
		eff *= o.Scaling.InterNode
	}
	rate := float64(n) * trainingTFLOPS(m) * 1e12 * o.mfu(m.FormFactor) * eff
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
	return m.MemBandwidthGBps * float64(tp) * p.opts.scaling(tp, intra) / v.decodeGB
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
	refIntra := schema.IntraPCIe
	if linkable(ref) {
		refIntra = schema.IntraNVLink
	}
	refThr := p.decodeSpeed(v0, ref, nRef, refIntra)
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
	pl.Notes = p.notes(w, vs, cand.vi, c, ev, cand.off)
	return pl
}

// notes say what a placement's numbers assume, so a reader can check them by hand.
func (p *planner) notes(w *Workload, vs []variant, vi int, c *class, ev eval, ref offerRef) []string {
	o := p.opts
	notes := []string{}
	if c.inferred && (ev.tp > 1 || c.gpus > 1) {
		notes = append(notes, fmt.Sprintf("intra-node link not published: NVLink assumed for a %s board", c.model.FormFactor))
	}
	if ev.tpOnPCIe {
		notes = append(notes, fmt.Sprintf("tensor parallel ×%d over PCIe: about %.0f%% less throughput than with NVLink", ev.tp, (1-o.Scaling.PCIe/o.Scaling.NVLink)*100))
	}
	if ev.k > 1 && ref.avail < 0 {
		notes = append(notes, fmt.Sprintf("%d nodes needed; the provider does not publish availability", ev.k))
	}
	spot := c.priceType.Interruptible()
	switch {
	case w.Kind.Training() || (w.Kind == Inference && w.ReferenceGPU != ""):
		if spot {
			notes = append(notes, fmt.Sprintf("spot: hours include %.0f%% for checkpoints and restarts", o.SpotRestartOverhead*100))
		}
	case spot:
		notes = append(notes, "spot capacity can be reclaimed: keep a fallback for serving")
	}
	if w.Kind.Training() {
		v := &vs[vi]
		notes = append(notes, fmt.Sprintf("%.3g FLOPs / (%d × %g TFLOPS × MFU %.2f × scaling %.3g) = %.2f h per run",
			v.flops, c.gpus*ev.k, trainingTFLOPS(c.model), o.mfu(c.model.FormFactor), ev.eff, ev.hoursRun/spotFactor(o, spot)))
		if w.DeadlineHours > 0 {
			notes = append(notes, fmt.Sprintf("deadline %s h per run", trimFloat(w.DeadlineHours)))
		}
	}
	return notes
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
	case stPrecision:
		out.Reason = fmt.Sprintf("%s: no FP8 support, the fp8 weights need it", head(g))
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
		switch {
		case w.Kind == Custom && w.Interconnect == LinkNVSwitch:
			out.Reason = fmt.Sprintf("%s: no NVSwitch (%s), the workload asks for nvswitch", head(g), c.intra)
		case c.intra == schema.IntraUnknown:
			out.Reason = fmt.Sprintf("%s: interconnect not published, %s NVLink", head(g), strings.TrimSuffix(needsLink(w), " it")+"s")
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
		speed := p.decodeSpeed(v, c.model, max(n, 1), c.intra)
		out.Reason = fmt.Sprintf("%s: ~%.0f tokens/s per sequence < %s needed", head(max(n, 1)), speed, trimFloat(w.MinDecodeTokensPerSecond))
	case stDeadline:
		spot := c.priceType.Interruptible()
		if w.Kind == Inference {
			h := p.inferenceJobHours(w, vs, r.vi, c.model, g, max(n, 1), c.intra, spot)
			out.Reason = fmt.Sprintf("%s: %s h of work a month at this throughput, more than the %s h in a month", head(g), trimFloat(roundHours(h)), trimFloat(o.HoursPerMonth))
			break
		}
		deadline, what := o.MaxJobHours, "longest run a plan may propose (max_job_hours)"
		if w.DeadlineHours > 0 {
			deadline, what = w.DeadlineHours, "deadline"
		}
		used := g * max(ceilDiv(n, g), 1)
		if c.inter.RDMA() {
			used = g * o.MaxNodes
		}
		h, _ := p.trainHours(v, c.model, used, c.intra, used > min(g, o.MaxGPUsPerNode), spot)
		out.Reason = fmt.Sprintf("%s: %s h per run > %s h %s", head(used), trimFloat(roundHours(h)), trimFloat(deadline), what)
		if c.inter.RDMA() {
			out.Reason += fmt.Sprintf(" on %d nodes, the most allowed", o.MaxNodes)
		} else {
			out.Reason += "; more nodes need InfiniBand/RoCE"
		}
	case stProvider:
		out.Reason = fmt.Sprintf("%s: offered by %s, which the workload does not allow", head(g), r.off.Provider)
	case stRegion:
		out.Reason = fmt.Sprintf("%s: offered in %s (%s), a region the workload does not allow", head(g), regionName(r.off.Region), r.off.Provider)
	case stAvailability:
		if r.off.AvailableCount != nil && *r.off.AvailableCount == 0 {
			out.Reason = fmt.Sprintf("%s: none available at %s", head(g), r.off.Provider)
		} else {
			out.Reason = fmt.Sprintf("%s: %d nodes needed, %d available at %s", head(g), r.extra, *r.off.AvailableCount, r.off.Provider)
		}
	}
	return out
}

func regionName(r string) string {
	if r == "" {
		return "an unnamed region"
	}
	return r
}

// noFitReason summarizes why nothing fits: the sizing, then the closest GPU models.
func (p *planner) noFitReason(w *Workload, vs []variant, rej []Rejection) string {
	if len(p.m.classes) == 0 {
		return "no offers on the market (all providers excluded or no offers given)"
	}
	v := &vs[len(vs)-1]
	var b strings.Builder
	if w.Kind == Custom {
		fmt.Fprintf(&b, "nothing on the market fits: needs %s GB per GPU and %s GB in total", gb(w.MinVRAMGBPerGPU), gb(w.MinTotalVRAMGB))
	} else {
		fmt.Fprintf(&b, "nothing on the market fits: needs %s GB across GPUs plus %s GB on each GPU, at %.0f%% utilization",
			gb(v.sharded), gb(v.perGPU), p.opts.Utilization*100)
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

func stageOf(s string) int {
	for st := stNone; st <= stOK; st++ {
		if st.String() == s {
			return int(st)
		}
	}
	return 0
}

// current prices the workload's current placement at today's market (or the price paid),
// costs it with the same model, and fills the savings.
func (p *planner) current(w *Workload, vs []variant, wp *WorkloadPlan) {
	cur := w.Current
	if cur == nil {
		return
	}
	o := p.opts
	model, _ := gpus.Lookup(cur.GPUModel)
	// The cheapest offer per GPU with the same GPU count, else with any count.
	var match *schema.Offer
	for _, off := range p.m.currentOffers(currentKey{cur.Provider, model.Name, cur.PriceType}) {
		if cur.Region != "" && !strings.EqualFold(cur.Region, off.Region) {
			continue
		}
		if match == nil || (int(off.GPUCount) == cur.GPUCount && int(match.GPUCount) != cur.GPUCount) {
			match = off
		}
	}
	count := decimal.NewFromInt(int64(cur.GPUCount))
	pl := Placement{
		Provider:    cur.Provider,
		Region:      cur.Region,
		GPUModel:    model.Name,
		GPUCount:    cur.GPUCount,
		GPUsPerNode: min(cur.GPUCount, o.MaxGPUsPerNode),
		Nodes:       ceilDiv(cur.GPUCount, o.MaxGPUsPerNode),
		PriceType:   cur.PriceType,
		IntraNode:   schema.IntraUnknown,
		InterNode:   schema.InterUnknown,
		PriceSource: PriceNone,
		Notes:       []string{},
	}
	c := &class{model: model, vram: model.VRAMGB, gpus: cur.GPUCount, intra: schema.IntraPCIe, inter: schema.InterUnknown, priceType: cur.PriceType}
	if cur.GPUCount > 1 && linkable(model) {
		c.intra = schema.IntraNVLink
	}
	if match != nil {
		market := perGPUPrice(match)
		pl.PriceUSDPerGPUHour = market
		pl.PriceUSDPerHour = market.Mul(count)
		pl.PriceSource = PriceMarket
		pl.OfferID, pl.Tier, pl.ObservedAt = match.OfferID, match.Tier, match.ObservedAt
		if pl.Region == "" {
			pl.Region = match.Region
		}
		if match.GPUCount == uint16(min(cur.GPUCount, math.MaxUint16)) {
			c.intra, _ = effectiveIntra(match, model, o)
			c.inter = match.InterNode
		}
		if p.m.stale[cur.Provider] {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement priced from %s data older than %s h: the provider is excluded for freshness", cur.Provider, trimFloat(o.MaxScrapeAgeHours)))
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
	pl.IntraNode, pl.InterNode = c.intra, c.inter

	// Cost it: the preferred precision that fits, else the first; one offer of all its GPUs.
	vi, fits := 0, false
	for i := range vs {
		if n, ok := o.minGPUs(w, &vs[i], c.vram); ok && n <= cur.GPUCount {
			vi, fits = i, true
			break
		}
	}
	v := &vs[vi]
	pl.Precision = v.precision
	if !fits {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement does not fit by this sizing: %d× %s has %s GB, %s GB needed",
			cur.GPUCount, model.Name, gb(float64(cur.GPUCount)*c.vram), gb(o.neededGB(w, v, cur.GPUCount))))
	}
	spot := cur.PriceType.Interruptible()
	var hoursMonth float64
	switch {
	case w.Kind.Training():
		h, _ := p.trainHours(v, model, cur.GPUCount, c.intra, pl.Nodes > 1, spot)
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
		if n, ok := o.minGPUs(w, v, c.vram); ok && n <= cur.GPUCount {
			tp = n
		}
		pl.DecodeTokensPerSecond = math.Round(p.decodeSpeed(v, model, tp, c.intra)*10) / 10
		hoursMonth = p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hoursMonth = p.inferenceJobHours(w, vs, vi, model, cur.GPUCount, tp, c.intra, spot)
		}
		hoursMonth = roundHours(hoursMonth)
	default:
		hoursMonth = roundHours(p.hoursPerMonth(w))
	}
	pl.HoursPerMonth = decimal.NewFromFloat(hoursMonth)
	if pl.PriceSource == PriceNone {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement not priced: no %s %s %s offer today and no paid price given", cur.Provider, model.Name, cur.PriceType))
		wp.Current = &pl
		return
	}
	pl.CostUSDPerMonth = pl.PriceUSDPerHour.Mul(pl.HoursPerMonth).Round(2)
	wp.Current = &pl
	if wp.Recommended != nil {
		s := &Savings{USDPerMonth: pl.CostUSDPerMonth.Sub(wp.Recommended.CostUSDPerMonth)}
		s.Percent = percent(s.USDPerMonth, pl.CostUSDPerMonth)
		wp.Savings = s
		if s.USDPerMonth.IsNegative() {
			wp.Caveats = append(wp.Caveats, "the current placement costs less than any feasible offer (a paid price below market, or it breaks a constraint or the sizing)")
		}
	}
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
