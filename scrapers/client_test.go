package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/scrapers"
)

func TestBackoff(t *testing.T) {
	resp := func(code int, retryAfter string) *http.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &http.Response{StatusCode: code, Header: h}
	}
	tests := []struct {
		name     string
		attempt  int
		resp     *http.Response
		min, max time.Duration
	}{
		{"first retry: jitter in [min/2, min]", 0, nil, 50 * time.Millisecond, 100 * time.Millisecond},
		{"exponential", 3, resp(500, ""), 400 * time.Millisecond, 800 * time.Millisecond},
		{"capped at max", 30, resp(502, ""), 5 * time.Second, 10 * time.Second},
		{"Retry-After seconds honoured on 429", 0, resp(429, "3"), 3 * time.Second, 3 * time.Second},
		{"Retry-After honoured on 503", 0, resp(503, "2"), 2 * time.Second, 2 * time.Second},
		{"Retry-After capped at max", 0, resp(429, "3600"), 10 * time.Second, 10 * time.Second},
		{"Retry-After date in the past", 0, resp(429, "Fri, 31 Dec 1999 23:59:59 GMT"), 0, 0},
		{"garbage Retry-After falls back", 1, resp(429, "soon"), 100 * time.Millisecond, 200 * time.Millisecond},
		{"Retry-After ignored on 500", 0, resp(500, "9"), 50 * time.Millisecond, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 50 {
				d := scrapers.Backoff(100*time.Millisecond, 10*time.Second, tt.attempt, tt.resp)
				if d < tt.min || d > tt.max {
					t.Fatalf("Backoff = %v, want in [%v, %v]", d, tt.min, tt.max)
				}
			}
		})
	}
}

