package optimizer

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// Plan is the optimizer's output: for every team and workload, the current placement priced
// today, the cheapest feasible placement, runners-up, rejected GPU models with reasons, and the
// savings. Reports render it; the plans table stores one Row per workload (Rows). JSON field
// names are stable. Money is decimal (USD); sizes are GB rounded to 0.01.
type Plan struct {
	GeneratedAt time.Time `json:"generated_at"`
	// Options are the assumptions the plan was made with.
	Options Options    `json:"options"`
	Teams   []TeamPlan `json:"teams"`
	Totals  Totals     `json:"totals"`
	// ExcludedProviders had offers, none of whose prices still holds (Options.MaxOfferAgeHours,
	// or the ValidUntil of an imported table).
	ExcludedProviders []ExcludedProvider `json:"excluded_providers"`
	// Market summarizes the offers the plan was made from.
	Market MarketSummary `json:"market"`
}

// MarketSummary counts the offers given to Optimize.
type MarketSummary struct {
	Offers     int `json:"offers"`      // offers given
	Considered int `json:"considered"`  // offers whose price holds, of a catalog GPU, planned on
	UnknownGPU int `json:"unknown_gpu"` // skipped: GPU model not in the catalog
	Invalid    int `json:"invalid"`     // skipped: no GPUs or no positive price
	Stale      int `json:"stale"`       // skipped: the price no longer holds
	// Commitments are the reserved and term prices skipped because no workload may take
	// them (neither Options.AllowCommitments nor any commit_up_to).
	Commitments int `json:"commitments"`
}

// ExcludedProvider is a provider left out of the plan because none of its prices still holds.
type ExcludedProvider struct {
	Provider string `json:"provider"`
	// LastObserved is its newest price observation; nil when its offers carry none.
	LastObserved *time.Time `json:"last_observed"`
	Reason       string     `json:"reason"`
}

// TeamPlan is one team's part of the plan.
type TeamPlan struct {
	Name      string         `json:"name"`
	Email     string         `json:"email"`
	Workloads []WorkloadPlan `json:"workloads"`
	Totals    Totals         `json:"totals"`
}

// Status says whether a workload got a recommendation.
type Status string

// Workload statuses.
const (
	StatusOK    Status = "ok"     // a feasible placement was found
	StatusNoFit Status = "no_fit" // nothing on the market fits; Reason says why
)

// WorkloadPlan is the plan for one workload.
type WorkloadPlan struct {
	Name   string `json:"name"`
	Kind   Kind   `json:"kind"`
	Status Status `json:"status"`
	// Reason explains a no_fit status in one sentence, what nothing on the market fits: the
	// sizing and the closest GPU models; empty when ok.
	Reason string `json:"reason,omitempty"`
	// Sizing is the memory and compute estimate, one entry per acceptable precision.
	Sizing []Sizing `json:"sizing"`
	// Current is today's placement priced at today's market (or at the price paid); nil when
	// the workload has none.
	Current *Placement `json:"current"`
	// Recommended is the cheapest feasible placement; nil when nothing fits.
	Recommended *Placement `json:"recommended"`
	// Alternatives are the next cheapest feasible placements, cheapest first.
	Alternatives []Placement `json:"alternatives"`
	// Rejected lists, per GPU model on the market with no feasible offer, why.
	Rejected []Rejection `json:"rejected"`
	// Savings is Current minus Recommended; nil unless both are priced.
	Savings *Savings `json:"savings"`
	// Caveats are things a reader should know before acting on the plan.
	Caveats []string `json:"caveats"`
	// MeasuredUtilization is how busy today's GPUs were measured to be (Workload.Measured);
	// absent when they were not measured.
	MeasuredUtilization *schema.GPUUsage `json:"measured_utilization,omitempty"`
	// Advice is how the workload could pay less beyond where it runs: how busy its GPUs
	// really are, which way of paying wins, whether owning them would pay. Only what applies
	// to the workload is here; reports and the weekly email show it where there is some.
	Advice []Advice `json:"advice"`
	// Ownership weighs buying the recommended placement's GPUs against renting it; nil when
	// nothing fits or the catalog has no purchase price for the GPU model.
	Ownership *OwnershipCase `json:"ownership"`
}

// AdviceKind is what a piece of advice is about.
type AdviceKind string

// Kinds of advice, in the order reports show them.
const (
	// AdviceUtilization: the GPUs' measured utilization, and what it means for how to pay.
	AdviceUtilization AdviceKind = "utilization"
	// AdvicePricing: a way of paying other than today's wins (serverless, a term), and why.
	AdvicePricing AdviceKind = "pricing_model"
	// AdviceOwnership: buying the GPUs would pay for itself within their write-off period.
	AdviceOwnership AdviceKind = "ownership"
)

