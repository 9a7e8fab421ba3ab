package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// faultSource is one source as the fault suite drives it: how it is built against a server,
// what its server answers when all is well, and its answers when the provider changes its
// layout or has nothing to sell.
type faultSource struct {
	name     string // subtest name
	provider string // the provider its errors name
	page     bool   // fetched through colly (redirects are refused by AllowedDomains)
	ctype    string
	// good answers one request the way the provider does (Vast: a market that slices and
	// sorts; Verda's API: its token, types and availability); changed and empty answer it after
	// a layout change, and as a valid answer with nothing to sell (always, for a source of one
	// kind of request).
	good, changed, empty func(r *http.Request) []byte
	newSource            func(c *scrapers.Client, base string) pipeline.Source
}

// always answers every request with b.
func always(b []byte) func(*http.Request) []byte { return func(*http.Request) []byte { return b } }

func faultSources(t *testing.T) []faultSource {
	fixture := func(name string) func(*http.Request) []byte { return always(readTestdata(t, name)) }
	market := newVastMarket(t, "vastai_market.json")
	vastAnswer := func(r *http.Request) []byte {
		rec := httptest.NewRecorder()
		market.ServeHTTP(rec, r)
		return rec.Body.Bytes()
	}
	lambdaPage := string(readTestdata(t, "lambda_pricing.html"))
	coreweavePage := string(readTestdata(t, "coreweave_pricing.html"))
	verdaPage := string(readTestdata(t, "verda_pricing.html"))
	nebiusPage := string(readTestdata(t, "nebius_prices.html"))
	verda := newVerdaAPI(t)
	ociProducts, ociShapes := readTestdata(t, "oci_products.json"), readTestdata(t, "oci_shapes.json")
	vultr := newVultrAPI(t)
	tensorDock := newTensorDockAPI(t)
	digitalocean := newDigitalOceanAPI(t)
	digitaloceanPage := string(readTestdata(t, "digitalocean_pricing.html"))
	hyperstack := newHyperstackAPI(t)
	hyperstackPage := string(readTestdata(t, "hyperstack_pricing.html"))
	return []faultSource{
		{
			name: "vastai", provider: scrapers.VastName, ctype: "application/json",
			good:    vastAnswer,
			changed: always([]byte(`{"results": [], "total": 0}`)),
			empty:   always([]byte(`{"offers": []}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewVast(c, scrapers.VastConfig{URL: base + "/api/v0/bundles/", RequestInterval: -1}, nil)
			},
		},
		{
			name: "runpod", provider: scrapers.RunPodName, ctype: "application/json",
			good:    fixture("runpod_gputypes.json"),
			changed: always([]byte(mustReplace(string(readTestdata(t, "runpod_gputypes.json")), `"gpuTypes"`, `"gpuTypeList"`))),
			empty:   always([]byte(`{"data": {"gpuTypes": []}}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewRunPod(c, scrapers.RunPodConfig{URL: base + "/graphql"}, nil)
			},
		},
		{
			// Two requests a run with a key: the GraphQL answer, then the v2 catalog (the
			// serverless prices). A changed or empty answer is GraphQL's, which the source reads
			// first and whose failure fails the run; a catalog's is a problem of the run instead
			// (TestRunPodCatalogFaults).
			name: "runpod api", provider: scrapers.RunPodName, ctype: "application/json",
			good:    runPodAnswer(readTestdata(t, "runpod_gputypes.json"), readTestdata(t, "runpod_catalog.json")),
			changed: runPodAnswer([]byte(mustReplace(string(readTestdata(t, "runpod_gputypes.json")), `"gpuTypes"`, `"gpuTypeList"`)), []byte(mustReplace(string(readTestdata(t, "runpod_catalog.json")), `"price": {`, `"prices": {`))),
			empty:   runPodAnswer([]byte(`{"data": {"gpuTypes": []}}`), []byte(`{"gpus": []}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return newRunPodAPISource(c, base)
			},
		},
		{
			name: "lambda api", provider: scrapers.LambdaName, ctype: "application/json",
			good:    fixture("lambda_instance_types.json"),
			changed: always([]byte(mustReplace(string(readTestdata(t, "lambda_instance_types.json")), `"data"`, `"instance_types"`))),
			empty:   always([]byte(`{"data": {}}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewLambda(c, scrapers.LambdaConfig{APIKey: lambdaTestKey, APIURL: base + "/api/v1/instance-types"}, nil)
			},
		},
		{
			name: "lambda page", provider: scrapers.LambdaName, page: true, ctype: "text/html; charset=utf-8",
			good:    fixture("lambda_pricing.html"),
			changed: fixture("lambda_pricing_changed.html"),
			empty:   always([]byte(mustReplaceRegexp(lambdaPage, `>\$[0-9.,]+</td>`, `>—</td>`))),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewLambda(c, scrapers.LambdaConfig{PageURL: base + "/pricing", Delay: -1}, nil)
			},
		},
		{
			name: "coreweave", provider: scrapers.CoreWeaveName, page: true, ctype: "text/html; charset=utf-8",
			good:    fixture("coreweave_pricing.html"),
			changed: fixture("coreweave_pricing_changed.html"),
			empty:   always([]byte(mustReplaceRegexp(coreweavePage, `<span class="item-value">\$[0-9.,]+</span>`, `<span class="item-value">N/A</span>`))),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewCoreWeave(c, scrapers.CoreWeaveConfig{URL: base + "/pricing", Delay: -1}, nil)
			},
		},
		{
			name: "nebius", provider: scrapers.NebiusName, page: true, ctype: "text/html; charset=utf-8",
			good:    fixture("nebius_prices.html"),
			changed: fixture("nebius_prices_changed.html"),
			empty:   always([]byte(mustReplaceRegexp(nebiusPage, `\\"(from )?\$[0-9.]+\\"`, `\"––\"`))), // every row unpriced
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewNebius(c, scrapers.NebiusConfig{URL: base + "/prices", Delay: -1}, nil)
			},
		},
		{
			name: "vultr", provider: scrapers.VultrName, ctype: "application/json",
			good:    vultr.answer, // the VM plans' two pages and the metal plans
			changed: fixture("vultr_plans_changed.json"),
			// Every request gets the same body: an empty list under both lists' keys.
			empty: always([]byte(`{"plans": [], "plans_metal": [], "meta": {"total": 0, "links": {"next": "", "prev": ""}}}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return newVultrSource(c, base, vultrTestKey)
			},
		},
		{
			// One request a run, with a token: the hostnode list. Its empty answer is the
			// source unavailable, which must fail the run like no offers.
			name: "tensordock", provider: scrapers.TensorDockName, ctype: "application/json",
			good:    tensorDock.answer,
			changed: fixture("tensordock_hostnodes_changed.json"), // the v0 layout
			empty:   always([]byte(`{"data": {"hostnodes": []}}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return newTensorDockSource(c, base, tensorDockTestKey)
			},
		},
		{
			// Two requests a run: the price list, then the shapes. A changed or empty answer is
			// the price list's, which the source reads first.
			name: "oci", provider: scrapers.OCIName, ctype: "application/json",
			good: func(r *http.Request) []byte {
				if strings.HasSuffix(r.URL.Path, "/shapes.json") {
					return ociShapes
				}
				return ociProducts
			},
			changed: fixture("oci_products_changed.json"),
			empty:   always([]byte(`{"lastUpdated": "2026-08-14T09:09:55.872Z", "items": []}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewOCI(c, scrapers.OCIConfig{ProductsURL: base + "/products/?currencyCode=USD", ShapesURL: base + "/data/shapes.json"}, nil)
			},
		},
		{
			name: "verda api", provider: scrapers.VerdaName, ctype: "application/json",
			good: verda.answer,
			// The token step still works; the instance types come wrapped in an object.
			changed: verdaAnswer(verda, []byte(`{"instance_types": `+string(readTestdata(t, "verda_instance_types.json"))+`}`)),
			empty:   verdaAnswer(verda, []byte(`[]`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return newVerdaAPISource(c, base)
			},
		},
		{
			name: "verda page", provider: scrapers.VerdaName, page: true, ctype: "text/html; charset=utf-8",
			good:    fixture("verda_pricing.html"),
			changed: fixture("verda_pricing_changed.html"),
			empty:   always([]byte(mustReplace(verdaPage, `"priceCurrency":"USD"`, `"priceCurrency":"EUR"`))), // the EUR toggle
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewVerda(c, scrapers.VerdaConfig{PageURL: base + "/pricing", Delay: -1}, nil)
			},
		},
		{
			name: "digitalocean api", provider: scrapers.DigitalOceanName, ctype: "application/json",
			good:    digitalocean.answer, // both pages of the size list
			changed: fixture("digitalocean_sizes_changed.json"),
			empty:   always([]byte(`{"sizes": [], "links": {}, "meta": {"total": 0}}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return newDigitalOceanAPISource(c, base)
			},
		},
		{
			name: "digitalocean page", provider: scrapers.DigitalOceanName, page: true, ctype: "text/html; charset=utf-8",
			good:    fixture("digitalocean_pricing.html"),
			changed: fixture("digitalocean_pricing_changed.html"),
			empty:   always([]byte(mustReplaceRegexp(digitaloceanPage, `<td>\$[0-9.,]+ per hour</td>`, `<td>Per contract after contacting sales</td>`))),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewDigitalOcean(c, scrapers.DigitalOceanConfig{PageURL: base + "/products/droplets/details/pricing/", Delay: -1}, nil)
			},
		},
		{
			// Two requests a run: the pricebook, then the flavors. A changed or empty answer is
			// the flavors', after a good pricebook.
			name: "hyperstack api", provider: scrapers.HyperstackName, ctype: "application/json",
			good:    hyperstack.answer,
			changed: hyperstackAnswer(hyperstack, readTestdata(t, "hyperstack_flavors_changed.json")),
			empty:   hyperstackAnswer(hyperstack, []byte(`{"status": true, "message": "Getting flavors success", "data": []}`)),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return newHyperstackAPISource(c, base)
			},
		},
		{
			name: "hyperstack page", provider: scrapers.HyperstackName, page: true, ctype: "text/html; charset=utf-8",
			good:    fixture("hyperstack_pricing.html"),
			changed: fixture("hyperstack_pricing_changed.html"),
			empty:   always([]byte(mustReplaceRegexp(hyperstackPage, `<span>(&nbsp;)?\$[0-9.]+</span>`, `<span>—</span>`))),
			newSource: func(c *scrapers.Client, base string) pipeline.Source {
				return scrapers.NewHyperstack(c, scrapers.HyperstackConfig{PageURL: base + "/gpu-pricing", Delay: -1}, nil)
			},
		},
	}
}

