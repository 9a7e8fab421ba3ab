package schema

// Batch is everything one provider produced in one run: its run-log row, the offers to load and
// the raw payloads they came from. It is the unit the pipeline loads, spools when ClickHouse is
// unreachable, and replays later; loading a batch twice must not double anything.
type Batch struct {
	Run      ScrapeRun    `json:"run"`
	Offers   []Offer      `json:"offers"`
	Payloads []RawPayload `json:"payloads"`
}
