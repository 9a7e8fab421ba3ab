package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// SinceLastWeek compares a team's plan with the plan stored about a week before it
// (Input.LastWeek): the team's totals then, and the workloads new, gone or recommended
// elsewhere since.
type SinceLastWeek struct {
	// PlanGeneratedAt is when the earlier plan was made.
	PlanGeneratedAt time.Time `json:"plan_generated_at"`
	// Totals are the team's totals in the earlier plan, added up as Team.Totals are; zero when
	// the team was not in it.
	Totals Totals `json:"totals"`
	// SavingsChangeUSDPerMonth is this plan's monthly savings minus the earlier plan's, and
	// SpendChangeUSDPerMonth the same for today's placements (what the team pays): positive
	// means more.
	SavingsChangeUSDPerMonth decimal.Decimal `json:"savings_change_usd_per_month"`
	SpendChangeUSDPerMonth   decimal.Decimal `json:"spend_change_usd_per_month"`
	// Changes are the workloads new this week or recommended elsewhere, in workload order,
	// then the workloads of the earlier plan that this one no longer has.
	Changes []WorkloadChange `json:"changes"`
}

// ChangeKind classifies a workload's change since the earlier plan.
type ChangeKind string

// Change kinds.
const (
	ChangeNew            ChangeKind = "new"            // in this plan only
	ChangeGone           ChangeKind = "gone"           // in the earlier plan only
	ChangeRecommendation ChangeKind = "recommendation" // another provider, GPU model, count or price type (or a fit found or lost)
)

// WorkloadChange is one workload's change since the earlier plan.
type WorkloadChange struct {
	Workload string     `json:"workload"`
	Kind     ChangeKind `json:"kind"`
	// Was and Now are the recommendations, as in the plan table (provider region GPU ×count
	// price type); "" where there was or is none.
	Was string `json:"was"`
	Now string `json:"now"`
	// Message says it in one sentence.
	Message string `json:"message"`
}

// sinceLastWeek compares team t (built from today's plan) with the earlier plan's rows; nil
// when there is no earlier plan.
func sinceLastWeek(t *Team, earlier []schema.PlanRow) *SinceLastWeek {
	if len(earlier) == 0 {
		return nil
	}
	var rows []schema.PlanRow
	for _, r := range earlier {
		if textcell.Clean(r.Team, textcell.NameWidth) == t.Name {
			rows = append(rows, r)
		}
	}
	then := optimizer.RowTotals(rows)
	s := &SinceLastWeek{
		PlanGeneratedAt:          earlier[0].GeneratedAt.UTC(),
		Totals:                   then,
		SavingsChangeUSDPerMonth: t.Totals.SavingsUSDPerMonth.Sub(then.SavingsUSDPerMonth),
		SpendChangeUSDPerMonth:   t.Totals.CurrentUSDPerMonth.Sub(then.CurrentUSDPerMonth),
		Changes:                  []WorkloadChange{},
	}
	byName := map[string]schema.PlanRow{}
	for _, r := range rows {
		byName[textcell.Clean(r.Workload, textcell.NameWidth)] = r
	}
	for _, wl := range t.Workloads {
		now := recommendationLine(wl.Recommended)
		r, ok := byName[wl.Name]
		if !ok {
			msg := wl.Name + ": new this week"
			if now != "" {
				msg += "; recommended " + now
			}
			s.Changes = append(s.Changes, WorkloadChange{Workload: wl.Name, Kind: ChangeNew, Now: now, Message: msg})
			continue
		}
		then := rowPlacement(r)
		if sameRecommendation(wl.Recommended, then) {
			continue
		}
		was := recommendationLine(then)
		var msg string
		switch {
		case now == "":
			msg = fmt.Sprintf("%s: nothing fits now; last week %s", wl.Name, was)
		case was == "":
			msg = fmt.Sprintf("%s: now recommended %s; last week nothing fit", wl.Name, now)
		default:
			msg = fmt.Sprintf("%s: now recommended %s; last week %s", wl.Name, now, was)
		}
		s.Changes = append(s.Changes, WorkloadChange{Workload: wl.Name, Kind: ChangeRecommendation, Was: was, Now: now, Message: msg})
	}
	for _, r := range rows {
		name := textcell.Clean(r.Workload, textcell.NameWidth)
		if slices.ContainsFunc(t.Workloads, func(w Workload) bool { return w.Name == name }) {
			continue
		}
		s.Changes = append(s.Changes, WorkloadChange{Workload: name, Kind: ChangeGone, Was: recommendationLine(rowPlacement(r)),
			Message: fmt.Sprintf("%s: in the plan of %s, not in this one", name, r.GeneratedAt.UTC().Format("2006-01-02"))})
	}
	return s
}

// rowPlacement is a stored row's recommendation, its names cleaned as Build cleans the plan's
// (placement); nil when nothing fit.
func rowPlacement(r schema.PlanRow) *Placement {
	if r.RecProvider == "" || r.RecGPUModel == "" {
		return nil
	}
	return &Placement{
		Provider:  textcell.Clean(r.RecProvider, textcell.NameWidth),
		Region:    textcell.Clean(r.RecRegion, textcell.NameWidth),
		GPUModel:  textcell.Clean(r.RecGPUModel, textcell.NameWidth),
		GPUCount:  r.RecGPUCount,
		Nodes:     r.RecNodes,
		PriceType: schema.PriceType(textcell.Clean(string(r.RecPriceType), textcell.NameWidth)),
	}
}

// recommendationLine is a recommendation as placementLine writes it; "" for none.
func recommendationLine(p *Placement) string {
	if p == nil {
		return ""
	}
	return placementLine(p)
}

// sameRecommendation reports whether today's recommendation (p) is the earlier one (then): the
// same provider, GPU model, count and price type (a region or an offer of the same kind is not
// a change a team acts on).
func sameRecommendation(p, then *Placement) bool {
	if p == nil || then == nil {
		return p == nil && then == nil
	}
	return p.Provider == then.Provider && p.GPUModel == then.GPUModel && p.GPUCount == then.GPUCount && p.PriceType == then.PriceType
}

// sinceSentences compare a team's savings and spend (now) with the earlier plan's, one
// sentence each: "Savings on offer: $17,326.68 a month, up $1,200.00 from $16,126.68."
func sinceSentences(now Totals, s *SinceLastWeek) []string {
	return []string{
		"Savings on offer: " + changeSentence(now.SavingsUSDPerMonth, s.Totals.SavingsUSDPerMonth),
		"Today's spend: " + changeSentence(now.CurrentUSDPerMonth, s.Totals.CurrentUSDPerMonth),
	}
}

// changeSentence says how a monthly figure moved: "$18,566.30 a month, down $50.00 from
// $18,616.30".
func changeSentence(now, then decimal.Decimal) string {
	d := now.Sub(then)
	switch {
	case d.IsPositive():
		return fmt.Sprintf("%s a month, up %s from %s.", usd(now), usd(d), usd(then))
	case d.IsNegative():
		return fmt.Sprintf("%s a month, down %s from %s.", usd(now), usd(d.Neg()), usd(then))
	}
	return fmt.Sprintf("%s a month, as a week earlier.", usd(now))
}