// runPodAnswer answers RunPod's v2 catalog request with catalog and every other request (the
// GraphQL query) with graphQL.
func runPodAnswer(graphQL, catalog []byte) func(*http.Request) []byte {
	return func(r *http.Request) []byte {
		if strings.HasSuffix(r.URL.Path, "/v2/catalog/gpus") {
			return catalog
		}
		return graphQL
	}
}

// newRunPodAPISource is the RunPod source with a key, both its endpoints under base.
func newRunPodAPISource(c *scrapers.Client, base string) *scrapers.RunPod {
	return scrapers.NewRunPod(c, scrapers.RunPodConfig{URL: base + "/graphql", CatalogURL: base + "/v2/catalog/gpus", APIKey: runPodTestKey}, nil)
}

// hyperstackAnswer answers Hyperstack's pricebook request as the API does and every other
// request with b.
func hyperstackAnswer(api *hyperstackAPI, b []byte) func(*http.Request) []byte {
	return func(r *http.Request) []byte {
		if strings.HasSuffix(r.URL.Path, "/pricebook") {
			return api.answer(r)
		}
		return b
	}
}

// verdaAnswer answers Verda's token request as the API does and every other request with b.
func verdaAnswer(api *verdaAPI, b []byte) func(*http.Request) []byte {
	return func(r *http.Request) []byte {
		if strings.HasSuffix(r.URL.Path, "/oauth2/token") {
			return api.answer(r)
		}
		return b
	}
}

