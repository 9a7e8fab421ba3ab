package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// SchemaVersion names the JSON layout of Report. It changes only when a field is renamed,
// removed or changes meaning; new fields may be added within a version.
const SchemaVersion = "gpucost.report/v1"

// Input is everything a report is built from. Build reads it and changes nothing.
type Input struct {
	// Plan is the optimizer's plan for every team. Required.
	Plan *optimizer.Plan
	// Now is when the report is made (Report.GeneratedAt). Zero means Plan.GeneratedAt.
	Now time.Time
	// Week is any time inside the report's week (weeks start on Monday 00:00 UTC). Zero means
	// the week of Plan.GeneratedAt.
	Week time.Time
	// Offers is the market the plan was made from (the latest offer per key). When given, the
	// market section's "now" and its new lows come from it; otherwise from History.
	Offers []schema.Offer
	// History is the daily price history of (at least) the GPU models the teams run and are
	// advised to run, over Options.HistoryWeeks and a day more.
	History []schema.HistoryPoint
	// Runs is the newest run-log row of each provider (the store's LastRuns).
	Runs []schema.ScrapeRun
	// GoodRuns is the newest ok or partial run of each provider (the store's LastGoodRuns).
	GoodRuns []schema.ScrapeRun
	// LastWeek holds the rows of the plan stored about a week before Plan (the store's
	// PlanAsOf); each team is compared with it (Team.SinceLastWeek). Empty: no comparison.
	LastWeek []schema.PlanRow
}

// Options tune a report. The zero value is not valid; start from DefaultOptions.
type Options struct {
	// HistoryWeeks is how many weeks the charts span. Default 8.
	HistoryWeeks int
	// MaxMoves is how many of the biggest price moves each team's market section lists.
	// Default 5.
	MaxMoves int
	// MaxOfferAge drops offers older than this (at the report's as-of time) from the market
	// section. Default 24h, the optimizer's default freshness.
	MaxOfferAge time.Duration
	// NewLowPercent is how far (percent) the cheapest price must fall below last week's low,
	// at the same provider, to be listed as a new cheapest offer. Default 5.
	NewLowPercent float64
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{HistoryWeeks: 8, MaxMoves: 5, MaxOfferAge: 24 * time.Hour, NewLowPercent: 5}
}

// Validate reports an out-of-range option.
func (o Options) Validate() error {
	var errs []error
	if o.HistoryWeeks < 1 || o.HistoryWeeks > 104 {
		errs = append(errs, fmt.Errorf("report option HistoryWeeks: %d not in [1, 104]", o.HistoryWeeks))
	}
	if o.MaxMoves < 0 {
		errs = append(errs, fmt.Errorf("report option MaxMoves: %d must not be negative", o.MaxMoves))
	}
	if o.NewLowPercent < 0 || o.NewLowPercent >= 100 {
		errs = append(errs, fmt.Errorf("report option NewLowPercent: %v not in [0, 100)", o.NewLowPercent))
	}
	if o.MaxOfferAge <= 0 {
		errs = append(errs, fmt.Errorf("report option MaxOfferAge: %s must be positive", o.MaxOfferAge))
	}
	return errors.Join(errs...)
}

// Report is the savings report: what every renderer draws and what the JSON format holds (see
// SCHEMA.md). Money is decimal USD, written in JSON as strings.
type Report struct {
	Schema      string    `json:"schema"` // SchemaVersion
	Week        Week      `json:"week"`
	GeneratedAt time.Time `json:"generated_at"`
	// PlanGeneratedAt is when the plan (and the market it priced) was made.
	PlanGeneratedAt time.Time `json:"plan_generated_at"`
	// AsOf is the time the market section and the charts end at: the plan time, or the end
	// of the week for a past week.
	AsOf time.Time `json:"as_of"`
	// HoursPerMonth converts hourly prices to monthly ones (the plan's assumption).
	HoursPerMonth decimal.Decimal `json:"hours_per_month"`
	// Org is the whole organisation: totals and one line per team.
	Org Org `json:"org"`
	// Teams holds every team, or the one a report was narrowed to (ForTeam).
	Teams []Team `json:"teams"`
	// Providers is the state of every provider the run log or the plan knows.
	Providers []ProviderStatus `json:"providers"`
}