func TestClientDo(t *testing.T) {
	tests := []struct {
		name      string
		handler   func(n int64, w http.ResponseWriter, r *http.Request)
		cfg       scrapers.ClientConfig
		req       scrapers.Request
		timeout   time.Duration
		wantErr   error
		wantBody  string
		attempts  int
		maxTook   time.Duration
		wantInErr string
	}{
		{name: "429 then success", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "ok")
		}, wantBody: "ok", attempts: 2},
		{name: "500s until retries run out", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance", 503)
		}, cfg: scrapers.ClientConfig{RetryMax: 3}, wantErr: scrapers.ErrStatus, attempts: 4, wantInErr: "HTTP 503 after 4 attempt(s): down for maintenance"},
		{name: "404 is not retried", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, wantErr: scrapers.ErrStatus, attempts: 1},
		{name: "hanging server: ctx deadline wins", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			hang(w, r)
		}, timeout: 200 * time.Millisecond, wantErr: context.DeadlineExceeded, maxTook: 2 * time.Second},
		{name: "request timeout bounds the whole fetch", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			hang(w, r)
		}, req: scrapers.Request{Timeout: 200 * time.Millisecond}, wantErr: context.DeadlineExceeded, maxTook: 2 * time.Second},
		{name: "attempt timeout is retried, then gives up", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			hang(w, r)
		}, cfg: scrapers.ClientConfig{AttemptTimeout: 50 * time.Millisecond, RetryMax: 2}, attempts: 3, wantInErr: "Timeout", maxTook: 2 * time.Second},
		{name: "body at the limit is fine", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("x"), 1000))
		}, cfg: scrapers.ClientConfig{MaxBodyBytes: 1000}, wantBody: strings.Repeat("x", 1000), attempts: 1},
		{name: "chunked body over the limit is an error, not a truncation", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("x"), 600))
			w.(http.Flusher).Flush()
			w.Write(bytes.Repeat([]byte("x"), 600))
		}, cfg: scrapers.ClientConfig{MaxBodyBytes: 1000}, wantErr: scrapers.ErrBodyTooLarge},
		{name: "Content-Length over the limit fails before reading", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(50<<20))
			w.WriteHeader(200)
			w.Write(make([]byte, 1<<20))
		}, cfg: scrapers.ClientConfig{MaxBodyBytes: 1 << 20}, wantErr: scrapers.ErrBodyTooLarge},
		{name: "truncated body: the server closes early", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			w.Write([]byte(`{"offers": [`))
		}, wantErr: scrapers.ErrIncomplete, wantInErr: "ended after 12 of the 1000 bytes"},
		{name: "chunked body cut: the connection closes inside a chunk", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			conn, buf, _ := w.(http.Hijacker).Hijack()
			buf.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + `{"offers": [`)
			buf.Flush()
			conn.Close()
		}, wantErr: scrapers.ErrIncomplete, wantInErr: "inside a chunk, after 12 bytes"},
		{name: "redirects are not followed", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://other.example/", http.StatusMovedPermanently)
		}, wantErr: scrapers.ErrStatus, attempts: 1, wantInErr: "HTTP 301"},
		{name: "default User-Agent", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.UserAgent())
		}, wantBody: scrapers.DefaultUserAgent, attempts: 1},
		{name: "per-request User-Agent", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.UserAgent())
		}, req: scrapers.Request{UserAgent: scrapers.BrowserUserAgent}, wantBody: scrapers.BrowserUserAgent, attempts: 1},
		{name: "POST body is resent on retry", handler: func(n int64, w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			if n == 1 {
				w.WriteHeader(502)
				return
			}
			w.Write(b)
		}, req: scrapers.Request{Method: http.MethodPost, Body: []byte(`{"q":1}`)}, wantBody: `{"q":1}`, attempts: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tt.handler(n.Add(1), w, r) }))
			defer srv.Close()
			ctx := timeoutContext(t, tt.timeout)
			c := newTestClient(t, tt.cfg)
			req := tt.req
			req.Source, req.URL = "test", srv.URL+"/x"
			start := time.Now()
			resp, err := c.Do(ctx, req)
			if tt.maxTook > 0 && time.Since(start) > tt.maxTook {
				t.Errorf("took %v, want under %v", time.Since(start), tt.maxTook)
			}
			switch {
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			case tt.wantErr == nil && tt.wantInErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantInErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantInErr)):
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantInErr)
			}
			if tt.wantBody != "" && (resp == nil || string(resp.Body) != tt.wantBody) {
				t.Errorf("body = %v, want %q", resp, tt.wantBody)
			}
			if tt.attempts > 0 && int(n.Load()) != tt.attempts {
				t.Errorf("server saw %d attempts, want %d", n.Load(), tt.attempts)
			}
			if resp != nil && tt.attempts > 0 && resp.Attempts != tt.attempts {
				t.Errorf("response counts %d attempts, want %d", resp.Attempts, tt.attempts)
			}
		})
	}
}

// TestClientRedactsSecrets: keys in URLs (Vast's ?api_key=) and configured secrets never reach
// logs, errors or payload URLs.
func TestClientRedactsSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad key topsecret-123 echoed back", 500)
	}))
	defer srv.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newTestClient(t, scrapers.ClientConfig{Logger: logger, Redactor: redact.New("topsecret-123", "bearer-tok-9"), RetryMax: 1})
	resp, err := c.Do(context.Background(), scrapers.Request{
		Source: "test", URL: srv.URL + "/bundles/?api_key=topsecret-123&q=1",
		Header: http.Header{"Authorization": {"Bearer bearer-tok-9"}},
	})
	if err == nil {
		t.Fatal("want an error")
	}
	for what, s := range map[string]string{"error": err.Error(), "logs": logs.String(), "payload URL": resp.URL} {
		if strings.Contains(s, "topsecret-123") || strings.Contains(s, "bearer-tok-9") {
			t.Errorf("secret in %s: %s", what, s)
		}
	}
	if !strings.Contains(resp.URL, "api_key=REDACTED") || !strings.Contains(logs.String(), "api_key=REDACTED") {
		t.Errorf("redaction marker missing: url %s, logs %s", resp.URL, logs.String())
	}
	// Connection errors carry the URL inside *url.Error: redacted too, still unwrappable.
	_, err = c.Do(context.Background(), scrapers.Request{Source: "test", URL: "http://127.0.0.1:1/?token=topsecret-123"})
	if err == nil || strings.Contains(err.Error(), "topsecret-123") || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("connection error %v: want redacted and unwrappable to ECONNREFUSED", err)
	}
	if strings.Contains(logs.String(), "topsecret-123") {
		t.Errorf("secret in logs: %s", logs.String())
	}
}

