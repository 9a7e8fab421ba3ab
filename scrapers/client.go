package scrapers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/go-retryablehttp"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
)

// DefaultUserAgent is sent when neither the client nor the request sets one. cmd/gpucost puts
// the build version in ClientConfig.UserAgent.
const DefaultUserAgent = "gpucost/dev (+https://github.com/gpucost/gpucost)"

// BrowserUserAgent is a browser-like User-Agent for hosts that refuse bots (CoreWeave answers
// 403 to library user agents, docs/providers.md §4.1).
const BrowserUserAgent = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36"

// ClientConfig configures the shared HTTP client. Zero fields take the defaults of
// DefaultClientConfig.
type ClientConfig struct {
	UserAgent      string        // default DefaultUserAgent; a Request may override it
	RetryMax       int           // retries after the first attempt (0 = default 4; negative = none)
	RetryWaitMin   time.Duration // first back-off (default 500ms)
	RetryWaitMax   time.Duration // back-off cap, also the cap on a honoured Retry-After (default 30s)
	AttemptTimeout time.Duration // one HTTP attempt, headers and body (default 60s); the ctx bounds the whole fetch
	MaxBodyBytes   int64         // response body limit; over it is ErrBodyTooLarge, never a truncated parse (default 8 MiB)
	// MaxSourceBytes is the budget of response bytes one source may read in one Fetch, over all
	// its requests (default 32 MiB). Every body counts, error answers included; a source that
	// would read more fails with ErrOverBudget. With MaxBodyBytes and MaxSourceOffers it bounds the
	// memory a run takes whatever the providers send (docs/providers.md §6.2).
	MaxSourceBytes int64
	// MaxSourceOffers is the most offers one source may produce in one Fetch (default
	// MaxOffers); a source that would produce more fails with ErrTooManyOffers.
	MaxSourceOffers int

	// Logger receives retryablehttp's and the client's logs, secrets redacted. Nil discards.
	Logger *slog.Logger
	// Redactor scrubs secrets from every log line, error and recorded URL (values and shapes),
	// and from every response body before the source reads it and every recorded body (values:
	// a body is data). It holds the process's API keys and passwords, and learns each credential
	// the client sends in an Authorization header. Nil: a Redactor of the client's own.
	Redactor *redact.Redactor

	// CheckRetry decides whether to retry (default retryablehttp.DefaultRetryPolicy: 429, 5xx
	// except 501, connection errors and timeouts; never once ctx is done).
	CheckRetry retryablehttp.CheckRetry
	// Backoff computes the wait before a retry (default Backoff: exponential with jitter,
	// honouring Retry-After).
	Backoff retryablehttp.Backoff

	// Transport is the base transport under the retries (default a pooled cleanhttp transport).
	// Tests point it at fakes.
	Transport http.RoundTripper

	// RecordDir, when set, saves every response of the client to that folder (see record.go).
	RecordDir string
	// ReplayDir, when set, serves every request from a recorded folder instead of the network.
	// RecordDir and ReplayDir are mutually exclusive.
	ReplayDir string

	// Now is the clock (default time.Now).
	Now func() time.Time
}

// DefaultClientConfig returns the production defaults.
func DefaultClientConfig() ClientConfig {
	return ClientConfig{
		UserAgent:       DefaultUserAgent,
		RetryMax:        4,
		RetryWaitMin:    500 * time.Millisecond,
		RetryWaitMax:    30 * time.Second,
		AttemptTimeout:  60 * time.Second,
		MaxBodyBytes:    8 << 20,
		MaxSourceBytes:  32 << 20,
		MaxSourceOffers: MaxOffers,
	}
}

// Validate reports a configuration that cannot work.
func (c ClientConfig) Validate() error {
	switch {
	case c.RecordDir != "" && c.ReplayDir != "":
		return errors.New("client: record and replay folders are mutually exclusive")
	case c.RetryWaitMin < 0 || c.RetryWaitMax < 0 || c.RetryWaitMax < c.RetryWaitMin:
		return fmt.Errorf("client: retry waits min %v max %v: want 0 <= min <= max", c.RetryWaitMin, c.RetryWaitMax)
	case c.AttemptTimeout < 0 || c.MaxBodyBytes < 0 || c.MaxSourceBytes < 0 || c.MaxSourceOffers < 0:
		return errors.New("client: negative attempt timeout, body limit, source byte budget or offer cap")
	}
	return nil
}

