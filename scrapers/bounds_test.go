package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// TestTruncatedAnywhereIsIncomplete cuts every fixture and recorded body at hundreds of points,
// and at each of its last bytes: no cut parses, and every cut past the first tag is
// ErrIncomplete. A cut page is never a smaller market.
func TestTruncatedAnywhereIsIncomplete(t *testing.T) {
	parsers := map[string]parseFunc{
		"vastai_": scrapers.ParseVast, "runpod_": scrapers.ParseRunPod, "lambda_instance": scrapers.ParseLambda,
		"lambda_pricing": scrapers.ParseLambdaPage, "coreweave_": scrapers.ParseCoreWeave,
		"snapshot/vastai/": scrapers.ParseVast, "snapshot/runpod/": scrapers.ParseRunPod,
		"snapshot/lambda/001": scrapers.ParseLambda, "snapshot/lambda/002": scrapers.ParseLambdaPage,
		"snapshot/coreweave/":  scrapers.ParseCoreWeave,
		"verda_instance_types": scrapers.ParseVerda, "verda_pricing": scrapers.ParseVerdaPage,
		"verda_instance_availability": parseVerdaAvailability,
		// Verda's recording: the token (001, no parser), the types, both availability lists, the page.
		"snapshot/verda/002": scrapers.ParseVerda, "snapshot/verda/003": parseVerdaAvailability,
		"snapshot/verda/004": parseVerdaAvailability, "snapshot/verda/005": scrapers.ParseVerdaPage,
		// OCI's two documents, each cut with the other whole.
		"oci_products": ociWithShapes(t), "oci_shapes": ociWithProducts(t),
		"snapshot/oci/001": ociWithShapes(t), "snapshot/oci/002": ociWithProducts(t),
		"vultr_plans": scrapers.ParseVultr, "snapshot/vultr/": scrapers.ParseVultr,
		"tensordock_": scrapers.ParseTensorDock, "snapshot/tensordock/": scrapers.ParseTensorDock,
		"nebius_prices": scrapers.ParseNebius, "snapshot/nebius/": scrapers.ParseNebius,
		// DigitalOcean's recording: the size list's two pages, then the pricing page.
		"digitalocean_sizes": scrapers.ParseDigitalOcean, "digitalocean_pricing": scrapers.ParseDigitalOceanPage,
		"snapshot/digitalocean/001": scrapers.ParseDigitalOcean, "snapshot/digitalocean/002": scrapers.ParseDigitalOcean,
		"snapshot/digitalocean/003": scrapers.ParseDigitalOceanPage,
		// Hyperstack's API answers, each cut with the other whole, its recording (the pricebook,
		// the flavors, the rate card) and its rate card.
		"hyperstack_pricebook": hyperstackWithFlavors(t), "hyperstack_flavors": hyperstackWithPricebook(t),
		"snapshot/hyperstack/001": hyperstackWithFlavors(t), "snapshot/hyperstack/002": hyperstackWithPricebook(t),
		"hyperstack_pricing": scrapers.ParseHyperstackPage, "snapshot/hyperstack/003": scrapers.ParseHyperstackPage,
	}
	files, _ := filepath.Glob("testdata/*.json")
	html, _ := filepath.Glob("testdata/*.html")
	bodies, _ := filepath.Glob("testdata/snapshot/*/*.body")
	files = append(append(files, html...), bodies...)
	tested := 0
	for _, path := range files {
		name := strings.TrimPrefix(filepath.ToSlash(path), "testdata/")
		var parse parseFunc
		for prefix, p := range parsers {
			if strings.HasPrefix(name, prefix) {
				parse = p
			}
		}
		if parse == nil || strings.Contains(name, ".golden.") || strings.Contains(name, "_changed") || strings.Contains(name, "_renamed") {
			continue
		}
		body := readTestdata(t, name)
		if _, _, err := parse(body, runAug22, "https://example.test/"); err != nil {
			continue // a fixture of errors (the traps that parse to nothing)
		}
		tested++
		t.Run(name, func(t *testing.T) {
			end := len(content(body))
			firstTag := bytes.IndexByte(body, '>') + 1
			cuts := map[int]bool{}
			for i := 0; i < 400; i++ {
				cuts[end*i/400] = true
			}
			for i := max(end-64, 0); i < end; i++ {
				cuts[i] = true
			}
			for n := range cuts {
				offers, _, err := parse(body[:n], runAug22, "https://example.test/")
				switch {
				case err == nil:
					t.Fatalf("cut at %d of %d bytes: %d offers, no error", n, len(body), len(offers))
				case n >= firstTag && !errors.Is(err, scrapers.ErrIncomplete):
					t.Fatalf("cut at %d of %d bytes: %v, want ErrIncomplete", n, len(body), err)
				}
			}
		})
	}
	if tested < 10 {
		t.Errorf("only %d bodies tested", tested)
	}
}