// faultBodyLimit is the suite's body limit: far above every fixture, small enough to exceed fast.
const faultBodyLimit = 1 << 20

// fault is one way every answer of a provider goes wrong. serve answers request n (1-based) of
// the run; want is the error the source must fail with, nil for the correct result.
type fault struct {
	name  string
	serve func(w http.ResponseWriter, r *http.Request, n int64, s faultSource, foreign string)
	want  func(s faultSource) error
}

func wantErr(err error) func(faultSource) error { return func(faultSource) error { return err } }

// content is the body without its trailing white space (what a cut must reach into).
func content(b []byte) []byte { return bytes.TrimRight(b, " \t\r\n") }

// cut answers the first n bytes of the good answer, the rest never sent; with contentLength the
// answer announces the whole length first, so the client sees the connection close early.
func cut(frac float64, last bool, contentLength bool) func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) {
	return func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) {
		good := s.good(r)
		n := int(float64(len(good)) * frac)
		if last {
			n = len(content(good)) - 1
		}
		w.Header().Set("Content-Type", s.ctype)
		if contentLength {
			w.Header().Set("Content-Length", strconv.Itoa(len(good)))
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(good[:n])
	}
}

func faults() []fault {
	ok := func(w http.ResponseWriter, r *http.Request, s faultSource) { writeBody(w, s.ctype, s.good(r)) }
	return []fault{
		{"all well", func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) { ok(w, r, s) }, wantErr(nil)},
		{"429 with Retry-After, then all well", func(w http.ResponseWriter, r *http.Request, n int64, s faultSource, _ string) {
			if n == 1 {
				w.Header().Set("Retry-After", "1") // honoured up to the client's wait cap
				http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
				return
			}
			ok(w, r, s)
		}, wantErr(nil)},
		{"429 with Retry-After on every attempt", func(w http.ResponseWriter, _ *http.Request, _ int64, _ faultSource, _ string) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		}, wantErr(scrapers.ErrStatus)},
		{"5xx storm", func(w http.ResponseWriter, _ *http.Request, n int64, _ faultSource, _ string) {
			codes := []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
			http.Error(w, "upstream connect error or disconnect/reset before headers", codes[n%int64(len(codes))])
		}, wantErr(scrapers.ErrStatus)},
		{"hang before the headers", func(w http.ResponseWriter, r *http.Request, _ int64, _ faultSource, _ string) { hang(w, r) },
			wantErr(context.DeadlineExceeded)},
		{"hang mid-body", func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) {
			good := s.good(r)
			w.Header().Set("Content-Type", s.ctype)
			_, _ = w.Write(good[:len(good)/3])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, wantErr(context.DeadlineExceeded)},
		{"truncated at 40% with Content-Length", cut(0.40, false, true), wantErr(scrapers.ErrIncomplete)},
		{"truncated at 40% without Content-Length", cut(0.40, false, false), wantErr(scrapers.ErrIncomplete)},
		{"truncated at 45% without Content-Length", cut(0.45, false, false), wantErr(scrapers.ErrIncomplete)},
		{"last byte missing, with Content-Length", cut(0, true, true), wantErr(scrapers.ErrIncomplete)},
		{"last byte missing, without Content-Length", cut(0, true, false), wantErr(scrapers.ErrIncomplete)},
		{"layout changed", func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) {
			writeBody(w, s.ctype, s.changed(r))
		},
			wantErr(scrapers.ErrLayoutChanged)},
		{"a login page instead", func(w http.ResponseWriter, _ *http.Request, _ int64, _ faultSource, _ string) {
			writeBody(w, "text/plain", []byte("Please sign in"))
		}, wantErr(scrapers.ErrLayoutChanged)},
		{"redirect to a foreign host", func(w http.ResponseWriter, r *http.Request, _ int64, _ faultSource, foreign string) {
			http.Redirect(w, r, foreign+r.URL.Path, http.StatusFound)
		}, func(s faultSource) error {
			if s.page {
				return colly.ErrForbiddenDomain // colly refuses it
			}
			return scrapers.ErrStatus // the API sources never follow one
		}},
		{"body over the limit, chunked", func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) {
			// Valid all the way, trailing white space included: only the limit stops it.
			w.Header().Set("Content-Type", s.ctype)
			_, _ = w.Write(s.good(r))
			pad := bytes.Repeat([]byte(" "), 64<<10)
			for written := 0; written <= faultBodyLimit; written += len(pad) {
				if _, err := w.Write(pad); err != nil {
					return
				}
			}
		}, wantErr(scrapers.ErrBodyTooLarge)},
		{"body over the limit, Content-Length", func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) {
			good := s.good(r)
			w.Header().Set("Content-Type", s.ctype)
			w.Header().Set("Content-Length", strconv.Itoa(faultBodyLimit+1))
			_, _ = w.Write(good)
			_, _ = w.Write(bytes.Repeat([]byte(" "), faultBodyLimit+1-len(good)))
		}, wantErr(scrapers.ErrBodyTooLarge)},
		{"valid but empty", func(w http.ResponseWriter, r *http.Request, _ int64, s faultSource, _ string) {
			writeBody(w, s.ctype, s.empty(r))
		},
			wantErr(scrapers.ErrNoOffers)},
		{"empty body", func(w http.ResponseWriter, _ *http.Request, _ int64, s faultSource, _ string) {
			writeBody(w, s.ctype, nil)
		},
			wantErr(scrapers.ErrIncomplete)},
	}
}