func (c ClientConfig) withDefaults() ClientConfig {
	d := DefaultClientConfig()
	if c.UserAgent == "" {
		c.UserAgent = d.UserAgent
	}
	switch {
	case c.RetryMax == 0:
		c.RetryMax = d.RetryMax
	case c.RetryMax < 0:
		c.RetryMax = 0
	}
	if c.RetryWaitMin == 0 && c.RetryWaitMax == 0 {
		c.RetryWaitMin, c.RetryWaitMax = d.RetryWaitMin, d.RetryWaitMax
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = d.AttemptTimeout
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	if c.MaxSourceBytes == 0 {
		c.MaxSourceBytes = d.MaxSourceBytes
	}
	if c.MaxSourceOffers == 0 {
		c.MaxSourceOffers = d.MaxSourceOffers
	}
	if c.CheckRetry == nil {
		c.CheckRetry = retryablehttp.DefaultRetryPolicy
	}
	if c.Backoff == nil {
		c.Backoff = Backoff
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Client is the one HTTP client every source fetches through: retries with back-off, a body
// limit, a User-Agent, redaction of secrets, attempt counting, and optional recording or replay
// of everything it fetches. It is safe for concurrent use.
//
// JSON sources call Do. HTML sources built on colly plug in Transport(name) with
// collector.WithTransport: colly then keeps its cookie jar, its timeout and its redirect
// checks, and because the retrying client never follows redirects itself
// (CheckRedirect = ErrUseLastResponse), colly's AllowedDomains holds on redirects too
// (docs/providers.md §6.5). Set the collector's MaxBodySize to 0 and rely on the client's
// limit, which fails the request instead of truncating the page, and set the collector's
// UserAgent, since colly always sends its own.
type Client struct {
	cfg    ClientConfig
	logger *slog.Logger
	red    *redact.Redactor
	retry  http.RoundTripper // the retrying transport over the base transport
	rec    *recorder
	rep    *replayer
}

// NewClient builds a client. It fails only on an invalid configuration.
func NewClient(cfg ClientConfig) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	logger := orDiscard(cfg.Logger)
	red := cfg.Redactor
	if red == nil {
		red = redact.New() // it learns the credentials the client sends
	}

	base := cfg.Transport
	if base == nil {
		base = cleanhttp.DefaultPooledTransport()
	}
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{
		Transport: base,
		Timeout:   cfg.AttemptTimeout,
		// Redirects are the caller's business: Do reports them as a status, colly applies
		// AllowedDomains to them. The inner client following them would bypass colly.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	rc.RetryMax = cfg.RetryMax
	rc.RetryWaitMin = cfg.RetryWaitMin
	rc.RetryWaitMax = cfg.RetryWaitMax
	rc.CheckRetry = cfg.CheckRetry
	rc.Backoff = cfg.Backoff
	rc.Logger = leveledLogger{l: logger, red: red}
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler // the last response reaches us; we judge the status
	rc.RequestLogHook = func(_ retryablehttp.Logger, req *http.Request, _ int) {
		countAttempt(req.Context())
	}

	c := &Client{cfg: cfg, logger: logger, red: red, retry: rc.StandardClient().Transport}
	if cfg.RecordDir != "" {
		c.rec = newRecorder(cfg.RecordDir, red)
	}
	if cfg.ReplayDir != "" {
		c.rep = newReplayer(cfg.ReplayDir, red)
	}
	return c, nil
}

// Request is one fetch.
type Request struct {
	Source    string // provider name: names the error and the recording folder
	Method    string // default GET
	URL       string
	Header    http.Header
	Body      []byte
	UserAgent string        // overrides the client's
	Timeout   time.Duration // bound on the whole fetch, retries included, within ctx (0 = ctx only)
	// Credentials says the answer carries credentials (an OAuth2 token response): a recording
	// keeps its body with every credential-shaped field masked (redact.Redactor.Bytes), and the
	// source must not keep it as a payload.
	Credentials bool
}

// Response is a fully read, size-checked 2xx response.
type Response struct {
	URL         string // redacted
	StatusCode  int
	ContentType string
	Body        []byte
	Attempts    int // HTTP attempts this fetch took (1 when replayed)
	FetchedAt   time.Time
}

// Payload returns the response as a raw payload. Its run and provider are the pipeline's to
// stamp, as it does on every row of a batch.
func (r *Response) Payload() schema.RawPayload {
	return schema.RawPayload{
		URL:       r.URL,
		Status:    uint16(r.StatusCode),
		FetchedAt: r.FetchedAt.UTC(),
		Body:      r.Body,
	}
}

// Do fetches req under ctx. It returns an error for transport failures (after retries), for a
// non-2xx status (*StatusError; the response is still returned so its body can be kept as a
// payload), for a body over the limit (ErrBodyTooLarge) or the source's budget (ErrOverBudget),
// and for a body shorter than its Content-Length (ErrIncomplete). The body is read once, into a
// buffer of its announced size when there is one. URLs and messages in errors are redacted. Do
// does not wrap errors as *Error: the source does.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	ctx, attempts := WithAttemptCounter(ctx)
	if req.Credentials {
		ctx = context.WithValue(ctx, credentialsKey{}, true)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	redURL := c.red.URL(req.URL)
	hreq, err := http.NewRequestWithContext(ctx, method, req.URL, bytes.NewReader(req.Body))
	if err != nil {
		return nil, c.red.Error(fmt.Errorf("building request for %s: %w", redURL, err))
	}
	if req.Body == nil {
		hreq.Body, hreq.GetBody, hreq.ContentLength = http.NoBody, nil, 0
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	if req.UserAgent != "" {
		hreq.Header.Set("User-Agent", req.UserAgent)
	}
	// The credential a request sends is the one a provider can echo back: it is a secret by value
	// from now on, whatever the Redactor was told.
	for _, v := range hreq.Header.Values("Authorization") {
		if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			v = cred // "Bearer KEY", "Basic …": the credential after the scheme
		}
		c.red.AddSent(strings.TrimSpace(v))
	}

	start := c.cfg.Now()
	resp, err := c.roundTrip(req.Source, hreq)
	if err != nil {
		return nil, c.red.Error(fmt.Errorf("fetching %s after %d attempt(s): %w", redURL, attempts.Count(), err))
	}
	defer resp.Body.Close()
	body, err := readBody(resp.Body, resp.ContentLength)
	if err != nil {
		return nil, c.red.Error(fmt.Errorf("reading %s: %w", redURL, err))
	}
	// A provider may echo a secret anywhere in an answer. Scrubbed here, before a parser reads
	// it, nothing derived from the body can hold one: a parser that lower-cases a region or
	// clips a name would take a key past any later match on its value. The body is data: its
	// secret values go, shapes stay ("Basic Performance tier" is a product, not a credential). A
	// replayed body (scrubbed when recorded) parses the same as the live one did.
	body = c.red.Data(body)
	out := &Response{
		URL:         redURL,
		StatusCode:  resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Body:        body,
		Attempts:    attempts.Count(),
		FetchedAt:   start.UTC(),
	}
	c.logger.Debug("Fetched", "source", req.Source, "url", redURL, "status", resp.StatusCode,
		"bytes", len(body), "attempts", out.Attempts, "duration", c.cfg.Now().Sub(start))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, &StatusError{URL: redURL, StatusCode: resp.StatusCode, Attempts: out.Attempts, Snippet: c.red.String(snippet(body))}
	}
	return out, nil
}

// Transport returns an http.RoundTripper for source that goes through the client (retries,
// body limit, User-Agent default, recording or replay). Give it to colly with
// collector.WithTransport(client.Transport("coreweave")).
func (c *Client) Transport(source string) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return c.roundTrip(source, req)
	})
}