// Week is a report week: Monday 00:00 UTC to the next Monday.
type Week struct {
	ID    string    `json:"id"`    // ISO week, e.g. 2025-W48
	Start time.Time `json:"start"` // Monday 00:00 UTC
	End   time.Time `json:"end"`   // the next Monday 00:00 UTC (exclusive)
}

// WeekOf returns the week that holds t.
func WeekOf(t time.Time) Week {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	start := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	y, w := start.ISOWeek()
	return Week{ID: fmt.Sprintf("%04d-W%02d", y, w), Start: start, End: start.AddDate(0, 0, 7)}
}

// ParseWeek reads a week as an ISO week (2025-W48) or a date inside it (2025-11-26).
func ParseWeek(s string) (Week, error) {
	s = strings.TrimSpace(s)
	var y, w int
	if n, err := fmt.Sscanf(s, "%4d-W%2d", &y, &w); err == nil && n == 2 && len(s) == 8 {
		if w < 1 || w > 53 {
			return Week{}, fmt.Errorf("week %q: week number must be 1 to 53", s)
		}
		// ISO week 1 holds January 4th.
		jan4 := time.Date(y, time.January, 4, 0, 0, 0, 0, time.UTC)
		wk := WeekOf(jan4.AddDate(0, 0, 7*(w-1)))
		if wk.ID != s {
			return Week{}, fmt.Errorf("week %q: %d has no week %d", s, y, w)
		}
		return wk, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return Week{}, fmt.Errorf("week %q: want an ISO week like 2025-W48 or a date like 2025-11-26", s)
	}
	return WeekOf(t), nil
}

// Org is the organisation's summary.
type Org struct {
	Totals Totals       `json:"totals"`
	Teams  []TeamTotals `json:"teams"`
}

// TeamTotals is one team's line in the organisation's summary.
type TeamTotals struct {
	Team   string `json:"team"`
	Totals Totals `json:"totals"`
}

// Totals add up monthly costs over the workloads where both the current and the recommended
// placements are priced (Compared): the plan's own totals.
type Totals = optimizer.Totals

// Team is one team's report.
type Team struct {
	Name      string     `json:"name"`
	Email     string     `json:"email"`
	Totals    Totals     `json:"totals"`
	Workloads []Workload `json:"workloads"`
	Market    Market     `json:"market"`
	Caveats   []Caveat   `json:"caveats"`
	Charts    []Chart    `json:"charts"`
	// SinceLastWeek compares the team with the plan of a week earlier; nil when the report
	// was made without one (Input.LastWeek).
	SinceLastWeek *SinceLastWeek `json:"since_last_week"`
}

// Workload is one line of the before/after table.
type Workload struct {
	Name   string           `json:"name"`
	Kind   optimizer.Kind   `json:"kind"`
	Status optimizer.Status `json:"status"` // ok or no_fit
	// Current is today's placement priced at today's market or the price paid; nil when the
	// workload runs nowhere yet.
	Current *Placement `json:"current"`
	// Recommended is the cheapest fitting placement; nil when nothing fits.
	Recommended *Placement `json:"recommended"`
	// Savings is current minus recommended per month; nil unless both are priced.
	Savings *Savings `json:"savings"`
	// Why is one sentence explaining the recommendation (or why there is none).
	Why string `json:"why"`
	// Advice is how the workload could pay less beyond where it runs (its measured
	// utilization, a way of paying that wins, owning its GPUs): only what applies, often none.
	Advice []Advice `json:"advice"`
}

// adviceWidth bounds an advice's text: a few sentences with their figures, longer than a
// reason.
const adviceWidth = 4 * textcell.TextWidth

// Advice is one piece of the plan's advice on a workload, its text cleaned for display.
type Advice = optimizer.Advice

// Advised returns the team's workloads that have advice, in workload order.
func (t Team) Advised() []Workload {
	var out []Workload
	for _, wl := range t.Workloads {
		if len(wl.Advice) > 0 {
			out = append(out, wl)
		}
	}
	return out
}

