package pipeline

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// Outcomes of a run, in one word or two (Summary.Outcome). Each goes with one exit code of
// gpucost scrape (Report.Err): ok, already loaded and dry run with 0; spooled and partial with 3;
// quarantined with 5; failed with 1.
const (
	OutcomeOK            = "ok"             // every provider ok, its offers stored
	OutcomeAlreadyLoaded = "already loaded" // every provider ok, every batch stored by an earlier run: nothing new
	OutcomeDryRun        = "dry run"        // every provider ok; nothing loaded or spooled
	OutcomeSpooled       = "spooled"        // every provider ok, but batches wait in the spool (the store did not take them)
	OutcomePartial       = "partial"        // some providers failed or lost part of their data
	OutcomeQuarantined   = "quarantined"    // batches are in the spool's quarantine
	OutcomeFailed        = "failed"         // no provider succeeded
)

// What became of a provider's batch (ProviderSummary.Batch).
const (
	BatchStored        = "stored"
	BatchAlreadyStored = "already stored"
	BatchSpooled       = "spooled"
	BatchQuarantined   = "quarantined"
	BatchNone          = "none" // the provider failed: nothing to load
	BatchDryRun        = "dry run"
)

// What became of a batch of an earlier run found in the spool (ReplaySummary.Result), besides
// BatchAlreadyStored and BatchQuarantined.
const (
	replayLoaded  = "loaded"
	replayWaiting = "waiting" // still not loadable: it stays in the spool
)

// Summary is what a run did, as gpucost scrape reports it: WriteSummary's table, and the one
// item of the envelope it prints with --output json.
type Summary struct {
	RunID      string    `json:"run_id"`
	ObservedAt time.Time `json:"observed_at"`
	// Outcome says in a word or two how the run went, agreeing with the exit code (the
	// Outcome* constants); Message says it in a sentence.
	Outcome string `json:"outcome"`
	Message string `json:"message"`
	// Status is the providers' scrape status: ok (all ok), partial or failed (all failed).
	Status schema.RunStatus `json:"status"`
	// Stored is how many offers this run stored (batches of earlier runs, in Replayed, aside).
	Stored int `json:"stored"`
	// Waiting and Quarantined are how many batches the spool and its quarantine folder
	// (QuarantineDir) hold after the run.
	Waiting       int               `json:"waiting"`
	Quarantined   int               `json:"quarantined"`
	QuarantineDir string            `json:"quarantine_dir,omitempty"`
	DryRun        bool              `json:"dry_run"`
	Providers     []ProviderSummary `json:"providers"`
	Replayed      []ReplaySummary   `json:"replayed"`
}

// ProviderSummary is one provider's part of a run.
type ProviderSummary struct {
	Provider string           `json:"provider"`
	Status   schema.RunStatus `json:"status"` // the scrape's: ok, partial or failed
	// Batch is what became of the provider's batch (the Batch* constants).
	Batch           string  `json:"batch"`
	Parsed          int     `json:"parsed"`
	Valid           int     `json:"valid"` // offers that passed validation: stored, or to store
	Rejected        int     `json:"rejected"`
	Stored          int     `json:"stored"` // offers this run stored
	DurationSeconds float64 `json:"duration_seconds"`
	Error           string  `json:"error"`
}

// ReplaySummary is a batch of an earlier run found in the spool at the start of the run.
type ReplaySummary struct {
	File     string `json:"file"`
	RunID    string `json:"run_id"`
	Provider string `json:"provider"`
	// Result is loaded, already stored, waiting (still not loadable) or quarantined.
	Result string `json:"result"`
	Error  string `json:"error"`
}