// TestFaults drives every source through every fault on every request, over real HTTP: each
// ends in the correct result (the offers of a run where all is well, exactly) or in a clear
// error of that provider wrapping the fault's condition; never a smaller market without an
// error, never a hang.
func TestFaults(t *testing.T) {
	var foreignHits atomic.Int64
	foreign := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { foreignHits.Add(1) }))
	defer foreign.Close()
	_, port, _ := net.SplitHostPort(foreign.Listener.Addr().String())
	foreignURL := "http://localhost:" + port // a different host from the sources' 127.0.0.1

	client := func() *scrapers.Client {
		return newTestClient(t, scrapers.ClientConfig{MaxBodyBytes: faultBodyLimit, Redactor: redact.New(lambdaTestKey, verdaTestSecret, vultrTestKey, tensorDockTestKey, digitaloceanTestKey, hyperstackTestKey, runPodTestKey)})
	}
	for _, s := range faultSources(t) {
		t.Run(s.name, func(t *testing.T) {
			// The correct result: a run where all is well.
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeBody(w, s.ctype, s.good(r)) }))
			want, err := s.newSource(client(), srv.URL).Fetch(context.Background(), runAug22)
			srv.Close()
			if err != nil || len(want.Offers) == 0 {
				t.Fatalf("a good run: %d offers, %v", len(want.Offers), err)
			}
			for _, f := range faults() {
				t.Run(f.name, func(t *testing.T) {
					var n atomic.Int64
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						f.serve(w, r, n.Add(1), s, foreignURL)
					}))
					defer srv.Close()
					// The run's deadline: short where the fault is a hang, ample elsewhere (a
					// loaded machine running the race detector must not turn a fault into one).
					deadline := 20 * time.Second
					if strings.HasPrefix(f.name, "hang") {
						deadline = 300 * time.Millisecond
					}
					ctx, cancel := context.WithTimeout(context.Background(), deadline)
					defer cancel()
					start := time.Now()
					res, err := s.newSource(client(), srv.URL).Fetch(ctx, runAug22)
					if took := time.Since(start); took > deadline+3*time.Second {
						t.Errorf("Fetch took %v", took)
					}
					if n.Load() == 0 {
						t.Fatal("the server was never asked")
					}
					wantErr := f.want(s)
					if wantErr == nil {
						if err != nil {
							t.Fatalf("Fetch: %v", err)
						}
						if diff := cmp.Diff(want.Offers, res.Offers, cmpopts.IgnoreFields(schema.Offer{}, "SourceURL")); diff != "" || len(res.Problems) != 0 {
							t.Errorf("not the market of a good run (problems %v):\n%s", res.Problems, diff)
						}
						return
					}
					if !errors.Is(err, wantErr) {
						t.Fatalf("Fetch error %v (%d offers, problems %v), want %v", err, len(res.Offers), res.Problems, wantErr)
					}
					var se *scrapers.Error
					if !errors.As(err, &se) || se.Source != s.provider || !strings.HasPrefix(err.Error(), s.provider+": ") {
						t.Errorf("error %q does not name %s first", err, s.provider)
					}
					for _, key := range []string{lambdaTestKey, verdaTestID, verdaTestSecret, vultrTestKey, tensorDockTestKey, digitaloceanTestKey, hyperstackTestKey, runPodTestKey} {
						if strings.Contains(err.Error(), key) {
							t.Errorf("a credential is in the error %q", err)
						}
					}
					t.Logf("%v", err)
				})
			}
		})
	}
	if foreignHits.Load() != 0 {
		t.Errorf("a redirect reached the foreign host %d times", foreignHits.Load())
	}
}

