package scrapers_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// parseOCIFixtures parses the price list and shapes fixtures of one set ("" or "_traps").
func parseOCIFixtures(t *testing.T, set string) ([]schema.Offer, []error, error) {
	t.Helper()
	return scrapers.ParseOCI(readTestdata(t, "oci_products"+set+".json"), readTestdata(t, "oci_shapes"+set+".json"), runAug22, scrapers.DefaultOCIProductsURL)
}

func TestParseOCIGolden(t *testing.T) {
	for _, set := range []string{"", "_traps"} {
		t.Run("oci"+set, func(t *testing.T) {
			offers, problems, err := parseOCIFixtures(t, set)
			if err != nil {
				t.Fatal(err)
			}
			checkParsed(t, scrapers.OCIName, runAug22, offers, problems, err)
			checkGolden(t, "oci"+set, offers, problems)
		})
	}
}

// ociWant is the part of an offer each case pins by hand.
type ociWant struct {
	Model      string
	Count      uint16
	VRAM       float64
	PerGPU     string
	Price      string
	Intra      schema.IntraNode
	Flags      []schema.DQFlag
	Absent     bool
	RawName    string
	RegionLess bool
}

// TestParseOCIPinned pins values worked out by hand from the fixtures (docs/providers.md §9):
// the price is the part's per-GPU value times gpuQty, the VRAM the one of the three readings
// of gpuMemoryQty that fits, no spot offer anywhere.
func TestParseOCIPinned(t *testing.T) {
	none := []schema.DQFlag{}
	tests := map[string][]struct {
		name string
		key  string // offer_id/price_type
		want ociWant
	}{
		"": {
			{"H100: 8 x 10 (the public check value 80)", "BM.GPU.H100.8/on_demand", ociWant{"H100-SXM-80GB", 8, 80, "10", "80", schema.IntraNVSwitch, none, false, "BM.GPU.H100.8", true}},
			{"B200: 8 x 14 (the public check value 112)", "BM.GPU.B200.8/on_demand", ociWant{"B200-SXM-180GB", 8, 180, "14", "112", schema.IntraNVSwitch, none, false, "BM.GPU.B200.8", true}},
			{"B300: 2100 / 8 = 262.5 fits as GiB", "BM.GPU.B300.8/on_demand", ociWant{"B300-SXM-288GB", 8, 288, "15", "120", schema.IntraNVSwitch, []schema.DQFlag{schema.FlagVRAMSnapped}, false, "BM.GPU.B300.8", true}},
			{"GB200 (NVL72): the suffix leaves the id, stays in the raw name", "BM.GPU.GB200.4/on_demand", ociWant{"GB200-186GB", 4, 186, "16", "64", schema.IntraNVSwitch, []schema.DQFlag{schema.FlagVRAMSnapped}, false, "BM.GPU.GB200.4 (NVL72)", true}},
			{"GB300: gpuMemoryQty 278 is per GPU", "BM.GPU.GB300.4/on_demand", ociWant{"GB300-288GB", 4, 288, "18", "72", schema.IntraNVSwitch, []schema.DQFlag{schema.FlagVRAMSnapped}, false, "BM.GPU.GB300.4", true}},
			{"MI355X: gpuMemoryQty 288 is per GPU; an OAM board", "BM.GPU.MI355X.8/on_demand", ociWant{"MI355X-288GB", 8, 288, "8.6", "68.8", schema.IntraInfinityFabric, none, false, "BM.GPU.MI355X.8", true}},
			{"GPU4 is the A100 40 GB, priced under a generation part (E3)", "BM.GPU4.8/on_demand", ociWant{"A100-SXM-40GB", 8, 40, "3.05", "24.4", schema.IntraNVSwitch, none, false, "BM.GPU4.8", true}},
			{"A100-v2 is the 80 GB", "BM.GPU.A100-v2.8/on_demand", ociWant{"A100-SXM-80GB", 8, 80, "4", "32", schema.IntraNVSwitch, none, false, "BM.GPU.A100-v2.8", true}},
			{"L40S cards: PCIe", "BM.GPU.L40S.4/on_demand", ociWant{"L40S-48GB", 4, 48, "3.5", "14", schema.IntraPCIe, none, false, "BM.GPU.L40S.4", true}},
			{"a VM of A10 cards: PCIe", "VM.GPU.A10.2/on_demand", ociWant{"A10-24GB", 2, 24, "2", "4", schema.IntraPCIe, none, false, "VM.GPU.A10.2", true}},
			{"RTXPRO is the RTX PRO 6000", "BM.GPU.RTXPRO.8/on_demand", ociWant{"RTX-PRO-6000-96GB", 8, 96, "4.5", "36", schema.IntraPCIe, none, false, "BM.GPU.RTXPRO.8", true}},
			{"V100 (GPU3) names no form: unknown, kept", "VM.GPU3.4/on_demand", ociWant{"", 4, 16, "2.95", "11.8", schema.IntraUnknown, []schema.DQFlag{schema.FlagUnknownGPU}, false, "VM.GPU3.4", true}},
			{"allowPreemptible makes no spot offer: its price is in no document", "VM.GPU.A10.2/spot", ociWant{Absent: true}},
			{"a CPU shape is no offer", "BM.DenseIO.E5.128/on_demand", ociWant{Absent: true}},
			{"a VM shape billed per OCPU is no offer", "VM.Standard.E4.Flex/on_demand", ociWant{Absent: true}},
		},
		"_traps": {
			{"a fractional qty on the GPU part does not matter; a verbatim duplicate item neither", "BM.GPU.H100.8/on_demand", ociWant{"H100-SXM-80GB", 8, 80, "10", "80", schema.IntraNVSwitch, none, false, "BM.GPU.H100.8", true}},
			{"H100T is a SKU of its own, never an H100", "BM.GPU.H100T.8/on_demand", ociWant{"", 8, 80, "10.75", "86", schema.IntraUnknown, []schema.DQFlag{schema.FlagUnknownGPU}, false, "BM.GPU.H100T.8", true}},
			{"a metric spelled in another case and spacing", "BM.GPU.MI355X.8/on_demand", ociWant{"MI355X-288GB", 8, 288, "8.6", "68.8", schema.IntraInfinityFabric, none, false, "BM.GPU.MI355X.8", true}},
			{"no gpuMemoryQty: the catalog's VRAM, flagged", "VM.GPU.A10.1/on_demand", ociWant{"A10-24GB", 1, 24, "2", "2", schema.IntraPCIe, []schema.DQFlag{schema.FlagVRAMMissing}, false, "VM.GPU.A10.1", true}},
			{"a per-GPU price of 7 decimals: the shape price its product rounded once", "VM.GPU.A10.3/on_demand", ociWant{"A10-24GB", 3, 24, "2.333333", "7", schema.IntraPCIe, none, false, "VM.GPU.A10.3", true}},
			{"a hidden shape is not listed", "VM.GPU.A10.2/on_demand", ociWant{Absent: true}},
			{"an inactive shape is not listed", "BM.GPU.A10.4/on_demand", ociWant{Absent: true}},
			{"a VMware node part is not a GPU-hour price", "BM.GPU.A10.64/on_demand", ociWant{Absent: true}},
		},
	}
	for set, cases := range tests {
		offers, _, err := parseOCIFixtures(t, set)
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]schema.Offer{}
		for _, o := range offers {
			byKey[o.OfferID+"/"+string(o.PriceType)] = o
			if o.PriceType != schema.OnDemand || o.Region != "" || o.Country != "" || o.InterNode != schema.InterUnknown || o.Stock != schema.StockUnknown {
				t.Errorf("%s: %s in %q/%q, inter-node %s, stock %s; want on-demand, no region, unknowns", o.OfferID, o.PriceType, o.Region, o.Country, o.InterNode, o.Stock)
			}
		}
		for _, tt := range cases {
			t.Run("oci"+set+"/"+tt.name, func(t *testing.T) {
				o, ok := byKey[tt.key]
				if tt.want.Absent {
					if ok {
						t.Errorf("offer %s should not exist: %+v", tt.key, o)
					}
					return
				}
				if !ok {
					t.Fatalf("no offer %s", tt.key)
				}
				got := ociWant{o.GPUModel, o.GPUCount, o.VRAMGB, o.PriceUSDPerGPUHour.String(), o.PriceUSDPerHour.String(), o.IntraNode, o.DQFlags, false, o.GPUNameRaw, o.Region == ""}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("offer %s mismatch (-want +got):\n%s", tt.key, diff)
				}
			})
		}
	}
}

