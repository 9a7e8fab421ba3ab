package redact_test

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/redact"
)

const key = "sk-canary-7f3a9c21"

func TestString(t *testing.T) {
	r := redact.New(key, "p@ss w/rd", "ab", "")
	tests := []struct{ in, want string }{
		{"nothing secret here", "nothing secret here"},
		{"invalid key Bearer " + key, "invalid key Bearer REDACTED"},
		{"GET https://api.example/v1?api_key=" + key + "&limit=5", "GET https://api.example/v1?api_key=REDACTED&limit=5"},
		{"GET https://api.example/v1?limit=5&token=abc123xyz", "GET https://api.example/v1?limit=5&token=REDACTED"}, // by shape: a value never given
		{"clickhouse://gpucost:hunter2hunter@db:9000/gpucost", "clickhouse://gpucost:REDACTED@db:9000/gpucost"},
		{"clickhouse://db:9000/gpucost?username=gpucost&password=hunter2hunter", "clickhouse://db:9000/gpucost?username=gpucost&password=REDACTED"},
		{"smtp auth failed for p@ss w/rd", "smtp auth failed for REDACTED"},
		{"escaped in a query: " + url.QueryEscape("p@ss w/rd"), "escaped in a query: REDACTED"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic REDACTED"},
		{"the token count is 12", "the token count is 12"}, // "token" followed by a short word is prose
		{"a short value 'ab' is not a secret", "a short value 'ab' is not a secret"},
		{"form body api_key=abc123xyz&x=1", "form body api_key=REDACTED&x=1"},
		{`request {"api_key": "abc123xyz", "limit": 5}`, `request {"api_key": "REDACTED", "limit": 5}`},
		{"X-Api-Key: abc123xyz", "X-Api-Key: REDACTED"},
		{"https://h/cb#access_token=abc123xyz&state=1", "https://h/cb#access_token=REDACTED&state=1"},
		{"https://h/?client_secret=abc123xyz&page_token=2", "https://h/?client_secret=REDACTED&page_token=2"},
		{"ftp://u:p@ss@host/x", "ftp://u:REDACTED@host/x"},
		{"see https://host:8080/x or mail u@example.com", "see https://host:8080/x or mail u@example.com"},
		{"config.yaml:4:   password: hunter2hunter", "config.yaml:4:   password: REDACTED"}, // a config line quoted in an error
		{`{"token":"abcd1234efgh","key":"gpu_1x_a10"}`, `{"token":"REDACTED","key":"gpu_1x_a10"}`},
		{"X-Auth-Token: abcd1234efgh", "X-Auth-Token: REDACTED"},
		{`{"api_key": "abcd efghijkl", "password":"with\"quote"}`, `{"api_key": "REDACTED", "password":"REDACTED"}`},
		{`msg="body {\"api_key\":\"abcd1234\",\"n\":1}"`, `msg="body {\"api_key\":\"REDACTED\",\"n\":1}"`}, // JSON inside a log line
		{"GET http://host:8080?email=a@b.com failed", "GET http://host:8080?email=a@b.com failed"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
	var none *redact.Redactor
	if got := none.String("https://u:secretpw@h/?key=" + key); got != "https://u:REDACTED@h/?key=REDACTED" {
		t.Errorf("a nil Redactor still redacts shapes: %q", got)
	}
}

func TestUnchangedIsTheSameSlice(t *testing.T) {
	r := redact.New()
	r.AddSent(key)
	in := []byte(`{"offers":[{"id":1,"dph_total":0.4}]}`)
	if out := r.Bytes(in); &out[0] != &in[0] {
		t.Error("Bytes copied a text without secrets")
	}
	if out := r.Data(in); &out[0] != &in[0] {
		t.Error("Data copied a body without secrets")
	}
}

// Data is for what a provider answered and what is parsed from it: the credentials sent to
// providers go; shapes are ordinary text there and stay, and so do the process's own passwords
// (a password may be a word of the market).
func TestDataReplacesSentCredentialsOnly(t *testing.T) {
	r := redact.New("verified")
	r.AddSent(key)
	in := `{"name":"Basic Performance tier","note":"token throughput","host":"verified","echo":"invalid key Bearer ` + key + `","url":"https://h/?key=abc"}`
	want := `{"name":"Basic Performance tier","note":"token throughput","host":"verified","echo":"invalid key Bearer REDACTED","url":"https://h/?key=abc"}`
	if got := r.DataString(in); got != want {
		t.Errorf("DataString\n = %s\nwant %s", got, want)
	}
	if got := r.String("login verified failed"); got != "login REDACTED failed" {
		t.Errorf("a password is not redacted from a message: %q", got)
	}
}

func TestErrorKeepsTheChain(t *testing.T) {
	r := redact.New(key)
	err := r.Error(errors.Join(fs.ErrNotExist, errors.New("GET /v1?api_key="+key)))
	if strings.Contains(err.Error(), key) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Error() = %q, Is(ErrNotExist) = %v; want redacted and still unwrapping", err, errors.Is(err, fs.ErrNotExist))
	}
	plain := errors.New("no secret")
	if r.Error(plain) != plain || r.Error(nil) != nil {
		t.Error("an error without secrets is not returned as it is")
	}
}

// A Writer finds a secret however the text was cut into writes, and in the forms log handlers
// write it (a password with a quote and a backslash, escaped by JSON and by strconv).
func TestWriter(t *testing.T) {
	pw := `pa"ss\word-42`
	r := redact.New(key, pw)
	var out bytes.Buffer
	w := r.Writer(&out)
	text := "provider lambda failed: 401 invalid key " + key + "\nnext line " + key + " ends without a newline"
	for i := 0; i < len(text); i += 3 { // a secret cut across writes
		if n, err := w.Write([]byte(text[i:min(i+3, len(text))])); err != nil || n != min(3, len(text)-i) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if strings.Contains(out.String(), "ends without") {
		t.Errorf("a line was written before its end: %q", out.String())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, h := range []slog.Handler{slog.NewJSONHandler(w, nil), slog.NewTextHandler(w, nil)} {
		slog.New(h).Info("login failed", "password", pw, "err", errors.New("Bearer "+key))
	}
	if strings.Contains(out.String(), key) || strings.Contains(out.String(), "ss\\") || strings.Contains(out.String(), `ss\\\\`) {
		t.Errorf("a secret got through:\n%s", out.String())
	}
	if n := strings.Count(out.String(), redact.Mark); n != 6 {
		t.Errorf("%d redactions, want 6 (two in the text, two in each log line):\n%s", n, out.String())
	}
}

// A line longer than what a Writer holds back is written in parts, and a key cut by a part,
// wherever the cut falls, is still found.
func TestWriterLongLine(t *testing.T) {
	r := redact.New()
	r.AddSent(key)
	for _, chunk := range []int{1000, 4096, 70000} {
		for at := 64<<10 - 2*len(key); at <= 64<<10+len(key); at++ {
			var out bytes.Buffer
			w := r.DataWriter(&out)
			long := strings.Repeat("x", at) + key + strings.Repeat("y", 100<<10)
			for i := 0; i < len(long); i += chunk {
				if _, err := w.Write([]byte(long[i:min(i+chunk, len(long))])); err != nil {
					t.Fatal(err)
				}
			}
			if chunk < len(long) && out.Len() == 0 {
				t.Fatalf("nothing of a %d-byte line was written before its end", len(long))
			}
			w.Flush()
			if strings.Contains(out.String(), key) || out.String() != strings.Repeat("x", at)+redact.Mark+strings.Repeat("y", 100<<10) {
				t.Fatalf("key at %d, writes of %d: the output is not the line with the key redacted", at, chunk)
			}
		}
	}
}

// failingWriter fails its first write and takes the others.
type failingWriter struct {
	bytes.Buffer
	failed bool
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if !f.failed {
		f.failed = true
		return 0, errors.New("no space left on device")
	}
	return f.Buffer.Write(p)
}

// A line the underlying writer refused is dropped, not sent again with the next one.
func TestWriterDropsWhatFailed(t *testing.T) {
	var out failingWriter
	w := redact.New().Writer(&out)
	if _, err := w.Write([]byte("first\n")); err == nil {
		t.Fatal("the failure was not reported")
	}
	w.Write([]byte("second\n"))
	w.Flush()
	if out.String() != "second\n" {
		t.Errorf("wrote %q, want only the second line", out.String())
	}
}

func TestIsCredentialParam(t *testing.T) {
	for name, want := range map[string]bool{"api_key": true, "API-KEY": true, "token": true, "password": true, "sig": true, "page": false, "keyword": false, "limit": false} {
		if got := redact.IsCredentialParam(name); got != want {
			t.Errorf("IsCredentialParam(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestAddAfterWrapping: output is wrapped when the process starts, before the configuration
// has said what the secrets are; a secret added later is redacted from then on.
func TestAddAfterWrapping(t *testing.T) {
	r := redact.New()
	var out bytes.Buffer
	w := r.Writer(&out)
	r.Add(key)
	if _, err := w.Write([]byte("loaded key " + key + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "loaded key REDACTED\n" {
		t.Errorf("wrote %q", got)
	}
}

// BenchmarkDataResponseBody scrubs a clean 8 MiB JSON body (the default http.max_body_bytes)
// holding no secret, as every response is scrubbed before a source parses it:
//
//	go test ./redact -run '^$' -bench BenchmarkDataResponseBody -benchmem
func BenchmarkDataResponseBody(b *testing.B) {
	r := redact.New("p@ss w/rd")
	r.AddSent(key, "rpa_0123456789abcdef")
	offer := `{"id":38849859,"gpu_name":"RTX 4090","num_gpus":8,"dph_total":3.52,"geolocation":"Texas, US","public_ipaddr":"203.0.113.7","verification":"verified"},`
	body := []byte("[" + strings.Repeat(offer, (8<<20)/len(offer)) + "{}]")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if out := r.Data(body); len(out) != len(body) {
			b.Fatal("a clean body was changed")
		}
	}
}
