package optimizer

import (
	"math"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// hoursPerMonth is how long the workload runs each month: its own hours_per_month, else
// Options.HoursPerMonth.
func (p *planner) hoursPerMonth(w *Workload) float64 {
	if w.HoursPerMonth > 0 {
		return w.HoursPerMonth
	}
	return p.opts.HoursPerMonth
}

// runs is a job's runs a month: runs_per_month, else 1.
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

// shardGroup is how many of a node's GPUs share the work's state, as evalClass counts them:
// the fewest that hold it, at most the node.
func shardGroup(o *Options, w *Workload, v *variant, m gpus.Model, nodeGPUs int) int {
	if n, ok := o.minGPUs(w, v, m.VRAMGB); ok {
		return min(n, nodeGPUs)
	}
	return nodeGPUs
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

// trainHours is the training time of docs/gpus.md §2.1: k·N·D / (n × dense TFLOPS at the
// training precision × MFU × scaling), plus the spot restart overhead. It returns the hours
// and the scaling efficiency used.
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

// decodeSpeed is the memory-bandwidth bound on per-sequence decode speed (docs/gpus.md
// §2.1): each step reads the weights and the whole KV cache once, over tp GPUs' bandwidth.
func (p *planner) decodeSpeed(v *variant, m gpus.Model, tp int, intra schema.IntraNode) float64 {
	if v.decodeGB <= 0 {
		return 0
	}
	return m.MemBandwidthGBps * float64(tp) * p.opts.scaling(m, tp, intra) / v.decodeGB
}

// inferenceJobHours scales the hours an inference batch job takes on its reference GPU by
// decode throughput: replicas × tp × bandwidth × scaling / bytes per step.
func (p *planner) inferenceJobHours(w *Workload, variants []variant, variantIdx int, m gpus.Model, g, tp int, intra schema.IntraNode, spot bool) float64 {
	o := p.opts
	ref, _ := gpus.Lookup(w.ReferenceGPU)
	v0 := &variants[0]
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
	thr := float64(replicas) * p.decodeSpeed(&variants[variantIdx], m, tp, intra)
	h := p.hoursPerMonth(w) * refThr / thr
	if spot {
		h *= 1 + o.SpotRestartOverhead
	}
	return h
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
		return m.TFLOPS.Of(m.RunsAt(Precision(w.ScaleBy)))
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

// spotFactor is what spot capacity multiplies a job's hours by: 1 + the restart overhead.
func spotFactor(o *Options, spot bool) float64 {
	if spot {
		return 1 + o.SpotRestartOverhead
	}
	return 1
}

// roundHours rounds hours to 0.01, as plans report them.
func roundHours(h float64) float64 { return math.Round(h*100) / 100 }