// TestParseOCITrapProblems: every shape of the traps that cannot be priced is a problem naming
// the shape and the field, none silently dropped.
func TestParseOCITrapProblems(t *testing.T) {
	_, problems, err := parseOCIFixtures(t, "_traps")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`oci: shape "BM.GPU.B300.8": listed twice`,
		`oci: shape "BM.GPU.A10.64": part B108806: metricName "Node Per Hour"`,
		`oci: shape "VM.GPU.X1.1": part B90001: currencyCodeLocalizations: no USD price`,
		`oci: shape "VM.GPU.X2.1": part B90002: currencyCodeLocalizations: two PAY_AS_YOU_GO prices, 3 and 2.5`,
		`oci: shape "VM.GPU.X3.1": part B90003: currencyCodeLocalizations: price 0 is not above 0`,
		`oci: shape "VM.GPU.X4.1": part B90004: price-list item: decoding`,
		`oci: shape "VM.GPU.X6.1": part B90006: listed twice in the price list, differently`,
		`oci: shape "VM.GPU.X7.1": part B99999: not in the price list`,
		`oci: shape "VM.GPU.A10.half": gpuQty 0.5 is not a GPU count`,
		`oci: shape "BM.GPU.A10.8": products: no ocpu part`,
		`oci: shape #19: decoding: json: cannot unmarshal string into Go struct field ociShape.gpuQty`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no problem %q in:\n%s", want, all)
		}
	}
	if len(problems) != 11 {
		t.Errorf("%d problems, want 11:\n%s", len(problems), all)
	}
}

