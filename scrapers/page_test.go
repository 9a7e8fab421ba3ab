package scrapers_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// TestPageFetchRedirects: colly follows a redirect within the page's domain and refuses one to
// a foreign domain, although the transport is the retrying client's (docs/providers.md §6.5).
func TestPageFetchRedirects(t *testing.T) {
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		foreignHits.Add(1)
		writeBody(w, "text/html", readTestdata(t, "coreweave_pricing.html"))
	}))
	defer foreign.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(foreign.URL, "http://"))
	foreignURL := "http://localhost:" + port + "/pricing" // 127.0.0.1 and localhost are different domains

	pages := map[string][]byte{
		"/cw":     readTestdata(t, "coreweave_pricing.html"),
		"/lambda": readTestdata(t, "lambda_pricing.html"),
		"/verda":  readTestdata(t, "verda_pricing.html"),
		"/nebius": readTestdata(t, "nebius_prices.html"),
		"/do":     readTestdata(t, "digitalocean_pricing.html"),
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

	sources := map[string]func(url string) pipeline.Source{
		"coreweave": func(url string) pipeline.Source {
			return scrapers.NewCoreWeave(newTestClient(t, scrapers.ClientConfig{}), scrapers.CoreWeaveConfig{URL: url, Delay: -1}, nil)
		},
		"lambda": func(url string) pipeline.Source {
			return scrapers.NewLambda(newTestClient(t, scrapers.ClientConfig{}), scrapers.LambdaConfig{PageURL: url, Delay: -1}, nil)
		},
		"verda": func(url string) pipeline.Source {
			return scrapers.NewVerda(newTestClient(t, scrapers.ClientConfig{}), scrapers.VerdaConfig{PageURL: url, Delay: -1}, nil)
		},
		"nebius": func(url string) pipeline.Source {
			return scrapers.NewNebius(newTestClient(t, scrapers.ClientConfig{}), scrapers.NebiusConfig{URL: url, Delay: -1}, nil)
		},
		"digitalocean": func(url string) pipeline.Source {
			return scrapers.NewDigitalOcean(newTestClient(t, scrapers.ClientConfig{}), scrapers.DigitalOceanConfig{PageURL: url, Delay: -1}, nil)
		},
	}
	prefix := map[string]string{"coreweave": "/cw", "lambda": "/lambda", "verda": "/verda", "nebius": "/nebius", "digitalocean": "/do"}
	for name, newSource := range sources {
		t.Run(name+" same domain", func(t *testing.T) {
			res, err := newSource(srv.URL+prefix[name]+"/moved").Fetch(context.Background(), runAug22)
			if err != nil || len(res.Offers) == 0 {
				t.Fatalf("Fetch: %d offers, %v", len(res.Offers), err)
			}
		})
		t.Run(name+" foreign domain", func(t *testing.T) {
			res, err := newSource(srv.URL+prefix[name]+"/away").Fetch(context.Background(), runAug22)
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
	good := readTestdata(t, "coreweave_pricing.html")
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
	fetch := func(p string) (schema.Extract, error) {
		cw := scrapers.NewCoreWeave(newTestClient(t, scrapers.ClientConfig{RetryMax: -1}), scrapers.CoreWeaveConfig{URL: srv.URL + p, Delay: -1}, nil)
		return cw.Fetch(context.Background(), runAug22)
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
