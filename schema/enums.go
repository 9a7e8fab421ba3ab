package schema

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PriceType is how an offer is billed.
type PriceType string

// Price types. Reserved and term prices come from imports of published tables, from Lambda's
// 1-Click Cluster rows and from RunPod's savings plans; serverless prices from Verda's
// serverless containers and RunPod's serverless workers; every other scraped price is
// on-demand or spot. A term price is paid per hour for the whole term, busy or not; a
// serverless price only for the time the GPUs work (and their start-ups), and not at all while
// scaled to zero.
const (
	OnDemand   PriceType = "on_demand"  // pay per hour, no interruption
	Spot       PriceType = "spot"       // interruptible / bid / community-spot capacity
	Serverless PriceType = "serverless" // pay for busy time only, scaled to zero when idle
	Reserved   PriceType = "reserved"   // committed capacity, term unspecified
	Term1W     PriceType = "term_1w"    // one-week commitment
	Term1M     PriceType = "term_1m"    // one-month commitment
	Term3M     PriceType = "term_3m"    // three-month commitment
	Term6M     PriceType = "term_6m"    // six-month commitment
	Term1Y     PriceType = "term_1y"    // one-year commitment
	Term3Y     PriceType = "term_3y"    // three-year commitment
)

// PriceTypes lists every valid price type, in a stable order.
var PriceTypes = []PriceType{OnDemand, Spot, Serverless, Reserved, Term1W, Term1M, Term3M, Term6M, Term1Y, Term3Y}

// Interruptible reports whether capacity at this price can be taken away mid-job.
func (p PriceType) Interruptible() bool { return p == Spot }

// Committed reports whether the price is paid for a term, every hour of it, busy or not:
// reserved and term prices.
func (p PriceType) Committed() bool {
	_, term := termMonths[p]
	return p == Reserved || term
}

// MonthsPerWeek is a week as a share of the 730-hour month (12 months ÷ 52 weeks).
const MonthsPerWeek = 12.0 / 52

// termMonths is the commitment of each term price type, in months.
var termMonths = map[PriceType]float64{Term1W: MonthsPerWeek, Term1M: 1, Term3M: 3, Term6M: 6, Term1Y: 12, Term3Y: 36}

// TermMonths is how long a term price commits to, in months; ok is false for every other
// price type, reserved included (its term is not stated).
func (p PriceType) TermMonths() (months float64, ok bool) {
	months, ok = termMonths[p]
	return months, ok
}

// Term says how long a price commits to, as a person would: "1 week", "3 months", "1 year"
// (TermText); "term not stated" for a reserved price; "" for a price that commits to nothing.
func (p PriceType) Term() string {
	if months, ok := p.TermMonths(); ok {
		return TermText(months)
	}
	if p == Reserved {
		return "term not stated"
	}
	return ""
}

// TermText writes a commitment of months as a person would: "1 week", "3 months", "1 year",
// whole weeks below a month and whole years from twelve months, months to two decimals
// otherwise.
func TermText(months float64) string {
	plural := func(n float64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.FormatFloat(math.Round(n*100)/100, 'f', -1, 64) + " " + unit + "s"
	}
	switch weeks := months / MonthsPerWeek; {
	case months < 1 && math.Abs(weeks-math.Round(weeks)) < 1e-9:
		return plural(math.Round(weeks), "week")
	case months >= 12 && math.Mod(months, 12) == 0:
		return plural(months/12, "year")
	}
	return plural(months, "month")
}

// Tier is the provider's class of hosting for an offer.
type Tier string

// Tiers as providers name them. Vast distinguishes verified and unverified hosts (and datacenter
// hosts), RunPod secure and community cloud; Lambda, CoreWeave, Verda and OCI sell datacenter
// capacity only.
const (
	TierSecure     Tier = "secure"
	TierCommunity  Tier = "community"
	TierDatacenter Tier = "datacenter"
	TierVerified   Tier = "verified"
	TierUnverified Tier = "unverified"
)

// Tiers lists every valid tier.
var Tiers = []Tier{TierSecure, TierCommunity, TierDatacenter, TierVerified, TierUnverified}

// IntraNode is how the GPUs inside one node talk to each other.
type IntraNode string