// TestParseOCIErrors: bodies that are not whole documents of their kind, or price nothing, are
// errors naming the provider and the document.
func TestParseOCIErrors(t *testing.T) {
	products, shapes := string(readTestdata(t, "oci_products.json")), string(readTestdata(t, "oci_shapes.json"))
	tests := []struct {
		name             string
		products, shapes string
		want             error
		text             string
	}{
		{"price list changed", string(readTestdata(t, "oci_products_changed.json")), shapes, scrapers.ErrLayoutChanged, "oci: price list: "},
		{"shapes changed", products, string(readTestdata(t, "oci_shapes_changed.json")), scrapers.ErrLayoutChanged, "oci: shapes: "},
		{"price list without items", `{"lastUpdated": "2026-08-14T09:09:55.872Z"}`, shapes, scrapers.ErrLayoutChanged, "no items array"},
		{"price list items not an array", `{"items": {}}`, shapes, scrapers.ErrLayoutChanged, "price list"},
		{"empty price list", `{"items": []}`, shapes, scrapers.ErrNoOffers, "the list has no items"},
		{"empty shapes", products, `{"items": []}`, scrapers.ErrNoOffers, "0 shapes"},
		{"only CPU shapes", products, `{"items": [{"name": "VM.Standard.E4.Flex", "gpuQty": null, "products": [{"partNumber": "B97384", "type": {"value": "ocpu"}}]}]}`, scrapers.ErrNoOffers, "0 of them GPU shapes"},
		{"a price list cut short", products[:len(products)/2], shapes, scrapers.ErrIncomplete, "oci: price list: "},
		{"shapes cut short", products, shapes[:len(shapes)/2], scrapers.ErrIncomplete, "oci: shapes: "},
		{"an HTML page for shapes", products, "<html><body>Sign in</body></html>", scrapers.ErrLayoutChanged, "oci: shapes: "},
		{"empty price list body", "", shapes, scrapers.ErrIncomplete, "oci: price list: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseOCI([]byte(tt.products), []byte(tt.shapes), runAug22, scrapers.DefaultOCIProductsURL)
			if !errors.Is(err, tt.want) || len(offers) != 0 {
				t.Fatalf("%d offers, %v; want %v", len(offers), err, tt.want)
			}
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.OCIName || !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q is not an oci error saying %q", err, tt.text)
			}
		})
	}
}

