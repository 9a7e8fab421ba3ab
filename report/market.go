package report

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// priceKey is one line of the market: a GPU model at a provider and price type.
type priceKey struct {
	model, provider string
	priceType       schema.PriceType
}

// cheapest is the cheapest offer of a priceKey now.
type cheapest struct {
	price           decimal.Decimal
	region, offerID string
}

// marketData indexes the offers and the history once per report.
type marketData struct {
	asOf, weekAgo time.Time
	now           map[priceKey]cheapest
	// history holds, per priceKey, the daily lows sorted by day.
	history map[priceKey][]Point
	// fromOffers says whether now comes from offers (true) or from history.
	fromOffers bool
}

// marketPriceType reports whether pt is one of the price types the market section and charts show: commitments are
// not comparable week to week.
func marketPriceType(pt schema.PriceType) bool { return pt == schema.OnDemand || pt == schema.Spot }

func newMarketData(in Input, opts Options, plan *optimizer.Plan, asOf time.Time) *marketData {
	m := &marketData{
		asOf:    asOf,
		weekAgo: day(asOf.AddDate(0, 0, -7)),
		now:     map[priceKey]cheapest{},
		history: map[priceKey][]Point{},
	}
	excluded := map[string]bool{}
	for _, e := range plan.ExcludedProviders {
		excluded[e.Provider] = true
	}
	for _, p := range in.History {
		if !marketPriceType(p.PriceType) || !p.Min.IsPositive() {
			continue
		}
		d := day(p.Bucket)
		if d.After(asOf) {
			continue
		}
		k := priceKey{textcell.Clean(p.GPUModel, textcell.NameWidth), textcell.Clean(p.Provider, textcell.NameWidth), p.PriceType}
		m.history[k] = append(m.history[k], Point{Day: d, USDPerGPUHour: p.Min})
	}
	// Sort each series by day; two points of one day (finer buckets) keep the low.
	for k, pts := range m.history {
		slices.SortStableFunc(pts, func(a, b Point) int { return a.Day.Compare(b.Day) })
		m.history[k] = mergeDays(pts)
	}
	if in.Offers != nil {
		m.fromOffers = true
		for i := range in.Offers {
			o := &in.Offers[i]
			if !marketPriceType(o.PriceType) || !o.PriceUSDPerGPUHour.IsPositive() || o.GPUModel == "" || excluded[o.Provider] {
				continue
			}
			if o.ObservedAt.After(asOf.Add(time.Hour)) || !o.Holds(asOf, opts.MaxOfferAge) {
				continue
			}
			k := priceKey{textcell.Clean(o.GPUModel, textcell.NameWidth), textcell.Clean(o.Provider, textcell.NameWidth), o.PriceType}
			c, ok := m.now[k]
			if !ok || o.PriceUSDPerGPUHour.LessThan(c.price) ||
				(o.PriceUSDPerGPUHour.Equal(c.price) && textcell.Clean(o.OfferID, textcell.NameWidth) < c.offerID) {
				m.now[k] = cheapest{price: o.PriceUSDPerGPUHour, region: textcell.Clean(o.Region, textcell.NameWidth), offerID: textcell.Clean(o.OfferID, textcell.NameWidth)}
			}
		}
	} else {
		// Now from history: the newest day within the freshness window.
		for k, pts := range m.history {
			last := pts[len(pts)-1]
			if asOf.Sub(last.Day) <= opts.MaxOfferAge+24*time.Hour {
				m.now[k] = cheapest{price: last.USDPerGPUHour}
			}
		}
	}
	return m
}

// concerns reports whether a problem of provider (a failed or partial scrape, or being left
// out of the plan) concerns team t, whose market covers models: the provider runs or is
// recommended one of t's workloads, or the offers or the history show it listing one of those
// GPU models. A provider the report knows no price of concerns every team, since nothing says
// it does not list their GPUs.
func (m *marketData) concerns(provider string, t *optimizer.TeamPlan, models []string) bool {
	for _, w := range t.Workloads {
		for _, p := range []*optimizer.Placement{w.Current, w.Recommended} {
			if p != nil && textcell.Clean(p.Provider, textcell.NameWidth) == provider {
				return true
			}
		}
	}
	known, lists := false, false
	see := func(k priceKey) {
		if k.provider == provider {
			known = true
			lists = lists || slices.Contains(models, k.model)
		}
	}
	for k := range m.now {
		see(k)
	}
	for k := range m.history {
		see(k)
	}
	return lists || !known
}