// RedactURL returns raw with secrets removed, for logs, errors and RawPayload.URL.
func (c *Client) RedactURL(raw string) string { return c.red.URL(raw) }

// Redact returns s with secrets removed.
func (c *Client) Redact(s string) string { return c.red.String(s) }

// offerCap returns ErrTooManyOffers when n offers exceed the source's cap (MaxSourceOffers).
func (c *Client) offerCap(n int) error { return offerCap(n, c.cfg.MaxSourceOffers) }

// MaxBodyBytes is the client's response body limit.
func (c *Client) MaxBodyBytes() int64 { return c.cfg.MaxBodyBytes }

// sourceBudget is what one source may read in one Fetch (ClientConfig.MaxSourceBytes), shared
// by all its requests. It travels in the Fetch's context, like the attempt counter.
type sourceBudget struct {
	limit int64
	used  atomic.Int64
}

type budgetKey struct{}

// withBudget returns ctx carrying a fresh byte budget for one Fetch of a source, unless ctx
// carries one already (the outer Fetch's budget holds).
func (c *Client) withBudget(ctx context.Context) context.Context {
	if _, ok := ctx.Value(budgetKey{}).(*sourceBudget); ok {
		return ctx
	}
	return context.WithValue(ctx, budgetKey{}, &sourceBudget{limit: c.cfg.MaxSourceBytes})
}

