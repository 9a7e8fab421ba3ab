package scrapers

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/gpucost/gpucost/schema"
)

// Stored is a source over the raw payloads a run of one provider stored: its Fetch parses them
// with today's parser of that provider, the functions the provider's source runs on those
// responses, so a parser fix can re-derive stored runs (gpucost reparse). Responses that carry
// no offers (an error status, a redirect) are skipped, as the source skipped them.
//
// A re-derivation must not lose what the run stored, so Fetch fails when today's parser cannot
// read every answer that gave offers (a page it now rejects, an answer missing from the run):
// the run then keeps its stored offers.
type Stored struct {
	provider string
	parse    func(payloads []schema.RawPayload, run schema.Run) ([]schema.Offer, []error, error)
	payloads []schema.RawPayload
}

// StoredParsers lists the providers whose stored payloads Stored parses.
func StoredParsers() []string {
	return []string{CoreWeaveName, DigitalOceanName, HyperstackName, LambdaName, NebiusName, OCIName, RunPodName, TensorDockName, VastName, VerdaName, VultrName}
}

// NewStored returns the source over one provider's payloads of a run; an error for a provider
// without a parser of its payloads (an import source).
func NewStored(provider string, payloads []schema.RawPayload) (*Stored, error) {
	s := &Stored{provider: provider, payloads: payloads}
	switch provider {
	case VastName:
		s.parse = eachAnswer(ParseVast)
	case RunPodName:
		s.parse = parseRunPodStored // the GraphQL answer, and the v2 catalog's of a run with a key
	case LambdaName:
		s.parse = eachAnswer(parseLambdaStored)
	case CoreWeaveName:
		s.parse = eachAnswer(ParseCoreWeave)
	case VerdaName:
		s.parse = parseVerdaStored
	case OCIName:
		s.parse = parseOCIStored // the price list and the shapes, joined
	case VultrName:
		s.parse = eachAnswer(parseVultrStored) // a page of CPU plans only is no error of its own
	case TensorDockName:
		s.parse = eachAnswer(ParseTensorDock) // the hostnodes, or the locations a run fell back to
	case NebiusName:
		s.parse = eachAnswer(ParseNebius) // the price page; its price columns chosen by the run's time
	case DigitalOceanName:
		s.parse = eachAnswer(parseDigitalOceanStored) // the API's size pages or the pricing page
	case HyperstackName:
		s.parse = parseHyperstackStored // the pricebook and the flavors, joined, or the rate card
	default:
		return nil, fmt.Errorf("no parser for the stored payloads of %q (re-derived: %v)", provider, StoredParsers())
	}
	return s, nil
}

// eachAnswer parses every answer on its own with parse, for the sources whose answers each
// stand alone (a page, a slice of a search). Any answer that does not parse fails the run.
func eachAnswer(parse func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error)) func([]schema.RawPayload, schema.Run) ([]schema.Offer, []error, error) {
	return func(payloads []schema.RawPayload, run schema.Run) ([]schema.Offer, []error, error) {
		var offers []schema.Offer
		var problems []error
		for _, p := range payloads {
			got, probs, err := parse(p.Body, run, p.URL)
			if err != nil {
				return nil, problems, fmt.Errorf("the answer of %s fetched at %s no longer parses: %w", p.URL, p.FetchedAt.UTC().Format("2006-01-02T15:04:05Z"), err)
			}
			offers, problems = append(offers, got...), append(problems, probs...)
		}
		return offers, problems, nil
	}
}

// parseLambdaStored parses a stored Lambda payload: the instance-types API's JSON, or the
// pricing page's HTML, whichever the run fetched (the source reads the API when it has a key).
func parseLambdaStored(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return ParseLambda(body, run, sourceURL)
	}
	return ParseLambdaPage(body, run, sourceURL)
}

// parseRunPodStored parses a stored RunPod run: its GraphQL answer and, when the run had a
// key, its v2 catalog answer, told apart by content (only GraphQL's names gpuTypes, only the
// catalog's has gpus), merged and sorted as the source does. A catalog answer that does not
// parse fails the re-derivation as a GraphQL one does, though the scrape took its failure for a
// problem: the run may have stored serverless offers from it, and a re-derivation must not lose
// them.
func parseRunPodStored(payloads []schema.RawPayload, run schema.Run) ([]schema.Offer, []error, error) {
	offers, problems, err := eachAnswer(func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
		if bytes.Contains(body, []byte(`"gpus"`)) && !bytes.Contains(body, []byte(`"gpuTypes"`)) {
			return ParseRunPodCatalog(body, run, sourceURL)
		}
		return ParseRunPod(body, run, sourceURL)
	})(payloads, run)
	sortOffers(offers)
	return offers, problems, err
}

// parseVerdaStored parses a stored Verda run: the API's instance types placed by its two
// availability answers, as the source does (the token answer is never stored), or the pricing
// page.
func parseVerdaStored(payloads []schema.RawPayload, run schema.Run) ([]schema.Offer, []error, error) {
	var types *schema.RawPayload
	availability := map[schema.PriceType]*schema.RawPayload{}
	for i, p := range payloads {
		u, err := url.Parse(p.URL)
		if err != nil {
			continue
		}
		switch {
		case strings.HasSuffix(u.Path, "/instance-types"):
			types = &payloads[i]
		case strings.HasSuffix(u.Path, verdaAvailabilityPath) && u.Query().Get("is_spot") == "true":
			availability[schema.Spot] = &payloads[i]
		case strings.HasSuffix(u.Path, verdaAvailabilityPath):
			availability[schema.OnDemand] = &payloads[i]
		}
	}
	if types == nil {
		return eachAnswer(ParseVerdaPage)(payloads, run)
	}
	offers, problems, err := ParseVerda(types.Body, run, types.URL)
	if err != nil {
		return nil, problems, fmt.Errorf("the instance types no longer parse: %w", err)
	}
	avail := map[schema.PriceType]VerdaAvailability{}
	for _, pt := range []schema.PriceType{schema.OnDemand, schema.Spot} {
		p := availability[pt]
		if p == nil {
			return nil, problems, fmt.Errorf("the run stored no %s availability answer", pt)
		}
		if avail[pt], err = ParseVerdaAvailability(p.Body); err != nil {
			return nil, problems, fmt.Errorf("the %s availability no longer parses: %w", pt, err)
		}
	}
	offers, err = verdaPlace(offers, avail)
	return offers, problems, err
}

// Name returns the provider's name.
func (s *Stored) Name() string { return s.provider }

// ParserVersion names today's parser of the provider, which derives the offers (ParserVersion).
func (s *Stored) ParserVersion() string { return ParserVersion(s.provider) }

// Fetch parses the run's stored answers that carry offers (a 2xx status), in the order fetched.
func (s *Stored) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	var answers []schema.RawPayload
	for _, p := range s.payloads {
		if p.Status >= 200 && p.Status <= 299 {
			answers = append(answers, p)
		}
	}
	if err := ctx.Err(); err != nil {
		return schema.Extract{}, sourceError(s.provider, err)
	}
	offers, problems, err := s.parse(answers, run)
	res := schema.Extract{Offers: offers, Problems: sourceErrors(s.provider, capProblems(problems))}
	switch {
	case err != nil:
		return res, sourceError(s.provider, err)
	case len(offers) == 0:
		return res, sourceError(s.provider, ErrNoOffers)
	}
	return res, nil
}