// mergeDays keeps the lowest point of each day in a sorted series.
func mergeDays(pts []Point) []Point {
	out := pts[:0]
	for _, p := range pts {
		if n := len(out); n > 0 && out[n-1].Day.Equal(p.Day) {
			out[n-1].USDPerGPUHour = decimal.Min(out[n-1].USDPerGPUHour, p.USDPerGPUHour)
			continue
		}
		out = append(out, p)
	}
	return out
}

// weekAgoPrice is the low of the day a week before as-of, or of the closest day up to three
// days earlier when that day has no data.
func (m *marketData) weekAgoPrice(k priceKey) *decimal.Decimal {
	pts := m.history[k]
	for back := 0; back <= 3; back++ {
		d := m.weekAgo.AddDate(0, 0, -back)
		i, found := slices.BinarySearchFunc(pts, d, func(p Point, t time.Time) int { return p.Day.Compare(t) })
		if found {
			v := pts[i].USDPerGPUHour
			return &v
		}
	}
	return nil
}

// market builds a team's market section for the GPU models given.
func (m *marketData) market(models []string, opts Options) Market {
	out := Market{GPUModels: models, Now: m.asOf, WeekAgo: m.weekAgo, Prices: []MarketPrice{}, Moves: []MarketPrice{}, NewCheapest: []NewCheapest{}}
	if out.GPUModels == nil {
		out.GPUModels = []string{}
	}
	keys := map[priceKey]bool{}
	for k := range m.now {
		if slices.Contains(models, k.model) {
			keys[k] = true
		}
	}
	for k := range m.history {
		if slices.Contains(models, k.model) && m.weekAgoPrice(k) != nil {
			keys[k] = true
		}
	}
	for k := range keys {
		mp := MarketPrice{GPUModel: k.model, Provider: k.provider, PriceType: k.priceType}
		if c, ok := m.now[k]; ok {
			v := c.price
			mp.NowUSDPerGPUHour = &v
		}
		mp.WeekAgoUSDPerGPUHour = m.weekAgoPrice(k)
		if mp.NowUSDPerGPUHour != nil && mp.WeekAgoUSDPerGPUHour != nil {
			d := mp.NowUSDPerGPUHour.Sub(*mp.WeekAgoUSDPerGPUHour)
			mp.ChangeUSDPerGPUHour = &d
			if mp.WeekAgoUSDPerGPUHour.IsPositive() {
				p := d.Mul(decimal.NewFromInt(100)).DivRound(*mp.WeekAgoUSDPerGPUHour, 1)
				mp.ChangePercent = &p
			}
		}
		out.Prices = append(out.Prices, mp)
	}
	modelRank := func(s string) int { return slices.Index(models, s) }
	slices.SortFunc(out.Prices, func(a, b MarketPrice) int {
		return cmp.Or(
			cmp.Compare(modelRank(a.GPUModel), modelRank(b.GPUModel)),
			cmp.Compare(priceTypeRank(a.PriceType), priceTypeRank(b.PriceType)),
			compareOptional(a.NowUSDPerGPUHour, b.NowUSDPerGPUHour),
			cmp.Compare(a.Provider, b.Provider),
		)
	})
	// Mark the cheapest provider now per model and price type (the first priced one).
	seen := map[priceKey]bool{}
	for i := range out.Prices {
		p := &out.Prices[i]
		g := priceKey{p.GPUModel, "", p.PriceType}
		if p.NowUSDPerGPUHour != nil && !seen[g] {
			p.Cheapest, seen[g] = true, true
		}
	}
	// The biggest moves.
	for _, p := range out.Prices {
		if p.ChangePercent != nil && !p.ChangePercent.IsZero() {
			out.Moves = append(out.Moves, p)
		}
	}
	slices.SortStableFunc(out.Moves, func(a, b MarketPrice) int {
		return cmp.Or(b.ChangePercent.Abs().Cmp(a.ChangePercent.Abs()), cmp.Compare(a.GPUModel, b.GPUModel), cmp.Compare(a.Provider, b.Provider))
	})
	if len(out.Moves) > opts.MaxMoves {
		out.Moves = out.Moves[:opts.MaxMoves]
	}
	// New cheapest offers: per model and price type, the leader now against last week's.
	keep := decimal.NewFromInt(1).Sub(decimal.NewFromFloat(opts.NewLowPercent).Div(decimal.NewFromInt(100)))
	for _, model := range models {
		for _, pt := range []schema.PriceType{schema.OnDemand, schema.Spot} {
			var best, prev *MarketPrice
			for i := range out.Prices {
				p := &out.Prices[i]
				if p.GPUModel != model || p.PriceType != pt {
					continue
				}
				if p.Cheapest {
					best = p
				}
				if p.WeekAgoUSDPerGPUHour != nil && (prev == nil || p.WeekAgoUSDPerGPUHour.LessThan(*prev.WeekAgoUSDPerGPUHour)) {
					prev = p
				}
			}
			if best == nil || prev == nil || !best.NowUSDPerGPUHour.LessThan(*prev.WeekAgoUSDPerGPUHour) {
				continue
			}
			newLeader := best.Provider != prev.Provider
			if !newLeader && best.NowUSDPerGPUHour.GreaterThan(prev.WeekAgoUSDPerGPUHour.Mul(keep)) {
				continue
			}
			c := m.now[priceKey{model, best.Provider, pt}]
			out.NewCheapest = append(out.NewCheapest, NewCheapest{
				GPUModel: model, PriceType: pt, Provider: best.Provider, Region: c.region, OfferID: c.offerID,
				USDPerGPUHour:        *best.NowUSDPerGPUHour,
				WeekAgoUSDPerGPUHour: *prev.WeekAgoUSDPerGPUHour, WeekAgoProvider: prev.Provider,
				NewLeader: newLeader,
			})
		}
	}
	return out
}