// bodyLimits bounds one response body read under ctx: at most the client's body limit and what
// is left of the source's budget (when ctx carries one).
func (c *Client) bodyLimits(ctx context.Context, body io.ReadCloser) *limitedBody {
	b := &limitedBody{rc: body, max: c.cfg.MaxBodyBytes}
	b.budget, _ = ctx.Value(budgetKey{}).(*sourceBudget)
	return b
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// roundTrip is the single path of every request: replay, or live with retries, body limit and
// optional recording.
func (c *Client) roundTrip(source string, req *http.Request) (*http.Response, error) {
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", c.cfg.UserAgent)
	}
	if source == "" {
		source = req.URL.Hostname()
	}
	if c.rep != nil {
		reqBody, err := requestBody(req)
		if err != nil {
			return nil, err
		}
		countAttempt(req.Context())
		resp, err := c.rep.serve(source, req, reqBody)
		if err != nil {
			return nil, err
		}
		// A replayed body passes the same limits as a live one: a replay parses as the run did.
		return c.limit(req.Context(), resp)
	}
	var reqBody []byte
	if c.rec != nil {
		var err error
		if reqBody, err = requestBody(req); err != nil {
			return nil, err
		}
	}
	resp, err := c.retry.RoundTrip(req)
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, err
	}
	if resp, err = c.limit(req.Context(), resp); err != nil || c.rec == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if err := c.rec.save(source, req, reqBody, resp, body, c.cfg.Now(), carriesCredentials(req.Context())); err != nil {
		return nil, fmt.Errorf("recording response: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

type credentialsKey struct{}

// carriesCredentials reports whether the request under ctx was made with Request.Credentials.
func carriesCredentials(ctx context.Context) bool {
	v, _ := ctx.Value(credentialsKey{}).(bool)
	return v
}

// requestBody reads req's body and puts it back.
func requestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return b, nil
}

// limit puts resp's body under the body limit and the source's budget: an announced length
// over either fails before anything is read, and the reader fails (rather than truncates) once
// either is passed.
func (c *Client) limit(ctx context.Context, resp *http.Response) (*http.Response, error) {
	b := c.bodyLimits(ctx, resp.Body)
	b.announced = resp.ContentLength
	if err := b.check(resp.ContentLength); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("Content-Length %d: %w", resp.ContentLength, err)
	}
	resp.Body = b
	return resp, nil
}

// limitedBody fails (rather than truncates) once more than max bytes are read, or more than the
// source's budget allows, and names a body cut short of its Content-Length ErrIncomplete.
type limitedBody struct {
	rc        io.ReadCloser
	max       int64         // the body limit
	budget    *sourceBudget // nil: no budget
	announced int64         // Content-Length, -1 when unknown
	read      int64
	err       error // sticky
}

