package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/report/smtptest"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

// The canary-secret test plants one value of each kind of secret gpucost holds, drives them
// through every failure path that could carry one into something gpucost writes, and then scans
// everything written for them: each command's stdout and stderr, every table of the test
// database, the spool folders (quarantine and .failures files included, batch files decoded),
// the record folders and every report and .eml file. Each canary is looked for raw and
// URL-escaped, and inside JSON (decoded, base64 bodies decoded) and MIME parts (decoded).

// The canaries: distinct, long, and unlike any text the fake providers, ClickHouse or the
// reports produce. The DSN password has a '/' (escaped in a URL) and the SMTP password a '+'
// and a '=' so that their URL-escaped forms differ from the raw ones.
const (
	canaryLambdaKey = "secret_cnryLambda_4f9Zq7Kx2Wm8Tb3R"
	canaryVastKey   = "cnryVast0e7d4c1b9a8f6e5d3c2b1a0f9e8d"
	canaryRunPodKey = "rpa_cnryRunPod_J6H2K9L4M7N1P5Q8"
	canaryDSNPass   = "cnryDSN/pw~7Tq9Lx2Hb5Vm"
	canarySMTPPass  = "cnrySMTP+pw=8Vb3Kd6Qz1Wr"
)

var canaries = []struct{ name, value string }{
	{"Lambda API key", canaryLambdaKey},
	{"Vast API key", canaryVastKey},
	{"RunPod API key", canaryRunPodKey},
	{"ClickHouse DSN password", canaryDSNPass},
	{"SMTP password", canarySMTPPass},
}

// leakScan looks for the canaries in what it is shown and fails the test, naming the place and
// the canary, for each one found.
type leakScan struct {
	t      *testing.T
	places int // places scanned, so the scan itself cannot be vacuous
	leaks  int
}

func (s *leakScan) bytes(place string, b []byte) {
	s.t.Helper()
	s.places++
	lower := bytes.ToLower(b)
	for _, c := range canaries {
		for _, n := range needles(c.value) {
			if i := bytes.Index(lower, []byte(n.v)); i >= 0 {
				s.leaks++
				from, to := max(0, i-80), min(len(b), i+len(n.v)+80)
				s.t.Errorf("LEAK: the %s (%s) is in %s: …%q…", c.name, n.form, place, b[from:to])
				break // one finding per canary and place
			}
		}
	}
}

// needles are what a canary may look like once written: itself, URL-escaped, and each of those
// in any case (a parser lower-cases a region) or cut to its first or last 12 characters (a
// snippet, a clipped cell). They are lower-cased, for a search in lower-cased text.
func needles(v string) []struct{ form, v string } {
	var out []struct{ form, v string }
	seen := map[string]bool{}
	add := func(form, n string) {
		n = strings.ToLower(n)
		if !seen[n] {
			seen[n] = true
			out = append(out, struct{ form, v string }{form, n})
		}
	}
	for _, f := range []struct{ form, v string }{{"raw", v}, {"URL-escaped", url.QueryEscape(v)}, {"path-escaped", url.PathEscape(v)}} {
		add(f.form+", any case", f.v)
		add(f.form+", its first 12 characters, any case", f.v[:12])
		add(f.form+", its last 12 characters, any case", f.v[len(f.v)-12:])
	}
	return out
}

// text scans s, and each line of it that is JSON (a log line) decoded.
func (s *leakScan) text(place, text string) {
	s.t.Helper()
	s.bytes(place, []byte(text))
	for i, line := range strings.Split(text, "\n") {
		if json.Valid([]byte(line)) && strings.HasPrefix(strings.TrimSpace(line), "{") {
			s.json(fmt.Sprintf("%s line %d (JSON-decoded)", place, i+1), []byte(line))
		}
	}
}

// json scans every key and string of a JSON document decoded, and the bytes of every string
// that is base64 (a []byte field, such as a payload body).
func (s *leakScan) json(place string, data []byte) {
	s.t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return
	}
	var all bytes.Buffer
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			all.WriteString(x)
			all.WriteByte('\n')
			if len(x) >= 16 {
				if b, err := base64.StdEncoding.DecodeString(x); err == nil {
					all.Write(b)
					all.WriteByte('\n')
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				all.WriteString(k)
				all.WriteByte('\n')
				walk(e)
			}
		}
	}
	walk(v)
	s.bytes(place+" (JSON-decoded)", all.Bytes())
}