// charts builds one chart per GPU model from the daily lows of the last weeks.
func (m *marketData) charts(models []string, weeks int) []Chart {
	from := day(m.asOf).AddDate(0, 0, -7*weeks)
	out := []Chart{}
	for i, model := range models {
		c := Chart{ID: chartID(i+1, model), GPUModel: model, From: from, To: day(m.asOf)}
		for k, pts := range m.history {
			if k.model != model {
				continue
			}
			s := Series{Provider: k.provider, PriceType: k.priceType}
			for _, p := range pts {
				if !p.Day.Before(from) {
					s.Points = append(s.Points, p)
				}
			}
			if len(s.Points) > 0 {
				c.Series = append(c.Series, s)
			}
		}
		if len(c.Series) == 0 {
			continue
		}
		slices.SortFunc(c.Series, func(a, b Series) int {
			return cmp.Or(cmp.Compare(priceTypeRank(a.PriceType), priceTypeRank(b.PriceType)), cmp.Compare(a.Provider, b.Provider))
		})
		out = append(out, c)
	}
	return out
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// chartID is a chart's id: its position and a slug of the GPU model, [a-z0-9-] only.
func chartID(n int, model string) string {
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(model), "-"), "-")
	if len(slug) > 40 {
		slug = strings.TrimRight(slug[:40], "-")
	}
	if slug == "" {
		return fmt.Sprintf("chart-%d", n)
	}
	return fmt.Sprintf("chart-%d-%s", n, slug)
}

func priceTypeRank(pt schema.PriceType) int {
	if i := slices.Index(schema.PriceTypes, pt); i >= 0 {
		return i
	}
	return len(schema.PriceTypes)
}

// compareOptional orders prices with nil (no price) last.
func compareOptional(a, b *decimal.Decimal) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return a.Cmp(*b)
}

func day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