func TestWithAttemptCounterNests(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 1 {
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, scrapers.ClientConfig{})
	ctx, outer := scrapers.WithAttemptCounter(context.Background())
	for range 2 {
		if _, err := c.Do(ctx, scrapers.Request{Source: "test", URL: srv.URL}); err != nil {
			t.Fatal(err)
		}
	}
	if outer.Count() != 4 {
		t.Errorf("outer counter %d, want 4", outer.Count())
	}
}

func TestClientConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  scrapers.ClientConfig
		ok   bool
	}{
		{"defaults", scrapers.DefaultClientConfig(), true},
		{"zero", scrapers.ClientConfig{}, true},
		{"record and replay", scrapers.ClientConfig{RecordDir: "a", ReplayDir: "b"}, false},
		{"min above max", scrapers.ClientConfig{RetryWaitMin: time.Second, RetryWaitMax: time.Millisecond}, false},
		{"negative limit", scrapers.ClientConfig{MaxBodyBytes: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scrapers.NewClient(tt.cfg)
			if (err == nil) != tt.ok {
				t.Errorf("NewClient err = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestCollyTransportKeepsAllowedDomains: colly on the client's transport must refuse a redirect
// to a domain outside AllowedDomains (docs/providers.md §6.5): the retrying client does not follow
// redirects itself, so colly's redirect check sees the 3xx.
func TestCollyTransportKeepsAllowedDomains(t *testing.T) {
	var forbiddenHit atomic.Bool
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forbiddenHit.Store(true)
		io.WriteString(w, "<html><body><h1>forbidden page</h1></body></html>")
	}))
	defer foreign.Close()
	// The same server under another host name: localhost is not in AllowedDomains.
	foreignURL := strings.Replace(foreign.URL, "127.0.0.1", "localhost", 1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pricing":
			http.Redirect(w, r, foreignURL+"/steal", http.StatusFound)
		case "/ok":
			io.WriteString(w, "<html><body><h1>prices</h1></body></html>")
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		}
	}))
	defer origin.Close()

	client := newTestClient(t, scrapers.ClientConfig{})
	run := func(path string) (titles []string, errs []error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := colly.NewCollector(colly.AllowedDomains("127.0.0.1"), colly.StdlibContext(ctx), colly.MaxBodySize(0))
		c.WithTransport(client.Transport("test"))
		c.OnHTML("h1", func(e *colly.HTMLElement) { titles = append(titles, e.Text) })
		c.OnError(func(_ *colly.Response, err error) { errs = append(errs, err) })
		if err := c.Visit(origin.URL + path); err != nil {
			errs = append(errs, err)
		}
		c.Wait()
		return titles, errs
	}

	titles, errs := run("/pricing")
	if forbiddenHit.Load() || len(titles) != 0 {
		t.Errorf("the forbidden domain was scraped: %v", titles)
	}
	if len(errs) == 0 || !strings.Contains(errors.Join(errs...).Error(), "Forbidden domain") {
		t.Errorf("errors %v, want colly's Forbidden domain", errs)
	}
	// A redirect inside the allowed domain still works: colly follows it.
	titles, errs = run("/moved")
	if len(errs) != 0 || len(titles) != 1 || titles[0] != "prices" {
		t.Errorf("same-domain redirect: titles %v, errors %v", titles, errs)
	}
}
