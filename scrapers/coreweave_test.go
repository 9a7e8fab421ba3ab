package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

func TestParseCoreWeaveGolden(t *testing.T) {
	for _, name := range []string{"coreweave_pricing", "coreweave_pricing_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseCoreWeave(mustReadLC(t, name+".html"), lcRun, scrapers.DefaultCoreWeaveURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGoldenLC(t, name, offers, problems)
		})
	}
}

// TestParseCoreWeaveOracle pins the expected values providers.md §4.4 gives for the live page of
// 2026-08-22 (gpu-index's test oracle): 32 priced observations, 17 in North America and 15 in
// Europe, and the per-GPU prices below.
func TestParseCoreWeaveOracle(t *testing.T) {
	offers, problems, err := scrapers.ParseCoreWeave(mustReadLC(t, "coreweave_pricing.html"), lcRun, scrapers.DefaultCoreWeaveURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	perRegion := map[string]int{}
	byKey := map[string]schema.Offer{}
	for _, o := range offers {
		perRegion[o.Region]++
		byKey[o.OfferID+" "+string(o.PriceType)] = o
	}
	if diff := cmp.Diff(map[string]int{"north-america": 17, "europe": 15}, perRegion); diff != "" {
		t.Errorf("offers per region (-want +got):\n%s", diff)
	}
	type want struct {
		perHour, perGPU string
		count           uint16
		model           string
		intra           schema.IntraNode
		inter           schema.InterNode
	}
	tests := []struct {
		key  string
		want want
	}{
		{"nvidia-b200/north-america on_demand", want{"68.8", "8.6", 8, "B200-SXM-180GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-gb200-nvl72/north-america on_demand", want{"42", "10.5", 4, "GB200-186GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-gb200-nvl72/europe on_demand", want{"42", "10.5", 4, "GB200-186GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-b300/north-america spot", want{"35.84", "4.48", 8, "B300-SXM-288GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-b300/europe spot", want{"36.7", "4.5875", 8, "B300-SXM-288GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-l40s/north-america spot", want{"7.88", "0.985", 8, "L40S-48GB", schema.IntraPCIe, schema.InterUnknown}},
		{"hgx-h200/europe spot", want{"20.64", "2.58", 8, "H200-SXM-141GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"hgx-h100/north-america on_demand", want{"49.24", "6.155", 8, "H100-SXM-80GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-a100/europe on_demand", want{"21.6", "2.7", 8, "A100-SXM-80GB", schema.IntraNVSwitch, schema.InterUnknown}},
		{"nvidia-gh200/north-america on_demand", want{"6.5", "6.5", 1, "GH200-96GB", schema.IntraUnknown, schema.InterUnknown}},
		{"nvidia-rtx-pro-6000-blackwell-server-edition/europe spot", want{"11.01", "1.37625", 8, "RTX-PRO-6000-96GB", schema.IntraPCIe, schema.InterUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			o, ok := byKey[tt.key]
			if !ok {
				t.Fatalf("no offer %q", tt.key)
			}
			got := want{o.PriceUSDPerHour.String(), o.PriceUSDPerGPUHour.String(), o.GPUCount, o.GPUModel, o.IntraNode, o.InterNode}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, absent := range []string{
		"nvidia-gb300-nvl72/north-america on_demand", // Contact sales
		"nvidia-gb300-nvl72/north-america spot",      // N/A
		"nvidia-b300/europe on_demand",               // Contact sales
		"nvidia-l40/europe spot",                     // N/A
		"nvidia-gh200/north-america spot",            // N/A
	} {
		if _, ok := byKey[absent]; ok {
			t.Errorf("%s is not offered on the page but became an offer", absent)
		}
	}
	for _, o := range offers {
		if strings.Contains(o.GPUNameRaw, "Genoa") || strings.Contains(o.GPUNameRaw, "Ice Lake") {
			t.Errorf("CPU row %q leaked into the GPU offers", o.GPUNameRaw)
		}
		// The inference column (per GPU, NA only) must never be taken for a price: B200's is 8.60,
		// the on-demand per-GPU price too, so compare instance prices.
		if o.OfferID == "nvidia-b200/north-america" && o.PriceUSDPerHour.String() == "8.6" {
			t.Error("B200 took the inference price")
		}
	}
}

func TestParseCoreWeaveTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseCoreWeave(mustReadLC(t, "coreweave_pricing_traps.html"), lcRun, scrapers.DefaultCoreWeaveURL)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]schema.Offer{}
	for _, o := range offers {
		byKey[o.OfferID+" "+string(o.PriceType)] = o
	}
	type want struct {
		perHour, perGPU string
		count           uint16
		model           string
		flags           []schema.DQFlag
	}
	tests := []struct {
		name, key string
		want      want
	}{
		{"thousands separator", "nvidia-hgx-b200-bulk/north-america on_demand", want{"1234.56", "154.32", 8, "B200-SXM-180GB", nil}},
		{"count rendered as 4<sup>1</sup>", "nvidia-gb200-nvl72/north-america on_demand", want{"42", "10.5", 4, "GB200-186GB", nil}},
		{"unknown GPU kept and flagged", "nvidia-vr200-nvl144/europe on_demand", want{"99", "24.75", 4, "", []schema.DQFlag{schema.FlagUnknownGPU}}},
		{"H100 row with the odd class", "hgx-h100/europe spot", want{"19.51", "2.43875", 8, "H100-SXM-80GB", nil}},
		{"PCIe card priced on demand (its NA spot is an em dash)", "nvidia-l40s/europe on_demand", want{"18", "2.25", 8, "L40S-48GB", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := byKey[tt.key]
			if !ok {
				t.Fatalf("no offer %q", tt.key)
			}
			got := want{o.PriceUSDPerHour.String(), o.PriceUSDPerGPUHour.String(), o.GPUCount, o.GPUModel, o.DQFlags}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, absent := range []string{
		"nvidia-hgx-b200-bulk/north-america spot", // "Contact sales" inside the value
		"nvidia-l40s/north-america spot",          // "—"
		"nvidia-a100/north-america on_demand",     // malformed price: the row is a problem
	} {
		if _, ok := byKey[absent]; ok {
			t.Errorf("%s became an offer", absent)
		}
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), `"$21.6O" is not a dollar amount`) {
		t.Errorf("problems = %v, want the one malformed A100 price", problems)
	}
}

func TestParseCoreWeaveLayoutChanged(t *testing.T) {
	page := string(mustReadLC(t, "coreweave_pricing.html"))
	tests := []struct {
		name string
		body string
		want error
	}{
		{"rows are no longer table-row-v2 listitems", string(mustReadLC(t, "coreweave_pricing_changed.html")), scrapers.ErrLayoutChanged},
		{"header renamed", string(mustReadLC(t, "coreweave_pricing_renamed.html")), scrapers.ErrLayoutChanged},
		{"GPU anchor renamed", replaceLC(page, ">On-demand GPU instances<", ">GPU instances<"), scrapers.ErrLayoutChanged},
		{"CPU anchor gone", replaceLC(page, ">On-demand CPU instances<", ">CPU instances<"), scrapers.ErrLayoutChanged},
		{"GPU anchor twice", replaceLC(page, ">Storage</h2>", ">On-demand GPU instances</h2>"), scrapers.ErrLayoutChanged},
		{"no region headings", replaceLC(page, "REGION: ", "Region "), scrapers.ErrLayoutChanged},
		{"no header cells", replaceLC(page, "table-header-text", "th"), scrapers.ErrLayoutChanged},
		{"labelled price spans renamed", replaceLC(replaceLC(page, `class="instance-price"`, `class="od"`), `class="spot-price"`, `class="sp"`), scrapers.ErrNoOffers},
		{"labelled spec cells gone", replaceLC(page, "table-meta-value", "meta"), scrapers.ErrNoOffers},
		{"every price N/A", regexpReplaceLC(page, `<span class="item-value">\$[0-9.,]+</span>`, `<span class="item-value">N/A</span>`), scrapers.ErrNoOffers},
		{"not HTML", "Forbidden", scrapers.ErrLayoutChanged},
		{"empty", "", scrapers.ErrLayoutChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseCoreWeave([]byte(tt.body), lcRun, scrapers.DefaultCoreWeaveURL)
			if err == nil {
				t.Fatalf("no error, %d offers", len(offers))
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.CoreWeaveName {
				t.Errorf("error %v is not a coreweave *scrapers.Error", err)
			}
		})
	}
}

// newClientLC returns a client for tests: two retries with millisecond waits.
func newClientLC(tb testing.TB, mod func(*scrapers.ClientConfig)) *scrapers.Client {
	tb.Helper()
	cfg := scrapers.ClientConfig{RetryMax: 2, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond, AttemptTimeout: 10 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := scrapers.NewClient(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// misbehaviour is one way a provider's server goes wrong, shared by the CoreWeave and Lambda
// fetch tests. serve gets the good body and the request number (1-based).
type misbehaviour struct {
	name         string
	serve        func(w http.ResponseWriter, r *http.Request, n int, good []byte)
	wantAttempts int   // 0: don't check
	wantErr      error // nil: a correct result
}

// writeBody answers 200 with body and contentType.
func writeBody(w http.ResponseWriter, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(body)
}

// misbehaviours are the failure modes of the issue, for a source whose good answer has
// contentType.
func misbehaviours(contentType string, layoutChanged []byte) []misbehaviour {
	return []misbehaviour{
		{"ok", func(w http.ResponseWriter, _ *http.Request, _ int, good []byte) { writeBody(w, contentType, good) }, 1, nil},
		{"429 then success", func(w http.ResponseWriter, _ *http.Request, n int, good []byte) {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
				return
			}
			writeBody(w, contentType, good)
		}, 2, nil},
		{"500 until retries run out", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
			http.Error(w, "upstream connect error", http.StatusInternalServerError)
		}, 3, scrapers.ErrStatus},
		{"layout changed", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
			writeBody(w, contentType, layoutChanged)
		}, 1, scrapers.ErrLayoutChanged},
		{"50 MB body, chunked", func(w http.ResponseWriter, _ *http.Request, _ int, good []byte) {
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(good[:len(good)/2])
			chunk := bytes.Repeat([]byte("<div>padding</div>\n"), 1<<16)
			for written := 0; written < 50<<20; written += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, 0, scrapers.ErrBodyTooLarge},
		{"50 MB body, Content-Length", func(w http.ResponseWriter, _ *http.Request, _ int, good []byte) {
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("Content-Length", strconv.Itoa(50<<20))
			_, _ = w.Write(good)
		}, 0, scrapers.ErrBodyTooLarge},
		{"empty 200", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) { writeBody(w, contentType, nil) }, 1, scrapers.ErrLayoutChanged},
	}
}

// checkFetchLC asserts a Fetch outcome: the wanted error (an *Error of the source) or offers,
// never an empty success.
func checkFetchLC(t *testing.T, source string, res scrapers.Result, err error, wantErr error, wantAttempts int) {
	t.Helper()
	if err != nil {
		t.Logf("Fetch error: %v", err)
	}
	if wantErr == nil {
		if err != nil {
			t.Fatalf("Fetch: %v", err)
		}
	} else {
		if !errors.Is(err, wantErr) {
			t.Fatalf("Fetch error %v, want %v", err, wantErr)
		}
		var se *scrapers.Error
		if !errors.As(err, &se) || se.Source != source {
			t.Errorf("error %v is not a %s *scrapers.Error", err, source)
		}
	}
	if err == nil && len(res.Offers) == 0 {
		t.Error("empty success")
	}
	if wantAttempts > 0 && res.Attempts != wantAttempts {
		t.Errorf("Attempts = %d, want %d", res.Attempts, wantAttempts)
	}
}

func TestCoreWeaveFetchMisbehaving(t *testing.T) {
	good := mustReadLC(t, "coreweave_pricing.html")
	for _, mb := range misbehaviours("text/html; charset=utf-8", mustReadLC(t, "coreweave_pricing_changed.html")) {
		t.Run(mb.name, func(t *testing.T) {
			var hits atomic.Int32
			var ua atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ua.Store(r.UserAgent())
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			cw := scrapers.NewCoreWeave(newClientLC(t, nil), scrapers.CoreWeaveConfig{URL: srv.URL + "/pricing", Delay: -1}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cw.Fetch(ctx, lcRun)
			checkFetchLC(t, scrapers.CoreWeaveName, res, err, mb.wantErr, mb.wantAttempts)
			if mb.wantErr == nil {
				if len(res.Offers) != 32 {
					t.Errorf("%d offers, want 32", len(res.Offers))
				}
				if len(res.Payloads) == 0 || !bytes.Equal(res.Payloads[len(res.Payloads)-1].Body, good) {
					t.Error("the payload is not the page byte for byte")
				}
			}
			if got, _ := ua.Load().(string); !strings.HasPrefix(got, "Mozilla/5.0") {
				t.Errorf("User-Agent %q is not browser-like", got)
			}
		})
	}
}

// TestFetchHangingServer: the run's deadline wins, quickly, whether the server stalls before
// the headers or in the middle of the body.
func TestFetchHangingServer(t *testing.T) {
	stalls := map[string]func(w http.ResponseWriter, r *http.Request, good []byte){
		"before headers": func(_ http.ResponseWriter, r *http.Request, _ []byte) { <-r.Context().Done() },
		"mid body": func(w http.ResponseWriter, r *http.Request, good []byte) {
			_, _ = w.Write(good[:len(good)/3])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
	}
	sources := []struct {
		name      string
		fixture   string
		newSource func(c *scrapers.Client, base string) scrapers.Source
	}{
		{scrapers.CoreWeaveName, "coreweave_pricing.html", func(c *scrapers.Client, base string) scrapers.Source {
			return scrapers.NewCoreWeave(c, scrapers.CoreWeaveConfig{URL: base + "/pricing", Delay: -1}, nil)
		}},
		{"lambda page", "lambda_pricing.html", func(c *scrapers.Client, base string) scrapers.Source {
			return scrapers.NewLambda(c, scrapers.LambdaConfig{PageURL: base + "/pricing", Delay: -1}, nil)
		}},
		{"lambda api", "lambda_instance_types.json", func(c *scrapers.Client, base string) scrapers.Source {
			return scrapers.NewLambda(c, scrapers.LambdaConfig{APIKey: "secret-key-123", APIURL: base + "/api/v1/instance-types"}, nil)
		}},
	}
	for _, s := range sources {
		for stall, serve := range stalls {
			t.Run(s.name+" "+stall, func(t *testing.T) {
				good := mustReadLC(t, s.fixture)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r, good) }))
				defer srv.Close()
				src := s.newSource(newClientLC(t, nil), srv.URL)
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				start := time.Now()
				res, err := src.Fetch(ctx, lcRun)
				if took := time.Since(start); took > 3*time.Second {
					t.Errorf("Fetch took %v after a 300ms deadline", took)
				}
				t.Logf("Fetch error: %v", err)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Fetch error %v, want the deadline (%d offers)", err, len(res.Offers))
				}
			})
		}
	}
}

// TestPageFetchRedirects: colly follows a redirect within the page's domain and refuses one to
// a foreign domain, although the transport is the retrying client's (STYLE.md §7).
func TestPageFetchRedirects(t *testing.T) {
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		foreignHits.Add(1)
		writeBody(w, "text/html", mustReadLC(t, "coreweave_pricing.html"))
	}))
	defer foreign.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(foreign.URL, "http://"))
	foreignURL := "http://localhost:" + port + "/pricing" // 127.0.0.1 and localhost are different domains

	pages := map[string][]byte{
		"/cw":     mustReadLC(t, "coreweave_pricing.html"),
		"/lambda": mustReadLC(t, "lambda_pricing.html"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/away"):
			http.Redirect(w, r, foreignURL, http.StatusFound)
		case strings.HasSuffix(r.URL.Path, "/moved"):
			http.Redirect(w, r, strings.TrimSuffix(r.URL.Path, "/moved")+"/pricing", http.StatusMovedPermanently)
		default:
			writeBody(w, "text/html", pages[path.Dir(r.URL.Path)])
		}
	}))
	defer srv.Close()

	sources := map[string]func(url string) scrapers.Source{
		"coreweave": func(url string) scrapers.Source {
			return scrapers.NewCoreWeave(newClientLC(t, nil), scrapers.CoreWeaveConfig{URL: url, Delay: -1}, nil)
		},
		"lambda": func(url string) scrapers.Source {
			return scrapers.NewLambda(newClientLC(t, nil), scrapers.LambdaConfig{PageURL: url, Delay: -1}, nil)
		},
	}
	prefix := map[string]string{"coreweave": "/cw", "lambda": "/lambda"}
	for name, newSource := range sources {
		t.Run(name+" same domain", func(t *testing.T) {
			res, err := newSource(srv.URL+prefix[name]+"/moved").Fetch(context.Background(), lcRun)
			if err != nil || len(res.Offers) == 0 {
				t.Fatalf("Fetch: %d offers, %v", len(res.Offers), err)
			}
		})
		t.Run(name+" foreign domain", func(t *testing.T) {
			res, err := newSource(srv.URL+prefix[name]+"/away").Fetch(context.Background(), lcRun)
			if !errors.Is(err, colly.ErrForbiddenDomain) {
				t.Fatalf("Fetch error %v, want colly.ErrForbiddenDomain (%d offers)", err, len(res.Offers))
			}
			if n := foreignHits.Load(); n != 0 {
				t.Errorf("the foreign domain was fetched %d times", n)
			}
		})
	}
}

// TestPageFetchIgnoresCollyEnv: COLLY_* variables, which colly.NewCollector would apply over
// the code's options, change nothing: domains still enforced, the browser User-Agent kept, no
// truncation, no robots.txt, no cache, error statuses still errors.
func TestPageFetchIgnoresCollyEnv(t *testing.T) {
	cache := t.TempDir()
	for k, v := range map[string]string{
		"COLLY_ALLOWED_DOMAINS":           "localhost,127.0.0.1",
		"COLLY_USER_AGENT":                "colly-from-env",
		"COLLY_MAX_BODY_SIZE":             "1000",
		"COLLY_IGNORE_ROBOTSTXT":          "no",
		"COLLY_CACHE_DIR":                 cache,
		"COLLY_PARSE_HTTP_ERROR_RESPONSE": "yes",
		"COLLY_NOT_A_SETTING":             "1",
	} {
		t.Setenv(k, v)
	}
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { foreignHits.Add(1) }))
	defer foreign.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(foreign.URL, "http://"))
	good := mustReadLC(t, "coreweave_pricing.html")
	var robots atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			robots.Add(1)
		case "/away":
			http.Redirect(w, r, "http://localhost:"+port+"/", http.StatusFound)
		case "/broken":
			http.Error(w, "oops", http.StatusInternalServerError)
		default:
			if !strings.HasPrefix(r.UserAgent(), "Mozilla/5.0") {
				http.Error(w, "Forbidden", http.StatusForbidden)
				return
			}
			writeBody(w, "text/html", good)
		}
	}))
	defer srv.Close()
	fetch := func(p string) (scrapers.Result, error) {
		cw := scrapers.NewCoreWeave(newClientLC(t, func(c *scrapers.ClientConfig) { c.RetryMax = -1 }), scrapers.CoreWeaveConfig{URL: srv.URL + p, Delay: -1}, nil)
		return cw.Fetch(context.Background(), lcRun)
	}
	if res, err := fetch("/pricing"); err != nil || len(res.Offers) != 32 {
		t.Errorf("good page: %d offers, %v (User-Agent or body size taken from the environment?)", len(res.Offers), err)
	}
	if _, err := fetch("/away"); !errors.Is(err, colly.ErrForbiddenDomain) || foreignHits.Load() != 0 {
		t.Errorf("foreign redirect: %v, %d hits", err, foreignHits.Load())
	}
	if _, err := fetch("/broken"); !errors.Is(err, scrapers.ErrStatus) {
		t.Errorf("500: %v, want ErrStatus", err)
	}
	if n := robots.Load(); n != 0 {
		t.Errorf("robots.txt fetched %d times", n)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("colly cache written to %s", cache)
	}
}

