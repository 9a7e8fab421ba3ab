package scrapers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
)

// pageFetch fetches one HTML page through colly for a source (docs/providers.md §6.5): a fresh
// collector per run bound to the run's context, AllowedDomains derived from the page URL, one
// request at a time with a delay, the shared client's transport (retries, body limit and the
// source's byte budget, record and replay; redirects are left to colly, so AllowedDomains
// applies to them), colly's own body cap off (the client fails an oversized body instead of
// truncating it), only HTML accepted, and COLLY_* environment variables ignored.
type pageFetch struct {
	source    string
	url       string
	domains   []string
	userAgent string
	timeout   time.Duration
	delay     time.Duration
}

func newPageFetch(source, rawURL, defaultURL, userAgent string, timeout, delay time.Duration) (pageFetch, error) {
	if rawURL == "" {
		rawURL = defaultURL
	}
	p := pageFetch{source: source, url: rawURL, userAgent: userAgent, timeout: timeout, delay: delay}
	if p.userAgent == "" {
		p.userAgent = BrowserUserAgent
	}
	if p.timeout <= 0 {
		p.timeout = 2 * time.Minute
	}
	switch {
	case p.delay == 0:
		p.delay = time.Second
	case p.delay < 0:
		p.delay = 0
	}
	u, err := httpURL("page URL", rawURL, false)
	if err != nil {
		return p, err
	}
	p.domains = pageDomains(u.Hostname())
	return p, nil
}

// httpURL parses a source's configured URL (what names it: "API URL"), which must be an
// absolute http(s) URL, and a base URL without a query when base is set. Its error shows the
// URL with any credentials in it masked.
func httpURL(what, raw string, base bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || (base && u.RawQuery != "") {
		kind := "URL"
		if base {
			kind = "base URL"
		}
		return nil, fmt.Errorf("%s %q is not an absolute http(s) %s", what, (*redact.Redactor)(nil).URL(raw), kind)
	}
	return u, nil
}

// pageDomains allows the page's host and its www/bare twin (lambda.ai ↔ www.lambda.ai), the
// redirect sites commonly add; every other host is refused, redirects included.
func pageDomains(host string) []string {
	host = strings.ToLower(host)
	if bare, ok := strings.CutPrefix(host, "www."); ok {
		return []string{host, bare}
	}
	if net.ParseIP(host) != nil || !strings.Contains(host, ".") {
		return []string{host}
	}
	return []string{host, "www." + host}
}

// offers fetches the page and parses it with parse, the whole fetch of a page source: the
// offers, capped by http.max_source_offers (Client.offerCap), and the problems, every error
// naming source; what it parsed is logged at debug level.
func (p pageFetch) offers(ctx context.Context, client *Client, source string, run schema.Run,
	parse func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error), logger *slog.Logger) (schema.Extract, error) {
	body, res, err := p.fetch(ctx, client)
	if err != nil {
		return res, sourceError(source, err)
	}
	offers, problems, err := parse(body, run, client.RedactURL(p.url))
	if err == nil {
		err = sourceError(source, client.offerCap(len(offers)))
	}
	res.Offers, res.Problems = offers, problems
	if err == nil {
		logger.Debug("Page parsed", "provider", source, "offers", len(offers), "problems", len(problems))
	}
	return res, err
}

// fetch gets the page under ctx and returns its body and the run's bookkeeping (payloads of every
// response, attempts). A non-2xx answer is a *StatusError, a forbidden redirect wraps
// colly.ErrForbiddenDomain, an oversized body ErrBodyTooLarge; ctx's deadline bounds it all.
func (p pageFetch) fetch(ctx context.Context, client *Client) ([]byte, schema.Extract, error) {
	var res schema.Extract
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = client.withBudget(ctx)

	// Not colly.NewCollector: it applies COLLY_* environment variables after the options, which
	// would let the environment lift AllowedDomains, the body cap or redirect rules.
	c := &colly.Collector{}
	c.Init()
	for _, opt := range []colly.CollectorOption{
		colly.StdlibContext(ctx),
		colly.AllowedDomains(p.domains...),
		colly.UserAgent(p.userAgent),
		colly.MaxBodySize(0),
	} {
		opt(c)
	}
	c.SetRequestTimeout(p.timeout)
	c.WithTransport(htmlOnly{client.Transport(p.source)})
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1, Delay: p.delay}); err != nil {
		return nil, res, fmt.Errorf("colly limit rule: %w", err)
	}

	var (
		body    []byte
		got     bool
		failure error
	)
	payload := func(r *colly.Response) {
		if r == nil || r.StatusCode == 0 {
			return
		}
		u := p.url
		if r.Request != nil && r.Request.URL != nil {
			u = r.Request.URL.String()
		}
		res.Payloads = append(res.Payloads, schema.RawPayload{
			URL: client.RedactURL(u), Status: uint16(r.StatusCode), FetchedAt: time.Now().UTC(), Body: r.Body,
		})
	}
	// Every body is scrubbed of secrets before anything reads it, as Client.Do does.
	c.OnResponse(func(r *colly.Response) {
		r.Body = client.red.Data(r.Body)
		payload(r)
		body, got = r.Body, true
	})
	c.OnError(func(r *colly.Response, err error) {
		if failure != nil {
			return
		}
		if r != nil && r.StatusCode >= 300 {
			r.Body = client.red.Data(r.Body)
			payload(r)
			failure = &StatusError{URL: client.RedactURL(p.url), StatusCode: r.StatusCode,
				Attempts: attempts.Count(), Snippet: client.Redact(snippet(r.Body))}
			return
		}
		failure = err
	})
	visitErr := c.Visit(p.url)
	c.Wait()
	res.Attempts = attempts.Count()
	redURL := client.RedactURL(p.url)
	switch {
	case failure != nil:
		var se *StatusError
		if errors.As(failure, &se) {
			return nil, res, failure
		}
		return nil, res, fmt.Errorf("fetching %s after %d attempt(s): %w", redURL, res.Attempts, failure)
	case visitErr != nil:
		return nil, res, fmt.Errorf("fetching %s after %d attempt(s): %w", redURL, res.Attempts, visitErr)
	case !got:
		return nil, res, fmt.Errorf("fetching %s: no response", redURL)
	}
	return body, res, nil
}

// htmlOnly refuses a successful answer that says it is not HTML before colly reads it: the page
// parsers read nothing else, and colly would gunzip a body whose type says gzip itself, past the
// client's body limit.
type htmlOnly struct{ rt http.RoundTripper }

func (h htmlOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.rt.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ct); ct != "" && mt != "text/html" && mt != "application/xhtml+xml" {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: content type %q, want text/html", ErrLayoutChanged, clipLine(ct, 80))
	}
	return resp, nil
}