// ociServer serves the price list and shapes fixtures at the default paths, counting requests.
func ociServer(t *testing.T, n *atomic.Int64) *httptest.Server {
	products, shapes := readTestdata(t, "oci_products.json"), readTestdata(t, "oci_shapes.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if strings.HasSuffix(r.URL.Path, "/shapes.json") {
			writeBody(w, "application/json", shapes)
			return
		}
		writeBody(w, "application/json;charset=UTF-8", products)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestOCIFetch: one run asks for both documents once, keeps both as payloads in that order,
// and gives the offers ParseOCI gives on them; the stored payloads re-derive the same offers.
func TestOCIFetch(t *testing.T) {
	var n atomic.Int64
	srv := ociServer(t, &n)
	cfg := scrapers.OCIConfig{ProductsURL: srv.URL + "/pls/apex/cetools/api/v1/products/?currencyCode=USD", ShapesURL: srv.URL + "/a/ocom/docs/cloudestimator2/data/shapes.json"}
	res, err := scrapers.NewOCI(newTestClient(t, scrapers.ClientConfig{}), cfg, nil).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || res.Attempts != 2 || len(res.Payloads) != 2 {
		t.Fatalf("%d requests, %d attempts, %d payloads; want 2 of each", n.Load(), res.Attempts, len(res.Payloads))
	}
	if res.Payloads[0].URL != cfg.ProductsURL || res.Payloads[1].URL != cfg.ShapesURL {
		t.Errorf("payloads at %s, %s; want the price list, then the shapes", res.Payloads[0].URL, res.Payloads[1].URL)
	}
	want, _, err := scrapers.ParseOCI(readTestdata(t, "oci_products.json"), readTestdata(t, "oci_shapes.json"), runAug22, cfg.ProductsURL)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, res.Offers); diff != "" || len(res.Problems) != 0 {
		t.Errorf("Fetch differs from ParseOCI (problems %v):\n%s", res.Problems, diff)
	}

	// Re-derived from the stored payloads, in either order, with a failed answer among them.
	payloads := append([]schema.RawPayload{{URL: cfg.ShapesURL, Status: 503, Body: []byte("busy")}}, res.Payloads[1], res.Payloads[0])
	stored, err := scrapers.NewStored(scrapers.OCIName, payloads)
	if err != nil {
		t.Fatal(err)
	}
	again, err := stored.Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res.Offers, again.Offers); diff != "" {
		t.Errorf("re-derived offers differ (-fetched +stored):\n%s", diff)
	}
	only, _ := scrapers.NewStored(scrapers.OCIName, res.Payloads[:1])
	if _, err := only.Fetch(context.Background(), runAug22); !errors.Is(err, scrapers.ErrNoOffers) || !strings.HasPrefix(err.Error(), "oci: ") {
		t.Errorf("a stored run without shapes: %v, want an oci ErrNoOffers", err)
	}
}

