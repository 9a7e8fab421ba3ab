package optimizer

import (
	"fmt"
	"math"
	"time"

	"github.com/gpucost/gpucost/schema"
)

// expiry is what the market left out of one GPU model for age.
type expiry struct {
	offers int
	newest time.Time // the newest ObservedAt among them
}

// providerState is what a provider's offers say of how fresh its prices are.
type providerState struct {
	newest    time.Time // newest ObservedAt
	validTill time.Time // latest ValidUntil given
	fresh     bool      // some offer's price holds now
}

// freshness judges, offer by offer, whether a price holds now (its ValidUntil, else
// Options.MaxOfferAgeHours after it was observed), and keeps per provider what its offers say
// of how fresh its prices are.
type freshness struct {
	now     time.Time
	maxAge  time.Duration
	states  []providerState
	stateOf map[string]int // provider → index in states: providers interned, one lookup per offer
}

// newFreshness starts judging prices at now, a price without an end holding for maxAge.
func newFreshness(now time.Time, maxAge time.Duration) *freshness {
	return &freshness{now: now, maxAge: maxAge, stateOf: make(map[string]int)}
}

// holds reports whether the offer's price holds now, and notes it under its provider.
func (f *freshness) holds(off *schema.Offer) bool {
	si, ok := f.stateOf[off.Provider]
	if !ok {
		si = len(f.states)
		f.stateOf[off.Provider] = si
		f.states = append(f.states, providerState{})
	}
	st := &f.states[si]
	if off.ObservedAt.After(st.newest) {
		st.newest = off.ObservedAt
	}
	if off.ValidUntil != nil && off.ValidUntil.After(st.validTill) {
		st.validTill = *off.ValidUntil
	}
	fresh := off.Holds(f.now, f.maxAge)
	st.fresh = st.fresh || fresh
	return fresh
}

// excludeStale records every provider f has seen and excludes, with the reason, each
// provider none of whose prices holds.
func (m *market) excludeStale(f *freshness) {
	for name := range f.stateOf {
		m.providers[name] = true
	}
	for _, name := range sortedKeys(m.providers) {
		st := &f.states[f.stateOf[name]]
		if st.fresh {
			continue
		}
		m.staleProviders[name] = true
		m.excluded = append(m.excluded, excludeProvider(name, st, f.now, f.maxAge))
	}
}

// excludeProvider says why a provider none of whose prices holds is left out: its offers
// carry no time, its prices held until a time past, or its newest is older than maxAge.
func excludeProvider(name string, st *providerState, now time.Time, maxAge time.Duration) ExcludedProvider {
	e := ExcludedProvider{Provider: name}
	switch {
	case st.newest.IsZero():
		e.Reason = "offers carry no observation time"
	case !st.validTill.IsZero() && !st.validTill.Before(st.newest):
		e.Reason = fmt.Sprintf("its prices held until %s, %s ago", st.validTill.UTC().Format("2006-01-02 15:04 MST"), formatAge(now.Sub(st.validTill)))
	default:
		e.Reason = fmt.Sprintf("newest price observed %s ago, older than the %s a price holds (max_offer_age_hours)", formatAge(now.Sub(st.newest)), formatAge(maxAge))
	}
	if !st.newest.IsZero() {
		t := st.newest.UTC()
		e.LastObserved = &t
	}
	return e
}

// noteExpired counts an offer of the canonical GPU model named model left out because its
// price no longer holds, so that a workload nothing fits can say age is why.
func (m *market) noteExpired(off *schema.Offer, model string) {
	e := m.expired[model]
	e.offers++
	if off.ObservedAt.After(e.newest) {
		e.newest = off.ObservedAt
	}
	m.expired[model] = e
}

// formatAge formats a duration for people: 31h, 3d.
func formatAge(d time.Duration) string {
	h := d.Hours()
	if h >= 72 {
		return fmt.Sprintf("%.0fd", h/24)
	}
	return fmt.Sprintf("%.0fh", math.Floor(h))
}