// Summary sums the run up.
func (r Report) Summary() Summary {
	s := Summary{RunID: r.RunID, ObservedAt: r.ObservedAt, Status: r.Status, Waiting: r.Waiting, Quarantined: r.Quarantined,
		DryRun: r.DryRun, Providers: []ProviderSummary{}, Replayed: []ReplaySummary{}}
	if r.Quarantined > 0 {
		s.QuarantineDir = r.QuarantineDir
	}
	notOK, valid, already, stored := 0, 0, 0, 0 // providers failed or partial; valid offers; batches stored before, and now
	for _, p := range r.Providers {
		ps := ProviderSummary{Provider: p.Provider, Status: p.Status, Parsed: p.Parsed, Valid: p.Loaded, Rejected: sum(p.Rejected),
			Stored: p.Stored, DurationSeconds: p.Duration.Round(time.Millisecond).Seconds(), Error: p.Error}
		switch {
		case p.Quarantined:
			ps.Batch = BatchQuarantined
		case p.Spooled:
			ps.Batch = BatchSpooled
		case p.Status == schema.RunFailed:
			ps.Batch = BatchNone
		case r.DryRun:
			ps.Batch = BatchDryRun
		case p.AlreadyStored:
			ps.Batch, already = BatchAlreadyStored, already+1
		default:
			ps.Batch, stored = BatchStored, stored+1
		}
		if p.Status == schema.RunFailed || p.Status == schema.RunPartial {
			notOK++
		}
		valid += p.Loaded
		s.Stored += p.Stored
		s.Providers = append(s.Providers, ps)
	}
	for _, b := range r.Replayed {
		rs := ReplaySummary{File: b.File, RunID: b.RunID, Provider: b.Provider, Result: replayLoaded, Error: b.Error}
		switch {
		case b.Quarantined:
			rs.Result = BatchQuarantined
		case b.Error != "":
			rs.Result = replayWaiting
		case b.Skipped:
			rs.Result = BatchAlreadyStored
		}
		s.Replayed = append(s.Replayed, rs)
	}
	n := len(r.Providers)
	waiting := count(r.Waiting, "batch waits", "batches wait") + " in the spool"
	switch {
	case r.Status == schema.RunFailed:
		s.Outcome, s.Message = OutcomeFailed, fmt.Sprintf("no provider succeeded (of %d); nothing stored", n)
	case r.Quarantined > 0:
		s.Outcome = OutcomeQuarantined
		s.Message = fmt.Sprintf("%s in quarantine (%s); %s stored", count(r.Quarantined, "batch", "batches"), r.QuarantineDir, offers(s.Stored))
	case r.Status == schema.RunPartial:
		s.Outcome = OutcomePartial
		s.Message = fmt.Sprintf("%d of %s failed or were partial; %s stored", notOK, count(n, "provider", "providers"), offers(s.Stored))
		if r.Waiting > 0 {
			s.Message += "; " + waiting
		}
	case r.Waiting > 0:
		s.Outcome, s.Message = OutcomeSpooled, waiting+"; "+offers(s.Stored)+" stored"
	case r.DryRun:
		s.Outcome, s.Message = OutcomeDryRun, fmt.Sprintf("%s would be loaded; nothing stored", offers(valid))
	case stored == 0 && already > 0:
		batches := fmt.Sprintf("all %d batches were", n)
		if n == 1 {
			batches = "the batch was"
		}
		s.Outcome, s.Message = OutcomeAlreadyLoaded, batches+" stored before: nothing new stored"
	default:
		s.Outcome, s.Message = OutcomeOK, fmt.Sprintf("%s stored from %s", offers(s.Stored), count(n, "provider", "providers"))
		if already > 0 {
			s.Message += fmt.Sprintf(" (the batches of %s were stored already)", count(already, "provider", "providers"))
		}
	}
	return s
}

// offers says "1 offer" or "n offers".
func offers(n int) string { return count(n, "offer", "offers") }

// count says "1 one" or "n many".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// WriteSummary writes what a run did as a table: a line per batch of an earlier run it found in
// the spool, the run's outcome in a sentence, and a table of its providers; scraped text passes
// textcell.
func WriteSummary(w io.Writer, rep Report) error {
	s := rep.Summary()
	for _, r := range s.Replayed {
		switch r.Result {
		case BatchQuarantined:
			fmt.Fprintf(w, "spooled batch %s moved to quarantine: %s\n", r.File, textcell.Clean(r.Error, textcell.TextWidth))
		case replayWaiting:
			fmt.Fprintf(w, "spooled batch %s still not loadable: %s\n", r.File, textcell.Clean(r.Error, textcell.TextWidth))
		case BatchAlreadyStored:
			fmt.Fprintf(w, "spooled batch %s was already stored: skipped\n", r.File)
		default:
			fmt.Fprintf(w, "loaded spooled batch %s\n", r.File)
		}
	}
	fmt.Fprintf(w, "run %s: %s: %s\n", s.RunID, s.Outcome, s.Message)
	t := textcell.NewTable(w, 160)
	t.Row("PROVIDER", "SCRAPE", "PARSED", "REJECTED", "STORED", "BATCH", "ERROR")
	for _, p := range s.Providers {
		t.Row(p.Provider, string(p.Status), strconv.Itoa(p.Parsed), strconv.Itoa(p.Rejected), strconv.Itoa(p.Stored), p.Batch, p.Error)
	}
	return t.Flush()
}

// WriteSummaryCSV writes the providers of a run's summary as CSV, a row each: run_id,
// outcome (the run's), provider, status, batch, parsed, valid, rejected, stored,
// duration_seconds, error (the names of Summary's JSON).
func WriteSummaryCSV(w io.Writer, rep Report) error {
	s := rep.Summary()
	c := textcell.NewCSVWriter(w)
	if err := c.Write([]string{"run_id", "outcome", "provider", "status", "batch", "parsed", "valid", "rejected", "stored", "duration_seconds", "error"}); err != nil {
		return err
	}
	for _, p := range s.Providers {
		if err := c.Write([]string{s.RunID, s.Outcome, p.Provider, string(p.Status), p.Batch, strconv.Itoa(p.Parsed), strconv.Itoa(p.Valid),
			strconv.Itoa(p.Rejected), strconv.Itoa(p.Stored), strconv.FormatFloat(p.DurationSeconds, 'f', -1, 64), p.Error}); err != nil {
			return err
		}
	}
	return c.Flush()
}

// Offers are the offers of every batch of the run (what a dry run would have loaded), by GPU
// model and then cheapest first, ties by provider, offer id and price type: the same order
// whatever order the sources read their pages in.
func (r Report) Offers() []schema.Offer {
	var offers []schema.Offer
	for _, b := range r.Batches {
		offers = append(offers, b.Offers...)
	}
	sort.SliceStable(offers, func(i, j int) bool {
		a, b := &offers[i], &offers[j]
		if a.GPUModel != b.GPUModel {
			return a.GPUModel < b.GPUModel
		}
		if c := a.PriceUSDPerGPUHour.Cmp(b.PriceUSDPerGPUHour); c != 0 {
			return c < 0
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.OfferID != b.OfferID {
			return a.OfferID < b.OfferID
		}
		return a.PriceType < b.PriceType
	})
	return offers
}