func TestCoreWeaveRecordReplay(t *testing.T) {
	good := mustReadLC(t, "coreweave_pricing.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeBody(w, "text/html", good) }))
	defer srv.Close()
	dir := t.TempDir()
	cfg := scrapers.CoreWeaveConfig{URL: srv.URL + "/pricing", Delay: -1}
	live, err := scrapers.NewCoreWeave(newClientLC(t, func(c *scrapers.ClientConfig) { c.RecordDir = dir }), cfg, nil).Fetch(context.Background(), lcRun)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // the replay must not need the network
	replayed, err := scrapers.NewCoreWeave(newClientLC(t, func(c *scrapers.ClientConfig) { c.ReplayDir = dir }), cfg, nil).Fetch(context.Background(), lcRun)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, replayed.Offers); diff != "" {
		t.Errorf("replayed offers differ (-live +replayed):\n%s", diff)
	}
	if !bytes.Equal(replayed.Payloads[0].Body, good) {
		t.Error("replayed payload is not the recorded page byte for byte")
	}
}

// lcFixtures serves fixture files at the providers' real URLs without a network, so the
// snapshot is recorded (and replayed) under the default URLs.
type lcFixtures map[string]struct{ file, contentType string }

func (f lcFixtures) RoundTrip(req *http.Request) (*http.Response, error) {
	fx, ok := f[req.URL.String()]
	if !ok {
		return &http.Response{StatusCode: http.StatusNotFound, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	}
	b, err := os.ReadFile(filepath.Join("testdata", fx.file))
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {fx.contentType}}, Body: io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)), Request: req,
	}, nil
}

