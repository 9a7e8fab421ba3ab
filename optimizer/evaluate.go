package optimizer

import (
	"github.com/gpucost/gpucost/schema"
)

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