// Placement is a priced way to run a workload.
type Placement struct {
	Provider  string           `json:"provider"`
	Region    string           `json:"region"`
	GPUModel  string           `json:"gpu_model"`
	GPUCount  int              `json:"gpu_count"`
	Nodes     int              `json:"nodes"`
	PriceType schema.PriceType `json:"price_type"`
	Precision string           `json:"precision,omitempty"`
	// PriceSource is market (cheapest matching offer today), paid (the team's own price) or
	// none (not priced: the money fields are zero).
	PriceSource   optimizer.PriceSource `json:"price_source"`
	USDPerHour    decimal.Decimal       `json:"usd_per_hour"`
	USDPerGPUHour decimal.Decimal       `json:"usd_per_gpu_hour"`
	HoursPerMonth decimal.Decimal       `json:"hours_per_month"`
	USDPerMonth   decimal.Decimal       `json:"usd_per_month"`
	// HoursPerRun and USDPerRun are set for jobs (training, batch inference).
	HoursPerRun *decimal.Decimal `json:"hours_per_run,omitempty"`
	USDPerRun   *decimal.Decimal `json:"usd_per_run,omitempty"`
}

// Priced reports whether the placement has a price.
func (p *Placement) Priced() bool { return p != nil && p.PriceSource != optimizer.PriceNone }

// Savings compares the current placement with the recommended one: the plan's own figures.
type Savings = optimizer.Savings

// Market is the market this week for the GPU models a team runs or is advised to run.
type Market struct {
	// GPUModels are the models covered, current ones first, in workload order.
	GPUModels []string `json:"gpu_models"`
	// Now and WeekAgo are the two times compared.
	Now     time.Time `json:"now"`
	WeekAgo time.Time `json:"week_ago"`
	// Prices holds the cheapest $/GPU-hour per GPU model, provider and price type, now and a
	// week ago, ordered by GPU model, price type and price now.
	Prices []MarketPrice `json:"prices"`
	// Moves are the largest relative changes among Prices, largest first.
	Moves []MarketPrice `json:"moves"`
	// NewCheapest lists the cheapest offers that are new this week.
	NewCheapest []NewCheapest `json:"new_cheapest"`
}

// MarketPrice is the cheapest $/GPU-hour of one GPU model at one provider and price type.
type MarketPrice struct {
	GPUModel         string           `json:"gpu_model"`
	Provider         string           `json:"provider"`
	PriceType        schema.PriceType `json:"price_type"`
	NowUSDPerGPUHour *decimal.Decimal `json:"now_usd_per_gpu_hour"` // nil: not listed now
	// WeekAgoUSDPerGPUHour is nil when the provider listed no such offer a week ago.
	WeekAgoUSDPerGPUHour *decimal.Decimal `json:"week_ago_usd_per_gpu_hour"`
	ChangeUSDPerGPUHour  *decimal.Decimal `json:"change_usd_per_gpu_hour"` // now − week ago
	ChangePercent        *decimal.Decimal `json:"change_percent"`          // of the week-ago price, to 0.1
	// Cheapest marks the cheapest provider now for this GPU model and price type.
	Cheapest bool `json:"cheapest"`
}

// NewCheapest is a GPU model and price type whose cheapest offer is new this week: another
// provider took the lead, or the leader's price fell by Options.NewLowPercent or more below
// last week's low.
type NewCheapest struct {
	GPUModel      string           `json:"gpu_model"`
	PriceType     schema.PriceType `json:"price_type"`
	Provider      string           `json:"provider"`
	Region        string           `json:"region"`
	OfferID       string           `json:"offer_id"` // empty when the price comes from history
	USDPerGPUHour decimal.Decimal  `json:"usd_per_gpu_hour"`
	// WeekAgo is the cheapest price of a week ago, at WeekAgoProvider.
	WeekAgoUSDPerGPUHour decimal.Decimal `json:"week_ago_usd_per_gpu_hour"`
	WeekAgoProvider      string          `json:"week_ago_provider"`
	// NewLeader is set when the cheapest provider changed.
	NewLeader bool `json:"new_leader"`
}

// CaveatKind classifies a caveat.
type CaveatKind string

// Caveat kinds.
const (
	CaveatNoFit          CaveatKind = "no_fit"          // nothing on the market fits a workload
	CaveatSpot           CaveatKind = "spot"            // a recommendation on interruptible capacity
	CaveatUnpriced       CaveatKind = "unpriced"        // today's placement could not be priced
	CaveatPlan           CaveatKind = "plan"            // a caveat the optimizer attached to a workload
	CaveatStaleProvider  CaveatKind = "stale_provider"  // a provider left out: its data is too old
	CaveatFailedProvider CaveatKind = "failed_provider" // a provider's last scrape failed or was partial
)

// Caveat is something a reader should know before acting on the report.
type Caveat struct {
	Kind     CaveatKind `json:"kind"`
	Workload string     `json:"workload,omitempty"`
	Provider string     `json:"provider,omitempty"`
	Message  string     `json:"message"`
}

