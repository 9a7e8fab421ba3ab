package pipeline

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
)

// Source is one provider's price feed.
//
// Fetch returns the provider's offers for one run; it must honour ctx's deadline, which allows
// Config.SourceTimeout of work. A source that must pause between requests (a provider's rate
// limit) announces each pause with run.Pace(d) before it waits, and the deadline moves out by d, up to Config.SourceTimeoutMax. An error means the source
// failed: whatever the Extract holds (payloads, attempts) is still recorded, its offers are not
// loaded. Name is the provider name stored with every row. An offer comes priced, its prices
// rounded once to schema.PriceDecimals from the exact amount quoted (schema.Offer.SetPrice or
// SetPricePerGPU), or with only its whole-offer price, exact, and a zero per-GPU price: the
// pipeline then prices it (validate.go). The run's stamp on offers and payloads is the
// pipeline's to set. A source that reads many pages hands each over as it reads it
// (run.Keep): the pipeline writes it to the spool and the source keeps nothing of it, so a
// run's memory does not grow with the market; what a source returns in its Extract instead is
// taken the same way. A source that names its parser (a ParserVersion() string method) has it
// recorded on every offer it produced (schema.Offer.ParserVersion), whatever the offer said.
// The scrapers' sources are Sources as they are.
type Source interface {
	Name() string
	Fetch(ctx context.Context, run schema.Run) (schema.Extract, error)
}

// Sink stores batches.
//
// LoadBatch writes one provider's batch of one run, skipping whatever part of it is already
// stored, and reports whether the whole batch was already there. It must be safe to call again
// with the same batch after a failure or after a call cut off at any point (the process
// killed): the pipeline loads every batch again, from its spool, until one call returns nil.
// Its error wraps schema.ErrUnavailable when the sink could not be reached (the batch is not at
// fault, and no other batch would load either), schema.ErrRejected when the sink will never
// store this batch; any other error is a failed attempt of this batch. The ClickHouse store
// (store.Store, store.Lazy) is one as it is.
type Sink interface {
	LoadBatch(ctx context.Context, b schema.Batch) (skipped bool, err error)
}

// Stages of a batch's load, passed to Options.OnStage as each is reached, in this order. A batch
// the spool held from an earlier run starts at StageSpooled.
const (
	StageSpooled = "spooled" // the batch is durably in the spool, about to be loaded
	StageLoaded  = "loaded"  // the sink stored all of it; it is still in the spool
	StageRemoved = "removed" // it has left the spool
)

// Stages lists the stages of a load in order.
func Stages() []string { return []string{StageSpooled, StageLoaded, StageRemoved} }

// History is what the pipeline reads of earlier runs. A failing History does not stop a run:
// the shrink and outlier checks are then skipped, and the run says so in its log.
type History interface {
	// LastGoodRuns returns the newest ok or partial run-log row of each provider.
	LastGoodRuns(ctx context.Context) ([]schema.ScrapeRun, error)
	// LatestPrices returns the newest $/GPU-hour of every offer of one provider.
	LatestPrices(ctx context.Context, provider string) (map[schema.Key]decimal.Decimal, error)
}

// Config tunes a Runner. A zero Parallelism, SourceTimeout, SourceTimeoutMax, LoadTimeout or
// MaxPricePerGPUHour takes the default of withDefaults; a zero MinOfferRatio, OutlierFactor or
// LockWait turns its check or wait off. gpucost's own defaults for all of them are in
// config/gpucost.yaml.
type Config struct {
	// Parallelism is how many sources are fetched at once.
	Parallelism int
	// SourceTimeout is each source's deadline for its own work: its requests, retries and
	// parsing. The pauses a source announces with Pace (a provider's rate limit) come on top, so
	// the deadline follows the work the source's plan has (deadline.go).
	SourceTimeout time.Duration
	// SourceTimeoutMax caps a source's whole fetch, announced pauses included (never below
	// SourceTimeout).
	SourceTimeoutMax time.Duration
	// LoadTimeout is the deadline for loading one batch.
	LoadTimeout time.Duration
	// MinOfferRatio marks a source failed when it returns fewer valid offers than this fraction
	// of its last good run's loaded offers. Zero disables the check.
	MinOfferRatio float64
	// MaxPricePerGPUHour rejects prices above it as absurd (USD per GPU-hour).
	MaxPricePerGPUHour decimal.Decimal
	// OutlierFactor flags (keeps, with price_outlier) an offer whose price moved by more than
	// this factor, up or down, since its last observation. Zero disables the check.
	OutlierFactor float64
	// SpoolDir holds batches that could not be loaded, and the run lock. Required.
	SpoolDir string
	// LockWait is how long a run waits for another run to finish before giving up with ErrBusy.
	LockWait time.Duration
	// MaxLoadAttempts is how many failed loads a spooled batch may have before it is moved to the
	// spool's quarantine folder. Failures of an unavailable sink are not counted.
	MaxLoadAttempts int
}

