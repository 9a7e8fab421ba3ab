package schema

import "errors"

// Batch is everything one provider produced in one run: its run-log row, the offers to load and
// the raw payloads they came from. It is the unit the pipeline loads, spools when ClickHouse is
// unreachable, and replays later; loading a batch twice must not double anything.
type Batch struct {
	Run      ScrapeRun    `json:"run"`
	Offers   []Offer      `json:"offers"`
	Payloads []RawPayload `json:"payloads"`
}

// Kinds of a failed load, shared by the store that reports them and the pipeline that decides
// on them (retry later, count a failure, quarantine). A load error wraps at most one of them;
// one of neither kind is a failed attempt of this batch (the connection lost half-way, a server
// error, a timeout). Test with errors.Is.
var (
	// ErrUnavailable: the store could not be reached, or cannot take rows at all until an
	// operator acts (wrong password, database or table missing). The call wrote nothing and the
	// batch is not at fault: any other would fail the same way.
	ErrUnavailable = errors.New("the store is unavailable")
	// ErrRejected: the store will never store this batch as it is (rows of another run or
	// provider, a value it cannot encode): loading it again gives the same error.
	ErrRejected = errors.New("the store rejects the batch")
)