// Advice is one piece of advice on a workload: one sentence or two, with the figures that
// back it.
type Advice struct {
	Kind AdviceKind `json:"kind"`
	Text string     `json:"text"`
}

// Sizing is a workload's resource estimate at one precision, before any offer is considered.
type Sizing struct {
	Precision Precision `json:"precision,omitempty"` // inference only
	// WeightsGB is the model weights (for training, the bf16/fp16 working copy or the
	// quantized base).
	WeightsGB float64 `json:"weights_gb"`
	// KVCacheGB is the inference KV cache for all tokens in flight.
	KVCacheGB float64 `json:"kv_cache_gb"`
	// StateGB is gradients, optimizer state, fp32 master weights and adapters (training).
	StateGB float64 `json:"state_gb"`
	// ShardedGB = weights + KV cache + state: what is split across GPUs.
	ShardedGB float64 `json:"sharded_gb"`
	// ActivationsGBPerGPU and OverheadGBPerGPU are paid on every GPU.
	ActivationsGBPerGPU float64 `json:"activations_gb_per_gpu"`
	OverheadGBPerGPU    float64 `json:"overhead_gb_per_gpu"`
	// NeededGBOneGPU is the VRAM one GPU would need: (sharded + per-GPU) / utilization.
	NeededGBOneGPU float64 `json:"needed_gb_one_gpu"`
	// MeasuredGB is the workload's measured footprint, when it gives one instead of the
	// estimate (no headroom is added to it).
	MeasuredGB float64 `json:"measured_gb,omitempty"`
	// TrainingPFLOPs is the compute of one run in PFLOPs (training kinds), k·N·D or the
	// reference GPU-hours converted.
	TrainingPFLOPs float64 `json:"training_pflops,omitempty"`
	// Fits is, for each GPU model on the market, the fewest GPUs that hold the workload and the
	// interconnect that count needs.
	Fits []Fit `json:"fits"`
}

// Fit is how a workload fits one GPU model by memory alone (no offer, price or deadline).
type Fit struct {
	GPUModel  string    `json:"gpu_model"`
	Precision Precision `json:"precision,omitempty"`
	// GPUs is the fewest GPUs that hold the workload (0 when none can).
	GPUs int `json:"gpus"`
	// Nodes is how many nodes of Options.MaxGPUsPerNode that count spans.
	Nodes int `json:"nodes"`
	// IntraNode and InterNode are the interconnect that count needs.
	IntraNode Link `json:"intra_node"`
	InterNode Link `json:"inter_node"`
	// NeededGB is the raw VRAM the count needs across its GPUs, overhead and headroom included.
	NeededGB float64 `json:"needed_gb"`
	Feasible bool    `json:"feasible"`
	// Reason says why the model cannot hold the workload; empty when feasible.
	Reason string `json:"reason,omitempty"`
}

// PriceSource says where a placement's price comes from.
type PriceSource string

// Price sources.
const (
	PriceMarket PriceSource = "market" // the cheapest matching offer today
	PricePaid   PriceSource = "paid"   // the price the team says it pays
	PriceNone   PriceSource = "none"   // not priced: no matching offer and no paid price
)

// Placement is a priced way to run a workload: an offer (or today's placement), how many of
// it, and what that costs per run and per month.
type Placement struct {
	Provider string      `json:"provider"`
	Region   string      `json:"region"`
	OfferID  string      `json:"offer_id"` // empty for a current placement priced from a paid price
	Tier     schema.Tier `json:"tier"`
	GPUModel string      `json:"gpu_model"`
	// GPUCount is every GPU rented: GPUsPerNode × Nodes.
	GPUCount    int              `json:"gpu_count"`
	GPUsPerNode int              `json:"gpus_per_node"`
	Nodes       int              `json:"nodes"`
	PriceType   schema.PriceType `json:"price_type"`
	Precision   Precision        `json:"precision,omitempty"`
	IntraNode   schema.IntraNode `json:"intra_node"`
	InterNode   schema.InterNode `json:"inter_node"`
	// PriceUSDPerHour is the hourly price of the whole placement (all nodes);
	// PriceUSDPerGPUHour the same per GPU.
	PriceUSDPerHour    decimal.Decimal `json:"price_usd_per_hour"`
	PriceUSDPerGPUHour decimal.Decimal `json:"price_usd_per_gpu_hour"`
	PriceSource        PriceSource     `json:"price_source"`
	// MarketUSDPerGPUHour is today's cheapest matching market price when the placement is
	// priced at a paid price (current placements only).
	MarketUSDPerGPUHour *decimal.Decimal `json:"market_usd_per_gpu_hour,omitempty"`
	// HoursPerRun is the wall-clock time of one run (jobs), spot restart overhead included.
	HoursPerRun *decimal.Decimal `json:"hours_per_run,omitempty"`
	// CostUSDPerRun = PriceUSDPerHour × HoursPerRun (jobs).
	CostUSDPerRun *decimal.Decimal `json:"cost_usd_per_run,omitempty"`
	// HoursPerMonth is the hours billed each month (HoursPerRun × runs for jobs).
	HoursPerMonth decimal.Decimal `json:"hours_per_month"`
	// CostUSDPerMonth = PriceUSDPerHour × HoursPerMonth, rounded to cents.
	CostUSDPerMonth decimal.Decimal `json:"cost_usd_per_month"`
	// UnitCost is the price of one unit of the finished work: a million output tokens, a
	// training run, a unit of custom work; nil when the workload does not say enough, or a
	// service was measured idle (no tokens to price).
	UnitCost *UnitCost `json:"unit_cost,omitempty"`
	// DecodeTokensPerSecond is the bandwidth bound on per-sequence decode speed at full
	// concurrency (inference).
	DecodeTokensPerSecond float64   `json:"decode_tokens_per_second,omitempty"`
	ObservedAt            time.Time `json:"observed_at"` // when the price was seen; zero for paid prices
	// Notes explain what the numbers assume (throughput penalties, inferred interconnect…).
	Notes []string `json:"notes"`
}