// withDefaults fills the fields that cannot be zero.
func (c Config) withDefaults() Config {
	if c.Parallelism <= 0 {
		c.Parallelism = 4
	}
	if c.SourceTimeout <= 0 {
		c.SourceTimeout = 3 * time.Minute
	}
	if c.SourceTimeoutMax <= 0 {
		c.SourceTimeoutMax = 15 * time.Minute
	}
	c.SourceTimeoutMax = max(c.SourceTimeoutMax, c.SourceTimeout)
	if c.LoadTimeout <= 0 {
		c.LoadTimeout = 2 * time.Minute
	}
	if c.MaxPricePerGPUHour.IsZero() {
		c.MaxPricePerGPUHour = decimal.NewFromInt(200)
	}
	if c.MaxLoadAttempts <= 0 {
		c.MaxLoadAttempts = 5
	}
	return c
}

// Options are a Runner's collaborators beyond its sources.
type Options struct {
	Logger  *slog.Logger     // nil discards
	Metrics *Metrics         // nil records nothing
	Now     func() time.Time // nil means time.Now
	// DryRun extracts, normalizes and validates but neither loads nor spools: the Report's
	// Batches hold what would have been loaded.
	DryRun bool
	// Progress, when set, is told how far the fetch has come as each source reads a page and
	// as each finishes (for a terminal's progress line); calls come one at a time, from the
	// sources' goroutines, so it must return quickly.
	Progress func(p Progress)
	// RunID, when set, is the id of every run instead of a fresh one. A replay of a recorded
	// folder uses an id derived from the recording, so loading it twice stores it once.
	RunID string
	// Redactor scrubs secrets from everything the run writes: each batch (payload URLs and
	// bodies, the run-log row's error, the offers' text) before it is spooled or loaded, and the
	// errors it reports and records in the spool. Nil scrubs credentials by their shape only.
	Redactor *redact.Redactor
	// OnStage, when set, is called as each batch reaches each stage of its load (Stages), so a
	// fault-injection test can stop the process there.
	OnStage func(stage string)
}

// Runner runs scrapes. A Runner may be used for many runs, one at a time per spool folder.
type Runner struct {
	cfg     Config
	sources []Source
	sink    Sink
	history History
	opts    Options
	logger  *slog.Logger
	now     func() time.Time
}

// New returns a Runner over sources that loads into sink and consults history. sink and history
// may be nil only for a dry run.
func New(cfg Config, sources []Source, sink Sink, history History, opts Options) (*Runner, error) {
	cfg = cfg.withDefaults()
	if cfg.SpoolDir == "" && !opts.DryRun {
		return nil, errors.New("pipeline: a spool folder is required")
	}
	if len(sources) == 0 {
		return nil, errors.New("pipeline: no sources enabled")
	}
	seen := map[string]bool{}
	for _, s := range sources {
		if seen[s.Name()] {
			return nil, fmt.Errorf("pipeline: source %s enabled twice", s.Name())
		}
		seen[s.Name()] = true
	}
	if (sink == nil || history == nil) && !opts.DryRun {
		return nil, errors.New("pipeline: a sink and a history are required unless dry-running")
	}
	r := &Runner{cfg: cfg, sources: sources, sink: sink, history: history, opts: opts, logger: opts.Logger, now: opts.Now}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r, nil
}

// Progress is how far a run's fetch has come.
type Progress struct {
	Sources int // sources in the run
	Done    int // sources that finished fetching
	Offers  int // offers read so far, from every source, before validation
}

