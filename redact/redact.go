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
// Shapes are for messages only: logs, errors, URLs, the run log, the configuration printed.
// Data — a provider's answer, the offers parsed from it, a table printed on stdout — is scrubbed
// of the credentials gpucost sends to providers (AddSent: API keys, Authorization values), the
// only secrets an answer can carry back. There a shape is ordinary text ("Basic Performance
// tier", "token throughput"), and a password of the process ("verified", say) could be a word
// of the market.
//
// One Redactor is built when the process starts and handed to every writer, so there is one
// place where "what is a secret" is decided. Scrubbing is cheap when nothing matches: Bytes,
// String and Data return their input unchanged.
package redact

import (
	"bytes"
	"encoding/json"
	"html"
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

// credentialName is the name of a parameter that carries a credential; fieldName that of a
// JSON field or header (not a bare "key": {"key": "gpu_1x_a10"} is a name, not a secret).
const (
	credentialName = `api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|client[_-]?secret|auth|secret|password|passwd|pwd|signature|sig`
	fieldName      = `(?:x-)?(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|auth[_-]?token|client[_-]?secret|token|auth|secret|password|passwd|pwd)`
)

var (
	credentialParam = regexp.MustCompile(`(?i)^(?:` + credentialName + `)$`)
	// A credential parameter in a URL, a DSN, a form or a message, up to the next separator.
	credentialValue = regexp.MustCompile(`(?i)((?:^|[?&;#\s])(?:` + credentialName + `)=)[^&#;\s"'<>]+`)
	// A credential field of JSON ("api_key": "…", escapes and all), of JSON quoted again inside
	// a log line ({\"api_key\":\"…\"}), and of a header or a YAML line (X-Api-Key: …).
	jsonField        = regexp.MustCompile(`(?i)("` + fieldName + `"\s*:\s*")(?:[^"\\]|\\.)+`)
	escapedJSONField = regexp.MustCompile(`(?i)(\\"` + fieldName + `\\"\s*:\s*\\")(?:[^"\\]|\\[^"])+`)
	headerField      = regexp.MustCompile(`(?i)((?:^|[\s{,])` + fieldName + `\s*:\s*)[^"\s,;&}]{4,}`)
	// The password of a URL's userinfo: scheme://user:PASSWORD@host.
	userinfoPassword = regexp.MustCompile(`(://[^:/@\s"'<>]*:)[^/?#\s"'<>]+@`)
	// An Authorization header's credentials, or a bare bearer token.
	authorization = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{8,}`)
)

// IsCredentialParam reports whether a query parameter of this name carries a credential.
func IsCredentialParam(name string) bool { return credentialParam.MatchString(name) }

// Redactor replaces secrets. The zero value and nil redact credentials by their shape only. A
// Redactor is safe for concurrent use, Add included: a process makes one at start, wraps its
// output in it, and adds the secrets as its configuration loads them.
type Redactor struct {
	mu   sync.Mutex               // serializes Add and AddSent
	all  atomic.Pointer[[][]byte] // every secret in every written form, longest first
	sent atomic.Pointer[[][]byte] // the credentials sent to providers, likewise
}

// New returns a Redactor of the given secret values; too-short values are ignored.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes more values secret in messages (a password of the process); too-short values are
// ignored. On nil it does nothing.
func (r *Redactor) Add(secrets ...string) { r.add(false, secrets) }

// AddSent makes more values secret in messages and in data: credentials gpucost sends to a
// provider (an API key), which its answer may carry back. Too-short values are ignored. On nil
// it does nothing.
func (r *Redactor) AddSent(credentials ...string) { r.add(true, credentials) }

func (r *Redactor) add(sent bool, secrets []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	list := &r.all
	if sent {
		list = &r.sent
	}
	known := values(list)
	if !slices.ContainsFunc(secrets, func(s string) bool {
		return len(s) >= MinSecretLen && !slices.ContainsFunc(known, func(b []byte) bool { return string(b) == s })
	}) {
		return // nothing new: the client tells each request's credential again
	}
	with := func(list *atomic.Pointer[[][]byte]) {
		var values [][]byte
		if old := list.Load(); old != nil {
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
		list.Store(&values)
	}
	with(&r.all)
	if sent {
		with(&r.sent)
	}
}

// writtenForms are s as writers put it down: itself, URL-escaped (query and path), quoted in
// JSON (with and without HTML escapes) and by strconv (slog's text handler), quotes aside, and
// HTML-escaped (html/template also writes + as &#43;).
func writtenForms(s string) []string {
	escaped := html.EscapeString(s)
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s), escaped, strings.ReplaceAll(escaped, "+", "&#43;")}
	quoted := strconv.Quote(s)
	forms = append(forms, quoted[1:len(quoted)-1])
	for _, htmlSafe := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(htmlSafe)
		_ = enc.Encode(s) // a string always encodes
		q := strings.TrimSuffix(b.String(), "\n")
		forms = append(forms, q[1:len(q)-1])
	}
	return forms
}

// values returns the current values of a list.
func values(list *atomic.Pointer[[][]byte]) [][]byte {
	if v := list.Load(); v != nil {
		return *v
	}
	return nil
}

// secrets returns every secret value; sentSecrets the credentials sent to providers.
func (r *Redactor) secrets() [][]byte {
	if r == nil {
		return nil
	}
	return values(&r.all)
}

func (r *Redactor) sentSecrets() [][]byte {
	if r == nil {
		return nil
	}
	return values(&r.sent)
}

// replaceValues replaces every value in b by Mark; b itself when it holds none.
func replaceValues(b []byte, vs [][]byte) []byte {
	for _, v := range vs {
		if bytes.Contains(b, v) {
			b = bytes.ReplaceAll(b, v, []byte(Mark))
		}
	}
	return b
}

// Data returns b with every credential sent to a provider replaced by Mark, shapes and the
// process's own passwords left alone: for data (a response body, a field parsed from one, a
// table). It returns b itself when b holds none.
func (r *Redactor) Data(b []byte) []byte { return replaceValues(b, r.sentSecrets()) }

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
	out := replaceValues(b, r.secrets())
	for _, s := range []struct {
		re   *regexp.Regexp
		repl string
	}{
		{credentialValue, "${1}" + Mark},
		{escapedJSONField, "${1}" + Mark},
		{jsonField, "${1}" + Mark},
		{headerField, "${1}" + Mark},
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

// A Writer redacts what it writes to its underlying writer, line by line, so that a secret is
// found whole however the text was cut into writes (a bufio.Writer flushes every 4 KiB, a
// tabwriter writes cell by cell). A line without end is written on in parts once it is long (64
// KiB of data, 1 MiB of a message): the whole of it is scrubbed, and all but a tail as long as
// the longest secret value but one is written, so a value cut by the part is found whole with
// the next write. (A credential shape cut by such a part is not: a message line that long is
// not one a person reads.) Flush writes what is held back. A Writer is safe for concurrent use.
type Writer struct {
	w       io.Writer
	redact  func([]byte) []byte // Bytes or Data
	values  func() [][]byte     // the values redact replaces, longest first
	maxHeld int

	mu   sync.Mutex
	held []byte // the start of a line not yet written
}

// Writer returns a Writer of messages (values and shapes redacted) to w: for stderr and logs.
func (r *Redactor) Writer(w io.Writer) *Writer {
	return &Writer{w: w, redact: r.Bytes, values: r.secrets, maxHeld: 1 << 20}
}

// DataWriter returns a Writer of data (the credentials sent to providers redacted) to w: for
// stdout, where tables, CSV, JSON and Parquet go.
func (r *Redactor) DataWriter(w io.Writer) *Writer {
	return &Writer{w: w, redact: r.Data, values: r.sentSecrets, maxHeld: 64 << 10}
}

// Write takes p; it writes every line p completes. It reports len(p), or 0 and the error of
// the underlying writer, after which what failed to be written is dropped, not sent again.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = append(w.held, p...)
	var red, tail []byte // what is written now, and what stays held
	if end := bytes.LastIndexByte(w.held, '\n') + 1; end > 0 {
		red, tail = w.redact(w.held[:end]), w.held[end:]
	} else if len(w.held) >= w.maxHeld {
		all := w.redact(w.held)
		keep := 0
		if vs := w.values(); len(vs) > 0 {
			keep = len(vs[0]) - 1
		}
		if keep >= len(all) {
			return len(p), nil // a secret value longer than the line so far: hold on
		}
		red, tail = all[:len(all)-keep], all[len(all)-keep:]
	} else {
		return len(p), nil
	}
	err := w.write(red)
	w.held = append(w.held[:0], tail...) // tail may lie in w.held: append moves it down
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the line held back, if any.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.write(w.redact(w.held))
	w.held = w.held[:0]
	return err
}

func (w *Writer) write(red []byte) error {
	if len(red) == 0 {
		return nil
	}
	n, err := w.w.Write(red)
	if err == nil && n < len(red) {
		err = io.ErrShortWrite
	}
	return err
}