// snapshotFixturesLC are the bodies of the shipped snapshot's lambda/ and coreweave/ parts: the
// realistic fixtures (every GPU model of providers.md §3 and §4.4), not the trap files.
var snapshotFixturesLC = lcFixtures{
	scrapers.DefaultLambdaAPIURL:  {"lambda_instance_types.json", "application/json"},
	scrapers.DefaultLambdaPageURL: {"lambda_pricing.html", "text/html; charset=utf-8"},
	scrapers.DefaultCoreWeaveURL:  {"coreweave_pricing.html", "text/html; charset=utf-8"},
}

// lcSnapshotSources are the sources as the demo runs them against the snapshot: Lambda with a
// key (API) and without (pricing page), CoreWeave.
func lcSnapshotSources(c *scrapers.Client) map[string]scrapers.Source {
	return map[string]scrapers.Source{
		"lambda api":  scrapers.NewLambda(c, scrapers.LambdaConfig{APIKey: "snapshot-key", Delay: -1}, nil),
		"lambda page": scrapers.NewLambda(c, scrapers.LambdaConfig{Delay: -1}, nil),
		"coreweave":   scrapers.NewCoreWeave(c, scrapers.CoreWeaveConfig{Delay: -1}, nil),
	}
}

// TestLambdaCoreWeaveSnapshot replays testdata/snapshot/{lambda,coreweave} (the layout of
// record.go) and checks the offers are those the parsers give on the fixtures, and the payloads
// the fixtures byte for byte. With -update it first re-records those two folders from the
// fixtures, through the same client code a live run uses.
func TestLambdaCoreWeaveSnapshot(t *testing.T) {
	snap := filepath.Join("testdata", "snapshot")
	if lcUpdate() {
		for _, d := range []string{scrapers.LambdaName, scrapers.CoreWeaveName} {
			if err := os.RemoveAll(filepath.Join(snap, d)); err != nil {
				t.Fatal(err)
			}
		}
		rec := newClientLC(t, func(c *scrapers.ClientConfig) {
			c.RecordDir, c.Transport = snap, snapshotFixturesLC
			c.Now = func() time.Time { return lcRun.ObservedAt }
		})
		srcs := lcSnapshotSources(rec)
		for _, name := range []string{"lambda api", "lambda page", "coreweave"} { // fixed order: file numbers
			if _, err := srcs[name].Fetch(context.Background(), lcRun); err != nil {
				t.Fatalf("recording %s: %v", name, err)
			}
		}
	}

	replay := newClientLC(t, func(c *scrapers.ClientConfig) { c.ReplayDir = snap })
	want := map[string]struct {
		parse func([]byte, scrapers.Run, string) ([]schema.Offer, []error, error)
		url   string
	}{
		"lambda api":  {scrapers.ParseLambda, scrapers.DefaultLambdaAPIURL},
		"lambda page": {scrapers.ParseLambdaPage, scrapers.DefaultLambdaPageURL},
		"coreweave":   {scrapers.ParseCoreWeave, scrapers.DefaultCoreWeaveURL},
	}
	for name, src := range lcSnapshotSources(replay) {
		t.Run(name, func(t *testing.T) {
			res, err := src.Fetch(context.Background(), lcRun)
			if err != nil {
				t.Fatal(err)
			}
			fixture := mustReadLC(t, snapshotFixturesLC[want[name].url].file)
			offers, _, err := want[name].parse(fixture, lcRun, want[name].url)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(offers, res.Offers); diff != "" {
				t.Errorf("replayed offers differ from the fixture's (-fixture +replay):\n%s", diff)
			}
			if len(res.Payloads) != 1 || !bytes.Equal(res.Payloads[0].Body, fixture) || res.Payloads[0].URL != want[name].url {
				t.Errorf("payloads %d, want the fixture at %s byte for byte", len(res.Payloads), want[name].url)
			}
			if res.Attempts != 1 {
				t.Errorf("Attempts = %d, want 1", res.Attempts)
			}
		})
	}
}