// progress adds up the Progress of a run's sources and reports it; nil reports nothing.
type progress struct {
	mu     sync.Mutex
	p      Progress
	report func(Progress)
}

// add counts offers read and sources done, and reports the sum.
func (t *progress) add(offers, done int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.p.Offers += offers
	t.p.Done += done
	t.report(t.p)
}

// Report is the outcome of one run.
type Report struct {
	RunID      string
	ObservedAt time.Time
	DryRun     bool             // nothing was loaded or spooled (Options.DryRun)
	Status     schema.RunStatus // ok: every provider ok; failed: every provider failed; else partial
	Providers  []ProviderReport // sorted by provider
	Replayed   []ReplayReport   // spooled batches of earlier runs handled first
	// Batches are what was (or, on a dry run, would be) loaded, sorted by provider. A dry run's
	// hold their offers and payloads; a run's went through the spool (their Parts read its
	// files, only while they are there: a loaded batch's leaves the spool).
	Batches []schema.Batch
	// Waiting is how many batches the spool holds after the run, still to be loaded.
	Waiting int
	// Quarantined is how many batches the spool's quarantine folder (QuarantineDir) holds after
	// the run: batches that will not load, until an operator looks at them.
	Quarantined   int
	QuarantineDir string
}

// ProviderReport is one provider's part of a run.
type ProviderReport struct {
	Provider string
	Status   schema.RunStatus
	Parsed   int
	Loaded   int            // valid offers, loaded or to load (the run-log row's offers_loaded)
	Rejected map[string]int // rejected offers by reason
	Flagged  map[string]int // kept offers by data-quality flag
	Error    string         // why it failed or is partial; no secrets
	Spooled  bool           // the batch waits in the spool folder instead of the store
	// Stored is how many offers this run stored: Loaded once its batch is in the store, 0 when
	// the batch was already stored (AlreadyStored), waits in the spool, or on a dry run.
	Stored int
	// AlreadyStored: the store held the whole batch already (the same recording replayed
	// again), so nothing new was stored.
	AlreadyStored bool
	// Quarantined: the batch was moved to the spool's quarantine folder (it will not load).
	Quarantined bool
	Duration    time.Duration
	Attempts    int
}

// ReplayReport is one spooled batch handled at the start of a run.
type ReplayReport struct {
	File     string
	RunID    string
	Provider string
	Skipped  bool   // already stored: nothing written
	Error    string // not loaded: the batch stays in the spool, or went to quarantine
	// Quarantined: the batch was moved to the spool's quarantine folder.
	Quarantined bool
}

// Run performs one scrape run: take the lock, load what earlier runs spooled, extract, normalize,
// validate, load or spool, and report. The error is non-nil only when the run could not happen
// at all (another run holds the lock, the spool folder is unusable); provider failures are in the
// Report.
func (r *Runner) Run(ctx context.Context) (Report, error) {
	run := schema.Run{ID: r.newRunID(), ObservedAt: r.now().UTC().Truncate(time.Second)}
	rep := Report{RunID: run.ID, ObservedAt: run.ObservedAt, DryRun: r.opts.DryRun}
	var sp *spool
	if !r.opts.DryRun {
		var err error
		sp, err = openSpool(r.cfg.SpoolDir)
		if err != nil {
			return rep, err
		}
		unlock, err := sp.lock(ctx, r.cfg.LockWait, run.ID, r.now)
		if err != nil {
			return rep, err
		}
		defer unlock()
		rep.Replayed = r.replay(ctx, sp)
	}
	lastGood, prevPrices := r.readHistory(ctx)

	extracts := r.extract(ctx, run, sp, prevPrices)
	prepared := make([]prepared, len(extracts))
	for i, ex := range extracts {
		var pr ProviderReport
		prepared[i], pr = r.prepare(ex, lastGood[ex.name])
		rep.Batches = append(rep.Batches, prepared[i].batch)
		rep.Providers = append(rep.Providers, pr)
	}
	if !r.opts.DryRun {
		// Batches are independent: load them side by side, as many at once as sources fetch.
		var g errgroup.Group
		g.SetLimit(r.cfg.Parallelism)
		for i := range prepared {
			g.Go(func() error {
				r.load(ctx, sp, prepared[i], &rep.Providers[i])
				return nil
			})
		}
		_ = g.Wait() // load reports its failures in the provider reports
		rep.Waiting, rep.Quarantined = r.opts.Metrics.spoolSize(sp)
		rep.QuarantineDir = filepath.Join(sp.dir, quarantineDir)
	}
	for _, pr := range rep.Providers {
		r.opts.Metrics.observe(pr, run.ObservedAt)
		level := slog.LevelInfo // a failure is an error, a partial result a warning
		switch pr.Status {
		case schema.RunFailed:
			level = slog.LevelError
		case schema.RunPartial:
			level = slog.LevelWarn
		}
		r.logger.Log(ctx, level, "Provider scraped", "run", run.ID, "provider", pr.Provider, "status", pr.Status,
			"parsed", pr.Parsed, "loaded", pr.Loaded, "rejected", sum(pr.Rejected), "stored", pr.Stored,
			"already_stored", pr.AlreadyStored, "spooled", pr.Spooled, "duration", pr.Duration, "err", pr.Error)
	}
	rep.Status = overall(rep.Providers)
	return rep, nil
}

