package gpus

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// Purchase prices are what buying a GPU costs, for the rent-or-buy case of the plan and
// `gpucost tco` (docs/economics.md §2). They live beside the catalog, not in Model: a price
// does not change how an offer's GPU is resolved, so it stays out of Revision, and a model
// nobody sells a price for simply has none.
//
// Prices are rougher than the datasheet figures: a street price moves every quarter and
// differs between sellers. Each row says what kind of figure it is (Grade: the buying guides'
// price table is one source; a list price or street price remembered without a copy is
// recalled), when it was seen, and whether the card is bought new or used. No source gives
// what a card resells for after its write-off: every residual share is an assumption (grade
// assumed), to be replaced by a figure of your own in optimize.options.ownership.residual.

// Condition says whether a purchase price is for a new card or a used one.
type Condition string

// Conditions.
const (
	New  Condition = "new"
	Used Condition = "used"
)

// Assumed grades a figure no source gives: an assumption to calibrate (the residual values).
const Assumed Grade = "assumed"

// RangePoint picks one price from a purchase range.
type RangePoint string

// Points of a purchase range.
const (
	RangeLow  RangePoint = "low"
	RangeMid  RangePoint = "mid" // halfway between low and high
	RangeHigh RangePoint = "high"
)

// RangePoints lists every point, in order.
var RangePoints = []RangePoint{RangeLow, RangeMid, RangeHigh}

// Purchase is what buying one GPU of a catalog model costs, per GPU, as seen at a time.
type Purchase struct {
	// LowUSD and HighUSD bound the price of one GPU, in dollars; equal when the source gives
	// one figure.
	LowUSD  decimal.Decimal `json:"low_usd"`
	HighUSD decimal.Decimal `json:"high_usd"`
	// Condition is whether the price is for a new card or a used one.
	Condition Condition `json:"condition"`
	// Seen is when the price was seen: the year of a guide (2026), a span of years for a
	// street price, or the launch year of a list price.
	Seen   string `json:"seen"`
	Source string `json:"source"`
	Grade  Grade  `json:"grade"`
	// Residual is the typical share of the price a card resells for after a write-off of
	// about three years, 0–1; ResidualGrade says how well it is sourced (assumed, for now,
	// for every row).
	Residual      float64 `json:"residual"`
	ResidualGrade Grade   `json:"residual_grade"`
}

// At is the price at point p of the range: low, high, or halfway between.
func (p Purchase) At(point RangePoint) (decimal.Decimal, error) {
	switch point {
	case RangeLow:
		return p.LowUSD, nil
	case RangeHigh:
		return p.HighUSD, nil
	case RangeMid:
		return p.LowUSD.Add(p.HighUSD).Div(decimal.NewFromInt(2)), nil
	}
	return decimal.Zero, fmt.Errorf("purchase price point %q: want low, mid or high", point)
}

// PurchaseOf returns the purchase price of the catalog model with the canonical name
// (case-insensitive), and false when the catalog has none for it.
func PurchaseOf(canonical string) (Purchase, bool) {
	m, ok := Lookup(canonical)
	if !ok {
		return Purchase{}, false
	}
	p, ok := purchases[m.Name]
	return p, ok
}

// Sources of the purchase prices. docs/gpus.md §3.3 says where each is found.
const (
	srcGuides = "2026 GPU buying guides' purchase table"
	srcStreet = "street price as remembered, no copy found"
	srcList   = "launch list price as remembered, no copy found"
)

// Residual shares assumed after a write-off of about three years (no source gives one). GeForce
// cards keep more of their value on the second-hand market than data-center cards (the RTX
// 3090's remembered $1,499 list price against $700–900 used five years on); a card bought used
// has already lost most of what it will lose.
const (
	residualDataCenter = 0.20
	residualConsumer   = 0.30
	residualUsed       = 0.10
)

