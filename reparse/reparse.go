// Package reparse re-derives stored runs: the offers of every run observed in a time range are
// parsed again from the run's raw payloads with today's parsers (scrapers.Stored), validated as a
// scrape validates them (a dry run of the pipeline, under the run's own id and observation time),
// and replace the stored ones, month by month, each month swapped whole (store/reparse.go). So a
// parser fix reaches the history it would have produced, and analysts never see a month half
// replaced. A dry run reports what would change and writes nothing.
//
// A run keeps its stored offers, and the report says so, when today's parser does not read every
// payload of it that gave offers, or gives fewer offers than the scrape's shrink check allows
// (scrape.min_offer_ratio of the stored ones: payloads lost to a retention): a re-derivation
// never thins history. Only runs whose load completed (with a run-log row) and that stored
// offers are re-derived: not a batch still in the spool, not imports, not failed runs. The run
// log (scrape_runs) stays the record of what each run did when it ran.
package reparse

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/store"
)

// Options say what to re-derive and how.
type Options struct {
	From, To  time.Time // the runs observed in [From, To)
	Providers []string  // none: every provider with a parser of its payloads (scrapers.StoredParsers)
	DryRun    bool      // report what would change, write nothing
	// Validation is the scrape's configuration: its price bound and outlier factor apply as they
	// do to a scrape; its shrink ratio (MinOfferRatio) compares what a run re-derives with what
	// it stored (a run with fewer offers keeps its stored ones).
	Validation pipeline.Config
	Redactor   *redact.Redactor // scrubs the offers' text, as a scrape does; nil: credential shapes only
	Logger     *slog.Logger     // nil discards
	// OnStep, when set, is called after each step that writes ("month 202611", "latest",
	// "final"), so a test can stop the re-derivation there.
	OnStep func(step string) error
}

// Report is what a re-derivation did (or, dry, would do), by provider.
type Report struct {
	DryRun    bool             `json:"dry_run"`
	Providers []ProviderReport `json:"providers"` // sorted by provider
	Months    []string         `json:"months"`    // the months swapped (YYYY-MM), or that would be
}

// ProviderReport is one provider's part of a re-derivation.
type ProviderReport struct {
	Provider string `json:"provider"`
	Runs     int    `json:"runs"`   // runs re-derived
	Before   int    `json:"before"` // offers stored before
	After    int    `json:"after"`  // offers stored after (re-derived, or kept)
	// On a dry run, by offer key (offer id × price type) within each run: only re-derived, only
	// stored before, in both with another price, in both at the same price with other fields.
	// A re-derivation does not compare (run a dry run first to see what it will change).
	Added    int      `json:"added"`
	Removed  int      `json:"removed"`
	Repriced int      `json:"repriced"`
	Changed  int      `json:"changed"`
	Examples []Change `json:"examples"` // the first few changes
	Kept     []Kept   `json:"kept"`     // runs that keep their stored offers
}

// Change is one offer that a re-derivation changes.
type Change struct {
	RunID     string           `json:"run_id"`
	OfferID   string           `json:"offer_id"`
	PriceType schema.PriceType `json:"price_type"`
	Before    string           `json:"before"` // the offer's fields as describe writes them; "" when absent
	After     string           `json:"after"`
}

// Kept is a run that keeps its stored offers, and why.
type Kept struct {
	RunID string `json:"run_id"`
	Why   string `json:"why"`
}

// maxExamples is how many changes a provider's report shows.
const maxExamples = 5

