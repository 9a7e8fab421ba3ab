package optimizer

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/costmodel"
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
	// hoursWorked is the hours a month the offer is up for the work (before billing rounds
	// a commitment up to the month or a serverless price down to the busy hours).
	hoursWorked float64
	// offerHours multiplies the offer's hourly price into the monthly cost: offersRented ×
	// hoursMonth.
	offerHours  float64
	decodeSpeed float64 // per-sequence decode tokens/s (inference)
	tpOnPCIe    bool
	scalingEff  float64 // scaling efficiency used (jobs)
	// workPerHour is the work done per hour rented, in the workload's own unit (tokens,
	// FLOPs, units of custom work): at equal cost, more work wins.
	workPerHour float64
}

// evalClass runs the class-level checks for variant variantIdx of w in stage order (the GPU
// model, memory, interconnect, nodes, price type, then the costing's own throughput and
// deadline checks) and costs the class when it passes. It returns stageOK, or the stage
// that failed.
func (p *planner) evalClass(w *Workload, variants []variant, variantIdx int, c *class) (eval, stage) {
	v := &variants[variantIdx]
	if st, _ := gpuCheck(w, v, c.model); st != stageOK {
		return eval{}, st
	}
	n, ok := p.opts.minGPUs(w, v, c.vram)
	if !ok {
		return eval{}, stageMemory
	}
	ev, used, st := p.rentCount(w, c, n)
	if st != stageOK {
		return ev, st
	}
	intra, st := p.checkInterconnect(w, c, n, &ev)
	if st != stageOK {
		return ev, st
	}
	if st := p.spanNodes(w, c, used, &ev); st != stageOK {
		return ev, st
	}
	spot := c.priceType.Interruptible()
	serverless := c.priceType == schema.Serverless
	if (spot && !w.Interruptible) || (c.priceType.Committed() && !p.mayCommit(w, c.priceType)) || (serverless && !w.service()) {
		return ev, stagePriceType
	}
	switch w.Kind {
	case Inference:
		st = p.costInference(w, variants, variantIdx, c, n, intra, spot, &ev)
	case Custom:
		st = p.costCustom(w, c, used, intra, spot, &ev)
	default:
		st = p.costTraining(w, v, c, used, intra, spot, &ev)
	}
	if st != stageOK {
		return ev, st
	}
	ev.hoursWorked = ev.hoursMonth
	ev.hoursMonth = p.billed(w, c.priceType, ev.hoursMonth)
	ev.offerHours = float64(ev.offersRented) * ev.hoursMonth
	return ev, stageOK
}

// billed is the hours a month an offer of price type pt is paid for, for work that keeps it
// hours a month: those hours on demand and spot; every hour of the month on a commitment,
// busy or not; a service's busy hours and cold starts on a serverless offer, not its idle
// ones. Candidates and today's placement are billed alike.
func (p *planner) billed(w *Workload, pt schema.PriceType, hours float64) float64 {
	switch {
	case pt.Committed():
		return max(hours, roundHours(p.opts.HoursPerMonth))
	case pt == schema.Serverless && w.service():
		return roundHours(p.serverless(decimal.Zero).BilledHours(p.usage(w)))
	}
	return hours
}

// service reports whether w is work that is up a number of hours a month and busy part of
// them (serving, custom work without a reference GPU), the work a serverless deployment can
// take: a job is busy all its hours.
func (w *Workload) service() bool {
	return (w.Kind == Inference || w.Kind == Custom) && w.ReferenceGPU == ""
}

// busy is the share of its hours a service's GPUs work: its utilization, else the share
// measured (0 for GPUs that did nothing), else all of them.
func (w *Workload) busy() float64 {
	switch {
	case w.Utilization > 0:
		return w.Utilization
	case w.Measured != nil:
		return w.Measured.Share
	}
	return 1
}

// usage is a service's month for the cost model: its hours, utilization and the wakes a
// serverless deployment of it makes (Options.ServerlessWakesPerDay over the days it is up;
// none when it is busy all the time and so never scales to zero).
func (p *planner) usage(w *Workload) costmodel.Usage {
	hours := p.hoursPerMonth(w)
	u := costmodel.Usage{Hours: hours, Utilization: w.busy()}
	if u.Utilization < 1 {
		u.Wakes = p.opts.ServerlessWakesPerDay * hours / 24
	}
	return u
}

