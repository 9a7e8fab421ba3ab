package scrapers

import (
	"math"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Helpers shared by the provider files: GPU resolution, prices, rounding.

// applyGPU resolves raw (with the reported per-GPU VRAM, 0 = none) and fills the offer's GPU
// fields and data-quality flags. It returns the match for interconnect decisions.
func applyGPU(o *schema.Offer, provider, raw string, vramGB float64, alt ...string) gpus.Match {
	m := gpus.Resolve(provider, raw, vramGB)
	for _, a := range alt {
		if m.Known || a == "" {
			break
		}
		m = gpus.Resolve(provider, a, vramGB)
	}
	o.GPUNameRaw = raw
	if !m.Known {
		o.GPUModel = ""
		o.VRAMGB = round(m.VRAMGB, 2)
		o.AddFlag(schema.FlagUnknownGPU)
		return m
	}
	o.GPUModel = m.Model.Name
	o.VRAMGB = m.VRAMGB
	if m.Snapped {
		o.AddFlag(schema.FlagVRAMSnapped)
	}
	if vramGB <= 0 {
		o.AddFlag(schema.FlagVRAMMissing)
	}
	return m
}

// intraFromForm is the intra-node class a catalog form factor implies when the source says
// nothing better: SXM boards are NVSwitch (HGX), NVL pairs are bridged, PCIe and GeForce cards
// talk over PCIe. OAM (AMD Infinity Fabric) has no class of its own: unknown.
func intraFromForm(m gpus.Match) schema.IntraNode {
	if !m.Known {
		return schema.IntraUnknown
	}
	switch m.Model.FormFactor {
	case gpus.SXM:
		return sxmIntra(m)
	case gpus.NVL:
		return schema.IntraNVLink
	case gpus.PCIe, gpus.Consumer:
		return schema.IntraPCIe
	}
	return schema.IntraUnknown
}

// usd turns a provider's float price into a decimal at the stored precision. Binary noise
// (0.060000000000000005) disappears in the rounding.
func usd(f float64) decimal.Decimal {
	return decimal.NewFromFloat(f).Round(schema.PriceDecimals)
}

// priced sets an offer's prices from the whole-offer price.
func priced(o schema.Offer, pt schema.PriceType, offerPrice decimal.Decimal) schema.Offer {
	o.PriceType = pt
	o.PriceUSDPerHour = offerPrice
	o.PriceUSDPerGPUHour = schema.PerGPU(offerPrice, o.GPUCount)
	o.DQFlags = append(make([]schema.DQFlag, 0, len(o.DQFlags)), o.DQFlags...) // own copy, [] not null
	return o
}

// round rounds f to n decimals.
func round(f float64, n int) float64 {
	p := math.Pow10(n)
	return math.Round(f*p) / p
}

func ptr[T any](v T) *T { return &v }

// positive reports whether p holds a finite number > 0.
func positive(p *float64) bool {
	return p != nil && *p > 0 && !math.IsInf(*p, 0) && !math.IsNaN(*p)
}

// countryCode returns s as an ISO 3166-1 alpha-2 code if it looks like one.
func countryCode(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 2 {
		return ""
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return ""
		}
	}
	return s
}

// sxmIntra is the intra-node class of an SXM board with NVLink: NVSwitch (HGX), except V100
// SXM2 boards, whose hybrid cube-mesh links GPUs directly.
func sxmIntra(m gpus.Match) schema.IntraNode {
	if m.Model.Family == "V100" {
		return schema.IntraNVLink
	}
	return schema.IntraNVSwitch
}