// parseVerdaAvailability is ParseVerdaAvailability as a parseFunc: a placeholder offer per
// available type, so that the truncation test can tell a parse from an error.
func parseVerdaAvailability(body []byte, run schema.Run, _ string) ([]schema.Offer, []error, error) {
	avail, err := scrapers.ParseVerdaAvailability(body)
	if err != nil {
		return nil, nil, err
	}
	var offers []schema.Offer
	for range avail {
		offers = append(offers, schema.Offer{RunID: run.ID})
	}
	return offers, nil, nil
}

// ociWithShapes parses an OCI price list against the whole shapes fixture.
func ociWithShapes(t *testing.T) parseFunc {
	shapes := readTestdata(t, "oci_shapes.json")
	return func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
		return scrapers.ParseOCI(body, shapes, run, sourceURL)
	}
}

// ociWithProducts parses an OCI shapes catalog against the whole price-list fixture.
func ociWithProducts(t *testing.T) parseFunc {
	products := readTestdata(t, "oci_products.json")
	return func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
		return scrapers.ParseOCI(products, body, run, sourceURL)
	}
}

// hyperstackWithFlavors parses a Hyperstack pricebook against the whole flavors fixture.
func hyperstackWithFlavors(t *testing.T) parseFunc {
	flavors := readTestdata(t, "hyperstack_flavors.json")
	return func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
		return scrapers.ParseHyperstack(body, flavors, run, sourceURL)
	}
}

// hyperstackWithPricebook parses Hyperstack flavors against the whole pricebook fixture.
func hyperstackWithPricebook(t *testing.T) parseFunc {
	pricebook := readTestdata(t, "hyperstack_pricebook.json")
	return func(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
		return scrapers.ParseHyperstack(pricebook, body, run, sourceURL)
	}
}

// TestSourceByteBudget: the budget counts every body a source reads in one Fetch, over all its
// requests, exactly; a source that would pass it fails with ErrOverBudget and stops asking, and
// the next Fetch starts afresh.
func TestSourceByteBudget(t *testing.T) {
	market := newVastMarket(t, "vastai_market.json")
	srv := httptest.NewServer(market)
	defer srv.Close()
	vast := func(budget int64) pipeline.Source {
		return scrapers.NewVast(newTestClient(t, scrapers.ClientConfig{MaxSourceBytes: budget}),
			scrapers.VastConfig{URL: srv.URL, RequestInterval: -1}, nil)
	}
	res, err := vast(0).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, p := range res.Payloads {
		total += int64(len(p.Body))
	}
	t.Logf("a whole run reads %d bytes in %d requests", total, len(res.Payloads))

	t.Run("exactly the run's bytes", func(t *testing.T) {
		src := vast(total)
		for i := range 2 { // the second Fetch has a budget of its own
			if res, err := src.Fetch(context.Background(), runNov29); err != nil || len(res.Offers) == 0 {
				t.Fatalf("Fetch %d: %d offers, %v", i+1, len(res.Offers), err)
			}
		}
	})
	t.Run("one byte less", func(t *testing.T) {
		res, err := vast(total-1).Fetch(context.Background(), runNov29)
		if !errors.Is(err, scrapers.ErrOverBudget) || len(res.Payloads) != 20 {
			t.Fatalf("Fetch: %v after %d payloads, want ErrOverBudget at the last (21st) request", err, len(res.Payloads))
		}
		if !strings.HasPrefix(err.Error(), "vastai: ") || !strings.Contains(err.Error(), fmt.Sprintf("budget %d", total-1)) {
			t.Errorf("error %q does not say the budget", err)
		}
	})
	t.Run("a small budget stops the run early", func(t *testing.T) {
		before := len(market.bodies)
		_, err := vast(4000).Fetch(context.Background(), runNov29)
		if !errors.Is(err, scrapers.ErrOverBudget) {
			t.Fatalf("Fetch: %v, want ErrOverBudget", err)
		}
		if asked := len(market.bodies) - before; asked > 3 {
			t.Errorf("the source went on asking: %d requests", asked)
		}
	})

	// One answer over the budget, under the body limit: refused on its Content-Length for the
	// JSON sources, when it arrives for colly's pages.
	page := readTestdata(t, "coreweave_pricing.html")
	gputypes := readTestdata(t, "runpod_gputypes.json")
	one := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/graphql") {
			writeBody(w, "application/json", gputypes)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.(http.Flusher).Flush() // chunked: no Content-Length
		_, _ = w.Write(page)
	}))
	defer one.Close()
	c := newTestClient(t, scrapers.ClientConfig{MaxSourceBytes: 10_000})
	for _, src := range []pipeline.Source{
		scrapers.NewRunPod(c, scrapers.RunPodConfig{URL: one.URL + "/graphql"}, nil),
		scrapers.NewCoreWeave(c, scrapers.CoreWeaveConfig{URL: one.URL + "/pricing", Delay: -1}, nil),
	} {
		if _, err := src.Fetch(context.Background(), runAug22); !errors.Is(err, scrapers.ErrOverBudget) {
			t.Errorf("%s: %v, want ErrOverBudget", src.Name(), err)
		}
	}
}

