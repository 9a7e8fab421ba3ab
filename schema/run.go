package schema

import "time"

// RunStatus is the outcome of one provider in one scrape run.
type RunStatus string

// Run statuses. A partial run loaded what it parsed but lost some of the provider's data (a failed
// page or slice); a failed run loaded nothing for that provider.
const (
	RunOK      RunStatus = "ok"
	RunPartial RunStatus = "partial"
	RunFailed  RunStatus = "failed"
)

// ScrapeRun is the run log: one row per provider per run.
type ScrapeRun struct {
	RunID          string    `json:"run_id"`
	Provider       string    `json:"provider"`
	StartedAt      time.Time `json:"started_at"`
	FinishedAt     time.Time `json:"finished_at"`
	Status         RunStatus `json:"status"`
	OffersParsed   uint32    `json:"offers_parsed"`
	OffersLoaded   uint32    `json:"offers_loaded"`
	OffersRejected uint32    `json:"offers_rejected"`
	Error          string    `json:"error"` // empty when ok; never contains secrets
	HTTPAttempts   uint32    `json:"http_attempts"`
}

// RawPayload is one raw response body of a run, kept so that a parser fix can re-derive history.
type RawPayload struct {
	RunID     string    `json:"run_id"`
	Provider  string    `json:"provider"`
	URL       string    `json:"url"` // without secrets
	Status    uint16    `json:"status"`
	FetchedAt time.Time `json:"fetched_at"`
	Body      []byte    `json:"body"`
}