// Run re-derives the runs of opts.
func Run(ctx context.Context, st *store.Store, opts Options) (Report, error) {
	rep := Report{DryRun: opts.DryRun, Providers: []ProviderReport{}, Months: []string{}}
	if !opts.From.Before(opts.To) {
		return rep, fmt.Errorf("reparse: the start %s is not before the end %s", opts.From.UTC().Format(time.RFC3339), opts.To.UTC().Format(time.RFC3339))
	}
	providers := opts.Providers
	if len(providers) == 0 {
		providers = scrapers.StoredParsers()
	}
	for _, p := range providers {
		if !slices.Contains(scrapers.StoredParsers(), p) {
			return rep, fmt.Errorf("reparse: no parser for the stored payloads of %q (want some of %s)", p, strings.Join(scrapers.StoredParsers(), ", "))
		}
	}
	logger := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	step := func(name string) error {
		if opts.OnStep != nil {
			return opts.OnStep(name)
		}
		return nil
	}
	runs, err := st.StoredRuns(ctx, opts.From, opts.To, providers)
	if err != nil {
		return rep, err
	}
	byProvider := map[string]*ProviderReport{}
	for _, r := range runs {
		if byProvider[r.Provider] == nil {
			byProvider[r.Provider] = &ProviderReport{Provider: r.Provider, Examples: []Change{}, Kept: []Kept{}}
		}
	}
	if len(runs) == 0 {
		return rep, nil
	}
	if !opts.DryRun {
		if err := st.PrepareRederivation(ctx); err != nil {
			return rep, err
		}
	}
	d := &deriver{st: st, opts: opts, logger: logger, prev: map[string]map[schema.Key]decimal.Decimal{}}
	for _, month := range byMonth(runs) {
		rep.Months = append(rep.Months, month.start.Format("2006-01"))
		var m *store.MonthRederivation
		if !opts.DryRun {
			if m, err = st.BeginMonth(ctx, month.start, month.runs); err != nil {
				return rep, err
			}
		}
		if err := d.month(ctx, month.runs, m, byProvider); err != nil {
			return rep, err
		}
		if opts.DryRun {
			continue
		}
		if err := m.Commit(ctx); err != nil {
			return rep, err
		}
		logger.Info("Month re-derived", "month", month.start.Format("2006-01"), "runs", len(month.runs))
		if err := step("month " + month.start.Format("200601")); err != nil {
			return rep, err
		}
	}
	for _, pr := range byProvider {
		rep.Providers = append(rep.Providers, *pr)
	}
	sort.Slice(rep.Providers, func(i, j int) bool { return rep.Providers[i].Provider < rep.Providers[j].Provider })
	if opts.DryRun {
		return rep, nil
	}
	var touched []string
	for _, pr := range rep.Providers {
		touched = append(touched, pr.Provider)
	}
	if err := st.RebuildLatest(ctx, touched); err != nil {
		return rep, err
	}
	if err := step("latest"); err != nil {
		return rep, err
	}
	first, last := runs[0].ObservedAt, runs[len(runs)-1].ObservedAt // oldest first
	if err := st.Refinalize(ctx, first.Truncate(24*time.Hour), last.Truncate(24*time.Hour).AddDate(0, 0, 1)); err != nil {
		return rep, err
	}
	if err := step("final"); err != nil {
		return rep, err
	}
	return rep, st.EndRederivation(ctx)
}

// month is the runs of one month, oldest first.
type month struct {
	start time.Time
	runs  []store.StoredRun
}

func byMonth(runs []store.StoredRun) []month {
	var out []month
	for _, r := range runs { // oldest first
		at := r.ObservedAt.UTC()
		start := time.Date(at.Year(), at.Month(), 1, 0, 0, 0, 0, time.UTC)
		if len(out) == 0 || !out[len(out)-1].start.Equal(start) {
			out = append(out, month{start: start})
		}
		out[len(out)-1].runs = append(out[len(out)-1].runs, r)
	}
	return out
}

// deriver re-derives runs one at a time, in observation order.
type deriver struct {
	st     *store.Store
	opts   Options
	logger *slog.Logger
	// prev holds, per provider, the newest price of each offer before the run being derived: the
	// outlier check's history, read once before a provider's first run and carried forward.
	prev map[string]map[schema.Key]decimal.Decimal
}

// A month's runs go through three stages at once, each in its own goroutine, in order: the
// stored payloads and offers of a run are read while the run before it is derived and compared,
// and while the one before that is written. The server's work and the parsers' overlap, which
// on two cores is most of the gain.

// storedRun is a run as read: its payloads, and on a dry run its stored offers.
type storedRun struct {
	run      store.StoredRun
	payloads []schema.RawPayload
	stored   []schema.Offer
}

// derivedRun is a run's offers to write: re-derived, or the stored ones it keeps.
type derivedRun struct {
	run    store.StoredRun
	offers []schema.Offer
}