func FuzzParseCoreWeave(f *testing.F) {
	for _, name := range []string{"coreweave_pricing.html", "coreweave_pricing_traps.html", "coreweave_pricing_changed.html", "coreweave_pricing_renamed.html"} {
		f.Add(mustReadLC(f, name))
	}
	f.Add([]byte(`<h2>On-demand GPU instances</h2><h5>REGION: X</h5><div class="table-header-text">GPU Model GPU Count VRAM On-Demand Price Spot Price</div>` +
		`<div role="listitem" class="table-row-v2 w-dyn-item"><h3 class="table-model-name">NVIDIA HGX H100</h3>` +
		`<div class="table-meta-value">4<sup>1</sup></div><div>GPU Count</div><span class="instance-price"><span class="item-value">$1,234.5</span></span></div><h2>On-demand CPU instances</h2>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseCoreWeave(body, lcRun, scrapers.DefaultCoreWeaveURL)
		checkFuzzLC(t, scrapers.CoreWeaveName, offers, problems, err)
		for _, o := range offers {
			if !o.PriceUSDPerGPUHour.Equal(schema.PerGPU(o.PriceUSDPerHour, o.GPUCount)) {
				t.Fatalf("offer %q: per GPU %s != %s / %d", o.OfferID, o.PriceUSDPerGPUHour, o.PriceUSDPerHour, o.GPUCount)
			}
		}
	})
}

func BenchmarkParseCoreWeave(b *testing.B) {
	body := mustReadLC(b, "coreweave_pricing.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := scrapers.ParseCoreWeave(body, lcRun, scrapers.DefaultCoreWeaveURL); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCoreWeaveInvalidConfig(t *testing.T) {
	tests := []struct {
		name   string
		client *scrapers.Client
		cfg    scrapers.CoreWeaveConfig
	}{
		{"relative URL", newClientLC(t, nil), scrapers.CoreWeaveConfig{URL: "www.coreweave.com/pricing"}},
		{"not http", newClientLC(t, nil), scrapers.CoreWeaveConfig{URL: "file:///etc/passwd"}},
		{"no client", nil, scrapers.CoreWeaveConfig{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scrapers.NewCoreWeave(tt.client, tt.cfg, nil).Fetch(context.Background(), lcRun)
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.CoreWeaveName || len(res.Offers) != 0 {
				t.Errorf("Fetch: %d offers, error %v; want a coreweave *scrapers.Error", len(res.Offers), err)
			}
		})
	}
}