// serverless is the billing of a serverless deployment at rate per hour (zero when only the
// billed hours are wanted), with the options' cold start and minimum billing.
func (p *planner) serverless(rate decimal.Decimal) costmodel.Serverless {
	o := p.opts
	return costmodel.Serverless{Rate: rate,
		ColdStart:     time.Duration(o.ServerlessColdStartSeconds * float64(time.Second)),
		MinimumBilled: time.Duration(o.ServerlessMinimumBilledSeconds * float64(time.Second))}
}

// mayCommit reports whether workload w may take the commitment of price type pt: any with
// Options.AllowCommitments, else a term no longer than the workload's commit_up_to.
func (p *planner) mayCommit(w *Workload, pt schema.PriceType) bool {
	if p.opts.AllowCommitments {
		return true
	}
	months, ok := pt.TermMonths()
	return ok && months <= w.CommitUpToMonths
}

// rentCount is how many offers of class c the workload rents when it needs n GPUs: one, or
// as many as hold n GPUs for work that may span nodes (training, multi-node custom work).
// Inference runs tensor-parallel on n GPUs of one offer, in one node. It returns the eval so
// far, the GPUs the work uses, and stageMemory when the class cannot hold the work.
func (p *planner) rentCount(w *Workload, c *class, n int) (eval, int, stage) {
	g := c.gpusPerOffer
	multiNodeOK := w.Kind.Training() || (w.Kind == Custom && w.MultiNode)
	ev := eval{offersRented: 1, nodes: 1}
	if n > g {
		if !multiNodeOK {
			return ev, 0, stageMemory
		}
		ev.offersRented = ceilDiv(n, g)
	}
	used := g * ev.offersRented
	if w.Kind == Inference {
		if n > p.opts.MaxGPUsPerNode {
			return ev, used, stageMemory
		}
		ev.tensorParallel, used = n, n
	}
	return ev, used, stageOK
}

// checkInterconnect checks the link inside a node, the offer's fabric as far as the model's
// NVLink domain reaches, against what the work split over n GPUs needs. It returns how
// those GPUs talk, and stageInterconnect when that will not do.
func (p *planner) checkInterconnect(w *Workload, c *class, n int, ev *eval) (schema.IntraNode, stage) {
	o := p.opts
	g := c.gpusPerOffer
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
			return intra, stageInterconnect
		}
		if !linked && !c.model.PeerToPeer && n > 2 {
			return intra, stageInterconnect
		}
		ev.tpOnPCIe = !linked
	case w.Kind.Training() && n > 1 && g > 1 && o.ShardedTrainingRequiresNVLink:
		if !linked {
			return intra, stageInterconnect
		}
	case w.Kind == Custom && n > 1 && g > 1:
		if (w.Interconnect == LinkNVLink && !linked) || (w.Interconnect == LinkNVSwitch && (c.intraNode != schema.IntraNVSwitch || !linked)) {
			return intra, stageInterconnect
		}
	}
	return intra, stageOK
}

// spanNodes counts the nodes the work's used GPUs span (inference stays in one) and returns
// stageMultiNode when they are several without InfiniBand/RoCE between them, or more
// offers than Options.MaxNodes.
func (p *planner) spanNodes(w *Workload, c *class, used int, ev *eval) stage {
	if w.Kind != Inference {
		ev.nodes = ceilDiv(used, p.opts.MaxGPUsPerNode)
		if ev.offersRented > 1 {
			ev.nodes = max(ev.nodes, ev.offersRented)
		}
	}
	if ev.nodes > 1 && (!c.interNode.RDMA() || ev.offersRented > p.opts.MaxNodes) {
		return stageMultiNode
	}
	return stageOK
}