// tree scans every file under dir: raw, decoded when JSON, by part when an email. It returns the
// files scanned by path relative to dir.
func (s *leakScan) tree(what, dir string) map[string][]byte {
	s.t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = b
		place := what + " file " + filepath.ToSlash(rel)
		s.bytes(place, b)
		if json.Valid(b) {
			s.json(place, b)
		}
		if strings.HasSuffix(path, ".eml") {
			m := smtptest.ParseMail(s.t, b)
			var parts bytes.Buffer
			for k, vs := range m.Header {
				fmt.Fprintf(&parts, "%s: %s\n", k, strings.Join(vs, ", "))
			}
			parts.WriteString(m.Text)
			parts.WriteString(m.HTML)
			for _, img := range m.Images {
				parts.Write(img)
			}
			s.bytes(place+" (MIME-decoded)", parts.Bytes())
		}
		return nil
	})
	if err != nil {
		s.t.Fatalf("scanning the %s %s: %v", what, dir, err)
	}
	return files
}

// spooledBatch decodes a spool's batch file (pipeline/batchfile.go): lines of JSON, each holding
// a part of a schema.Batch (its run, offers or, in the earlier layouts, payloads), or the head of
// a raw payload, {"payload":{…,"body_bytes":N}}, followed by its N bytes of body and a newline.
func spooledBatch(data []byte) (schema.Batch, error) {
	var b schema.Batch
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.HasPrefix(line, []byte(`{"payload":`)) {
			var head struct {
				Payload struct {
					schema.RawPayload
					BodyBytes int `json:"body_bytes"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(line, &head); err != nil {
				return b, err
			}
			n := head.Payload.BodyBytes
			if n < 0 || n+1 > len(data) || data[n] != '\n' {
				return b, fmt.Errorf("the body of %s is not %d bytes and a newline", head.Payload.URL, n)
			}
			p := head.Payload.RawPayload
			p.Body, data = data[:n], data[n+1:]
			b.Payloads = append(b.Payloads, p)
			continue
		}
		var part schema.Batch
		if err := json.Unmarshal(line, &part); err != nil {
			return b, err
		}
		if part.Run.RunID != "" {
			b.Run = part.Run
		}
		b.Offers, b.Payloads = append(b.Offers, part.Offers...), append(b.Payloads, part.Payloads...)
	}
	return b, nil
}

// spool scans a spool folder as a tree, then decodes each batch file (spooledBatch) and scans
// its payload bodies and texts. It returns the batch files and the payloads they hold.
func (s *leakScan) spool(what, dir string) (batches, payloads int, files map[string][]byte) {
	s.t.Helper()
	files = s.tree(what, dir)
	for name, b := range files {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		batch, err := spooledBatch(b)
		if err != nil {
			s.t.Errorf("%s file %s is not a batch: %v", what, name, err)
			continue
		}
		batches++
		var text bytes.Buffer
		text.WriteString(batch.Run.Error)
		for _, o := range batch.Offers {
			fmt.Fprintf(&text, "\n%s %s %s %s %s", o.SourceURL, o.OfferID, o.Region, o.GPUNameRaw, o.GPUModel)
		}
		for i, p := range batch.Payloads {
			payloads++
			s.bytes(fmt.Sprintf("%s batch %s payload %d (%s, decoded body)", what, name, i+1, p.URL), append([]byte(p.URL+"\n"), p.Body...))
		}
		s.bytes(fmt.Sprintf("%s batch %s (decoded run and offers)", what, name), text.Bytes())
	}
	return batches, payloads, files
}

// clickhouse scans every row of every table of the database (views aside: they hold no rows of
// their own), each value as its Go value prints, raw_payloads.body included (aggregate states
// aside). It reads the rows
// through the driver's column types, so it runs on every server version. It returns the rows
// scanned per table.
func (s *leakScan) clickhouse(dsn string) map[string]int {
	s.t.Helper()
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		s.t.Fatal(err)
	}
	conn := storetest.Conn(s.t, dsn)
	ctx := context.Background()
	db := opts.Auth.Database
	rows, err := conn.Query(ctx, "SELECT name, engine FROM system.tables WHERE database = ? ORDER BY name", db)
	if err != nil {
		s.t.Fatalf("listing the tables of %s: %v", db, err)
	}
	var tables []string
	for rows.Next() {
		var name, engine string
		if err := rows.Scan(&name, &engine); err != nil {
			s.t.Fatal(err)
		}
		if engine != "View" && engine != "MaterializedView" {
			tables = append(tables, name)
		}
	}
	rows.Close()
	counts := map[string]int{}
	for _, table := range tables {
		// Every column but aggregate states (of prices and counts: no text), which the driver
		// cannot read.
		var cols []string
		crows, err := conn.Query(ctx, "SELECT name FROM system.columns WHERE database = ? AND table = ? AND type NOT LIKE 'AggregateFunction(%'", db, table)
		if err != nil {
			s.t.Fatalf("listing the columns of %s: %v", table, err)
		}
		for crows.Next() {
			var c string
			if err := crows.Scan(&c); err != nil {
				s.t.Fatal(err)
			}
			cols = append(cols, quoteIdent(c))
		}
		crows.Close()
		rows, err := conn.Query(ctx, fmt.Sprintf("SELECT %s FROM %s.%s", strings.Join(cols, ", "), quoteIdent(db), quoteIdent(table)))
		if err != nil {
			s.t.Fatalf("reading table %s: %v", table, err)
		}
		types := rows.ColumnTypes()
		var all bytes.Buffer
		for rows.Next() {
			values := make([]any, len(types))
			for i, ct := range types {
				values[i] = reflect.New(ct.ScanType()).Interface()
			}
			if err := rows.Scan(values...); err != nil {
				s.t.Fatalf("reading table %s: %v", table, err)
			}
			for _, v := range values {
				e := reflect.ValueOf(v).Elem()
				for e.Kind() == reflect.Pointer && !e.IsNil() { // Nullable
					e = e.Elem()
				}
				fmt.Fprintf(&all, "%v\t", e.Interface())
			}
			all.WriteByte('\n')
			counts[table]++
		}
		if err := rows.Err(); err != nil {
			s.t.Fatalf("reading table %s: %v", table, err)
		}
		rows.Close()
		s.bytes("ClickHouse table "+table, all.Bytes())
	}
	return counts
}

// quoteIdent quotes a ClickHouse identifier.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "\\`") + "`" }

// rejectingSMTP is a real SMTP server (report/smtptest, which runs deploy/smtpsink) that offers
// CRAM-MD5 (the only mechanism gpucost uses without TLS), refuses every login with a 535 that
// quotes what the client sent, and refuses mail without a login.
type rejectingSMTP struct {
	srv  *smtptest.Server
	port int
}

func startRejectingSMTP(t *testing.T) *rejectingSMTP {
	t.Helper()
	srv := smtptest.Start(t, smtptest.Options{RefuseCRAMMD5: true})
	return &rejectingSMTP{srv: srv, port: srv.Port()}
}

// attempts is the number of logins the server has refused.
func (s *rejectingSMTP) attempts() int { return len(s.srv.Auths()) }

// canaryProviders makes the fake providers misbehave by phase: "echo" answers every provider
// with an error that repeats a secret, "text" answers 200 with the secrets inside text fields,
// anything else answers as recorded.
type canaryProviders struct {
	mu          sync.Mutex
	phase       string
	plain       map[string]*httptest.Server // recorded answers, for "text" to rewrite
	foreign     *httptest.Server            // a host no source may follow a redirect to
	vastSeen    map[string]int              // distinct Vast request bodies, in order
	foreignHits int
}

func (c *canaryProviders) setPhase(p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.phase = p
}

func (c *canaryProviders) current() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase
}

// foreignURL is a URL on the foreign host (named localhost, where the sources' host is
// 127.0.0.1).
func (c *canaryProviders) foreignURL(pathAndQuery string) string {
	u, _ := url.Parse(c.foreign.URL)
	return "http://localhost:" + u.Port() + pathAndQuery
}

// forward answers r with the recorded answer of provider, rewritten by replacing each old with
// its new.
func (c *canaryProviders) forward(w http.ResponseWriter, r *http.Request, provider string, replace ...string) bool {
	body, _ := io.ReadAll(r.Body)
	req, err := http.NewRequestWithContext(r.Context(), r.Method, c.plain[provider].URL+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return true
	}
	req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return true
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := strings.NewReplacer(replace...).Replace(string(b))
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	io.WriteString(w, out)
	return true
}

func (c *canaryProviders) hooks() map[string]func(w http.ResponseWriter, r *http.Request) bool {
	return map[string]func(w http.ResponseWriter, r *http.Request) bool{
		"lambda": func(w http.ResponseWriter, r *http.Request) bool {
			switch c.current() {
			case "echo":
				// A 401 that repeats the Authorization header it got.
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"error":{"code":"global/invalid-api-key","message":"invalid key %s"}}`, r.Header.Get("Authorization"))
				return true
			case "text":
				return c.forward(w, r, "lambda",
					`"name": "us-east-1"`, `"name": "us-east-1-`+canaryLambdaKey+`"`,
					`"description": "Virginia, USA"`, `"description": "Virginia, USA `+canaryLambdaKey+`"`,
					`"name": "gpu_1x_gh200"`, `"name": "gpu_1x_gh200_`+canaryLambdaKey+`"`,
					`"gpu_description": "B200 (180 GB SXM6)"`, `"gpu_description": "B200 `+canaryLambdaKey+` (180 GB SXM6)"`)
			}
			return false
		},
		"vastai": func(w http.ResponseWriter, r *http.Request) bool {
			switch c.current() {
			case "echo":
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				c.mu.Lock()
				n, ok := c.vastSeen[string(body)]
				if !ok {
					n = len(c.vastSeen) + 1
					c.vastSeen[string(body)] = n
				}
				c.mu.Unlock()
				switch n {
				case 1:
					// A redirect to a foreign host carrying the key as a query parameter.
					loc := c.foreignURL("/api/v0/bundles/?api_key=" + url.QueryEscape(canaryVastKey))
					w.Header().Set("Location", loc)
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					w.WriteHeader(http.StatusTemporaryRedirect)
					fmt.Fprintf(w, "<a href=%q>Temporary Redirect</a>.\n", loc)
					return true
				case 2:
					// An error page quoting the request URL, key and all.
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprintf(w, "<html><h1>Not Found</h1><p>The requested URL %s?api_key=%s was not found on this server.</p></html>",
						r.URL.Path, canaryVastKey)
					return true
				}
			case "text":
				return c.forward(w, r, "vastai", `"geolocation": "`, `"geolocation": "`+canaryVastKey+` `)
			}
			return false
		},
		"runpod": func(w http.ResponseWriter, r *http.Request) bool {
			switch c.current() {
			case "echo":
				// A 5xx storm: every attempt gets a 503 that repeats the request's headers.
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "upstream connect error or disconnect/reset before headers.\nrequest headers:\nAuthorization: %s\nUser-Agent: %s\n",
					r.Header.Get("Authorization"), r.Header.Get("User-Agent"))
				return true
			case "text":
				return c.forward(w, r, "runpod",
					`"displayName": "MI300X"`, `"displayName": "MI300X `+canaryRunPodKey+`"`,
					`"id": "NVIDIA A100 80GB PCIe"`, `"id": "NVIDIA A100 80GB PCIe `+canaryRunPodKey+`"`)
			}
			return false
		},
		"coreweave": func(w http.ResponseWriter, r *http.Request) bool {
			if c.current() == "echo" {
				// A redirect of the pricing page to a foreign host with a key in its path
				// (no credential shape: only the value gives it away) and in a parameter.
				loc := c.foreignURL("/sso/" + canaryLambdaKey + "/login?next=/pricing&token=" + url.QueryEscape(canaryRunPodKey))
				http.Redirect(w, r, loc, http.StatusFound)
				return true
			}
			return false
		},
	}
}

