package scrapers

import "github.com/gpucost/gpucost/gpus"

// parserDates are the dates each provider's parser last changed what it derives from the same
// payload: bump a provider's with any such change (a field read differently, a price unit, a
// placeholder rule), so its rows of before can be told apart and re-derived (gpucost reparse).
var parserDates = map[string]string{
	CoreWeaveName:    "2026-12-01",
	LambdaName:       "2026-12-01",
	OCIName:          "2026-12-01",
	RunPodName:       "2026-12-04",
	TensorDockName:   "2026-12-02",
	VastName:         "2026-12-01",
	VerdaName:        "2026-12-02",
	VultrName:        "2026-12-01",
	NebiusName:       "2026-12-02",
	DigitalOceanName: "2026-12-02",
	HyperstackName:   "2026-12-02",
}

// ParserVersion names today's parser of provider and the GPU catalog it resolves with, as
// every offer row records it (schema.Offer.ParserVersion): "vastai/2026-12-01 gpus/1a2b3c4d".
// A provider without a parser of its own (an import) gets its name and the catalog.
func ParserVersion(provider string) string {
	if d, ok := parserDates[provider]; ok {
		return gpus.WithRevision(provider + "/" + d)
	}
	return gpus.WithRevision(provider)
}