// readHistory reads the last good run and latest prices of each source; failures only disable
// the checks that need them.
func (r *Runner) readHistory(ctx context.Context) (map[string]schema.ScrapeRun, map[string]map[schema.Key]decimal.Decimal) {
	lastGood := map[string]schema.ScrapeRun{}
	prices := map[string]map[schema.Key]decimal.Decimal{}
	if r.history == nil {
		return lastGood, prices
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.LoadTimeout)
	defer cancel()
	runs, err := r.history.LastGoodRuns(ctx)
	if err != nil {
		r.logger.Warn("Reading earlier runs failed; shrink and outlier checks are off for this run", "err", err)
		return lastGood, prices
	}
	for _, run := range runs {
		lastGood[run.Provider] = run
	}
	if r.cfg.OutlierFactor <= 0 {
		return lastGood, prices
	}
	for _, s := range r.sources {
		p, err := r.history.LatestPrices(ctx, s.Name())
		if err != nil {
			r.logger.Warn("Reading latest prices failed; outlier check is off", "provider", s.Name(), "err", err)
			continue
		}
		prices[s.Name()] = p
	}
	return lastGood, prices
}

// extracted is one source's fetch outcome: what it read went to its batch writer.
type extracted struct {
	name     string
	started  time.Time
	finished time.Time
	attempts int
	problems []error
	w        *batchWriter
	err      error
}