// UnitCost is what one unit of a workload's finished work costs on a placement.
type UnitCost struct {
	Unit string          `json:"unit"` // "1M output tokens", "run", or the workload's own unit
	USD  decimal.Decimal `json:"usd"`
}

// Rejection says why a GPU model on the market cannot run a workload.
type Rejection struct {
	GPUModel string `json:"gpu_model"`
	GPUCount int    `json:"gpu_count"` // the configuration the reason is about
	// Stage is the check that failed: gpu (the workload's GPU lists, compute capability or
	// engine), precision, memory, interconnect, multi_node, price_type, throughput, deadline,
	// provider, host (tier or reliability), region or availability.
	Stage  string `json:"stage"`
	Reason string `json:"reason"` // e.g. "RTX-4090-24GB ×1: 24 GB < 41.3 GB needed"
}

// Savings compares the current placement with the recommended one.
type Savings struct {
	USDPerMonth decimal.Decimal `json:"usd_per_month"` // current − recommended; negative if dearer
	// Percent of the current monthly cost, rounded to 0.1; nil when the current cost is zero.
	Percent *decimal.Decimal `json:"percent"`
}

// Totals add up monthly costs over the workloads where both the current and the recommended
// placements are priced (Compared), so the savings compare like with like.
type Totals struct {
	Workloads              int              `json:"workloads"`
	NoFit                  int              `json:"no_fit"`
	Compared               int              `json:"compared"`
	CurrentUSDPerMonth     decimal.Decimal  `json:"current_usd_per_month"`
	RecommendedUSDPerMonth decimal.Decimal  `json:"recommended_usd_per_month"`
	SavingsUSDPerMonth     decimal.Decimal  `json:"savings_usd_per_month"`
	SavingsPercent         *decimal.Decimal `json:"savings_percent"`
}

// add counts one workload's plan in the totals.
func (t *Totals) add(w *WorkloadPlan) {
	t.Workloads++
	if w.Status == StatusNoFit {
		t.NoFit++
	}
	if w.Savings == nil {
		return
	}
	t.Compared++
	t.CurrentUSDPerMonth = t.CurrentUSDPerMonth.Add(w.Current.CostUSDPerMonth)
	t.RecommendedUSDPerMonth = t.RecommendedUSDPerMonth.Add(w.Recommended.CostUSDPerMonth)
	t.SavingsUSDPerMonth = t.SavingsUSDPerMonth.Add(w.Savings.USDPerMonth)
}

// finish computes the savings percent once every workload is added.
func (t *Totals) finish() {
	t.SavingsPercent = percent(t.SavingsUSDPerMonth, t.CurrentUSDPerMonth)
}

// merge adds a team's totals to the plan's.
func (t *Totals) merge(o Totals) {
	t.Workloads += o.Workloads
	t.NoFit += o.NoFit
	t.Compared += o.Compared
	t.CurrentUSDPerMonth = t.CurrentUSDPerMonth.Add(o.CurrentUSDPerMonth)
	t.RecommendedUSDPerMonth = t.RecommendedUSDPerMonth.Add(o.RecommendedUSDPerMonth)
	t.SavingsUSDPerMonth = t.SavingsUSDPerMonth.Add(o.SavingsUSDPerMonth)
}

// percent is part as a percentage of whole, rounded to 0.1; nil unless whole is positive.
func percent(part, whole decimal.Decimal) *decimal.Decimal {
	if !whole.IsPositive() {
		return nil
	}
	p := part.Mul(decimal.NewFromInt(100)).DivRound(whole, 1)
	return &p
}

