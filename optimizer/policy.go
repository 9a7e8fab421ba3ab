package optimizer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpucost/gpucost/schema"
)

// policy is what a workload asks of the offers themselves: host tiers and reliability, and
// where they run.
type policy struct {
	tiers                        []schema.Tier // nil: any
	minReliability               float64
	continents, exceptContinents []string
	countries, exceptCountries   []string
}

// servingTiers are the hosts always-on serving runs on unless the workload says otherwise:
// datacenters and vetted hosts, not community machines that may vanish.
var servingTiers = []schema.Tier{schema.TierDatacenter, schema.TierSecure, schema.TierVerified}

// policyOf is what workload w asks of offers: its host tiers (by default servingTiers for
// always-on serving; nil for any), reliability and places.
func policyOf(w *Workload) policy {
	pol := policy{tiers: w.HostTiers, minReliability: w.MinReliability,
		continents: w.Regions, exceptContinents: w.ExcludeRegions, countries: w.Countries, exceptCountries: w.ExcludeCountries}
	if pol.tiers == nil && w.alwaysOnServing() {
		pol.tiers = servingTiers
	}
	if len(pol.tiers) == len(schema.Tiers) {
		pol.tiers = nil
	}
	return pol
}

// offerCheck applies the per-offer constraints: host tier and reliability, location, and
// availability. An offer whose provider publishes no location passes the location checks (the
// placement then says so): dropping it would silently drop whole providers.
func offerCheck(pol *policy, ref offerRef, k int) stage {
	o := ref.offer
	switch {
	case pol.tiers != nil && !slices.Contains(pol.tiers, o.Tier):
		return stageHost
	case pol.minReliability > 0 && o.Reliability != nil && *o.Reliability < pol.minReliability:
		return stageHost
	}
	if ref.continent != "" {
		if len(pol.continents) > 0 && !slices.Contains(pol.continents, ref.continent) || slices.Contains(pol.exceptContinents, ref.continent) {
			return stageRegion
		}
	}
	if o.Country != "" {
		if len(pol.countries) > 0 && !slices.Contains(pol.countries, o.Country) || slices.Contains(pol.exceptCountries, o.Country) {
			return stageRegion
		}
	} else if len(pol.countries) > 0 && ref.continent != "" && !slices.ContainsFunc(pol.countries, func(c string) bool {
		return (&schema.Offer{Country: c}).Continent() == ref.continent
	}) {
		return stageRegion // no country, but on a continent none of the countries is on
	}
	if ref.available == 0 || (ref.available > 0 && ref.available < int64(k)) {
		return stageAvailability
	}
	return stageOK
}

// located reports whether the offer says where it runs as precisely as the workload asks.
func located(pol *policy, ref offerRef) bool {
	if len(pol.countries) > 0 || len(pol.exceptCountries) > 0 {
		return ref.offer.Country != ""
	}
	return len(pol.continents) == 0 && len(pol.exceptContinents) == 0 || ref.continent != ""
}

// where names the locations a workload allows, for notes.
func where(pol *policy) string {
	var in []string
	in = append(in, pol.continents...)
	in = append(in, pol.countries...)
	if len(in) == 0 {
		return "none of " + strings.Join(append(slices.Clone(pol.exceptContinents), pol.exceptCountries...), ", ")
	}
	return strings.Join(in, ", ")
}

// location names where an offer runs: country, region and continent as far as known.
func location(o *schema.Offer) string {
	var parts []string
	for _, s := range []string{o.Region, o.Country, o.Continent()} {
		if s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "an unnamed place"
	}
	return strings.Join(parts, ", ")
}

// tierPolicy says which host tiers a workload runs on, and why when it is the default.
func tierPolicy(w *Workload, tiers []schema.Tier) string {
	names := make([]string, len(tiers))
	for i, t := range tiers {
		names[i] = string(t)
	}
	if w.HostTiers == nil {
		return fmt.Sprintf("always-on serving runs on %s hosts unless host_tiers says otherwise", strings.Join(names, ", "))
	}
	return fmt.Sprintf("host_tiers allows %s", strings.Join(names, ", "))
}

// providerAllowed reports whether the workload may run at a provider: one of its
// providers, when it lists any, and none of its exclude_providers.
func providerAllowed(w *Workload, provider string) bool {
	return (len(w.Providers) == 0 || slices.Contains(w.Providers, strings.ToLower(provider))) &&
		!slices.Contains(w.ExcludeProviders, strings.ToLower(provider))
}
