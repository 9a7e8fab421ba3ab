package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// snapshotDir is the recorded snapshot shipped with the scrapers; the fake providers serve it.
const snapshotDir = "../../scrapers/testdata/snapshot"

// providerServer is an httptest server that answers like one provider did when the snapshot was
// recorded: each request is matched by method, path and body hash against the recording's index.
// before, when set, runs first and may answer instead (return true).
func providerServer(t testing.TB, provider string, before func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(snapshotDir, provider, scrapers.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	var idx scrapers.Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before != nil && before(w, r) {
			return
		}
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		for _, e := range idx.Entries {
			u, _ := url.Parse(e.URL)
			if e.Method == r.Method && u.Path == r.URL.Path && u.Query().Encode() == r.URL.Query().Encode() && e.RequestSHA256 == hex.EncodeToString(sum[:]) {
				b, err := os.ReadFile(filepath.Join(snapshotDir, provider, e.File))
				if err != nil {
					http.Error(w, err.Error(), 500)
					return
				}
				w.Header().Set("Content-Type", e.ContentType)
				w.WriteHeader(e.Status)
				w.Write(b)
				return
			}
		}
		http.Error(w, "no recorded answer for "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fakeProviders is the providers: section of a configuration that points every provider at
// its fake server (providerServer), at the paths of its recorded answers. keys names the
// variable a provider reads its key from; every other provider reads one no test sets, so
// the keyless sources (the pages) are fetched.
func fakeProviders(servers map[string]*httptest.Server, keys map[string]string) string {
	key := func(p string) string {
		if k, ok := keys[p]; ok {
			return k
		}
		return "GPUCOST_TEST_NO_SUCH_KEY"
	}
	u := func(p, path string) string { return servers[p].URL + path }
	return fmt.Sprintf(`providers:
  vastai: {url: %q, delay: 1ms, api_key_env: %s}
  runpod: {url: %q, catalog_url: %q, api_key_env: %s}
  lambda: {url: %q, page_url: %q, api_key_env: %s, delay: 1ms}
  coreweave: {url: %q, delay: 1ms}
  verda: {url: %q, page_url: %q, api_key_env: %s, client_id_env: GPUCOST_TEST_NO_SUCH_ID, delay: 1ms}
  oci: {url: %q, shapes_url: %q}
  vultr: {url: %q, metal_url: %q, api_key_env: %s}
  nebius: {url: %q, delay: 1ms}
  digitalocean: {url: %q, page_url: %q, api_key_env: %s, delay: 1ms}
  hyperstack: {url: %q, page_url: %q, api_key_env: %s, delay: 1ms}
  tensordock: {url: %q, api_key_env: %s}
`, u("vastai", "/api/v0/bundles/"), key("vastai"), u("runpod", "/graphql"), u("runpod", "/v2/catalog/gpus"), key("runpod"),
		u("lambda", "/api/v1/instance-types"), u("lambda", "/pricing"), key("lambda"), u("coreweave", "/pricing"),
		u("verda", "/v1"), u("verda", "/pricing"), key("verda"),
		u("oci", "/pls/apex/cetools/api/v1/products/?currencyCode=USD"), u("oci", "/a/ocom/docs/cloudestimator2/data/shapes.json"),
		u("vultr", "/v2/plans?type=all&per_page=500"), u("vultr", "/v2/plans-metal?per_page=500"), key("vultr"),
		u("nebius", "/prices"), u("digitalocean", "/v2/sizes?per_page=200"), u("digitalocean", "/products/droplets/details/pricing/"), key("digitalocean"),
		u("hyperstack", "/v1"), u("hyperstack", "/gpu-pricing"), key("hyperstack"), u("tensordock", "/api/v2"), key("tensordock"))
}

// proxy is a TCP proxy in front of ClickHouse that a test can cut, so "ClickHouse stopped"
// can happen to one test without stopping the server every other test uses. It can also pause,
// as a SIGSTOPped server does: connections are accepted and kept, but no byte goes through.
type proxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
	resume chan struct{} // closed while the proxy forwards; open while it is paused
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target, resume: make(chan struct{})}
	close(p.resume)
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.setPaused(false); p.setDown(true) })
	return p
}