// purchaseTable returns the purchase prices by canonical model name. Kept as a function so
// nothing outside can change the table.
func purchaseTable() map[string]Purchase {
	usd := func(x int64) decimal.Decimal { return decimal.NewFromInt(x) }
	price := func(low, high int64, c Condition, seen, src string, g Grade) Purchase {
		residual := residualDataCenter
		if c == Used {
			residual = residualUsed
		}
		return Purchase{LowUSD: usd(low), HighUSD: usd(high), Condition: c, Seen: seen, Source: src, Grade: g,
			Residual: residual, ResidualGrade: Assumed}
	}
	consumer := func(p Purchase) Purchase {
		if p.Condition == New {
			p.Residual = residualConsumer
		}
		return p
	}
	list := func(usd int64, launch string) Purchase {
		return price(usd, usd, New, launch+" launch", srcList, Recalled)
	}
	street := func(low, high int64, c Condition) Purchase {
		return price(low, high, c, "2025-26", srcStreet, Recalled)
	}
	return map[string]Purchase{
		// The buying guides' six: B200 $45–50K, H200 $30–40K, H100 ~$25K, A100 80GB ~$15K
		// used, L40S ~$8K, RTX 4090 ~$1,600.
		"B200-SXM-180GB": price(45000, 50000, New, "2026", srcGuides+" ($45–50K); a remembered street price says $30–40K", Disputed),
		"H200-SXM-141GB": price(30000, 40000, New, "2026", srcGuides, OneSource),
		"H100-SXM-80GB":  price(25000, 25000, New, "2026", srcGuides+" (~$25K); a remembered street price says $25–30K", OneSource),
		// The guides' "A100 80GB" draws 300 W: the PCIe card (the SXM module draws 400 W).
		"A100-PCIE-80GB": price(15000, 15000, Used, "2026", srcGuides+" (~$15K used, at 300 W)", OneSource),
		"L40S-48GB":      price(8000, 8000, New, "2026", srcGuides+" (~$8K); a remembered street price says $7–10K", OneSource),
		"RTX-4090-24GB":  consumer(price(1600, 1600, New, "2026", srcGuides+" (~$1,600); $1,599 launch list price", OneSource)),

		// Blackwell beyond the guides.
		"B300-SXM-288GB": price(45000, 45000, New, "2025-26", "Hugging Face hardware page as remembered ($45K), no copy found", Recalled),
		// A GB300 NVL72 rack of 72 GPUs (with its Grace CPUs and NVLink switches) for $3–4M.
		"GB300-288GB": price(41667, 55556, New, "2025-26", "GB300 NVL72 rack price (~$3–4M, awesomeagents, unverified) ÷ 72 GPUs", Derived),

		// Street prices of data-center cards, remembered.
		"A100-SXM-80GB":  street(8000, 15000, Used),
		"L4-24GB":        street(2500, 3000, New),
		"T4-16GB":        street(500, 800, Used),
		"V100-SXM2-16GB": street(300, 600, Used),
		"V100-SXM2-32GB": street(300, 600, Used),
		"P40-24GB":       street(150, 250, Used),
		"MI300X-192GB":   street(10000, 15000, New),

		// Workstation cards.
		"RTX-PRO-6000-96GB":       street(8000, 9000, New),
		"RTX-PRO-6000-MAX-Q-96GB": price(8565, 8565, New, "2025-26", "technical.city listing", OneSource),
		"RTX-6000-ADA-48GB":       list(6800, "2022"),
		"RTX-5000-ADA-32GB":       list(4000, "2023"),
		"RTX-4000-ADA-20GB":       list(1250, "2023"),
		"RTX-4000-SFF-ADA-20GB":   list(1250, "2023"),
		"RTX-2000-ADA-16GB":       list(625, "2024"),
		"RTX-A6000-48GB":          list(4650, "2020"),
		"RTX-A5000-24GB":          list(2250, "2021"),
		"RTX-A4500-20GB":          list(1000, "2021"),
		"RTX-A4000-16GB":          list(1000, "2021"),
		"RTX-A2000-12GB":          list(450, "2021"),
		"RTX-A2000-6GB":           list(450, "2021"),
		"QUADRO-RTX-6000-24GB":    list(6300, "2018"),

		// GeForce and TITAN cards.
		"TITAN-RTX-24GB":      consumer(list(2499, "2018")),
		"RTX-5090-32GB":       consumer(list(1999, "2025")),
		"RTX-5080-16GB":       consumer(list(999, "2025")),
		"RTX-4080-SUPER-16GB": consumer(list(999, "2024")),
		"RTX-4080-16GB":       consumer(list(1199, "2022")),
		"RTX-4070-TI-12GB":    consumer(list(799, "2023")),
		"RTX-3090-TI-24GB":    consumer(list(1999, "2022")),
		// Out of production: bought used today.
		"RTX-3090-24GB":    street(700, 900, Used),
		"RTX-3080-TI-12GB": consumer(list(1199, "2021")),
		"RTX-3080-10GB":    consumer(list(699, "2020")),
		"RTX-3070-8GB":     consumer(list(499, "2020")),
	}
}

// purchases is the purchase table, built once and never modified.
var purchases = purchaseTable()
