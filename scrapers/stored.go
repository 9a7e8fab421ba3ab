package scrapers

import (
	"bytes"
	"context"
	"fmt"

	"github.com/gpucost/gpucost/schema"
)

// Stored is a source over the raw payloads a run of one provider stored: its Fetch parses each
// with today's parser of that provider, the function the provider's source runs on that response,
// so a parser fix can re-derive stored runs (gpucost reparse). Responses that carry no offers
// (an error status, a redirect) are skipped, as the source skipped them.
type Stored struct {
	provider string
	parse    func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error)
	payloads []schema.RawPayload
}

// StoredParsers lists the providers whose stored payloads Stored parses.
func StoredParsers() []string {
	return []string{CoreWeaveName, LambdaName, RunPodName, VastName, VultrName}
}

// NewStored returns the source over one provider's payloads of a run; an error for a provider
// without a parser of its payloads (an import source).
func NewStored(provider string, payloads []schema.RawPayload) (*Stored, error) {
	s := &Stored{provider: provider, payloads: payloads}
	switch provider {
	case VastName:
		s.parse = ParseVast
	case RunPodName:
		s.parse = ParseRunPod
	case LambdaName:
		s.parse = parseLambdaStored
	case CoreWeaveName:
		s.parse = ParseCoreWeave
	case VultrName:
		s.parse = parseVultrStored // a page of CPU plans only is no error of its own
	default:
		return nil, fmt.Errorf("no parser for the stored payloads of %q (re-derived: %v)", provider, StoredParsers())
	}
	return s, nil
}

// parseLambdaStored parses a stored Lambda payload: the instance-types API's JSON, or the
// pricing page's HTML, whichever the run fetched (the source reads the API when it has a key).
func parseLambdaStored(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return ParseLambda(body, run, sourceURL)
	}
	return ParseLambdaPage(body, run, sourceURL)
}

// Name returns the provider's name.
func (s *Stored) Name() string { return s.provider }

// ParserVersion names today's parser of the provider, which derives the offers (ParserVersion).
func (s *Stored) ParserVersion() string { return ParserVersion(s.provider) }

// Fetch parses the stored payloads in the order they were fetched. A payload that does not
// parse is a problem of the run, as a failed page is of a fetch; none parsing is its error.
func (s *Stored) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	var res schema.Extract
	parsed := 0
	var firstErr error
	for _, p := range s.payloads {
		if err := ctx.Err(); err != nil {
			return res, sourceError(s.provider, err)
		}
		if p.Status < 200 || p.Status > 299 {
			continue
		}
		offers, problems, err := s.parse(p.Body, run, p.URL)
		res.Problems = append(res.Problems, problems...)
		if err != nil {
			err = fmt.Errorf("the payload of %s fetched at %s: %w", p.URL, p.FetchedAt.UTC().Format("2006-01-02T15:04:05Z"), err)
			res.Problems = append(res.Problems, err)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		parsed++
		res.Offers = append(res.Offers, offers...)
	}
	switch {
	case parsed == 0 && firstErr != nil:
		return res, sourceError(s.provider, firstErr)
	case len(res.Offers) == 0:
		return res, sourceError(s.provider, ErrNoOffers)
	}
	res.Problems = sourceErrors(s.provider, capProblems(res.Problems))
	return res, nil
}