// setPaused stops forwarding bytes in both directions (true) or resumes (false).
func (p *proxy) setPaused(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.resume:
		if paused {
			p.resume = make(chan struct{})
		}
	default:
		if !paused {
			close(p.resume)
		}
	}
}

// pipe copies src to dst, holding every chunk while the proxy is paused.
func (p *proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			resume := p.resume
			p.mu.Unlock()
			<-resume
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// setDown cuts every connection and refuses new ones (true), or lets them through again.
func (p *proxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
	if down {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// e2e is one end-to-end setup: five fake providers, a fresh ClickHouse database behind a proxy,
// a spool folder and a config file pointing at all of them.
type e2e struct {
	t          *testing.T
	dsn        string // through the proxy
	directDSN  string
	proxy      *proxy
	configPath string
	spool      string
	servers    map[string]*httptest.Server
	store      *store.Store
}

func newE2E(t *testing.T, before map[string]func(w http.ResponseWriter, r *http.Request) bool) *e2e {
	t.Helper()
	return newE2EOn(t, storetest.DSN(t), before)
}

// newE2EOn is newE2E on the database direct names (created by its migrate).
func newE2EOn(t *testing.T, direct string, before map[string]func(w http.ResponseWriter, r *http.Request) bool) *e2e {
	t.Helper()
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, u.Host)
	u.Host = px.ln.Addr().String()
	x := &e2e{t: t, dsn: u.String(), directDSN: direct, proxy: px, spool: t.TempDir(), servers: map[string]*httptest.Server{}}
	for _, p := range config.ProviderNames { // every provider has a part in the snapshot
		x.servers[p] = providerServer(t, p, before[p])
	}
	x.configPath = x.writeConfig(`  source_timeout: 20s
  load_timeout: 10s
http:
  retry_max: 2
  retry_wait_min: 1ms
  retry_wait_max: 5ms
` + fakeProviders(x.servers, nil))
	if code, out := x.run("migrate", "--dsn", x.dsn); code != 0 {
		t.Fatalf("migrate: exit %d\n%s", code, out)
	}
	x.store, err = store.Open(context.Background(), direct, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.store.Close() })
	return x
}

// run runs gpucost in-process with the e2e config and returns its exit code and output: stdout,
// then stderr after a "--- stderr" line.
func (x *e2e) run(args ...string) (int, string) {
	if args[0] != "migrate" {
		args = append(args, "--config", x.configPath)
	}
	return runCLI(args...)
}

// writeConfig writes a config file for this setup's database and spool with the given
// providers section (empty: the providers' real default URLs).
func (x *e2e) writeConfig(providers string) string {
	x.t.Helper()
	cfg := fmt.Sprintf("clickhouse:\n  dsn: %q\nscrape:\n  spool_dir: %q\n%s", x.dsn, x.spool, providers)
	path := filepath.Join(x.t.TempDir(), "gpucost.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		x.t.Fatal(err)
	}
	return path
}

func runCLI(args ...string) (int, string) { return runCLIEnv(nil, args...) }

// runCLIEnv is runCLI with an environment: runEnvOut with stdout and stderr in one string
// (stdoutOf takes stdout back).
func runCLIEnv(vars map[string]string, args ...string) (int, string) {
	code, stdout, stderr := runEnvOut(vars, args...)
	return code, stdout + "\n--- stderr\n" + stderr
}

// count runs a count query on the test database.
func (x *e2e) count(table, where string) int {
	x.t.Helper()
	n, err := countRows(x.directDSN, table, where)
	if err != nil {
		x.t.Fatal(err)
	}
	return n
}

// cmpDecimal compares decimals by value.
var cmpDecimal = cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

// countRows counts the rows of table matching where; with table "", where is a whole query.
func countRows(dsn, table, where string) (int, error) {
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return 0, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	q := "SELECT count() FROM " + table
	if where != "" {
		q += " WHERE " + where
	}
	if table == "" {
		q = where
	}
	var n uint64
	err = conn.QueryRow(context.Background(), q).Scan(&n)
	return int(n), err
}
