package optimizer

import (
	"github.com/gpucost/gpucost/schema"
)

// eval is a class judged for one workload variant: the count to rent and what it costs.
type eval struct {
	offersRented   int     // offers (nodes) rented
	nodes          int     // nodes spanned
	tensorParallel int     // tensor-parallel GPUs (inference)
	hoursRun       float64 // wall-clock hours of one run, rounded to 0.01 (jobs); 0 otherwise
	// hoursMonth is the hours billed per month per offer rented, rounded to 0.01.
	hoursMonth float64
	// offerHours multiplies the offer's hourly price into the monthly cost: offersRented ×
	// hoursMonth.
	offerHours  float64
	decodeSpeed float64 // per-sequence decode tokens/s (inference)
	tpOnPCIe    bool
	scalingEff  float64 // scaling efficiency used (jobs)
	// workPerHour is the workPerHour done per hour rented, in the workload's own unit (tokens, FLOPs, units
	// of custom workPerHour): at equal cost, more workPerHour wins.
	workPerHour float64
}

// evalClass runs the class-level checks for variant vi of w, in stage order, and costs the
// class when it passes.
func (p *planner) evalClass(w *Workload, variants []variant, variantIdx int, c *class) (eval, stage) {
	o := p.opts
	v := &variants[variantIdx]
	g := c.gpusPerOffer
	if st, _ := gpuCheck(w, v, c.model); st != stageOK {
		return eval{}, st
	}
	n, ok := o.minGPUs(w, v, c.vram)
	if !ok {
		return eval{}, stageMemory
	}
	multiNodeOK := w.Kind.Training() || (w.Kind == Custom && w.MultiNode)
	ev := eval{offersRented: 1, nodes: 1}
	if n > g {
		if !multiNodeOK {
			return ev, stageMemory
		}
		ev.offersRented = ceilDiv(n, g)
	}
	used := g * ev.offersRented
	if w.Kind == Inference {
		if n > o.MaxGPUsPerNode {
			return ev, stageMemory
		}
		ev.tensorParallel, used = n, n
	}

	// Interconnect inside a node: the offer's fabric, as far as the model's domain reaches.
	inNode := min(g, n)
	if w.Kind == Inference {
		inNode = n
	}
	intra, linked := reach(c.model, c.intraNode, inNode)
	switch {
	case w.Kind == Inference && n > 1:
		// Tensor parallelism needs to know how the GPUs talk: an interconnect the source does
		// not publish may be no link at all (several hosts sold as one offer).
		if c.intraNode == schema.IntraUnknown || (o.InferenceTPRequiresNVLink && !linked) {
			return ev, stageInterconnect
		}
		if !linked && !c.model.PeerToPeer && n > 2 {
			return ev, stageInterconnect
		}
		ev.tpOnPCIe = !linked
	case w.Kind.Training() && n > 1 && g > 1 && o.ShardedTrainingRequiresNVLink:
		if !linked {
			return ev, stageInterconnect
		}
	case w.Kind == Custom && n > 1 && g > 1:
		if (w.Interconnect == LinkNVLink && !linked) || (w.Interconnect == LinkNVSwitch && (c.intraNode != schema.IntraNVSwitch || !linked)) {
			return ev, stageInterconnect
		}
	}

	// Several nodes.
	if w.Kind != Inference {
		ev.nodes = ceilDiv(used, o.MaxGPUsPerNode)
		if ev.offersRented > 1 {
			ev.nodes = max(ev.nodes, ev.offersRented)
		}
	}
	if ev.nodes > 1 && (!c.interNode.RDMA() || ev.offersRented > o.MaxNodes) {
		return ev, stageMultiNode
	}

	// Price type.
	spot := c.priceType.Interruptible()
	if spot && !w.Interruptible {
		return ev, stagePriceType
	}

	switch w.Kind {
	case Inference:
		ev.decodeSpeed = p.decodeSpeed(v, c.model, n, intra)
		if w.MinDecodeTokensPerSecond > 0 && ev.decodeSpeed < w.MinDecodeTokensPerSecond {
			return ev, stageThroughput
		}
		hours := p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hours = p.inferenceJobHours(w, variants, variantIdx, c.model, g, n, intra, spot)
			if hours > o.HoursPerMonth {
				return ev, stageDeadline
			}
		}
		ev.hoursMonth = roundHours(hours)
		ev.workPerHour = ev.decodeSpeed * float64(max(w.Concurrency, 1)) * float64(max(g/n, 1)) // tokens/s
	case Custom:
		hours := p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hours = p.customHours(w, c.model, used, intra, ev.nodes > 1, spot)
			if hours > o.HoursPerMonth {
				return ev, stageDeadline
			}
		}
		ev.hoursMonth = roundHours(hours)
		ev.workPerHour = p.customRate(w, c.model, used, intra, ev.nodes > 1)
	default:
		deadline := o.MaxJobHours
		if w.DeadlineHours > 0 {
			deadline = w.DeadlineHours
		}
		h, eff := p.trainHours(v, c.model, used, intra, ev.nodes > 1, spot)
		if h > deadline {
			if !c.interNode.RDMA() {
				return ev, stageDeadline
			}
			// Add nodes until the run fits the deadline: the cheapest plan that finishes in
			// time rents the fewest nodes that do (cost per run is flat in nodes beyond one).
			one, _ := p.trainHours(v, c.model, g, intra, true, spot)
			k := max(ev.offersRented, 2, ceilInt(one/deadline))
			for k <= o.MaxNodes {
				if hk, _ := p.trainHours(v, c.model, g*k, intra, true, spot); hk <= deadline {
					break
				}
				k++
			}
			if k > o.MaxNodes {
				return ev, stageDeadline
			}
			ev.offersRented = k
			used = g * k
			ev.nodes = max(ceilDiv(used, o.MaxGPUsPerNode), k)
			h, eff = p.trainHours(v, c.model, used, intra, true, spot)
		}
		ev.scalingEff = eff
		ev.hoursRun = max(roundHours(h), 0.01)
		ev.hoursMonth = roundHours(ev.hoursRun * p.runs(w))
		ev.workPerHour = v.flops / ev.hoursRun // FLOPs per hour of the run
	}
	ev.offerHours = float64(ev.offersRented) * ev.hoursMonth
	return ev, stageOK
}