// TestCanarySecretsLeakNowhere plants a Lambda, a Vast and a RunPod API key, a ClickHouse DSN
// password and an SMTP password, drives them through the failure paths (providers echoing
// keys in errors, redirects and fields; ClickHouse rejecting the password, unreachable or
// refusing the insert, so batches are spooled, counted as failures and quarantined; bad
// configurations; config print; report files; report emails to a server that rejects the login
// or is down, and their dry run), loads the spool with a working DSN, and then scans everything
// gpucost wrote for them.
func TestCanarySecretsLeakNowhere(t *testing.T) {
	start := time.Now()
	cp := &canaryProviders{plain: map[string]*httptest.Server{}, vastSeen: map[string]int{}}
	for _, p := range config.ProviderNames { // every provider has a part in the snapshot
		cp.plain[p] = providerServer(t, p, nil)
	}
	cp.foreign = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cp.mu.Lock()
		cp.foreignHits++
		cp.mu.Unlock()
		http.Error(w, "404 page not found: "+r.URL.String(), http.StatusNotFound)
	}))
	t.Cleanup(cp.foreign.Close)
	x := newE2E(t, cp.hooks())
	scan := &leakScan{t: t}

	// DSNs: the working one through the proxy; the same with the canary password as the user's
	// and as a parameter (the server's default user has none: ClickHouse answers 516,
	// authentication failed); a read-only one (ClickHouse refuses the inserts); malformed ones.
	work, err := url.Parse(x.dsn)
	if err != nil {
		t.Fatal(err)
	}
	withUser := *work
	withUser.User = url.UserPassword(work.User.Username(), canaryDSNPass)
	dsnUserinfo := withUser.String()
	q := work.Query()
	q.Set("password", canaryDSNPass)
	withParam := *work
	withParam.RawQuery = q.Encode()
	dsnParam := withParam.String()
	q = work.Query()
	q.Set("readonly", "1")
	readOnly := *work
	readOnly.RawQuery = q.Encode()
	dsnReadOnly := readOnly.String()
	q = withUser.Query()
	q.Set("dial_timeout", "banana")
	badTimeout := withUser
	badTimeout.RawQuery = q.Encode()
	dsnBadTimeout := badTimeout.String()
	if !strings.Contains(dsnUserinfo, url.QueryEscape(canaryDSNPass)) || !strings.Contains(dsnParam, "password="+url.QueryEscape(canaryDSNPass)) {
		t.Fatalf("the DSNs do not carry the canary password as planned: %s, %s", dsnUserinfo, dsnParam)
	}

	dir := t.TempDir()
	record1, record2 := filepath.Join(dir, "record-echo"), filepath.Join(dir, "record-text")
	quarantineSpool := filepath.Join(dir, "spool-readonly")
	reportOut, emlOut := filepath.Join(dir, "reports"), filepath.Join(dir, "eml")
	smtpPassFile := filepath.Join(dir, "smtp-password")
	if err := os.WriteFile(smtpPassFile, []byte(canarySMTPPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeConfig := func(name, dsn, spool, extra string) string {
		cfg := fmt.Sprintf(`clickhouse:
  dsn: %q
%sscrape:
  spool_dir: %q
  source_timeout: 20s
  load_timeout: 10s
http:
  retry_max: 2
  retry_wait_min: 1ms
  retry_wait_max: 5ms
%soptimize:
  workloads: ../../plans/workloads.sample.yaml
report:
  out_dir: %q
  smtp:
    host: 127.0.0.1
    port: 1
    from: gpucost@example.com
    username: gpucost
    starttls: "off"
    timeout: 5s
    retries: 1
    retry_wait: 10ms
`, dsn, extra, spool, fakeProviders(x.servers, map[string]string{"vastai": "CANARY_VAST_KEY", "runpod": "CANARY_RUNPOD_KEY", "lambda": "CANARY_LAMBDA_KEY"}), reportOut)
		path := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfgWorking := writeConfig("working", x.dsn, x.spool, "")
	cfgUserinfo := writeConfig("userinfo", dsnUserinfo, x.spool, "")
	cfgReadOnly := writeConfig("readonly", dsnReadOnly, quarantineSpool, "")
	// A typo right under the DSN: the error quotes the lines around it.
	cfgTypoUserinfo := writeConfig("typo-userinfo", dsnUserinfo, x.spool, "  dns_timeout: 5s\n")
	cfgTypoParam := writeConfig("typo-param", dsnParam, x.spool, "  dns_timeout: 5s\n")

	// Every command runs with the keys and the SMTP password in its environment, as in
	// production.
	var outputs []struct{ name, out string }
	cli := func(name string, vars map[string]string, args ...string) (int, string) {
		t.Helper()
		env := map[string]string{
			"CANARY_LAMBDA_KEY":     canaryLambdaKey,
			"CANARY_VAST_KEY":       canaryVastKey,
			"CANARY_RUNPOD_KEY":     canaryRunPodKey,
			"GPUCOST_SMTP_PASSWORD": canarySMTPPass,
		}
		for k, v := range vars {
			env[k] = v
		}
		code, out := runCLIEnv(env, args...)
		outputs = append(outputs, struct{ name, out string }{name, out})
		return code, out
	}
	wantCode := func(what string, code int, out string, want ...int) {
		t.Helper()
		for _, w := range want {
			if code == w {
				return
			}
		}
		t.Fatalf("%s: exit %d, want one of %v\n%s", what, code, want, out)
	}

	// config print: the DSN password as the user's and as a parameter, in the environment and
	// in the file; malformed configurations that hold it.
	for _, tc := range []struct {
		name string
		vars map[string]string
		cfg  string
		code int
	}{
		{"config print, DSN password as userinfo (environment)", map[string]string{"GPUCOST_CLICKHOUSE_DSN": dsnUserinfo}, cfgWorking, exitOK},
		{"config print, DSN password as ?password= (environment)", map[string]string{"GPUCOST_CLICKHOUSE_DSN": dsnParam}, cfgWorking, exitOK},
		{"config print, DSN password as userinfo (file)", nil, cfgUserinfo, exitOK},
		{"config print, DSN with a bad dial_timeout", map[string]string{"GPUCOST_CLICKHOUSE_DSN": dsnBadTimeout}, cfgWorking, exitUsage},
		{"config print, a typo under a DSN with userinfo", nil, cfgTypoUserinfo, exitUsage},
		{"config print, a typo under a DSN with ?password=", nil, cfgTypoParam, exitUsage},
	} {
		code, out := cli(tc.name, tc.vars, "config", "print", "--config", tc.cfg)
		wantCode(tc.name, code, out, tc.code)
		if tc.code == exitOK && !strings.Contains(out, redact.Mark) {
			t.Errorf("%s: the DSN password is not shown masked:\n%s", tc.name, out)
		}
	}
	code, out := cli("scrape, DSN with a bad dial_timeout", map[string]string{"GPUCOST_CLICKHOUSE_DSN": dsnBadTimeout}, "scrape", "--config", cfgWorking)
	wantCode("scrape with a bad DSN", code, out, exitUsage)

	// The providers echo their keys, ClickHouse rejects the DSN password: every batch is spooled,
	// every response recorded.
	cp.setPhase("echo")
	code, out = cli("scrape --record, providers echoing keys, ClickHouse rejecting the password", nil, "scrape", "--config", cfgUserinfo, "--record", record1)
	wantCode("scrape (echo, password rejected)", code, out, exitPartial, exitFailed)
	if !strings.Contains(out, "wait in the spool") {
		t.Errorf("the echoing run did not spool its batches:\n%s", out)
	}

	// The providers answer 200 with the keys in their text, ClickHouse is unreachable (the
	// proxy stopped) under a DSN with ?password=: spooled again.
	cp.setPhase("text")
	x.proxy.setDown(true)
	code, out = cli("scrape --record, keys in 200 answers, ClickHouse unreachable", map[string]string{"GPUCOST_CLICKHOUSE_DSN": dsnParam},
		"scrape", "--config", cfgWorking, "--record", record2)
	wantCode("scrape (text, unreachable)", code, out, exitPartial)
	x.proxy.setDown(false)

	// The spool now holds both runs' batches.
	spooledBatches, spooledPayloads, spoolFiles := scan.spool("spool (before the load)", x.spool)
	if spooledBatches < 10 || spooledPayloads < 10 {
		t.Errorf("the spool holds %d batches with %d payloads, want the 5 providers of both runs (10 and more)", spooledBatches, spooledPayloads)
	}
	spoolREDACTED := 0
	for _, b := range spoolFiles {
		if batch, err := spooledBatch(b); err == nil {
			for _, p := range batch.Payloads {
				spoolREDACTED += bytes.Count(p.Body, []byte(redact.Mark))
			}
		}
	}
	if spoolREDACTED == 0 {
		t.Error("no payload body in the spool says REDACTED: the echoed keys did not reach the spool")
	}

	// ClickHouse refuses the inserts (read-only): the batches of a spool of their own fail to
	// load, each failure counted in its .failures file, until the first goes to quarantine.
	for i := 1; i <= 5; i++ {
		code, out = cli(fmt.Sprintf("scrape %d of lambda, ClickHouse read-only", i), nil, "scrape", "--config", cfgReadOnly, "--providers", "lambda")
		if i < 5 {
			wantCode("scrape (read-only)", code, out, exitPartial)
		} else {
			wantCode("scrape (read-only), fifth", code, out, exitQuarantined)
		}
	}
	qBatches, _, qFiles := scan.spool("read-only run's spool", quarantineSpool)
	var quarantined, failures int
	for name := range qFiles {
		switch {
		case strings.HasPrefix(name, "quarantine/") && strings.HasSuffix(name, ".json"):
			quarantined++
		case strings.HasSuffix(name, ".failures"):
			failures++
		}
	}
	if qBatches != 5 || quarantined != 1 || failures != 5 {
		t.Errorf("the read-only runs left %d batches, %d in quarantine, %d .failures files; want 5, 1, 5:\n%v", qBatches, quarantined, failures, keys(qFiles))
	}

	// A working DSN: the spool loads into ClickHouse, and this run's answers (keys in text) too.
	code, out = cli("scrape, working DSN, loading the spool", nil, "scrape", "--config", cfgWorking)
	wantCode("scrape (working)", code, out, exitOK, exitPartial)
	if n := strings.Count(out, "loaded spooled batch"); n != spooledBatches {
		t.Errorf("%d spooled batches loaded, want %d:\n%s", n, spooledBatches, out)
	}
	if left, _ := filepath.Glob(filepath.Join(x.spool, "*.json")); len(left) != 0 {
		t.Errorf("batches still in the spool after a working run: %v", left)
	}

	// A published price table that holds a key (pasted into a region): it is data, stored
	// without it.
	table := filepath.Join(dir, "prices.csv")
	if err := os.WriteFile(table, []byte("provider,gpu,price_type,usd_per_gpu_hour,observed_at,region\naws,H100-SXM-80GB,on_demand,6.88,2026-11-30,us-east-1 "+canaryVastKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out = cli("import of a table holding a key", nil, "import", "--config", cfgWorking, table)
	wantCode("import", code, out, exitOK)

	// Reports: files of every format, emails to a server that refuses the login (the password
	// from the environment, then from a file), to one that is down, and a dry run's .eml files.
	code, out = cli("report --out, every format", nil, "report", "--config", cfgWorking, "--format", "all", "--out", reportOut)
	wantCode("report --out", code, out, exitOK)
	code, out = cli("report to stdout", nil, "report", "--config", cfgWorking, "--format", "markdown")
	wantCode("report to stdout", code, out, exitOK)
	smtpSrv := startRejectingSMTP(t)
	port := fmt.Sprint(smtpSrv.port)
	code, out = cli("report --email, login refused (password from the environment)", map[string]string{"GPUCOST_REPORT_SMTP_PORT": port},
		"report", "--config", cfgWorking, "--email")
	wantCode("report --email (login refused)", code, out, exitFailed)
	code, out = cli("report --email, login refused (password from a file)", map[string]string{"GPUCOST_REPORT_SMTP_PORT": port, "GPUCOST_REPORT_SMTP_PASSWORD_FILE": smtpPassFile},
		"report", "--config", cfgWorking, "--email", "--team", "search")
	wantCode("report --email (login refused, password file)", code, out, exitFailed)
	if smtpSrv.attempts() < 5 {
		t.Errorf("the SMTP server saw %d logins, want one per team and run (5)", smtpSrv.attempts())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downPort := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	code, out = cli("report --email, SMTP server down", map[string]string{"GPUCOST_REPORT_SMTP_PORT": downPort}, "report", "--config", cfgWorking, "--email")
	wantCode("report --email (server down)", code, out, exitFailed)
	code, out = cli("report --email --dry-run", nil, "report", "--config", cfgWorking, "--email", "--dry-run", "--out", emlOut)
	wantCode("report --email --dry-run", code, out, exitOK)

	// The scan.
	for _, o := range outputs {
		scan.text("the output of "+o.name, o.out)
	}
	tables := scan.clickhouse(x.directDSN)
	scan.spool("spool (after the load)", x.spool)
	scan.spool("read-only run's spool (after)", quarantineSpool)
	recorded := scan.tree("record folder", record1)
	for k, v := range scan.tree("record folder", record2) {
		recorded["text/"+k] = v
	}
	reports := scan.tree("report folder", reportOut)
	emls := scan.tree(".eml folder", emlOut)

	// It was not vacuous: every place holds what the failure paths put there, REDACTED where a
	// secret was.
	for _, table := range []string{"offers", "raw_payloads", "scrape_runs", "report_sends"} {
		if tables[table] == 0 {
			t.Errorf("ClickHouse table %s is empty: the scan of it proves nothing", table)
		}
	}
	for _, c := range []struct{ what, table, where string }{
		{"Lambda's 401 echoing the key", "raw_payloads", "provider = 'lambda' AND status = 401 AND position(body, 'invalid key Bearer REDACTED') > 0"},
		{"RunPod's 503s repeating the Authorization header", "raw_payloads", "provider = 'runpod' AND status = 503 AND position(body, 'Authorization: Bearer REDACTED') > 0"},
		{"Vast's redirect carrying the key", "raw_payloads", "provider = 'vastai' AND status = 307 AND position(body, 'api_key=REDACTED') > 0"},
		{"Vast's error page quoting the URL with the key", "raw_payloads", "provider = 'vastai' AND status = 404 AND position(body, 'api_key=REDACTED') > 0"},
		{"the keys inside 200 answers", "raw_payloads", "status = 200 AND position(body, 'REDACTED') > 0"},
		{"CoreWeave's refused redirect", "scrape_runs", "provider = 'coreweave' AND status = 'failed' AND position(error, 'REDACTED') > 0"},
		{"Vast's failed slices", "scrape_runs", "provider = 'vastai' AND position(error, 'REDACTED') > 0"},
		{"Lambda offer ids with the key", "offers", "provider = 'lambda' AND position(offer_id, 'REDACTED') > 0"},
		{"Lambda GPU names with the key", "offers", "provider = 'lambda' AND position(gpu_name_raw, 'REDACTED') > 0"},
		// The parser lower-cases the region: "th-redactedthailand".
		{"Vast regions with the key", "offers", "provider = 'vastai' AND positionCaseInsensitive(region, 'REDACTED') > 0"},
		{"RunPod names with the key", "offers", "provider = 'runpod' AND (position(gpu_name_raw, 'REDACTED') > 0 OR position(offer_id, 'REDACTED') > 0)"},
		{"failed report sends", "report_sends", "status = 'failed' AND error != ''"},
		{"the imported table's region", "offers", "provider = 'aws' AND position(region, 'REDACTED') > 0"},
	} {
		if n := x.count(c.table, c.where); n == 0 {
			t.Errorf("%s: no row of %s where %s", c.what, c.table, c.where)
		}
	}
	var recordREDACTED bool
	for name, b := range recorded {
		if strings.HasPrefix(name, "lambda/") && strings.HasSuffix(name, ".body") && bytes.Contains(b, []byte("invalid key Bearer "+redact.Mark)) {
			recordREDACTED = true
		}
	}
	for _, p := range []string{"lambda", "vastai", "runpod", "coreweave", "verda"} {
		if _, ok := recorded[p+"/"+"index.json"]; !ok {
			t.Errorf("the record folder has no %s/index.json: %v", p, keys(recorded))
		}
	}
	if !recordREDACTED {
		t.Error("the recorded Lambda 401 body does not say invalid key Bearer REDACTED")
	}
	var htmlReports, emlFiles int
	for name := range reports {
		if strings.HasSuffix(name, ".html") {
			htmlReports++
		}
	}
	for name := range emls {
		if strings.HasSuffix(name, ".eml") {
			emlFiles++
		}
	}
	if htmlReports < 5 || emlFiles != 4 {
		t.Errorf("%d HTML reports (want all and one per team) and %d .eml files (want 4)", htmlReports, emlFiles)
	}
	if cp.foreignHits != 0 {
		t.Errorf("the foreign host was asked %d times: a source followed a redirect off its host", cp.foreignHits)
	}
	rows := 0
	for _, n := range tables {
		rows += n
	}
	t.Logf("scanned %d places: %d outputs, %d ClickHouse tables (%d rows), %d spooled batches before the load, %d recorded, %d report and %d .eml files; %d leaks; %s",
		scan.places, len(outputs), len(tables), rows, spooledBatches, len(recorded), len(reports), emlFiles, scan.leaks, time.Since(start).Round(time.Millisecond))
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestShortOrCommonSecretsLeaveDataAlone: a password that is also a number or a word of the
// market ("1000", "spot", "verified", "us-california") leaves the data alone: the snapshot
// parses and prints exactly as without one (a value scrub would turn Vast's numbers into
// REDACTED and break its JSON, or rename its hosts and regions). Short ones are no secrets by
// value; the process's passwords are scrubbed from messages, never from data.
func TestShortOrCommonSecretsLeaveDataAlone(t *testing.T) {
	args := []string{"scrape", "--dry-run", "--replay", snapshotDir}
	stdout := func(out string) string { s, _, _ := strings.Cut(out, "\n--- stderr"); return s } // the logs hold times
	code, want := runCLIEnv(map[string]string{"GPUCOST_CLICKHOUSE_DSN": "clickhouse://default@127.0.0.1:1/gpucost"}, args...)
	want = stdout(want)
	if code != exitOK || !strings.Contains(want, "580 offers would be loaded") {
		t.Fatalf("exit %d without a password, want 0 and the whole snapshot\n%s", code, want)
	}
	for _, pw := range []string{"1000", "spot", "0.0630", "verified", "us-california", "on_demand"} {
		code, got := runCLIEnv(map[string]string{"GPUCOST_CLICKHOUSE_DSN": "clickhouse://default:" + pw + "@127.0.0.1:1/gpucost"}, args...)
		if got = stdout(got); code != exitOK || got != want {
			t.Errorf("password %q: exit %d and output differs from the run without one:\n%s", pw, code, cmp.Diff(want, got))
		}
	}
}
