package schema

import (
	"time"

	"github.com/shopspring/decimal"
)

// PlanRow is one workload's line of a stored optimization plan: what it runs on now, what the
// optimizer recommends, and the monthly savings. `gpucost optimize` writes one row per workload
// per run, so savings can be followed over time. Prices are USD; nil means unknown (no current
// price, or nothing fits).
type PlanRow struct {
	RunID       string    `json:"run_id"`
	GeneratedAt time.Time `json:"generated_at"`
	Team        string    `json:"team"`
	Workload    string    `json:"workload"`
	Kind        string    `json:"kind"`   // inference, lora, qlora, full_finetune, pretrain, custom
	Status      string    `json:"status"` // ok, or no_fit when nothing fits
	Reason      string    `json:"reason"` // why, in one line

	CurrentProvider    string           `json:"current_provider"`
	CurrentGPUModel    string           `json:"current_gpu_model"`
	CurrentGPUCount    int              `json:"current_gpu_count"`
	CurrentPriceType   PriceType        `json:"current_price_type"`
	CurrentPriceSource string           `json:"current_price_source"` // market, paid or none
	CurrentUSDPerHour  *decimal.Decimal `json:"current_usd_per_hour"`
	CurrentUSDPerMonth *decimal.Decimal `json:"current_usd_per_month"`

	RecProvider      string           `json:"recommended_provider"`
	RecRegion        string           `json:"recommended_region"`
	RecOfferID       string           `json:"recommended_offer_id"`
	RecGPUModel      string           `json:"recommended_gpu_model"`
	RecGPUCount      int              `json:"recommended_gpu_count"`
	RecNodes         int              `json:"recommended_nodes"`
	RecPriceType     PriceType        `json:"recommended_price_type"`
	RecPrecision     string           `json:"recommended_precision"`
	RecUSDPerHour    *decimal.Decimal `json:"recommended_usd_per_hour"`
	RecHoursPerMonth *decimal.Decimal `json:"recommended_hours_per_month"`
	RecUSDPerMonth   *decimal.Decimal `json:"recommended_usd_per_month"`

	SavingsUSDPerMonth *decimal.Decimal `json:"savings_usd_per_month"`
	SavingsPercent     *decimal.Decimal `json:"savings_percent"`
	Alternatives       int              `json:"alternatives"`
	RejectedModels     int              `json:"rejected_models"`
}