// costInference costs serving, or an inference batch job, on n tensor-parallel GPUs of
// class c (the offer's other GPUs serve as replicas) joined by intra. It returns
// stageThroughput below the decode speed the workload asks for, and stageDeadline when a
// batch job's work does not fit in Options.HoursPerMonth.
func (p *planner) costInference(w *Workload, variants []variant, variantIdx int, c *class, n int, intra schema.IntraNode, spot bool, ev *eval) stage {
	g := c.gpusPerOffer
	ev.decodeSpeed = p.decodeSpeed(&variants[variantIdx], c.model, n, intra)
	if w.MinDecodeTokensPerSecond > 0 && ev.decodeSpeed < w.MinDecodeTokensPerSecond {
		return stageThroughput
	}
	hours := p.hoursPerMonth(w)
	if w.ReferenceGPU != "" {
		hours = p.inferenceJobHours(w, variants, variantIdx, c.model, g, n, intra, spot)
		if hours > p.opts.HoursPerMonth {
			return stageDeadline
		}
	}
	ev.hoursMonth = roundHours(hours)
	ev.workPerHour = ev.decodeSpeed * float64(max(w.Concurrency, 1)) * float64(max(g/n, 1)) // tokens/s
	return stageOK
}

// costCustom costs custom work on used GPUs of class c: its fixed hours, or its hours on the
// reference GPU scaled to these (stageDeadline when they do not fit in
// Options.HoursPerMonth).
func (p *planner) costCustom(w *Workload, c *class, used int, intra schema.IntraNode, spot bool, ev *eval) stage {
	hours := p.hoursPerMonth(w)
	if w.ReferenceGPU != "" {
		hours = p.customHours(w, c.model, used, intra, ev.nodes > 1, spot)
		if hours > p.opts.HoursPerMonth {
			return stageDeadline
		}
	}
	ev.hoursMonth = roundHours(hours)
	ev.workPerHour = p.customRate(w, c.model, used, intra, ev.nodes > 1)
	return stageOK
}

// costTraining costs one run of a training job on used GPUs of class c, and its runs a
// month. A run longer than the deadline (or Options.MaxJobHours) rents more nodes when the
// class has RDMA (nodesForDeadline); it returns stageDeadline when no count up to
// Options.MaxNodes finishes in time.
func (p *planner) costTraining(w *Workload, v *variant, c *class, used int, intra schema.IntraNode, spot bool, ev *eval) stage {
	deadline := p.opts.MaxJobHours
	if w.DeadlineHours > 0 {
		deadline = w.DeadlineHours
	}
	h, eff := p.trainHours(v, c.model, used, intra, ev.nodes > 1, spot)
	if h > deadline {
		if !c.interNode.RDMA() {
			return stageDeadline
		}
		nodes, ok := p.nodesForDeadline(v, c, intra, spot, deadline, ev.offersRented)
		if !ok {
			return stageDeadline
		}
		ev.offersRented = nodes
		used = c.gpusPerOffer * nodes
		ev.nodes = max(ceilDiv(used, p.opts.MaxGPUsPerNode), nodes)
		h, eff = p.trainHours(v, c.model, used, intra, true, spot)
	}
	ev.scalingEff = eff
	ev.hoursRun = max(roundHours(h), 0.01)
	ev.hoursMonth = roundHours(ev.hoursRun * p.runs(w))
	ev.workPerHour = v.flops / ev.hoursRun // FLOPs per hour of the run
	return stageOK
}

// nodesForDeadline is the fewest offers (nodes) of class c, two or more and no fewer than
// rented, over which a run finishes within deadline hours: the cheapest plan that finishes
// in time, since the cost of a run is flat in nodes beyond one. ok is false when it would
// take more than Options.MaxNodes.
func (p *planner) nodesForDeadline(v *variant, c *class, intra schema.IntraNode, spot bool, deadline float64, rented int) (nodes int, ok bool) {
	g := c.gpusPerOffer
	one, _ := p.trainHours(v, c.model, g, intra, true, spot)
	nodes = max(rented, 2, ceilInt(one/deadline))
	for nodes <= p.opts.MaxNodes {
		if h, _ := p.trainHours(v, c.model, g*nodes, intra, true, spot); h <= deadline {
			break
		}
		nodes++
	}
	return nodes, nodes <= p.opts.MaxNodes
}