// TestOfferCaps: a response cannot make a source hold more offers than MaxOffers, nor a Vast
// page more rows than it asked for.
func TestOfferCaps(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"data": {"gpuTypes": [`)
	for i := range scrapers.MaxOffers/2 + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": "GPU %d", "memoryInGb": 24, "securePrice": 1.5, "communityPrice": 1.2}`, i)
	}
	b.WriteString("]}}")
	if _, _, err := scrapers.ParseRunPod([]byte(b.String()), runNov29, scrapers.DefaultRunPodURL); !errors.Is(err, scrapers.ErrTooManyOffers) {
		t.Errorf("RunPod with %d offers: %v, want ErrTooManyOffers", scrapers.MaxOffers+2, err)
	}

	// A thousand unreadable types are twenty problems and a count, not a thousand problems.
	bad := `{"data": {"gpuTypes": [{"id": "NVIDIA L4", "memoryInGb": 24, "securePrice": 0.44}` + strings.Repeat(`, {"displayName": "x"}`, 1000) + `]}}`
	_, problems, err := scrapers.ParseRunPod([]byte(bad), runNov29, scrapers.DefaultRunPodURL)
	if err != nil || len(problems) != 21 || problems[20].Error() != "runpod: 980 more problems" {
		t.Errorf("%d problems (last %v), %v; want 20 and a count of the 980 more", len(problems), problems[len(problems)-1], err)
	}

	row := `{"id": %d, "num_gpus": 1, "gpu_name": "RTX 3090", "gpu_ram": 24576, "dph_total": 0.2}`
	var rows []string
	for i := range 6 {
		rows = append(rows, fmt.Sprintf(row, i+1))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeBody(w, "application/json", []byte(`{"offers": [`+strings.Join(rows, ",")+`]}`))
	}))
	defer srv.Close()
	v := scrapers.NewVast(newTestClient(t, scrapers.ClientConfig{}), scrapers.VastConfig{URL: srv.URL, PageLimit: 5, RequestInterval: -1}, nil)
	if _, err := v.Fetch(context.Background(), runNov29); !errors.Is(err, scrapers.ErrTooManyOffers) {
		t.Errorf("a Vast page of 6 rows asked for 5: %v, want ErrTooManyOffers", err)
	}
}

// TestPageTokenBounds: a page with more tokens, or a larger token, than a tree may be built of
// is refused before one is; a large comment under the bound still parses.
func TestPageTokenBounds(t *testing.T) {
	page := string(readTestdata(t, "coreweave_pricing.html"))
	pad := func(s string) string { return mustReplace(page, "</body>", s+"</body>") }
	tests := []struct {
		name string
		body string
		want error
	}{
		{"300,001 tokens", pad(strings.Repeat("<i></i>", 150_001)), scrapers.ErrBodyTooLarge},
		{"a 5 MiB comment", pad("<!--" + strings.Repeat("x", 5<<20) + "-->"), scrapers.ErrBodyTooLarge},
		{"a 3 MiB comment", pad("<!--" + strings.Repeat("x", 3<<20) + "-->"), nil},
		{"an unclosed table", pad("<table><tr><td>1</td></tr>"), scrapers.ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseCoreWeave([]byte(tt.body), runAug22, scrapers.DefaultCoreWeaveURL)
			if tt.want == nil {
				if err != nil || len(offers) != 32 {
					t.Fatalf("%d offers, %v; want the page's 32", len(offers), err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("%v, want %v", err, tt.want)
			}
		})
	}
}

// TestReplayKeepsTheLimits: a replayed body passes the same limits as a live one.
func TestReplayKeepsTheLimits(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(readTestdata(t, "runpod_gputypes.json"))))
		writeBody(w, "application/json", readTestdata(t, "runpod_gputypes.json"))
	}))
	defer srv.Close()
	cfg := scrapers.RunPodConfig{URL: srv.URL + "/graphql"}
	if _, err := scrapers.NewRunPod(newTestClient(t, scrapers.ClientConfig{RecordDir: dir}), cfg, nil).Fetch(context.Background(), runNov29); err != nil {
		t.Fatal(err)
	}
	_, err := scrapers.NewRunPod(newTestClient(t, scrapers.ClientConfig{ReplayDir: dir, MaxBodyBytes: 1000}), cfg, nil).Fetch(context.Background(), runNov29)
	if !errors.Is(err, scrapers.ErrBodyTooLarge) {
		t.Errorf("replay over the body limit: %v, want ErrBodyTooLarge", err)
	}
}