// TestOCIFetchFailsWhole: a failed shapes request fails the run, with the price list kept as a
// payload for the run log.
func TestOCIFetchFailsWhole(t *testing.T) {
	products := readTestdata(t, "oci_products.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/shapes.json") {
			http.NotFound(w, r)
			return
		}
		writeBody(w, "application/json", products)
	}))
	defer srv.Close()
	res, err := scrapers.NewOCI(newTestClient(t, scrapers.ClientConfig{}), scrapers.OCIConfig{ProductsURL: srv.URL + "/products/", ShapesURL: srv.URL + "/shapes.json"}, nil).Fetch(context.Background(), runAug22)
	if !errors.Is(err, scrapers.ErrStatus) || !strings.HasPrefix(err.Error(), "oci: fetching the shapes: ") {
		t.Fatalf("Fetch: %v, want an oci ErrStatus of the shapes", err)
	}
	if len(res.Offers) != 0 || len(res.Payloads) != 2 {
		t.Errorf("%d offers, %d payloads; want none and both answers", len(res.Offers), len(res.Payloads))
	}
}

func FuzzParseOCI(f *testing.F) {
	f.Add(readTestdata(f, "oci_products.json"), readTestdata(f, "oci_shapes.json"))
	f.Add(readTestdata(f, "oci_products_traps.json"), readTestdata(f, "oci_shapes_traps.json"))
	f.Add(readTestdata(f, "oci_products_changed.json"), readTestdata(f, "oci_shapes_changed.json"))
	f.Add([]byte(`{"items": [{"partNumber": "B1", "metricName": "GPU Per Hour", "currencyCodeLocalizations": [{"currencyCode": "USD", "prices": [{"model": "PAY_AS_YOU_GO", "value": 1e400}]}]}]}`),
		[]byte(`{"items": [{"name": "BM.GPU.H100.8", "gpuQty": 8, "products": [{"partNumber": "B1", "type": {"value": "ocpu"}}]}]}`))
	f.Add([]byte(`{"items": [{"partNumber": "B1", "currencyCodeLocalizations": null}]}`),
		[]byte(`{"items": [null, {"name": " (x)", "gpuQty": 1e9, "gpuMemoryQty": -1}]}`))
	f.Fuzz(func(t *testing.T, products, shapes []byte) {
		offers, problems, err := scrapers.ParseOCI(products, shapes, runAug22, scrapers.DefaultOCIProductsURL)
		checkParsed(t, scrapers.OCIName, runAug22, offers, problems, err)
		for _, o := range offers {
			if o.PriceType != schema.OnDemand || o.Region != "" {
				t.Fatalf("offer %q: %s in %q", o.OfferID, o.PriceType, o.Region)
			}
		}
	})
}

func BenchmarkParseOCI(b *testing.B) {
	products, shapes := readTestdata(b, "oci_products.json"), readTestdata(b, "oci_shapes.json")
	b.SetBytes(int64(len(products) + len(shapes)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := scrapers.ParseOCI(products, shapes, runAug22, scrapers.DefaultOCIProductsURL); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOCIFaultOnTheShapes drives the fault table through OCI's second request, the shapes
// catalog, the price list answering well: every fault fails the run with its condition, named
// by the provider, as it does on the first.
func TestOCIFaultOnTheShapes(t *testing.T) {
	var s faultSource
	for _, fs := range faultSources(t) {
		if fs.provider == scrapers.OCIName {
			s = fs
		}
	}
	products := readTestdata(t, "oci_products.json")
	for _, f := range faults() {
		want := f.want(s)
		if want == nil {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/shapes.json") {
					writeBody(w, "application/json", products)
					return
				}
				f.serve(w, r, n.Add(1), s, "http://localhost:1")
			}))
			defer srv.Close()
			ctx := context.Background()
			if strings.HasPrefix(f.name, "hang") {
				ctx = timeoutContext(t, 300*time.Millisecond)
			}
			res, err := s.newSource(newTestClient(t, scrapers.ClientConfig{MaxBodyBytes: faultBodyLimit}), srv.URL).Fetch(ctx, runAug22)
			if !errors.Is(err, want) || !strings.HasPrefix(err.Error(), "oci: ") {
				t.Fatalf("Fetch: %v, want an oci error wrapping %v", err, want)
			}
			if len(res.Offers) != 0 || n.Load() == 0 {
				t.Errorf("%d offers, %d shapes requests", len(res.Offers), n.Load())
			}
		})
	}
}
