// Package redact keeps secrets out of everything gpucost writes: logs, errors, run-log rows,
// raw payloads, the spool, record folders, reports and the terminal.
//
// A Redactor knows two kinds of secret. The values it is given — API keys, the ClickHouse and
// SMTP passwords, as the configuration loads them — are replaced wherever they appear, also in
// the forms a writer turns them into (URL-escaped, quoted in JSON or in a log line).
// Credentials recognisable by their shape are replaced whatever their value: the password of a
// URL's userinfo (clickhouse://user:PASSWORD@host), a parameter named like a credential
// (?api_key=, &password=, #access_token=, "api_key": "…", X-Api-Key: …), and an Authorization
// value (Bearer …, Basic …).
//
// Shapes are for messages only: logs, errors, URLs, the run log. Data — a provider's answer,
// the offers parsed from it, a table printed on stdout — is scrubbed of the values alone, since
// there a shape is ordinary text ("Basic Performance tier", "token throughput"), and the one
// secret a provider can echo is the key it was sent, which is a value.
//
// One Redactor is built when the process starts and handed to every writer, so there is one
// place where "what is a secret" is decided. Scrubbing is cheap when nothing matches: Bytes,
// String and Data return their input unchanged.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Mark replaces every secret.
const Mark = "REDACTED"

// MinSecretLen is the shortest value treated as a secret. A shorter one ("1000", "admin") is
// also a word or a number of the output, which it would shred, and of the data, which it would
// corrupt; it is masked only where its shape shows it (a DSN's password).
const MinSecretLen = 8

// credentialName is the name of a parameter, field or header that carries a credential.
const credentialName = `api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|client[_-]?secret|auth|secret|password|passwd|pwd|signature|sig`

var (
	credentialParam = regexp.MustCompile(`(?i)^(?:` + credentialName + `)$`)
	// A credential parameter in a URL, a DSN, a form or a message, up to the next separator.
	credentialValue = regexp.MustCompile(`(?i)((?:^|[?&;#\s])(?:` + credentialName + `)=)[^&#;\s"'<>]+`)
	// A credential field of JSON or a header: "api_key": "…", X-Api-Key: ….
	credentialField = regexp.MustCompile(`(?i)((?:^|[\s{,"])(?:x-)?(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|client[_-]?secret|password|secret)"?\s*:\s*"?)[^"\s,;&}]{4,}`)
	// The password of a URL's userinfo: scheme://user:PASSWORD@host.
	userinfoPassword = regexp.MustCompile(`(://[^:/@\s"'<>]*:)[^/\s"'<>]+@`)
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
	values atomic.Pointer[[][]byte] // the secrets in every written form, longest first
}

// New returns a Redactor of the given secret values; too-short values are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes more values secret; too-short values are ignored. On nil it does nothing.
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
		for _, v := range writtenForms(s) {
			if !slices.ContainsFunc(values, func(b []byte) bool { return string(b) == v }) {
				values = append(values, []byte(v))
			}
		}
	}
	slices.SortFunc(values, func(a, b []byte) int { return len(b) - len(a) })
	r.values.Store(&values)
}

// writtenForms are s as writers put it down: itself, URL-escaped (query and path), and quoted
// in JSON (with and without HTML escapes) and by strconv (slog's text handler), quotes aside.
func writtenForms(s string) []string {
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	quoted := strconv.Quote(s)
	forms = append(forms, quoted[1:len(quoted)-1])
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(s) // a string always encodes
		q := strings.TrimSuffix(b.String(), "\n")
		forms = append(forms, q[1:len(q)-1])
	}
	return forms
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

// Data returns b with every secret value replaced by Mark, shapes left alone: for data (a
// response body, a field parsed from one, a table). It returns b itself when b holds none.
func (r *Redactor) Data(b []byte) []byte {
	out := b
	for _, v := range r.secrets() {
		if bytes.Contains(out, v) {
			out = bytes.ReplaceAll(out, v, []byte(Mark))
		}
	}
	return out
}

// DataString is Data for a string.
func (r *Redactor) DataString(s string) string {
	if b := r.Data([]byte(s)); string(b) != s {
		return string(b)
	}
	return s
}

// Bytes returns b with every secret value and every credential shape replaced by Mark: for a
// message (a log line, an error, a URL). It returns b itself when b holds none.
func (r *Redactor) Bytes(b []byte) []byte {
	out := r.Data(b)
	for _, s := range []struct {
		re   *regexp.Regexp
		repl string
	}{
		{credentialValue, "${1}" + Mark},
		{credentialField, "${1}" + Mark},
		{userinfoPassword, "${1}" + Mark + "@"},
		{authorization, "${1}${2}" + Mark},
	} {
		if s.re.Match(out) {
			out = s.re.ReplaceAll(out, []byte(s.repl))
		}
	}
	return out
}

// String is Bytes for a string.
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

// maxHeldBack bounds what a Writer holds of a line it has not seen the end of.
const maxHeldBack = 64 << 10

// A Writer redacts what it writes to its underlying writer, line by line, so that a secret is
// found whole however the text was cut into writes (a bufio.Writer flushes every 4 KiB, a
// tabwriter writes cell by cell). A line longer than 64 KiB is written on in parts, holding back
// enough of its end to find a secret value cut by the part. Flush writes what is held back. A
// Writer is safe for concurrent use.
type Writer struct {
	r      *Redactor
	w      io.Writer
	redact func([]byte) []byte

	mu   sync.Mutex
	held []byte // the start of a line not yet written
}

// Writer returns a Writer of messages (values and shapes redacted) to w: for stderr and logs.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{r: r, w: w, redact: r.Bytes} }

// DataWriter returns a Writer of data (values redacted) to w: for stdout, where tables, CSV,
// JSON and Parquet go.
func (r *Redactor) DataWriter(w io.Writer) *Writer { return &Writer{r: r, w: w, redact: r.Data} }

// Write takes p; it writes every line p completes. It reports len(p) unless writing failed.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = append(w.held, p...)
	end := bytes.LastIndexByte(w.held, '\n') + 1
	if end == 0 {
		if len(w.held) < maxHeldBack {
			return len(p), nil
		}
		// A long line: write all but what could be the start of a secret value.
		longest := 0
		if v := w.r.secrets(); len(v) > 0 {
			longest = len(v[0])
		}
		end = len(w.held) - max(longest-1, 0)
	}
	if err := w.write(w.held[:end]); err != nil {
		return 0, err
	}
	w.held = append(w.held[:0], w.held[end:]...)
	return len(p), nil
}

// Flush writes the line held back, if any.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.write(w.held)
	w.held = w.held[:0]
	return err
}

func (w *Writer) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	red := w.redact(b)
	n, err := w.w.Write(red)
	if err == nil && n < len(red) {
		err = io.ErrShortWrite
	}
	return err
}