// Rows flattens the plan into one stored row per workload, in plan order.
func (p *Plan) Rows(runID string) []schema.PlanRow {
	var rows []schema.PlanRow
	for _, t := range p.Teams {
		for i := range t.Workloads {
			w := &t.Workloads[i]
			r := schema.PlanRow{
				RunID:          runID,
				GeneratedAt:    p.GeneratedAt,
				Team:           t.Name,
				Workload:       w.Name,
				Kind:           string(w.Kind),
				Status:         string(w.Status),
				Reason:         w.Reason,
				Alternatives:   len(w.Alternatives),
				RejectedModels: len(w.Rejected),
			}
			if c := w.Current; c != nil {
				r.CurrentProvider, r.CurrentGPUModel, r.CurrentGPUCount = c.Provider, c.GPUModel, c.GPUCount
				r.CurrentPriceType, r.CurrentPriceSource = c.PriceType, string(c.PriceSource)
				if c.PriceSource != PriceNone {
					r.CurrentUSDPerHour = ptr(c.PriceUSDPerHour)
					r.CurrentUSDPerMonth = ptr(c.CostUSDPerMonth)
				}
			}
			if c := w.Recommended; c != nil {
				r.RecProvider, r.RecRegion, r.RecOfferID = c.Provider, c.Region, c.OfferID
				r.RecGPUModel, r.RecGPUCount, r.RecNodes = c.GPUModel, c.GPUCount, c.Nodes
				r.RecPriceType, r.RecPrecision = c.PriceType, string(c.Precision)
				r.RecUSDPerHour = ptr(c.PriceUSDPerHour)
				r.RecHoursPerMonth = ptr(c.HoursPerMonth)
				r.RecUSDPerMonth = ptr(c.CostUSDPerMonth)
			}
			if s := w.Savings; s != nil {
				r.SavingsUSDPerMonth = ptr(s.USDPerMonth)
				r.SavingsPercent = s.Percent
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// PlanItem is one workload of a plan as `gpucost optimize --output json` lists it: first the
// row the store keeps of it (schema.PlanRow, what /api/v1/plans serves of a stored plan, under
// the same names), then what only the plan as made holds: the team's email, both placements
// whole, the alternatives and rejected models themselves (the row counts them), the sizing,
// the caveats, the measured utilization, the advice and the rent-or-buy case.
type PlanItem struct {
	schema.PlanRow
	TeamEmail   string     `json:"team_email"`
	Current     *Placement `json:"current"`
	Recommended *Placement `json:"recommended"`
	// AlternativePlacements are the next cheapest feasible placements (the row's
	// alternatives counts them).
	AlternativePlacements []Placement      `json:"alternative_placements"`
	Rejected              []Rejection      `json:"rejected"`
	Sizing                []Sizing         `json:"sizing"`
	Caveats               []string         `json:"caveats"`
	MeasuredUtilization   *schema.GPUUsage `json:"measured_utilization"`
	Advice                []Advice         `json:"advice"`
	Ownership             *OwnershipCase   `json:"ownership"`
}

// Items lists the plan's workloads as items, in plan order, their rows as Rows(runID) makes them.
func (p *Plan) Items(runID string) []PlanItem {
	rows := p.Rows(runID)
	items := make([]PlanItem, 0, len(rows))
	for _, t := range p.Teams {
		for i := range t.Workloads {
			w := &t.Workloads[i]
			items = append(items, PlanItem{PlanRow: rows[len(items)], TeamEmail: t.Email, Current: w.Current, Recommended: w.Recommended,
				AlternativePlacements: w.Alternatives, Rejected: w.Rejected, Sizing: w.Sizing, Caveats: w.Caveats,
				MeasuredUtilization: w.MeasuredUtilization, Advice: w.Advice, Ownership: w.Ownership})
		}
	}
	return items
}

// RowTotals adds up stored plan rows (Rows) as a plan adds up its workloads: the totals of a
// team's rows of an earlier plan are the team's Totals of that plan.
func RowTotals(rows []schema.PlanRow) Totals {
	var t Totals
	for _, r := range rows {
		t.Workloads++
		if r.Status == string(StatusNoFit) {
			t.NoFit++
		}
		if r.SavingsUSDPerMonth == nil || r.CurrentUSDPerMonth == nil || r.RecUSDPerMonth == nil {
			continue
		}
		t.Compared++
		t.CurrentUSDPerMonth = t.CurrentUSDPerMonth.Add(*r.CurrentUSDPerMonth)
		t.RecommendedUSDPerMonth = t.RecommendedUSDPerMonth.Add(*r.RecUSDPerMonth)
		t.SavingsUSDPerMonth = t.SavingsUSDPerMonth.Add(*r.SavingsUSDPerMonth)
	}
	t.finish()
	return t
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
