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
	// Emit, when set, takes what a source reads as it reads it: each response, and the offers
	// it keeps from each (after its own checks and dedupe). The source then holds neither in its
	// Extract, so a run's memory does not grow with the market: the pipeline writes each page
	// to its spool and lets it go. Sources call Keep, not Emit, one call at a time (from one
	// goroutine, or in turn), and never once their Fetch has returned. A page emitted is the
	// run's: the pipeline writes it while the source reads on, so the source changes neither its
	// slices nor a body in them after. An error of Emit is the source's error: it stops there.
	Emit func(Page) error
}

// A Page is part of what a source read: a response, the offers parsed from responses, or both.
type Page struct {
	Payloads []RawPayload
	Offers   []Offer
}

// Keep hands a page to the run's Emit, or adds it to ex when the run has none.
func (r Run) Keep(ex *Extract, p Page) error {
	if r.Emit != nil {
		return r.Emit(p)
	}
	ex.Payloads = append(ex.Payloads, p.Payloads...)
	ex.Offers = append(ex.Offers, p.Offers...)
	return nil
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

// Extract is what one source produced in one run (what it did not Keep through the run's Emit).
type Extract struct {
	Offers   []Offer
	Payloads []RawPayload // every raw response body fetched (or replayed) in the run
	Attempts int          // HTTP attempts, retries included
	Problems []error      // partial failures (a slice or page failed): the offers are still good
}
