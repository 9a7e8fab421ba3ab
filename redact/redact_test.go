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

func TestBytesUnchangedIsTheSameSlice(t *testing.T) {
	r := redact.New(key)
	in := []byte(`{"offers":[{"id":1,"dph_total":0.4}]}`)
	if out := r.Bytes(in); &out[0] != &in[0] {
		t.Error("a body without secrets was copied")
	}
	if !r.Contains([]byte("x"+key+"x")) || r.Contains(in) {
		t.Error("Contains does not find the planted key, or finds one where there is none")
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

func TestWriterAndHandler(t *testing.T) {
	r := redact.New(key)
	var out bytes.Buffer
	w := r.Writer(&out)
	line := "provider lambda failed: 401 invalid key " + key + "\n"
	if n, err := w.Write([]byte(line)); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
	}
	logger := slog.New(r.Handler(slog.NewJSONHandler(&out, nil))).With("dsn", "clickhouse://u:"+key+"@h/db")
	logger.Info("fetch "+key, "err", errors.New("Bearer "+key), "url", &url.URL{Scheme: "https", Host: "h", RawQuery: "api_key=" + key},
		slog.Group("req", "header", "Authorization: Bearer "+key), "body", []byte("echo "+key))
	if bytes.Contains(out.Bytes(), []byte(key)) {
		t.Errorf("the key got through:\n%s", out.String())
	}
	if n := strings.Count(out.String(), redact.Mark); n < 7 {
		t.Errorf("%d redactions, want every one of the 7 places:\n%s", n, out.String())
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

// BenchmarkBytesResponseBody scrubs a clean 8 MiB JSON body (the default http.max_body_bytes)
// holding no secret, as every response is scrubbed before a source parses it:
//
//	go test ./redact -run '^$' -bench BenchmarkBytesResponseBody -benchmem
func BenchmarkBytesResponseBody(b *testing.B) {
	r := redact.New(key, "p@ss w/rd", "rpa_0123456789abcdef")
	offer := `{"id":38849859,"gpu_name":"RTX 4090","num_gpus":8,"dph_total":3.52,"geolocation":"Texas, US","public_ipaddr":"203.0.113.7","verification":"verified"},`
	body := []byte("[" + strings.Repeat(offer, (8<<20)/len(offer)) + "{}]")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if out := r.Bytes(body); len(out) != len(body) {
			b.Fatal("a clean body was changed")
		}
	}
}