// extract fetches every source in parallel, at most Parallelism at once, each under its own
// deadline (deadline.go), each page it reads written to the spool (sp; nil on a dry run) as it
// comes. A failing source does not cancel the others.
func (r *Runner) extract(ctx context.Context, run schema.Run, sp *spool, prev map[string]map[schema.Key]decimal.Decimal) []extracted {
	out := make([]extracted, len(r.sources))
	var tr *progress
	if r.opts.Progress != nil {
		tr = &progress{p: Progress{Sources: len(r.sources)}, report: r.opts.Progress}
	}
	var g errgroup.Group
	g.SetLimit(r.cfg.Parallelism)
	for i, s := range r.sources {
		g.Go(func() error {
			v := &validator{maxPrice: r.cfg.MaxPricePerGPUHour, outlierFactor: r.cfg.OutlierFactor, prev: prev[s.Name()]}
			w := newBatchWriter(sp, run, s.Name(), v, r.opts.Redactor)
			if p, ok := s.(interface{ ParserVersion() string }); ok {
				w.parser = p.ParserVersion()
			}
			out[i] = r.fetch(ctx, s, run, w, tr)
			return nil
		})
	}
	_ = g.Wait() // fetch reports errors in its result
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (r *Runner) fetch(ctx context.Context, s Source, run schema.Run, w *batchWriter, tr *progress) (ex extracted) {
	ex.name, ex.w = s.Name(), w
	ex.started = r.now().UTC()
	defer func() {
		if p := recover(); p != nil {
			ex.err = fmt.Errorf("%s: source panicked: %v", s.Name(), p)
		}
		ex.finished = r.now().UTC()
		tr.add(0, 1)
	}()
	fd := newFetchDeadline(ctx, r.cfg.SourceTimeout, r.cfg.SourceTimeoutMax)
	defer fd.stop()
	run.Pacer = fd.pace // this source's own deadline
	// The pages the source emits are validated and spooled by a goroutine of their own, in the
	// order emitted, while the source reads the next: writing a page took as long as reading it.
	pages := make(chan schema.Page, 1)
	written := make(chan struct{})
	var pageErr error
	go func() {
		defer close(written)
		defer func() {
			// A panic writing a page fails this source, as one of the source's own does.
			if p := recover(); p != nil {
				pageErr = fmt.Errorf("%s: writing a page panicked: %v", s.Name(), p)
				for range pages { // the source reads on to its end
				}
			}
		}()
		for p := range pages {
			w.page(p)
			tr.add(len(p.Offers), 0)
		}
	}()
	run.Emit = func(p schema.Page) error {
		pages <- p
		return nil
	}
	res, err := func() (schema.Extract, error) {
		defer func() {
			close(pages)
			<-written
		}()
		return s.Fetch(fd, run)
	}()
	ex.err, ex.attempts, ex.problems = cmp.Or(pageErr, err), res.Attempts, res.Problems
	// What the source kept in its Extract rather than emitting goes the same way.
	w.page(schema.Page{Payloads: res.Payloads, Offers: res.Offers})
	tr.add(len(res.Offers), 0)
	if ex.err == nil && w.parsed == 0 {
		ex.err = fmt.Errorf("%s: the source returned no offers", s.Name())
	}
	if ex.err != nil && errors.Is(fd.Err(), context.DeadlineExceeded) {
		ex.err = fmt.Errorf("%w (%s)", ex.err, fd.describe())
	}
	return ex
}

// prepared is one source's batch, finished: in the spool (file set) or held in memory (after a
// spool write failed, spoolErr, or on a dry run).
type prepared struct {
	batch    schema.Batch
	file     string
	spoolErr error
}

// prepare decides one source's outcome from what its fetch read and validated, and finishes its
// batch with the run-log row.
func (r *Runner) prepare(ex extracted, lastGood schema.ScrapeRun) (prepared, ProviderReport) {
	w := ex.w
	pr := ProviderReport{Provider: ex.name, Parsed: w.parsed, Attempts: ex.attempts, Duration: ex.finished.Sub(ex.started),
		Rejected: map[string]int{}, Flagged: map[string]int{}}
	switch {
	case ex.err != nil:
		pr.Status, pr.Error = schema.RunFailed, ex.err.Error()
	default:
		pr.Rejected, pr.Flagged = w.rejected, w.flagged
		floor := int(float64(lastGood.OffersLoaded) * r.cfg.MinOfferRatio)
		switch {
		case w.kept == 0:
			pr.Status, pr.Error = schema.RunFailed, fmt.Sprintf("%s: all %d parsed offers were rejected (%s)", ex.name, pr.Parsed, reasons(pr.Rejected))
		case r.cfg.MinOfferRatio > 0 && w.kept < floor:
			pr.Status = schema.RunFailed
			pr.Error = fmt.Sprintf("%s: %d valid offers, fewer than %.0f%% of the %d loaded by its last good run %s; not loaded (a broken source is likelier than an emptied market)",
				ex.name, w.kept, r.cfg.MinOfferRatio*100, lastGood.OffersLoaded, lastGood.RunID)
		default:
			pr.Status = schema.RunOK
			pr.Loaded = w.kept
			if len(ex.problems) > 0 {
				pr.Status = schema.RunPartial
				pr.Error = errors.Join(ex.problems...).Error()
			}
		}
	}
	run := schema.ScrapeRun{
		RunID: w.run.ID, Provider: ex.name, StartedAt: ex.started.Truncate(time.Second), FinishedAt: ex.finished.Truncate(time.Second),
		Status: pr.Status, OffersParsed: uint32(pr.Parsed), OffersLoaded: uint32(pr.Loaded), OffersRejected: uint32(sum(pr.Rejected)),
		Error: pr.Error, HTTPAttempts: uint32(ex.attempts),
	}
	var p prepared
	p.batch, p.file, p.spoolErr = w.finish(run)
	// finish may have failed the batch (its spool lost part of it), and scrubbed its error.
	pr.Status, pr.Error, pr.Loaded = p.batch.Run.Status, p.batch.Run.Error, int(p.batch.Run.OffersLoaded)
	return p, pr
}

// redactBatch scrubs secrets from every text and body a batch holds in memory: a provider may
// echo a key in an error page, a redirect URL or a field. Bodies and the offers' text are data
// (their secret values go); URLs and the run's error are messages (credential shapes go too).
// The parts of a spooled batch are scrubbed as they are read (fileParts).
func (r *Runner) redactBatch(b *schema.Batch) {
	redactPayloads(r.opts.Redactor, b.Payloads)
	b.Run.Error = r.opts.Redactor.String(b.Run.Error)
	redactOffers(r.opts.Redactor, b.Offers)
}

// load loads one batch from the spool (the write-ahead log its fetch wrote it to) and takes it
// out of the spool again, and records in pr what became of it: loaded; waiting in the spool (the
// sink failed, or the run is being stopped); quarantined; or failed, neither loaded nor spooled.
func (r *Runner) load(ctx context.Context, sp *spool, p prepared, pr *ProviderReport) {
	fail := func(msg string) { pr.Status, pr.Error = schema.RunFailed, r.opts.Redactor.String(msg) }
	b, name, walErr := p.batch, p.file, p.spoolErr
	switch {
	case errors.Is(walErr, errSpooledBefore):
		// A recording replayed again while its earlier replay waits in the spool: that copy,
		// with the timestamps it may be partly stored under, is the one to load.
		pr.Spooled = true
		r.logger.Warn("A batch of this run and provider waits in the spool already; it is loaded instead of this copy", "run", b.Run.RunID, "provider", b.Run.Provider, "file", name)
		return
	case errors.Is(walErr, errQuarantinedBefore):
		fail(fmt.Sprintf("%s: not loaded: %v; move it back to the spool folder to load it", b.Run.Provider, walErr))
		return
	case walErr != nil:
		r.logger.Error("Spooling a batch before loading it failed; loading it without a spooled copy", "run", b.Run.RunID, "provider", b.Run.Provider, "err", walErr)
	default:
		r.stage(StageSpooled)
	}
	if ctx.Err() != nil && walErr == nil {
		pr.Spooled = true // the run is being stopped: the next one loads it
		return
	}
	err := fmt.Errorf("%w: the run is stopping", schema.ErrUnavailable)
	if ctx.Err() == nil {
		// A fresh deadline, not cancelled by a shutdown signal: a load in flight finishes.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.LoadTimeout)
		var skipped bool
		skipped, err = r.sink.LoadBatch(lctx, b)
		cancel()
		if err == nil {
			pr.AlreadyStored = skipped
			if !skipped {
				pr.Stored = int(b.Run.OffersLoaded)
			}
			r.stage(StageLoaded)
			if walErr == nil {
				if err := sp.remove(name); err != nil {
					r.logger.Error("Removing a loaded batch from the spool failed; the next run finds it stored", "file", name, "err", err)
				}
				r.stage(StageRemoved)
			}
			return
		}
	}
	if walErr != nil {
		// Nothing else can keep the batch: say so loudly. The next run scrapes afresh.
		r.logger.Error("A batch was neither loaded nor spooled; its offers are lost", "run", b.Run.RunID, "provider", b.Run.Provider, "load_err", err, "spool_err", walErr)
		fail(fmt.Sprintf("%s: neither loaded nor spooled: loading: %v; spooling: %v", b.Run.Provider, err, walErr))
		return
	}
	r.logger.Error("Loading a batch failed; it waits in the spool for the next run", "run", b.Run.RunID, "provider", b.Run.Provider, "err", err)
	pr.Spooled = true
	r.opts.Metrics.spooled(b.Run.Provider)
	if q, _ := r.failed(sp, name, b.Run.Provider, err); q != "" {
		pr.Spooled, pr.Quarantined = false, true
		fail(fmt.Sprintf("%s: not loaded: %v; the batch is in quarantine: %s", b.Run.Provider, err, q))
	}
}

// failed handles a failed load of a spooled batch. A sink that is unavailable counts nothing
// and stops the replay (stop). A rejected batch goes to quarantine at once; any other failure
// is counted in the batch's .failures file, and the batch goes to quarantine once it has failed
// MaxLoadAttempts times. It returns the batch's path in quarantine when it went there.
func (r *Runner) failed(sp *spool, name, provider string, err error) (quarantined string, stop bool) {
	if errors.Is(err, schema.ErrUnavailable) {
		return "", true
	}
	attempts, ferr := sp.fail(name, r.now(), r.opts.Redactor.Error(err))
	if ferr != nil {
		r.logger.Error("Recording a failed load failed", "file", name, "err", ferr)
	}
	if !errors.Is(err, schema.ErrRejected) && attempts < r.cfg.MaxLoadAttempts {
		r.logger.Warn("A spooled batch failed to load; it is tried again by the next run", "file", name, "failures", attempts, "max", r.cfg.MaxLoadAttempts)
		return "", false
	}
	q, qerr := sp.quarantine(name)
	if qerr != nil {
		r.logger.Error("Moving a batch to quarantine failed; it stays in the spool", "file", name, "err", qerr)
		return "", false
	}
	r.opts.Metrics.quarantined(provider)
	r.logger.Error("A batch that will not load was moved to quarantine; the other batches go on", "file", q, "failures", attempts, "err", err)
	return q, false
}

// replay loads the batches earlier runs spooled, oldest first. A batch that loads (or is
// already stored) leaves the spool. One that fails stays for the next run, or goes to quarantine
// (failed), and the next one is tried; when the sink is unavailable, the rest stay untried.
func (r *Runner) replay(ctx context.Context, sp *spool) []ReplayReport {
	files, err := sp.list()
	if err != nil {
		r.logger.Error("Listing the spool failed", "dir", sp.dir, "err", err)
		return nil
	}
	var out []ReplayReport
	for _, f := range files {
		if ctx.Err() != nil {
			break // stopping: the rest wait for the next run
		}
		rr := ReplayReport{File: f}
		b, err := sp.get(f, r.opts.Redactor)
		if err != nil {
			rr.Error = r.opts.Redactor.String(err.Error())
			if errors.Is(err, errNotABatch) {
				err = fmt.Errorf("%w: %w", schema.ErrRejected, err) // it will never read better
			}
			if q, _ := r.failed(sp, f, "", err); q != "" {
				rr.Quarantined = true
			}
			out = append(out, rr)
			r.logger.Error("Reading a spooled batch failed", "file", f, "err", err, "quarantined", rr.Quarantined)
			continue
		}
		rr.RunID, rr.Provider = b.Run.RunID, b.Run.Provider
		r.redactBatch(&b) // spooled by an older gpucost, or under other secrets
		r.stage(StageSpooled)
		lctx, cancel := context.WithTimeout(ctx, r.cfg.LoadTimeout)
		skipped, err := r.sink.LoadBatch(lctx, b)
		cancel()
		if err != nil {
			rr.Error = r.opts.Redactor.String(err.Error())
			if ctx.Err() != nil {
				out = append(out, rr)
				break // stopping: not the batch's fault
			}
			q, stop := r.failed(sp, f, b.Run.Provider, err)
			rr.Quarantined = q != ""
			out = append(out, rr)
			if stop {
				r.logger.Warn("The store is unavailable; the spooled batches wait for the next run", "file", f, "err", err)
				break // the rest would fail the same way
			}
			continue
		}
		r.stage(StageLoaded)
		rr.Skipped = skipped
		if err := sp.remove(f); err != nil {
			r.logger.Error("Removing a loaded batch from the spool failed", "file", f, "err", err)
		}
		r.stage(StageRemoved)
		out = append(out, rr)
		r.logger.Info("Loaded a spooled batch", "file", f, "run", b.Run.RunID, "provider", b.Run.Provider, "already_stored", skipped)
	}
	return out
}

func (r *Runner) stage(name string) {
	if r.opts.OnStage != nil {
		r.opts.OnStage(name)
	}
}

func (r *Runner) newRunID() string {
	if r.opts.RunID != "" {
		return r.opts.RunID
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	return r.now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

func overall(prs []ProviderReport) schema.RunStatus {
	ok, failed := 0, 0
	for _, p := range prs {
		switch p.Status {
		case schema.RunOK:
			ok++
		case schema.RunFailed:
			failed++
		}
	}
	switch {
	case ok == len(prs):
		return schema.RunOK
	case failed == len(prs):
		return schema.RunFailed
	}
	return schema.RunPartial
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func reasons(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
