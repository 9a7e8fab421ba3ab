// Package redact keeps secrets out of everything gpucost writes: logs, errors, run-log rows,
// raw payloads, the spool, record folders, reports and the terminal.
//
// A Redactor knows two kinds of secret. The values it is given — API keys, the ClickHouse and
// SMTP passwords, as the configuration loads them — are replaced wherever they appear, also
// URL-escaped. Credentials recognisable by their shape are replaced whatever their value: the
// password of a URL's userinfo (clickhouse://user:PASSWORD@host), a query parameter named like a
// credential (?api_key=, &password=, ;token=), and an Authorization value (Bearer …, Basic …).
//
// One Redactor is built from the configuration and handed to every writer, so there is one
// place where "what is a secret" is decided. Writing through it is cheap when nothing matches:
// Bytes and String return their input unchanged.
package redact

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
)

// Mark replaces every secret.
const Mark = "REDACTED"

// MinSecretLen is the shortest value treated as a secret: a shorter one ("1", "ab") would
// shred every message it is in, and no key or password worth the name is that short.
const MinSecretLen = 4

// credentialName is the name of a query parameter or form field that carries a credential.
const credentialName = `api[_-]?key|apikey|key|token|access[_-]?token|auth|secret|password|passwd|pwd|signature|sig`

var (
	credentialParam = regexp.MustCompile(`(?i)^(?:` + credentialName + `)$`)
	// The value of a credential parameter in a URL or a DSN, up to the next separator.
	credentialValue = regexp.MustCompile(`(?i)([?&;](?:` + credentialName + `)=)[^&#;\s"'<>]+`)
	// The password of a URL's userinfo: scheme://user:PASSWORD@host.
	userinfoPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s"'<>]*:)[^@/\s"'<>]+@`)
	// An Authorization header's credentials, or a bare bearer token.
	authorization = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{8,}`)
)

// IsCredentialParam reports whether a query parameter of this name carries a credential.
func IsCredentialParam(name string) bool { return credentialParam.MatchString(name) }

// Redactor replaces secrets. The zero value and nil redact credentials by their shape only. A
// Redactor is safe for concurrent use, Add included: a process makes one at start, wraps its
// output in it, and adds the secrets as its configuration loads them.
type Redactor struct {
	mu     sync.Mutex               // serializes Add
	values atomic.Pointer[[][]byte] // the secrets and their URL-escaped forms, longest first
}

// New returns a Redactor of the given secret values; empty and too-short values are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes more values secret; empty and too-short values are ignored. On nil it does
// nothing.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var values [][]byte
	if old := r.values.Load(); old != nil {
		values = slices.Clone(*old)
	}
	for _, s := range secrets {
		if len(s) < MinSecretLen {
			continue
		}
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			if !slices.ContainsFunc(values, func(b []byte) bool { return string(b) == v }) {
				values = append(values, []byte(v))
			}
		}
	}
	slices.SortFunc(values, func(a, b []byte) int { return len(b) - len(a) })
	r.values.Store(&values)
}

// secrets returns the current secret values.
func (r *Redactor) secrets() [][]byte {
	if r == nil {
		return nil
	}
	if v := r.values.Load(); v != nil {
		return *v
	}
	return nil
}

// Bytes returns b with every secret replaced by Mark. It returns b itself when b holds none.
func (r *Redactor) Bytes(b []byte) []byte {
	out := b
	for _, v := range r.secrets() {
		if bytes.Contains(out, v) {
			out = bytes.ReplaceAll(out, v, []byte(Mark))
		}
	}
	return redactShapes(out)
}

// A shape is a credential recognised by its form: the expression that finds it, its
// replacement, the lower-case literals one of which every match contains, and the bytes one
// of which every match contains in any case (a cheap first test of a piece).
type shape struct {
	re       *regexp.Regexp
	repl     []byte
	literals [][]byte
	hint     string
}

var shapes = []shape{
	{credentialValue, []byte("${1}" + Mark), [][]byte{[]byte("=")}, "="},
	{userinfoPassword, []byte("${1}" + Mark + "@"), [][]byte{[]byte("://")}, ":"},
	{authorization, []byte("${1}${2}" + Mark), [][]byte{[]byte("bearer"), []byte("basic"), []byte("token")}, "bBtT"},
}

// minShapeLen is the length of the shortest match of any shape ("&key=x").
const minShapeLen = 6

// byteClass tells, for each byte, whether it cuts pieces (pieceBreak: no shape's match
// contains a quote or an angle bracket) and which shapes' hints it is (bit 1<<i for shapes[i]).
var byteClass = func() (c [256]uint8) {
	for _, b := range []byte(`"'<>`) {
		c[b] = pieceBreak
	}
	for i, s := range shapes {
		for _, b := range []byte(s.hint) {
			c[b] |= 1 << i
		}
	}
	return c
}()

