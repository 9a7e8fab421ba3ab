package schema

import "strings"

// Continents are the normalized names of where an offer runs, derived from its ISO country or
// from a provider region that names one (Offer.Continent).
var Continents = []string{"africa", "asia", "europe", "north-america", "oceania", "south-america"}

// continentCountries lists the ISO 3166-1 alpha-2 codes of each continent (the Middle East and
// the Caucasus count as Asia, Russia and Turkey as Europe, Central America and the Caribbean
// as North America).
var continentCountries = map[string]string{
	"africa":        "AO BF BI BJ BW CD CF CG CI CM CV DJ DZ EG EH ER ET GA GH GM GN GQ GW KE KM LR LS LY MA MG ML MR MU MW MZ NA NE NG RE RW SC SD SH SL SN SO SS ST SZ TD TG TN TZ UG YT ZA ZM ZW",
	"asia":          "AE AF AM AZ BD BH BN BT CN CY GE HK ID IL IN IQ IR JO JP KG KH KP KR KW KZ LA LB LK MM MN MO MV MY NP OM PH PK PS QA SA SG SY TH TJ TL TM TW UZ VN YE",
	"europe":        "AD AL AT AX BA BE BG BY CH CZ DE DK EE ES FI FO FR GB GG GI GR HR HU IE IM IS IT JE LI LT LU LV MC MD ME MK MT NL NO PL PT RO RS RU SE SI SJ SK SM TR UA VA XK",
	"north-america": "AG AI AW BB BL BM BQ BS BZ CA CR CU CW DM DO GD GL GP GT HN HT JM KN KY LC MF MQ MS MX NI PA PM PR SV SX TC TT US VC VG VI",
	"oceania":       "AS AU CK FJ FM GU KI MH MP NC NF NR NU NZ PF PG PN PW SB TK TO TV UM VU WF WS",
	"south-america": "AR BO BR CL CO EC FK GF GY PE PY SR UY VE",
}

// continentOf maps an ISO country code to its continent.
var continentOf = func() map[string]string {
	m := make(map[string]string, 250)
	for c, codes := range continentCountries {
		for _, code := range strings.Fields(codes) {
			m[code] = c
		}
	}
	return m
}()

// KnownCountry reports whether code is an ISO 3166-1 alpha-2 country code (upper case).
func KnownCountry(code string) bool {
	_, ok := continentOf[code]
	return ok
}

// regionContinents maps the first word of a provider region name to its continent, for
// providers that publish a region but no country: CoreWeave's "north-america" and "europe",
// Lambda's "us-east-1", "europe-central-1", "asia-south-1", "me-west-1", "australia-east-1".
var regionContinents = map[string]string{
	"us": "north-america", "ca": "north-america", "na": "north-america",
	"eu": "europe", "europe": "europe", "uk": "europe",
	"asia": "asia", "ap": "asia", "me": "asia", "in": "asia", "jp": "asia",
	"australia": "oceania", "au": "oceania", "oceania": "oceania",
	"sa": "south-america", "latam": "south-america",
	"africa": "africa", "af": "africa",
}

// Continent is where the offer runs: from its ISO country when the source gave one, else from a
// region name that says it ("north-america", "us-east-1"); "" when the source says neither.
func (o *Offer) Continent() string {
	if c, ok := continentOf[o.Country]; ok {
		return c
	}
	r := strings.ToLower(strings.TrimSpace(o.Region))
	if r == "south-america" || r == "north-america" {
		return r
	}
	first, _, _ := strings.Cut(r, "-")
	return regionContinents[first]
}