// month re-derives runs, oldest first, into m (nil on a dry run), counting what changes by
// provider.
func (d *deriver) month(ctx context.Context, runs []store.StoredRun, m *store.MonthRederivation, byProvider map[string]*ProviderReport) error {
	g, ctx := errgroup.WithContext(ctx)
	reads, writes := make(chan storedRun, 1), make(chan derivedRun, 1)
	g.Go(func() error {
		defer close(reads)
		for _, r := range runs {
			sr := storedRun{run: r}
			var err error
			if sr.payloads, err = d.st.RunPayloads(ctx, r.RunID, r.Provider); err != nil {
				return err
			}
			if d.opts.DryRun { // what it would change: compared with what is stored
				if sr.stored, err = d.st.RunOffers(ctx, r.RunID, r.Provider); err != nil {
					return err
				}
			}
			select {
			case reads <- sr:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	g.Go(func() error {
		defer close(writes)
		for sr := range reads {
			offers, err := d.run(ctx, sr, byProvider[sr.run.Provider])
			if err != nil {
				return err
			}
			select {
			case writes <- derivedRun{run: sr.run, offers: offers}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	g.Go(func() error {
		for w := range writes {
			if m == nil {
				continue
			}
			if err := m.AddOffers(ctx, w.run, w.offers); err != nil {
				return err
			}
		}
		return nil
	})
	return g.Wait()
}

// run re-derives one run, counts what changes in pr, and returns the offers to write: the
// re-derived ones, or the stored ones of a run it keeps.
func (d *deriver) run(ctx context.Context, sr storedRun, pr *ProviderReport) ([]schema.Offer, error) {
	r := sr.run
	if d.prev[r.Provider] == nil {
		prices, err := d.st.PricesBefore(ctx, r.Provider, r.ObservedAt)
		if err != nil {
			return nil, err
		}
		d.prev[r.Provider] = prices
	}
	derived, why, err := d.derive(ctx, r, sr.payloads)
	if err != nil {
		return nil, err
	}
	// Fewer offers than the scrape's shrink check allows is a run whose payloads were not all
	// kept (a retention dropped some), not a market: it keeps what it stored.
	if ratio := d.opts.Validation.MinOfferRatio; why == "" && ratio > 0 && float64(len(derived)) < ratio*float64(r.Offers) {
		why = fmt.Sprintf("today's parser gives %d offers from its payloads, fewer than %.0f%% of the %d stored", len(derived), ratio*100, r.Offers)
	}
	pr.Before += r.Offers
	offers := derived
	if why != "" {
		pr.Kept = append(pr.Kept, Kept{RunID: r.RunID, Why: why})
		d.logger.Warn("A run keeps its stored offers", "run", r.RunID, "provider", r.Provider, "why", why)
		if offers = sr.stored; offers == nil {
			if offers, err = d.st.RunOffers(ctx, r.RunID, r.Provider); err != nil { // written back as they are
				return nil, err
			}
		}
	} else {
		pr.Runs++
		if d.opts.DryRun {
			compare(r.RunID, sr.stored, derived, pr)
		}
	}
	pr.After += len(offers)
	prices := d.prev[r.Provider] // the next run's outlier check sees what this one leaves stored
	for _, o := range offers {
		prices[o.Key()] = o.PriceUSDPerGPUHour
	}
	return offers, nil
}

// derive parses and validates one run's payloads as a scrape of that run would, and returns its
// offers, or why it has none.
func (d *deriver) derive(ctx context.Context, r store.StoredRun, payloads []schema.RawPayload) ([]schema.Offer, string, error) {
	src, err := scrapers.NewStored(r.Provider, payloads)
	if err != nil {
		return nil, "", err
	}
	cfg := d.opts.Validation
	cfg.MinOfferRatio, cfg.Parallelism = 0, 1 // the shrink check compares with the stored run instead (run)
	runner, err := pipeline.New(cfg, []pipeline.Source{src}, nil, history{prev: d.prev[r.Provider]}, pipeline.Options{
		DryRun: true, RunID: r.RunID, Now: func() time.Time { return r.ObservedAt }, Redactor: d.opts.Redactor,
	})
	if err != nil {
		return nil, "", err
	}
	rep, err := runner.Run(ctx)
	if err != nil {
		return nil, "", err
	}
	if p := rep.Providers[0]; p.Status == schema.RunFailed {
		return nil, "today's parser does not read its payloads: " + p.Error, nil
	}
	return rep.Batches[0].Offers, "", nil
}

// history is the pipeline's view of the past for a run being derived: the newest prices before
// it; no earlier run (the shrink check is off).
type history struct {
	prev map[schema.Key]decimal.Decimal
}

func (h history) LastGoodRuns(context.Context) ([]schema.ScrapeRun, error) { return nil, nil }

func (h history) LatestPrices(context.Context, string) (map[schema.Key]decimal.Decimal, error) {
	return h.prev, nil
}

// compare counts, by offer key, what re-deriving one run changes.
func compare(runID string, stored, derived []schema.Offer, pr *ProviderReport) {
	before := make(map[schema.Key]schema.Offer, len(stored))
	for _, o := range stored {
		before[o.Key()] = o
	}
	example := func(o schema.Offer, was, is string) {
		if len(pr.Examples) < maxExamples {
			pr.Examples = append(pr.Examples, Change{RunID: runID, OfferID: o.OfferID, PriceType: o.PriceType, Before: was, After: is})
		}
	}
	for _, o := range derived {
		old, ok := before[o.Key()]
		delete(before, o.Key())
		switch {
		case !ok:
			pr.Added++
			example(o, "", describe(o))
		case !old.PriceUSDPerGPUHour.Equal(o.PriceUSDPerGPUHour) || !old.PriceUSDPerHour.Equal(o.PriceUSDPerHour):
			pr.Repriced++
			example(o, describe(old), describe(o))
		case !sameDerivation(old, o):
			pr.Changed++
			example(o, describe(old), describe(o))
		}
	}
	gone := make([]schema.Offer, 0, len(before))
	for _, o := range before {
		gone = append(gone, o)
	}
	sort.Slice(gone, func(i, j int) bool {
		return gone[i].OfferID+string(gone[i].PriceType) < gone[j].OfferID+string(gone[j].PriceType)
	})
	for _, o := range gone {
		pr.Removed++
		example(o, describe(o), "")
	}
}

// sameDerivation reports whether two derivations of one offer at one price agree on every other
// field a parser decides: those describe writes. (describe's text would say the same, at a
// formatted string per offer.)
func sameDerivation(a, b schema.Offer) bool {
	return a.GPUModel == b.GPUModel && a.GPUNameRaw == b.GPUNameRaw && a.GPUCount == b.GPUCount && a.VRAMGB == b.VRAMGB &&
		a.Tier == b.Tier && a.Country == b.Country && a.Region == b.Region && a.IntraNode == b.IntraNode &&
		a.InterNode == b.InterNode && a.Stock == b.Stock && sameTime(a.ValidUntil, b.ValidUntil) &&
		samePtr(a.NVLinkGbps, b.NVLinkGbps) && samePtr(a.AvailableCount, b.AvailableCount) && samePtr(a.Reliability, b.Reliability) &&
		samePtr(a.VCPUs, b.VCPUs) && samePtr(a.RAMGB, b.RAMGB) && samePtr(a.DiskGB, b.DiskGB) && sameFlags(a.DQFlags, b.DQFlags)
}

func samePtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func sameTime(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }

// sameFlags compares flags as sets: their order is not the parser's decision.
func sameFlags(a, b []schema.DQFlag) bool {
	if len(a) != len(b) {
		return false
	}
	for _, f := range a {
		if !slices.Contains(b, f) {
			return false
		}
	}
	return true
}

// describe writes the fields of an offer that a parser decides, for the report's examples.
func describe(o schema.Offer) string {
	flags := make([]string, len(o.DQFlags))
	for i, f := range o.DQFlags {
		flags[i] = string(f)
	}
	slices.Sort(flags)
	until := "-"
	if o.ValidUntil != nil {
		until = o.ValidUntil.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s %q ×%d %gGB %s/GPU-h (%s/h) until=%s %s %s/%s %s %s nvlink=%s stock=%s avail=%s rel=%s vcpus=%s ram=%s disk=%s flags=%s",
		o.GPUModel, o.GPUNameRaw, o.GPUCount, o.VRAMGB, o.PriceUSDPerGPUHour, o.PriceUSDPerHour, until, o.Tier, o.Country, o.Region,
		o.IntraNode, o.InterNode, num(o.NVLinkGbps), o.Stock, count(o.AvailableCount), num(o.Reliability), num(o.VCPUs), num(o.RAMGB), num(o.DiskGB),
		strings.Join(flags, ","))
}

func num(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

func count(v *uint32) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