// Intra-node interconnect classes, best first.
const (
	IntraNVSwitch IntraNode = "nvswitch" // all-to-all NVLink through NVSwitch (HGX/DGX SXM boards, NVL72)
	IntraNVLink   IntraNode = "nvlink"   // NVLink without a switch: bridged cards, V100's hybrid cube mesh
	// IntraInfinityFabric is AMD's GPU fabric: the fully connected mesh of an 8-OAM board.
	IntraInfinityFabric IntraNode = "infinity_fabric"
	IntraPCIe           IntraNode = "pcie" // PCIe only
	IntraUnknown        IntraNode = "unknown"
)

// IntraNodes lists every valid intra-node class.
var IntraNodes = []IntraNode{IntraNVSwitch, IntraNVLink, IntraInfinityFabric, IntraPCIe, IntraUnknown}

// Linked reports whether the GPUs in the node are joined by a GPU-to-GPU fabric (NVLink, with
// or without NVSwitch, or Infinity Fabric). Unknown is not linked.
func (i IntraNode) Linked() bool {
	return i == IntraNVSwitch || i == IntraNVLink || i == IntraInfinityFabric
}

// intraRank orders intra-node classes: nvswitch above nvlink, and AMD's Infinity Fabric, a GPU
// fabric of its own, level with nvlink.
var intraRank = map[IntraNode]int{IntraUnknown: 0, IntraPCIe: 1, IntraNVLink: 2, IntraInfinityFabric: 2, IntraNVSwitch: 3}

// AtLeast reports whether i is min or better: at least nvlink is nvlink, infinity_fabric or
// nvswitch.
func (i IntraNode) AtLeast(min IntraNode) bool { return intraRank[i] >= intraRank[min] }

// InterNode is how nodes of a multi-node job talk to each other.
type InterNode string

// Inter-node interconnect classes.
const (
	InterInfiniBand InterNode = "infiniband"
	InterRoCE       InterNode = "roce"
	InterEthernet   InterNode = "ethernet"
	InterNone       InterNode = "none" // single hosts that cannot be clustered (marketplace machines)
	InterUnknown    InterNode = "unknown"
)

// InterNodes lists every valid inter-node class.
var InterNodes = []InterNode{InterInfiniBand, InterRoCE, InterEthernet, InterNone, InterUnknown}

// RDMA reports whether the fabric is fit for multi-node training (InfiniBand or RoCE).
func (i InterNode) RDMA() bool { return i == InterInfiniBand || i == InterRoCE }

// Stock is the provider's coarse availability signal.
type Stock string

// Stock levels.
const (
	StockHigh    Stock = "high"
	StockMedium  Stock = "medium"
	StockLow     Stock = "low"
	StockNone    Stock = "none"
	StockUnknown Stock = "unknown"
)

// Stocks lists every valid stock level.
var Stocks = []Stock{StockHigh, StockMedium, StockLow, StockNone, StockUnknown}

// DQFlag marks an offer that was kept but deserves a second look.
type DQFlag string

// Data-quality flags.
const (
	FlagUnknownGPU   DQFlag = "unknown_gpu"   // the GPU name is not in the catalog; kept verbatim
	FlagVRAMSnapped  DQFlag = "vram_snapped"  // reported VRAM differed from the catalog's (or, for an unknown GPU, the market's label) and was snapped
	FlagPriceOutlier DQFlag = "price_outlier" // the price moved more than the configured factor since the last observation
	FlagVRAMMissing  DQFlag = "vram_missing"  // the source gave no VRAM; the catalog's value is used
	FlagCountParsed  DQFlag = "count_parsed"  // the GPU count came from free text (a name or description)
)

// List writes the values of an enum for people: "on_demand, spot, serverless".
func List[T ~string](values []T) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// Parse helpers for the enums: each returns a clear error naming the bad value.

// ParsePriceType returns the PriceType named s.
func ParsePriceType(s string) (PriceType, error) {
	return parseEnum("price type", s, PriceTypes)
}

// ParseIntraNode returns the IntraNode named s.
func ParseIntraNode(s string) (IntraNode, error) {
	return parseEnum("intra-node interconnect", s, IntraNodes)
}

// ParseInterNode returns the InterNode named s.
func ParseInterNode(s string) (InterNode, error) {
	return parseEnum("inter-node interconnect", s, InterNodes)
}

// ParseStock returns the Stock level named s.
func ParseStock(s string) (Stock, error) {
	return parseEnum("stock level", s, Stocks)
}

func parseEnum[T ~string](what, s string, valid []T) (T, error) {
	for _, v := range valid {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("unknown %s %q (want one of %v)", what, s, valid)
}