// TestVastFaultOnOneRequest: a fault on one request of the many a Vast run makes fails that
// slice only, and says so: the run is never reported whole.
func TestVastFaultOnOneRequest(t *testing.T) {
	s := faultSources(t)[0]
	for _, f := range faults() {
		if f.want(s) == nil || strings.HasPrefix(f.name, "hang") || f.name == "valid but empty" {
			continue // hangs end the run (its deadline), and an empty slice is a real answer
		}
		t.Run(f.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 3 {
					f.serve(w, r, 1, s, "http://localhost:1")
					return
				}
				writeBody(w, s.ctype, s.good(r))
			}))
			defer srv.Close()
			res, err := s.newSource(newTestClient(t, scrapers.ClientConfig{MaxBodyBytes: faultBodyLimit, RetryMax: -1}), srv.URL).Fetch(context.Background(), runNov29)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			found := false
			for _, p := range res.Problems {
				found = found || errors.Is(p, f.want(s))
			}
			if !found {
				t.Errorf("problems %v do not report %v", res.Problems, f.want(s))
			}
		})
	}
}

// TestRunPodCatalogFaults: every fault on the v2 catalog request alone, the GraphQL answer good.
// The run keeps the GraphQL offers whole and reports the missing serverless prices as a problem
// wrapping the fault's condition, its key nowhere; never an error that would lose the pod
// offers, never a silent run without serverless prices.
func TestRunPodCatalogFaults(t *testing.T) {
	var s faultSource
	for _, fs := range faultSources(t) {
		if fs.name == "runpod api" {
			s = fs
		}
	}
	client := func() *scrapers.Client {
		return newTestClient(t, scrapers.ClientConfig{MaxBodyBytes: faultBodyLimit, Redactor: redact.New(runPodTestKey)})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeBody(w, s.ctype, s.good(r)) }))
	whole, err := s.newSource(client(), srv.URL).Fetch(context.Background(), runNov29)
	if err != nil || len(whole.Problems) != 0 {
		t.Fatalf("a good run: %v, problems %v", err, whole.Problems)
	}
	pods, err := scrapers.NewRunPod(client(), scrapers.RunPodConfig{URL: srv.URL + "/graphql"}, nil).Fetch(context.Background(), runNov29)
	srv.Close()
	if err != nil || len(pods.Offers) >= len(whole.Offers) {
		t.Fatalf("a keyless run: %v, %d offers against the keyed run's %d", err, len(pods.Offers), len(whole.Offers))
	}
	for _, f := range faults() {
		t.Run(f.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/v2/catalog/gpus") {
					f.serve(w, r, n.Add(1), s, "http://localhost:1")
					return
				}
				writeBody(w, s.ctype, s.good(r))
			}))
			defer srv.Close()
			deadline := 20 * time.Second
			if strings.HasPrefix(f.name, "hang") {
				deadline = time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			res, err := s.newSource(client(), srv.URL).Fetch(ctx, runNov29)
			if err != nil {
				t.Fatalf("Fetch: %v: a failed catalog must not fail the run", err)
			}
			if n.Load() == 0 {
				t.Fatal("the catalog was never asked")
			}
			want := f.want(s)
			if want == nil {
				if diff := cmp.Diff(whole.Offers, res.Offers, cmpopts.IgnoreFields(schema.Offer{}, "SourceURL")); diff != "" || len(res.Problems) != 0 {
					t.Errorf("not the market of a good run (problems %v):\n%s", res.Problems, diff)
				}
				return
			}
			if diff := cmp.Diff(pods.Offers, res.Offers, cmpopts.IgnoreFields(schema.Offer{}, "SourceURL")); diff != "" {
				t.Errorf("the pod offers are not those of GraphQL alone (-want +got):\n%s", diff)
			}
			if len(res.Problems) == 0 || !errors.Is(res.Problems[0], want) {
				t.Fatalf("problems %v, want first one wrapping %v", res.Problems, want)
			}
			if p := res.Problems[0].Error(); !strings.HasPrefix(p, "runpod: no serverless prices this run: ") || strings.Contains(p, runPodTestKey) {
				t.Errorf("problem %q: want it to say what is missing, without the key", p)
			}
			t.Logf("%v", res.Problems[0])
			if len(res.Payloads) == 0 || len(res.Payloads) > 2 {
				t.Errorf("%d payloads, want the GraphQL answer and the catalog's when one came", len(res.Payloads))
			}
		})
	}
}