// ProviderStatus is what the run log and the plan say about one provider.
type ProviderStatus struct {
	Provider   string           `json:"provider"`
	LastStatus schema.RunStatus `json:"last_status,omitempty"` // empty when no run is logged
	LastRunAt  *time.Time       `json:"last_run_at"`
	LastGoodAt *time.Time       `json:"last_good_at"`
	Error      string           `json:"error,omitempty"` // of the last run, cleaned and capped
	// Excluded is set when the plan left the provider out (its data is too old).
	Excluded bool `json:"excluded"`
}

// Chart is a price-history chart: one series per provider and price type.
type Chart struct {
	// ID is unique within a team and safe in file names and Content-IDs: [a-z0-9-].
	ID       string    `json:"id"`
	GPUModel string    `json:"gpu_model"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Series   []Series  `json:"series"`
}

// Series is one line of a chart.
type Series struct {
	Provider  string           `json:"provider"`
	PriceType schema.PriceType `json:"price_type"`
	Points    []Point          `json:"points"`
}

// Point is the cheapest $/GPU-hour of one day.
type Point struct {
	Day           time.Time       `json:"day"`
	USDPerGPUHour decimal.Decimal `json:"usd_per_gpu_hour"`
}

// Build makes the report of in.Plan. It fails only on unusable input (no plan, bad options).
func Build(in Input, opts Options) (*Report, error) {
	if in.Plan == nil {
		return nil, errors.New("building the report: no plan")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("building the report: %w", err)
	}
	plan := in.Plan
	now := in.Now
	if now.IsZero() {
		now = plan.GeneratedAt
	}
	weekOf := in.Week
	if weekOf.IsZero() {
		weekOf = plan.GeneratedAt
	}
	week := WeekOf(weekOf)
	asOf := plan.GeneratedAt.UTC()
	if !week.End.After(asOf) {
		asOf = week.End.Add(-time.Second)
	}
	r := &Report{
		Schema:          SchemaVersion,
		Week:            week,
		GeneratedAt:     now.UTC(),
		PlanGeneratedAt: plan.GeneratedAt.UTC(),
		AsOf:            asOf,
		HoursPerMonth:   decimal.NewFromFloat(plan.Options.HoursPerMonth),
		Org:             Org{Totals: plan.Totals, Teams: []TeamTotals{}},
		Teams:           make([]Team, 0, len(plan.Teams)),
	}
	r.Providers = providers(in, plan)
	mkt := newMarketData(in, opts, plan, asOf)
	orgCaveats := providerCaveats(r.Providers, plan)
	for i := range plan.Teams {
		tp := &plan.Teams[i]
		t := Team{
			Name:      textcell.Clean(tp.Name, textcell.NameWidth),
			Email:     textcell.Clean(tp.Email, textcell.NameWidth),
			Totals:    tp.Totals,
			Workloads: make([]Workload, 0, len(tp.Workloads)),
			Caveats:   []Caveat{},
			Charts:    []Chart{},
		}
		for j := range tp.Workloads {
			t.Workloads = append(t.Workloads, workload(&tp.Workloads[j]))
			t.Caveats = append(t.Caveats, workloadCaveats(&tp.Workloads[j])...)
		}
		models := teamModels(tp)
		for _, c := range orgCaveats {
			if mkt.concerns(c.Provider, tp, models) {
				t.Caveats = append(t.Caveats, c)
			}
		}
		t.Market = mkt.market(models, opts)
		t.Charts = mkt.charts(recommendedModels(tp), opts.HistoryWeeks)
		t.SinceLastWeek = sinceLastWeek(&t, in.LastWeek)
		r.Org.Teams = append(r.Org.Teams, TeamTotals{Team: t.Name, Totals: t.Totals})
		r.Teams = append(r.Teams, t)
	}
	return r, nil
}

// ForTeam returns a copy of the report narrowed to the team named name (the organisation's
// totals stay), and whether that team exists.
func (r *Report) ForTeam(name string) (*Report, bool) {
	for _, t := range r.Teams {
		if t.Name == name {
			c := *r
			c.Teams = []Team{t}
			return &c, true
		}
	}
	return nil, false
}

// TeamNames returns the teams' names in report order.
func (r *Report) TeamNames() []string {
	out := make([]string, len(r.Teams))
	for i, t := range r.Teams {
		out[i] = t.Name
	}
	return out
}

func workload(w *optimizer.WorkloadPlan) Workload {
	out := Workload{
		Name:        textcell.Clean(w.Name, textcell.NameWidth),
		Kind:        optimizer.Kind(textcell.Clean(string(w.Kind), textcell.NameWidth)),
		Status:      w.Status,
		Current:     placement(w.Current),
		Recommended: placement(w.Recommended),
		Why:         why(w),
		Advice:      make([]Advice, len(w.Advice)),
	}
	for i, a := range w.Advice {
		out.Advice[i] = Advice{Kind: a.Kind, Text: textcell.Clean(a.Text, adviceWidth)}
	}
	if s := w.Savings; s != nil {
		savings := *s
		out.Savings = &savings
	}
	return out
}

func placement(p *optimizer.Placement) *Placement {
	if p == nil {
		return nil
	}
	return &Placement{
		Provider:      textcell.Clean(p.Provider, textcell.NameWidth),
		Region:        textcell.Clean(p.Region, textcell.NameWidth),
		GPUModel:      textcell.Clean(p.GPUModel, textcell.NameWidth),
		GPUCount:      p.GPUCount,
		Nodes:         p.Nodes,
		PriceType:     schema.PriceType(textcell.Clean(string(p.PriceType), textcell.NameWidth)),
		Precision:     textcell.Clean(string(p.Precision), textcell.NameWidth),
		PriceSource:   p.PriceSource,
		USDPerHour:    p.PriceUSDPerHour,
		USDPerGPUHour: p.PriceUSDPerGPUHour,
		HoursPerMonth: p.HoursPerMonth,
		USDPerMonth:   p.CostUSDPerMonth,
		HoursPerRun:   p.HoursPerRun,
		USDPerRun:     p.CostUSDPerRun,
	}
}

// why explains a workload's recommendation in one sentence.
func why(w *optimizer.WorkloadPlan) string {
	r, c := w.Recommended, w.Current
	if w.Status == optimizer.StatusNoFit || r == nil {
		reason := textcell.Clean(w.Reason, textcell.TextWidth)
		if reason == "" {
			reason = "no offer on the market passes its checks"
		}
		return "Nothing on the market fits: " + reason
	}
	rec := fmt.Sprintf("%s ×%d", textcell.Clean(r.GPUModel, textcell.NameWidth), r.GPUCount)
	if need := neededGB(w, r); need != "" {
		rec += " holds the " + need + " GB it needs"
	}
	if r.Precision != "" {
		rec += " at " + textcell.Clean(string(r.Precision), textcell.NameWidth)
	}
	var s string
	switch {
	case c == nil || c.PriceSource == optimizer.PriceNone:
		s = fmt.Sprintf("%s; %s at %s is the cheapest fitting offer today", rec, usdPerHour(r.PriceUSDPerHour), textcell.Clean(r.Provider, textcell.NameWidth))
	case samePlacement(c, r) && w.Savings != nil && !w.Savings.USDPerMonth.IsPositive():
		s = "Already on the cheapest fitting placement"
	case w.Savings != nil && w.Savings.USDPerMonth.IsNegative():
		s = fmt.Sprintf("Today's price (%s) is below every fitting offer on the market (%s at %s); keep it", usdPerHour(c.PriceUSDPerHour), usdPerHour(r.PriceUSDPerHour), textcell.Clean(r.Provider, textcell.NameWidth))
	case r.HoursPerRun != nil && c.HoursPerRun != nil && r.CostUSDPerRun != nil && c.CostUSDPerRun != nil:
		s = fmt.Sprintf("On %s ×%d%s a run takes %s h and costs %s, against %s h and %s on %s ×%d at %s",
			textcell.Clean(r.GPUModel, textcell.NameWidth), r.GPUCount, needNote(w, r), r.HoursPerRun.String(), usd(*r.CostUSDPerRun), c.HoursPerRun.String(), usd(*c.CostUSDPerRun),
			textcell.Clean(c.GPUModel, textcell.NameWidth), c.GPUCount, textcell.Clean(c.Provider, textcell.NameWidth))
	default:
		s = fmt.Sprintf("%s for %s, against %s for %s ×%d at %s", rec, usdPerHour(r.PriceUSDPerHour),
			usdPerHour(c.PriceUSDPerHour), textcell.Clean(c.GPUModel, textcell.NameWidth), c.GPUCount, textcell.Clean(c.Provider, textcell.NameWidth))
		if u, cu := r.UnitCost, c.UnitCost; u != nil && cu != nil && u.Unit == cu.Unit && u.Unit != "run" {
			s += fmt.Sprintf(": %s per %s against %s", unitUSD(u.USD), textcell.Clean(u.Unit, textcell.NameWidth), unitUSD(cu.USD))
		}
	}
	if r.PriceType == schema.Spot {
		s += " (spot: can be interrupted)"
	}
	return s
}

// needNote is " (N GB needed)" for a job's sentence, or "".
func needNote(w *optimizer.WorkloadPlan, r *optimizer.Placement) string {
	if need := neededGB(w, r); need != "" {
		return " (" + need + " GB needed)"
	}
	return ""
}

func samePlacement(a, b *optimizer.Placement) bool {
	return a.Provider == b.Provider && a.GPUModel == b.GPUModel && a.GPUCount == b.GPUCount && a.PriceType == b.PriceType
}

// neededGB is the VRAM the recommended placement holds, from the sizing of its precision and
// GPU model, when the sizing is about the same GPU count; "" otherwise.
func neededGB(w *optimizer.WorkloadPlan, r *optimizer.Placement) string {
	for _, s := range w.Sizing {
		if s.Precision != r.Precision {
			continue
		}
		for _, f := range s.Fits {
			if f.GPUModel == r.GPUModel && f.Feasible && f.GPUs == r.GPUCount && f.NeededGB > 0 {
				return decimal.NewFromFloat(f.NeededGB).Round(1).String()
			}
		}
	}
	return ""
}

func workloadCaveats(w *optimizer.WorkloadPlan) []Caveat {
	var out []Caveat
	name := textcell.Clean(w.Name, textcell.NameWidth)
	if w.Status == optimizer.StatusNoFit || w.Recommended == nil {
		reason := textcell.Clean(w.Reason, textcell.TextWidth)
		if reason == "" {
			reason = "no offer passes its checks"
		}
		out = append(out, Caveat{Kind: CaveatNoFit, Workload: name, Message: name + ": nothing on the market fits: " + reason})
	}
	if r := w.Recommended; r != nil && r.PriceType == schema.Spot {
		advice := "plan for interruptions (a job must checkpoint and resume, a service needs an on-demand fallback)"
		if r.HoursPerRun != nil {
			advice = "the job must checkpoint and resume"
		}
		out = append(out, Caveat{Kind: CaveatSpot, Workload: name, Provider: textcell.Clean(r.Provider, textcell.NameWidth),
			Message: fmt.Sprintf("%s: recommended on spot capacity at %s, which can be taken back at any time; %s", name, textcell.Clean(r.Provider, textcell.NameWidth), advice)})
	}
	if c := w.Current; c != nil && c.PriceSource == optimizer.PriceNone {
		out = append(out, Caveat{Kind: CaveatUnpriced, Workload: name, Provider: textcell.Clean(c.Provider, textcell.NameWidth),
			Message: fmt.Sprintf("%s: today's placement (%s %s ×%d, %s) matches no offer on the market and no price paid is given, so it is left out of the totals",
				name, textcell.Clean(c.Provider, textcell.NameWidth), textcell.Clean(c.GPUModel, textcell.NameWidth), c.GPUCount, textcell.Clean(string(c.PriceType), textcell.NameWidth))})
	}
	for _, cv := range w.Caveats {
		out = append(out, Caveat{Kind: CaveatPlan, Workload: name, Message: name + ": " + textcell.Clean(cv, textcell.TextWidth)})
	}
	return out
}

// providers merges the run log and the plan's exclusions into one status per provider.
func providers(in Input, plan *optimizer.Plan) []ProviderStatus {
	by := map[string]*ProviderStatus{}
	get := func(name string) *ProviderStatus {
		name = textcell.Clean(name, textcell.NameWidth)
		if p, ok := by[name]; ok {
			return p
		}
		p := &ProviderStatus{Provider: name}
		by[name] = p
		return p
	}
	for _, r := range in.Runs {
		p := get(r.Provider)
		at := runTime(r)
		if p.LastRunAt == nil || at.After(*p.LastRunAt) {
			p.LastRunAt, p.LastStatus, p.Error = &at, r.Status, ""
			if r.Status != schema.RunOK {
				p.Error = textcell.Clean(r.Error, textcell.TextWidth)
			}
		}
	}
	for _, r := range in.GoodRuns {
		if r.Status != schema.RunOK && r.Status != schema.RunPartial {
			continue
		}
		p := get(r.Provider)
		at := runTime(r)
		if p.LastGoodAt == nil || at.After(*p.LastGoodAt) {
			p.LastGoodAt = &at
		}
	}
	for _, e := range plan.ExcludedProviders {
		p := get(e.Provider)
		p.Excluded = true // the plan's reason names the age of its newest price
	}
	// A provider without a good scrape recent enough has no offers in the plan, whether the
	// optimizer saw its old offers (and listed it) or the caller had already dropped them.
	maxAge := time.Duration(plan.Options.MaxOfferAgeHours * float64(time.Hour))
	out := make([]ProviderStatus, 0, len(by))
	for _, p := range by {
		if maxAge > 0 && ((p.LastGoodAt != nil && plan.GeneratedAt.Sub(*p.LastGoodAt) > maxAge) || (p.LastGoodAt == nil && p.LastStatus == schema.RunFailed)) {
			p.Excluded = true
		}
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b ProviderStatus) int { return cmp.Compare(a.Provider, b.Provider) })
	return out
}

func runTime(r schema.ScrapeRun) time.Time {
	if !r.FinishedAt.IsZero() {
		return r.FinishedAt.UTC()
	}
	return r.StartedAt.UTC()
}

// providerCaveats are the provider problems of the plan; each team is told those that
// concern it (marketData.concerns).
func providerCaveats(ps []ProviderStatus, plan *optimizer.Plan) []Caveat {
	reasons := map[string]string{}
	for _, e := range plan.ExcludedProviders {
		reasons[textcell.Clean(e.Provider, textcell.NameWidth)] = textcell.Clean(e.Reason, textcell.TextWidth)
	}
	for _, p := range ps {
		if _, ok := reasons[p.Provider]; ok || !p.Excluded {
			continue
		}
		if p.LastGoodAt == nil {
			reasons[p.Provider] = "no good scrape on record"
		} else {
			reasons[p.Provider] = "last good scrape " + stamp(*p.LastGoodAt)
		}
	}
	var out []Caveat
	for _, p := range ps {
		switch {
		case p.Excluded:
			msg := p.Provider + ": left out of this plan"
			if reason := reasons[p.Provider]; reason != "" {
				msg += " (" + reason + ")"
			}
			msg += "; a cheaper offer there would not show"
			if p.LastStatus == schema.RunFailed && p.Error != "" {
				msg += "; its last scrape failed: " + p.Error
			}
			out = append(out, Caveat{Kind: CaveatStaleProvider, Provider: p.Provider, Message: msg})
		case p.LastStatus == schema.RunFailed:
			msg := fmt.Sprintf("%s: the last scrape (%s) failed", p.Provider, stamp(*p.LastRunAt))
			if p.Error != "" {
				msg += ": " + p.Error
			}
			if p.LastGoodAt != nil {
				msg += fmt.Sprintf("; its prices are from %s", stamp(*p.LastGoodAt))
			}
			out = append(out, Caveat{Kind: CaveatFailedProvider, Provider: p.Provider, Message: msg})
		case p.LastStatus == schema.RunPartial:
			msg := fmt.Sprintf("%s: the last scrape (%s) was partial, so some of its offers may be missing", p.Provider, stamp(*p.LastRunAt))
			if p.Error != "" {
				msg += ": " + p.Error
			}
			out = append(out, Caveat{Kind: CaveatFailedProvider, Provider: p.Provider, Message: msg})
		}
	}
	return out
}

// teamModels are the GPU models a team runs or is advised to run, current ones first.
func teamModels(t *optimizer.TeamPlan) []string {
	var out []string
	add := func(m string) {
		if m = textcell.Clean(m, textcell.NameWidth); m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	for _, w := range t.Workloads {
		if w.Current != nil {
			add(w.Current.GPUModel)
		}
	}
	for _, w := range t.Workloads {
		if w.Recommended != nil {
			add(w.Recommended.GPUModel)
		}
	}
	return out
}

// recommendedModels are the distinct GPU models recommended to a team, in workload order.
func recommendedModels(t *optimizer.TeamPlan) []string {
	var out []string
	for _, w := range t.Workloads {
		if w.Recommended != nil {
			if m := textcell.Clean(w.Recommended.GPUModel, textcell.NameWidth); m != "" && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// stamp formats a time for sentences: 2025-11-29 13:00 UTC.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
