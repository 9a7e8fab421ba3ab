package scrapers

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// Conditions callers branch on. Errors returned by this package wrap them; test with errors.Is.
var (
	// ErrNoOffers: the response parsed, but to no usable offer.
	ErrNoOffers = errors.New("no offers parsed")
	// ErrLayoutChanged: the response's structure is not the one the parser knows (missing
	// anchors or keys, wrong content type, malformed JSON). The provider changed something.
	ErrLayoutChanged = errors.New("response layout not recognised")
	// ErrStatus: the provider answered with a non-2xx status (after retries). *StatusError
	// carries the code.
	ErrStatus = errors.New("unexpected HTTP status")
	// ErrBodyTooLarge: the response body exceeded the client's limit; nothing was parsed.
	ErrBodyTooLarge = errors.New("response body exceeds size limit")
	// ErrTruncated: a result page was full in both sort orders, so offers may be missing.
	ErrTruncated = errors.New("result possibly truncated by the provider")
	// ErrNotRecorded: replaying a recorded run, the request has no recorded response.
	ErrNotRecorded = errors.New("no recorded response for request")
	// ErrIncomplete: the body did not arrive whole: it ended before its Content-Length, or
	// before the end of its JSON document or HTML page (an empty body included). A cut page is
	// never parsed into a smaller market (docs/providers.md §6.2).
	ErrIncomplete = errors.New("response body incomplete")
	// ErrOverBudget: the source has read more response bytes in this run, over all its
	// requests, than ClientConfig.MaxSourceBytes allows; it stops there.
	ErrOverBudget = errors.New("source's response byte budget exhausted")
	// ErrTooManyOffers: one run of the source produced more offers than
	// ClientConfig.MaxSourceOffers allows, or one response more rows than the source asked for,
	// which no real answer does.
	ErrTooManyOffers = errors.New("more offers than a source returns")
)

// MaxOffers is the default of ClientConfig.MaxSourceOffers, the offers one source may produce in
// one run, and the bound of the exported parsers (ParseVast, ParseRunPod, …) on one response
// (docs/providers.md §6.2). It is above the most Vast's fetch plan can return at its default
// page size (20 slices × 5 GPU-count buckets × 2 pages of 64 asks, each an on-demand and a spot
// offer: 25,600); the other providers publish a few hundred at most.
const MaxOffers = 30_000

// maxProblems bounds the problems a parse or a source reports: the first ones, and how many
// more there were. A response of a million unreadable rows says so in one line, not a million.
const maxProblems = 20

// capProblems keeps the first maxProblems of errs and sums up the rest in one more.
func capProblems(errs []error) []error {
	if len(errs) <= maxProblems {
		return errs
	}
	return append(errs[:maxProblems:maxProblems], fmt.Errorf("%d more problems", len(errs)-maxProblems))
}

// offerCap returns ErrTooManyOffers when n offers exceed max.
func offerCap(n, max int) error {
	if n > max {
		return fmt.Errorf("%w: over %d", ErrTooManyOffers, max)
	}
	return nil
}

// Error is a failure of one source. It names the provider and unwraps to the cause.
type Error struct {
	Source string // provider name, e.g. "vastai"
	Err    error
}

func (e *Error) Error() string { return e.Source + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// sourceError wraps err as an *Error of source (nil stays nil; an *Error of the same source is
// not wrapped twice).
func sourceError(source string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) && se.Source == source {
		return err
	}
	return &Error{Source: source, Err: err}
}

// sourceErrors wraps each of errs as an *Error of source, in place, and returns errs.
func sourceErrors(source string, errs []error) []error {
	for i, err := range errs {
		errs[i] = sourceError(source, err)
	}
	return errs
}

// orDiscard returns l, or a logger that discards when l is nil (the constructors' "a nil logger
// discards").
func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// StatusError is a non-2xx HTTP answer. It matches ErrStatus with errors.Is.
type StatusError struct {
	URL        string // redacted
	StatusCode int
	Attempts   int
	Snippet    string // start of the body, redacted, for the run log
}

// credentialsRefused reports whether err is the API refusing the credentials a source sent:
// HTTP 401 or 403.
func credentialsRefused(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusForbidden)
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d after %d attempt(s)", e.URL, e.StatusCode, e.Attempts)
	if e.Snippet != "" {
		s += ": " + e.Snippet
	}
	return s
}

// Is makes errors.Is(err, ErrStatus) true.
func (e *StatusError) Is(target error) bool { return target == ErrStatus }
