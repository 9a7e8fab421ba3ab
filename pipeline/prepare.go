package pipeline

import "github.com/gpucost/gpucost/schema"

// Prepare normalizes one offer and validates it by the rules a run applies to every offer of a
// source (validate.go), for offers that come from elsewhere, such as a published price table
// (package pricetable): normalizing settles what a source may leave implicit (unknown classes,
// the per-GPU price, the stored precision, the canonical GPU model with its data-quality flags
// unknown_gpu, vram_snapped and vram_missing), and the reason returned is the one a run would
// reject the offer for (RejectAbsurdPrice above cfg's MaxPricePerGPUHour, RejectZeroVRAM, …),
// or "" when a run would keep it. So such an offer carries the flags, and passes the checks, a
// scraped one does.
//
// Unlike a run, Prepare stamps nothing on the offer: it keeps its RunID, ObservedAt and Provider
// (a table's rows are observed at different times, for many providers). The two checks of a run
// that need more than the offer are left to the caller: a run keeps the first of two offers under
// one Key (RejectDuplicate), and flags an offer whose price moved by more than OutlierFactor
// since its last observation (History).
func Prepare(cfg Config, o *schema.Offer) (reason string) {
	normalize(o, schema.Run{ID: o.RunID, ObservedAt: o.ObservedAt}, o.Provider)
	return validator{maxPrice: cfg.withDefaults().MaxPricePerGPUHour}.reject(*o)
}