// TestEverySourceKeepsTheOfferCap: http.max_source_offers bounds every source, not only the one
// that reads many pages: a recorded answer of more offers than the cap fails with
// ErrTooManyOffers.
func TestEverySourceKeepsTheOfferCap(t *testing.T) {
	serve := func(t *testing.T, file, contentType string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeBody(w, contentType, readTestdata(t, file))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	capped := func(t *testing.T) *scrapers.Client {
		return newTestClient(t, scrapers.ClientConfig{MaxSourceOffers: 1})
	}
	type source interface {
		Fetch(context.Context, schema.Run) (schema.Extract, error)
	}
	for name, source := range map[string]func(t *testing.T) source{
		"runpod": func(t *testing.T) source {
			return scrapers.NewRunPod(capped(t), scrapers.RunPodConfig{URL: serve(t, "runpod_gputypes.json", "application/json") + "/graphql"}, nil)
		},
		"coreweave": func(t *testing.T) source {
			return scrapers.NewCoreWeave(capped(t), scrapers.CoreWeaveConfig{URL: serve(t, "coreweave_pricing.html", "text/html") + "/pricing", Delay: -1}, nil)
		},
		"lambda page": func(t *testing.T) source {
			return scrapers.NewLambda(capped(t), scrapers.LambdaConfig{PageURL: serve(t, "lambda_pricing.html", "text/html") + "/pricing", Delay: -1}, nil)
		},
		"oci": func(t *testing.T) source {
			var n atomic.Int64
			srv := ociServer(t, &n)
			return scrapers.NewOCI(capped(t), scrapers.OCIConfig{ProductsURL: srv.URL + "/products/", ShapesURL: srv.URL + "/shapes.json"}, nil)
		},
		"lambda api": func(t *testing.T) source {
			return scrapers.NewLambda(capped(t), scrapers.LambdaConfig{APIKey: "secret_test_key", APIURL: serve(t, "lambda_instance_types.json", "application/json") + "/api/v1/instance-types"}, nil)
		},
		"vultr": func(t *testing.T) source {
			srv := httptest.NewServer(newVultrAPI(t))
			t.Cleanup(srv.Close)
			return newVultrSource(capped(t), srv.URL, "")
		},
		"tensordock": func(t *testing.T) source {
			srv := httptest.NewServer(newTensorDockAPI(t))
			t.Cleanup(srv.Close)
			return newTensorDockSource(capped(t), srv.URL, tensorDockTestKey)
		},
		"verda page": func(t *testing.T) source {
			return scrapers.NewVerda(capped(t), scrapers.VerdaConfig{PageURL: serve(t, "verda_pricing.html", "text/html") + "/pricing", Delay: -1}, nil)
		},
		"nebius": func(t *testing.T) source {
			return scrapers.NewNebius(capped(t), scrapers.NebiusConfig{URL: serve(t, "nebius_prices.html", "text/html") + "/prices", Delay: -1}, nil)
		},
		"digitalocean page": func(t *testing.T) source {
			return scrapers.NewDigitalOcean(capped(t), scrapers.DigitalOceanConfig{PageURL: serve(t, "digitalocean_pricing.html", "text/html") + "/pricing/", Delay: -1}, nil)
		},
		"digitalocean api": func(t *testing.T) source {
			srv := httptest.NewServer(newDigitalOceanAPI(t))
			t.Cleanup(srv.Close)
			return newDigitalOceanAPISource(capped(t), srv.URL)
		},
		"verda api": func(t *testing.T) source {
			srv := httptest.NewServer(newVerdaAPI(t))
			t.Cleanup(srv.Close)
			return newVerdaAPISource(capped(t), srv.URL)
		},
		"hyperstack page": func(t *testing.T) source {
			return scrapers.NewHyperstack(capped(t), scrapers.HyperstackConfig{PageURL: serve(t, "hyperstack_pricing.html", "text/html") + "/gpu-pricing", Delay: -1}, nil)
		},
		"hyperstack api": func(t *testing.T) source {
			srv := httptest.NewServer(newHyperstackAPI(t))
			t.Cleanup(srv.Close)
			return newHyperstackAPISource(capped(t), srv.URL)
		},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := source(t).Fetch(context.Background(), runNov29); !errors.Is(err, scrapers.ErrTooManyOffers) {
				t.Errorf("%s with a cap of 1 offer: %v, want ErrTooManyOffers", name, err)
			}
		})
	}
}