// check reports whether the body is past a limit once it holds total bytes (read so far, or
// announced by Content-Length before anything is read); the budget has been charged with what
// was read so far.
func (b *limitedBody) check(total int64) error {
	if total > b.max {
		return fmt.Errorf("%w (%d bytes)", ErrBodyTooLarge, b.max)
	}
	if b.budget == nil {
		return nil
	}
	if spent := b.budget.used.Load() - b.read + total; spent > b.budget.limit {
		return fmt.Errorf("%w: %d bytes with this response, budget %d", ErrOverBudget, spent, b.budget.limit)
	}
	return nil
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// One byte past the tighter bound is enough to tell "over" from "exactly at".
	room := b.max - b.read
	if b.budget != nil {
		room = min(room, b.budget.limit-b.budget.used.Load())
	}
	if int64(len(p)) > room+1 {
		p = p[:max(room+1, 1)]
	}
	n, err := b.rc.Read(p)
	if b.budget != nil {
		b.budget.used.Add(int64(n))
	}
	b.read += int64(n)
	if cerr := b.check(b.read); cerr != nil {
		b.err = cerr
		return n, cerr
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		if b.announced >= 0 {
			err = fmt.Errorf("%w: the body ended after %d of the %d bytes its Content-Length announced", ErrIncomplete, b.read, b.announced)
		} else {
			err = fmt.Errorf("%w: the connection closed inside a chunk, after %d bytes", ErrIncomplete, b.read)
		}
		b.err = err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// readBody reads a whole body: into a buffer of exactly the announced size when there is one
// (the limits were checked against it), else growing as it arrives.
func readBody(r io.Reader, announced int64) ([]byte, error) {
	if announced < 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, announced)
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: the body ended before the %d bytes its Content-Length announced", ErrIncomplete, announced)
		}
		return nil, err
	}
	return buf, nil
}

// Backoff is the default retry wait: exponential from min, capped at max, with jitter in
// [d/2, d]; a Retry-After header on 429/503 is honoured up to max (Vast sends none, others do).
func Backoff(minWait, maxWait time.Duration, attemptNum int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return min(d, maxWait)
		}
	}
	d := minWait
	for i := 0; i < attemptNum && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter parses a Retry-After value: delay seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// AttemptCounter counts the HTTP attempts made under a context (see WithAttemptCounter).
type AttemptCounter struct {
	n      atomic.Int64
	parent *AttemptCounter
}

// Count returns the attempts counted so far.
func (a *AttemptCounter) Count() int { return int(a.n.Load()) }

type attemptKey struct{}

// WithAttemptCounter returns a context under which every HTTP attempt through a Client (retries
// included, replayed requests counting one) increments the returned counter, and any counter of
// an enclosing context. Sources use it to fill Extract.Attempts, colly ones too: colly passes
// its StdlibContext to each request.
func WithAttemptCounter(ctx context.Context) (context.Context, *AttemptCounter) {
	parent, _ := ctx.Value(attemptKey{}).(*AttemptCounter)
	a := &AttemptCounter{parent: parent}
	return context.WithValue(ctx, attemptKey{}, a), a
}

func countAttempt(ctx context.Context) {
	a, _ := ctx.Value(attemptKey{}).(*AttemptCounter)
	for ; a != nil; a = a.parent {
		a.n.Add(1)
	}
}

// snippet returns the start of a body as one printable line, for error messages.
func snippet(b []byte) string {
	const n = 200
	if len(b) > n {
		b = b[:n]
	}
	return normalizeSpace(strings.ToValidUTF8(string(b), ""))
}

// leveledLogger hands the injected slog.Logger to retryablehttp (docs/providers.md §6.6)
// through a thin adapter that redacts every attribute: retryablehttp logs full URLs and
// *url.Error values, which can carry an api_key query parameter. Its per-attempt "request
// failed" is a warning: the source reports the final outcome.
type leveledLogger struct {
	l   *slog.Logger
	red *redact.Redactor
}

func (l leveledLogger) Error(msg string, kv ...any) { l.l.Warn(msg, l.scrub(kv)...) }
func (l leveledLogger) Warn(msg string, kv ...any)  { l.l.Warn(msg, l.scrub(kv)...) }
func (l leveledLogger) Info(msg string, kv ...any)  { l.l.Info(msg, l.scrub(kv)...) }
func (l leveledLogger) Debug(msg string, kv ...any) { l.l.Debug(msg, l.scrub(kv)...) }

func (l leveledLogger) scrub(kv []any) []any {
	out := make([]any, len(kv))
	for i, v := range kv {
		switch v := v.(type) {
		case string:
			out[i] = l.red.String(v)
		case error:
			out[i] = l.red.String(v.Error())
		case fmt.Stringer:
			out[i] = l.red.String(v.String())
		default:
			out[i] = v
		}
	}
	return out
}
