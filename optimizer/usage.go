package optimizer

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
)

// The buying guides' utilization levels: below lowUse a workload should pay for busy time
// only; between lowUse and highUse mix committed capacity for the steady base with spot; above
// highUse committed capacity or owning pays. A share that rounds to 0% is idle.
const (
	lowUse  = 0.30
	highUse = 0.60
	idleUse = 0.005
)

// usageDisagreement is how far, in share points, the file's utilization may be from the
// measured one before the plan says they disagree.
const usageDisagreement = 0.2

// measured reports what today's measured utilization says: the measurement on the plan, the
// utilization advice, and caveats where it disagrees with the file; or a caveat saying why
// there is no measurement when measuring failed.
func (p *planner) measured(w *Workload, wp *WorkloadPlan) {
	if w.Unmeasured != "" {
		c := "utilization not measured: " + w.Unmeasured
		switch {
		case !w.service():
		case w.Utilization > 0:
			c += fmt.Sprintf("; the plan uses the file's utilization (%s)", percentText(w.Utilization))
		default:
			c += "; the plan counts the service busy whenever it is up"
		}
		wp.Caveats = append(wp.Caveats, c)
	}
	m := w.Measured
	if m == nil {
		return
	}
	wp.MeasuredUtilization = ptr(*m)
	wp.Advice = append(wp.Advice, Advice{Kind: AdviceUtilization, Text: p.utilizationAdvice(w, wp)})
	if w.Utilization > 0 && math.Abs(w.Utilization-m.Share) > usageDisagreement {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("the file's utilization (%s) is far from the %s measured over %s: the plan uses the file's; remove utilization to plan with the measured one",
			percentText(w.Utilization), percentText(m.Share), spanText(m)))
	}
	if cur := w.Current; cur != nil && m.GPUs != cur.GPUCount {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("the metrics_selector {%s} matched %s, but today's placement has %d: check that it picks exactly today's GPUs",
			cur.MetricsSelector, gpusText(m.GPUs), cur.GPUCount))
	}
}

// utilizationAdvice says what was measured in the team's words ("Your 8 H100-SXM-80GB averaged
// 12% busy over the week to 2026-12-04 (8 GPUs measured).") and what the guides advise at that
// level, with the plan's own figures where it has them: the break-even between serverless and
// an instance, the commitment it found, the setting that would let it weigh one.
func (p *planner) utilizationAdvice(w *Workload, wp *WorkloadPlan) string {
	m := w.Measured
	var b strings.Builder
	fmt.Fprintf(&b, "Your %s averaged %s busy over %s (%s measured).", todaysGPUs(w), percentText(m.Share), spanText(m), gpusText(m.GPUs))
	service := w.service()
	they, them := "They", "them"
	if cur := w.Current; cur != nil && cur.GPUCount == 1 {
		they, them = "It", "it"
	}
	switch {
	case m.Share < idleUse && service:
		fmt.Fprintf(&b, " %s did no work: shut %s down, as any instance idle (0%%) for over 15 minutes should be; if the service must answer now and then, pay for its busy time only (serverless).", they, them)
	case m.Share < idleUse:
		fmt.Fprintf(&b, " %s did no work: shut %s down between runs, as any instance idle (0%%) for over 15 minutes should be.", they, them)
	case m.Share < lowUse && service:
		b.WriteString(" Below 30% busy, pay for busy time only: serverless, or instances stopped when idle (one idle at 0% for over 15 minutes should be shut down).")
	case m.Share < lowUse:
		b.WriteString(" Below 30% busy, pay for busy time only: stop the instances between runs (one idle at 0% for over 15 minutes should be shut down).")
	case m.Share < highUse:
		b.WriteString(" Between 30% and 60% busy, mix: reserved or term capacity for the steady base, spot or on-demand for the rest.")
	default:
		b.WriteString(" Above 60% busy, reserved capacity pays, or owning the GPUs.")
	}
	if m.Share < lowUse {
		b.WriteString(p.serverlessFigure(w, wp))
	} else {
		b.WriteString(p.commitmentFigure(w, wp))
	}
	return b.String()
}

// serverlessFigure is the plan's break-even between serverless and an instance for a service:
// "" when it has none, or when it recommends serverless (the pricing advice then says why, with
// the same figures).
func (p *planner) serverlessFigure(w *Workload, wp *WorkloadPlan) string {
	at, srvC, instC, ok := p.serverlessBreakEven(w)
	if r := wp.Recommended; !ok || (r != nil && r.PriceType == schema.Serverless) {
		return ""
	}
	srv, inst := describe(srvC), describe(instC)
	var s string
	switch {
	case at <= 0:
		s = fmt.Sprintf(" Here serverless (%s) costs more than an instance (%s) at any utilization.", srv, inst)
	case at >= 1:
		s = fmt.Sprintf(" Here serverless (%s) costs less than an instance (%s) at any utilization.", srv, inst)
	default:
		s = fmt.Sprintf(" Here serverless (%s) is cheaper than an instance (%s) below %s busy.", srv, inst, percentText(at))
	}
	return s
}

// commitmentFigure is the cheapest reserved or term placement the plan kept as an alternative,
// or, when the workload may take none, the setting that lets the plan weigh them; "" when the
// plan recommends a commitment (the pricing advice then says which and why).
func (p *planner) commitmentFigure(w *Workload, wp *WorkloadPlan) string {
	if r := wp.Recommended; r != nil && r.PriceType.Committed() {
		return ""
	}
	for i := range wp.Alternatives {
		if pl := &wp.Alternatives[i]; pl.PriceType.Committed() {
			return fmt.Sprintf(" The plan's cheapest commitment: %s %s ×%d %s at %s a month.", pl.Provider, pl.GPUModel, pl.GPUCount, pl.PriceType, money.USD(pl.CostUSDPerMonth))
		}
	}
	if w.CommitUpToMonths == 0 && !p.opts.AllowCommitments {
		return " Set commit_up_to (1m, 3m, 1y …) to have the plan weigh term prices."
	}
	return ""
}

// todaysGPUs names today's GPUs: "H100-SXM-80GB", "8 H100-SXM-80GB"; "GPUs" with no current
// placement.
func todaysGPUs(w *Workload) string {
	switch cur := w.Current; {
	case cur == nil:
		return "GPUs"
	case cur.GPUCount == 1:
		return cur.GPUModel
	default:
		return fmt.Sprintf("%d %s", cur.GPUCount, cur.GPUModel)
	}
}

// gpusText counts GPUs: "1 GPU", "8 GPUs".
func gpusText(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}

// percentText writes a share as a whole percentage: 0.12 is "12%".
func percentText(share float64) string { return fmt.Sprintf("%.0f%%", share*100) }

// spanText names the stretch a measurement covers as a person would: "the week to 2026-12-04",
// "the 3 days to 2026-12-04", "the 30 seconds to 2026-12-04 06:30 UTC".
func spanText(m *schema.GPUUsage) string {
	d := m.To.Sub(m.From)
	end := m.To.UTC().Format("2006-01-02 15:04 UTC")
	if d >= 24*time.Hour {
		end = m.To.UTC().Format("2006-01-02")
	}
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{7 * 24 * time.Hour, "week"}, {24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if d < u.d || d%u.d != 0 {
			continue
		}
		if n := d / u.d; n > 1 {
			return fmt.Sprintf("the %d %ss to %s", n, u.name, end)
		}
		return fmt.Sprintf("the %s to %s", u.name, end)
	}
	return fmt.Sprintf("the %s to %s", d, end)
}
