package schema

import "time"

// Run is one scrape run as a source sees it: what it fetches for, and how it tells whoever runs
// it about the pauses it keeps. The pipeline makes one per run and hands it to every source.
type Run struct {
	ID         string
	ObservedAt time.Time // UTC, to the second: the observation time of every offer of the run
	// Pacer, when set, hears each pause a source is about to keep between two requests (a
	// provider's rate limit), before the source waits. The pipeline sets it to move the source's
	// deadline out by as much; nil hears nothing. Sources call Pace, not Pacer.
	Pacer func(pause time.Duration)
}

// Pace announces a pause of d to the run's Pacer, if it has one.
func (r Run) Pace(d time.Duration) {
	if r.Pacer != nil {
		r.Pacer(d)
	}
}

// Stamp marks o as an observation of the run: its run id and observation time (UTC).
func (r Run) Stamp(o *Offer) {
	o.RunID, o.ObservedAt = r.ID, r.ObservedAt.UTC()
}

// Extract is what one source produced in one run.
type Extract struct {
	Offers   []Offer
	Payloads []RawPayload // every raw response body fetched (or replayed) in the run
	Attempts int          // HTTP attempts, retries included
	Problems []error      // partial failures (a slice or page failed): the offers are still good
}