const pieceBreak = 0x80

// redactShapes replaces the shapes in b. Go's regexp scans such expressions at tens of MB/s,
// too slow for every response body (up to http.max_body_bytes), so b is cut into pieces at the
// characters no match spans (a JSON string, an HTML attribute or text run is a piece of its
// own) and an expression runs only on a piece that holds one of its shape's literals. Since no
// match crosses a cut, the result is that of the expressions run over the whole of b. It
// returns b itself when nothing matches.
func redactShapes(b []byte) []byte {
	var out, lower []byte // out stays nil until a piece changes; lower is reused per piece
	copied, start := 0, 0 // b[:copied] is in out; the piece starts at start
	var hints uint8       // the shapes hinted at in the piece so far
	for i := 0; i <= len(b); i++ {
		if i < len(b) {
			if c := byteClass[b[i]]; c&pieceBreak == 0 {
				hints |= c
				continue
			}
		}
		if hints != 0 && i-start >= minShapeLen {
			if red, ok := redactPiece(b[start:i], hints, &lower); ok {
				out = append(append(out, b[copied:start]...), red...)
				copied = i
			}
		}
		start, hints = i+1, 0
	}
	if out == nil {
		return b
	}
	return append(out, b[copied:]...)
}

// redactPiece applies each hinted shape whose literal the piece holds; ok reports a change.
func redactPiece(piece []byte, hints uint8, lower *[]byte) (red []byte, ok bool) {
	*lower = append((*lower)[:0], piece...)
	for i, c := range *lower {
		if 'A' <= c && c <= 'Z' {
			(*lower)[i] = c + 'a' - 'A'
		}
	}
	red = piece
	for i, s := range shapes {
		if hints&(1<<i) == 0 || !slices.ContainsFunc(s.literals, func(l []byte) bool { return bytes.Contains(*lower, l) }) {
			continue
		}
		if s.re.Match(red) {
			red, ok = s.re.ReplaceAll(red, s.repl), true
		}
	}
	return red, ok
}

// String returns s with every secret replaced by Mark.
func (r *Redactor) String(s string) string {
	if b := r.Bytes([]byte(s)); string(b) != s {
		return string(b)
	}
	return s
}

// Error returns err unchanged when its message holds no secret, else an error with the
// redacted message that still unwraps to err (errors.Is and errors.As keep working).
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Writer returns a writer that redacts what it writes to w. Each Write is redacted on its own,
// so a secret split across two writes would pass: write whole lines (fmt.Fprintf, tabwriter,
// encoding/json and slog all do). It reports len(p) written when w took the redacted bytes.
func (r *Redactor) Writer(w io.Writer) io.Writer { return &writer{r: r, w: w} }

type writer struct {
	r *Redactor
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	red := w.r.Bytes(p)
	n, err := w.w.Write(red)
	switch {
	case err != nil:
		return min(n, len(p)), err
	case n < len(red):
		return n, io.ErrShortWrite
	}
	return len(p), nil
}

// Handler returns an slog.Handler that redacts the message and every attribute (strings,
// errors, Stringers, URLs and groups) before h sees them.
func (r *Redactor) Handler(h slog.Handler) slog.Handler { return &handler{r: r, h: h} }

type handler struct {
	r *Redactor
	h slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &handler{r: h.r, h: h.h.WithAttrs(red)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{r: h.r, h: h.h.WithGroup(name)}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.String(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, h.r.String(x.String()))
		case []byte:
			return slog.String(a.Key, string(h.r.Bytes(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// URL returns raw with its userinfo password, credential parameters and known secrets
// replaced. A string that does not parse as a URL is redacted as text.
func (r *Redactor) URL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Mark)
			raw = u.String()
		}
	}
	return r.String(raw)
}

// Contains reports whether text holds one of r's secret values (shapes aside): for the checks
// that scan output for leaks.
func (r *Redactor) Contains(text []byte) bool {
	return slices.ContainsFunc(r.secrets(), func(v []byte) bool { return bytes.Contains(text, v) })
}
