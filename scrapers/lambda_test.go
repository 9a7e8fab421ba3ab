package scrapers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// Fixtures (testdata/), built to providers.md §3 and §4 (no live access):
//
//   - lambda_instance_types.json: the instance-types response with the records of §3.3 (spec
//     examples and the sky-cat v7 cents/vCPU/GiB tuples, 8x B200 SXM6 at 3992 cents), the
//     descriptions seen in the sources, capacity lists that are often empty, and cpu_4x_general.
//     storage_gib values other than a10 and 8x H100 are placeholders, as §3.3 says.
//   - lambda_instance_types_traps.json: the §3.5 traps: a 1.5.3-format record (no specs.gpus,
//     price as the string "80"), the spec's "Example GPU" (unknown name), a negative price, the
//     gdr variant, and a CPU type without specs.gpus.
//   - lambda_pricing.html: lambda.ai/pricing as §3.6 describes it (1-Click Cluster tables first,
//     the "Instances pricing" heading, 8x/4x/2x/1x tabs paired to tabpanels, <tr data-plan> rows
//     with data-label cells, "—" for unpriced, hash-suffixed classes, an escaped copy of the rows
//     in window.__islands). B200 prices are the live ones of §3.6; the others are the API cents
//     per GPU of the fixture above; vCPU/RAM/storage of the smaller B200 and A6000 sizes are
//     placeholders.
//   - lambda_pricing_changed.html: the same page redesigned as cards (no tabs, no data-plan).
//   - coreweave_pricing.html: the pricing page of §4.3 with every GPU row and value of §4.4 (NA
//     and EU), the CPU section after it, footnotes.
//   - coreweave_pricing_traps.html: thousands separators in a price, "Contact sales" inside a
//     price, a "4<sup>1</sup>" count, an unknown GPU (Vera Rubin NVL144), an em-dash spot price
//     and a malformed price.
//   - coreweave_pricing_changed.html: rows no longer "table-row-v2 w-dyn-item" listitems.
//   - coreweave_pricing_renamed.html: the "Spot Price" header renamed.
//
// Golden files (testdata/*.golden.json) hold the exact offers and problems; regenerate them with
// go test ./scrapers/ -run 'Lambda|CoreWeave' -update, then review the diff.

func init() {
	// The flag may be registered by another _test file of the package first.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata/")
	}
}

// lcUpdate reports whether -update was given.
func lcUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// lcRun is the run every parser test uses, so golden files need no scrubbing.
var lcRun = scrapers.Run{ID: "run-20260822T1400Z", ObservedAt: time.Date(2026, 8, 22, 14, 0, 0, 0, time.UTC)}

// mustReadLC reads a file under testdata.
func mustReadLC(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// parsedLC is what a golden file holds.
type parsedLC struct {
	Offers   []schema.Offer `json:"offers"`
	Problems []string       `json:"problems"`
}

// checkGoldenLC compares offers and problems with testdata/<name>.golden.json, or rewrites it
// under -update.
func checkGoldenLC(t *testing.T, name string, offers []schema.Offer, problems []error) {
	t.Helper()
	p := parsedLC{Offers: offers, Problems: []string{}}
	for _, e := range problems {
		p.Problems = append(p.Problems, e.Error())
	}
	got, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if lcUpdate() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestParseLambdaGolden(t *testing.T) {
	for _, name := range []string{"lambda_instance_types", "lambda_instance_types_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseLambda(mustReadLC(t, name+".json"), lcRun, scrapers.DefaultLambdaAPIURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGoldenLC(t, name, offers, problems)
		})
	}
}

func TestParseLambdaPageGolden(t *testing.T) {
	offers, problems, err := scrapers.ParseLambdaPage(mustReadLC(t, "lambda_pricing.html"), lcRun, scrapers.DefaultLambdaPageURL)
	if err != nil {
		t.Fatal(err)
	}
	checkGoldenLC(t, "lambda_pricing", offers, problems)
}

// lambdaWant is the part of an offer the trap tests pin by hand, next to the golden files.
type lambdaWant struct {
	model    string
	count    uint16
	vram     float64
	perHour  string
	perGPU   string
	intra    schema.IntraNode
	stock    schema.Stock
	flags    []schema.DQFlag
	rawName  string
	ramGB    float64
	priceTyp schema.PriceType
}

func lambdaGot(o schema.Offer) lambdaWant {
	w := lambdaWant{
		model: o.GPUModel, count: o.GPUCount, vram: o.VRAMGB,
		perHour: o.PriceUSDPerHour.String(), perGPU: o.PriceUSDPerGPUHour.String(),
		intra: o.IntraNode, stock: o.Stock, flags: o.DQFlags, rawName: o.GPUNameRaw, priceTyp: o.PriceType,
	}
	if o.RAMGB != nil {
		w.ramGB = *o.RAMGB
	}
	return w
}

func TestParseLambdaTraps(t *testing.T) {
	byID := func(t *testing.T, file string) map[string]schema.Offer {
		t.Helper()
		offers, _, err := scrapers.ParseLambda(mustReadLC(t, file), lcRun, "https://example.test/api/v1/instance-types")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]schema.Offer{}
		for _, o := range offers {
			m[o.OfferID] = o
		}
		return m
	}
	main := byID(t, "lambda_instance_types.json")
	traps := byID(t, "lambda_instance_types_traps.json")
	tests := []struct {
		name  string
		offer schema.Offer
		want  lambdaWant
	}{
		{"cents per instance to dollars per GPU (2392/100/8)", main["gpu_8x_h100_sxm5"], lambdaWant{
			model: "H100-SXM-80GB", count: 8, vram: 80, perHour: "23.92", perGPU: "2.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "H100 (80 GB SXM5)", ramGB: 1932.74, priceTyp: schema.OnDemand}},
		{"H100 PCIe is not SXM; no capacity keeps the offer with stock none", main["gpu_1x_h100_pcie"], lambdaWant{
			model: "H100-PCIE-80GB", count: 1, vram: 80, perHour: "2.49", perGPU: "2.49",
			intra: schema.IntraPCIe, stock: schema.StockNone, rawName: "H100 (80 GB PCIe)", ramGB: 214.75, priceTyp: schema.OnDemand}},
		{"A100 80GB SXM4 vs 40GB", main["gpu_8x_a100_80gb_sxm4"], lambdaWant{
			model: "A100-SXM-80GB", count: 8, vram: 80, perHour: "14.32", perGPU: "1.79",
			intra: schema.IntraNVSwitch, stock: schema.StockNone, rawName: "A100 (80 GB SXM4)", ramGB: 1932.74, priceTyp: schema.OnDemand}},
		{"B200 SXM6", main["gpu_8x_b200_sxm6"], lambdaWant{
			model: "B200-SXM-180GB", count: 8, vram: 180, perHour: "39.92", perGPU: "4.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "B200 (180 GB SXM6)", ramGB: 3113.85, priceTyp: schema.OnDemand}},
		{"Tesla V100 without a form factor stays unknown, kept and flagged", main["gpu_8x_v100"], lambdaWant{
			model: "", count: 8, vram: 16, perHour: "4.4", perGPU: "0.55",
			intra: schema.IntraUnknown, stock: schema.StockNone, flags: []schema.DQFlag{schema.FlagUnknownGPU},
			rawName: "Tesla V100 (16 GB)", ramGB: 481.04, priceTyp: schema.OnDemand}},
		{"1.5.3 record: price as a string, count from the description", traps["gpu_1x_a6000"], lambdaWant{
			model: "RTX-A6000-48GB", count: 1, vram: 48, perHour: "0.8", perGPU: "0.8",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagCountParsed},
			rawName: "A6000 (48 GB)", ramGB: 107.37, priceTyp: schema.OnDemand}},
		{"unknown GPU name kept verbatim with the flag", traps["gpu_8x_example"], lambdaWant{
			model: "", count: 8, vram: 40, perHour: "15.92", perGPU: "1.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU},
			rawName: "Example GPU (40 GB SXM4)", ramGB: 1932.74, priceTyp: schema.OnDemand}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, lambdaGot(tt.offer), cmp.AllowUnexported(lambdaWant{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("offer %q mismatch (-want +got):\n%s", tt.offer.OfferID, diff)
			}
		})
	}
	for _, id := range []string{"cpu_4x_general", "gpu_1x_a100_sxm4"} {
		if _, ok := traps[id]; ok {
			t.Errorf("traps: %s should not be an offer", id)
		}
	}
	if _, ok := main["cpu_4x_general"]; ok {
		t.Error("cpu_4x_general should not be an offer")
	}
	if len(main) != 14 {
		t.Errorf("main fixture: %d offers, want 14 (15 types less the CPU one)", len(main))
	}
}

func TestParseLambdaPageTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseLambdaPage(mustReadLC(t, "lambda_pricing.html"), lcRun, scrapers.DefaultLambdaPageURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	byID := map[string]schema.Offer{}
	for _, o := range offers {
		byID[o.OfferID] = o
	}
	// 5 + 3 + 2 + 8 rows, one of them unpriced ("—"); the cluster tables and the __islands
	// copies add nothing.
	if len(offers) != 17 {
		t.Errorf("%d offers, want 17", len(offers))
	}
	tests := []struct {
		id   string
		want lambdaWant
	}{
		{"8x NVIDIA B200 SXM6 (180 GB)", lambdaWant{model: "B200-SXM-180GB", count: 8, vram: 180, perHour: "53.52", perGPU: "6.69",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "NVIDIA B200 SXM6", ramGB: 3113.85, priceTyp: schema.OnDemand}},
		{"1x NVIDIA B200 SXM6 (180 GB)", lambdaWant{model: "B200-SXM-180GB", count: 1, vram: 180, perHour: "6.99", perGPU: "6.99",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "NVIDIA B200 SXM6", ramGB: 388.69, priceTyp: schema.OnDemand}},
		{"8x NVIDIA A100 SXM4 (40 GB)", lambdaWant{model: "A100-SXM-40GB", count: 8, vram: 40, perHour: "10.32", perGPU: "1.29",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, rawName: "NVIDIA A100 SXM4", ramGB: 1932.74, priceTyp: schema.OnDemand}},
		{"1x NVIDIA H100 PCIe (80 GB)", lambdaWant{model: "H100-PCIE-80GB", count: 1, vram: 80, perHour: "2.49", perGPU: "2.49",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, rawName: "NVIDIA H100 PCIe", ramGB: 214.75, priceTyp: schema.OnDemand}},
		{"8x NVIDIA Tesla V100 (16 GB)", lambdaWant{model: "", count: 8, vram: 16, perHour: "4.4", perGPU: "0.55",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU},
			rawName: "NVIDIA Tesla V100", ramGB: 481.04, priceTyp: schema.OnDemand}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			o, ok := byID[tt.id]
			if !ok {
				t.Fatalf("no offer %q", tt.id)
			}
			if diff := cmp.Diff(tt.want, lambdaGot(o), cmp.AllowUnexported(lambdaWant{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := byID["4x NVIDIA RTX A6000 (48 GB)"]; ok {
		t.Error("the unpriced 4x A6000 row (—) became an offer")
	}
}

func TestParseLambdaErrors(t *testing.T) {
	full := mustReadLC(t, "lambda_instance_types.json")
	tests := []struct {
		name string
		body string
		want error // nil: any error
	}{
		{"truncated JSON", string(full[:len(full)/2]), scrapers.ErrLayoutChanged},
		{"empty body", "", scrapers.ErrLayoutChanged},
		{"HTML instead of JSON", "<html><body>Bad gateway</body></html>", scrapers.ErrLayoutChanged},
		{"api error object", `{"error":{"code":"global/invalid-api-key","message":"API key was invalid"}}`, nil},
		{"no data", `{"instance_types":[]}`, scrapers.ErrLayoutChanged},
		{"data null", `{"data":null}`, scrapers.ErrLayoutChanged},
		{"data empty", `{"data":{}}`, scrapers.ErrNoOffers},
		{"only CPU types", `{"data":{"cpu_4x_general":{"instance_type":{"name":"cpu_4x_general","description":"4x CPU cores","gpu_description":"","price_cents_per_hour":20,"specs":{"vcpus":4,"memory_gib":16,"storage_gib":100,"gpus":0}},"regions_with_capacity_available":[]}}}`, scrapers.ErrNoOffers},
		{"data is a list", `{"data":[]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseLambda([]byte(tt.body), lcRun, scrapers.DefaultLambdaAPIURL)
			if err == nil {
				t.Fatalf("no error, %d offers", len(offers))
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.LambdaName {
				t.Errorf("error %v is not a lambda *scrapers.Error", err)
			}
		})
	}
}

func TestParseLambdaPageLayoutChanged(t *testing.T) {
	page := string(mustReadLC(t, "lambda_pricing.html"))
	tests := []struct {
		name string
		body string
	}{
		{"redesigned as cards", string(mustReadLC(t, "lambda_pricing_changed.html"))},
		{"heading renamed", replaceLC(page, ">Instances pricing</h2>", ">On-demand pricing</h2>")},
		{"no tabs", replaceLC(page, `role="tab"`, `role="button"`)},
		{"rows lost data-plan", replaceLC(page, "data-plan=", "data-sku=")},
		{"price column renamed", replaceLC(page, `data-label="PRICE/GPU/HR*"`, `data-label="HOURLY"`)},
		{"not HTML", "Service Unavailable"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseLambdaPage([]byte(tt.body), lcRun, scrapers.DefaultLambdaPageURL)
			if err == nil {
				t.Fatalf("no error, %d offers", len(offers))
			}
			if !errors.Is(err, scrapers.ErrLayoutChanged) && !errors.Is(err, scrapers.ErrNoOffers) {
				t.Errorf("error %v wraps neither ErrLayoutChanged nor ErrNoOffers (problems %v)", err, problems)
			}
		})
	}
}

// replaceLC replaces every old with new, failing loudly in the test if old is absent.
func replaceLC(s, old, new string) string {
	out := strings.ReplaceAll(s, old, new)
	if out == s {
		panic("fixture edit found nothing to replace: " + old)
	}
	return out
}

// regexpReplaceLC replaces every match of pattern, failing loudly if there is none.
func regexpReplaceLC(s, pattern, repl string) string {
	out := regexp.MustCompile(pattern).ReplaceAllString(s, repl)
	if out == s {
		panic("fixture edit found nothing to replace: " + pattern)
	}
	return out
}

const lambdaTestKey = "secret_lambda-key_3f9a1c" // a fake key; it must never leave Fetch

func TestLambdaAPIFetchMisbehaving(t *testing.T) {
	good := mustReadLC(t, "lambda_instance_types.json")
	truncated := good[:len(good)*2/3]
	cases := append(misbehaviours("application/json", truncated),
		misbehaviour{"HTML with status 200", func(w http.ResponseWriter, _ *http.Request, _ int, _ []byte) {
			writeBody(w, "text/html", []byte("<html><body>Please sign in</body></html>"))
		}, 1, scrapers.ErrLayoutChanged},
		misbehaviour{"redirect to a foreign domain", func(w http.ResponseWriter, r *http.Request, _ int, _ []byte) {
			http.Redirect(w, r, "http://localhost:1/api/v1/instance-types", http.StatusFound)
		}, 1, scrapers.ErrStatus},
	)
	for _, mb := range cases {
		t.Run(mb.name, func(t *testing.T) {
			var hits atomic.Int32
			var auth atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth.Store(r.Header.Get("Authorization"))
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			l := scrapers.NewLambda(newClientLC(t, nil), scrapers.LambdaConfig{APIKey: lambdaTestKey, APIURL: srv.URL + "/api/v1/instance-types"}, nil)
			res, err := l.Fetch(context.Background(), lcRun)
			checkFetchLC(t, scrapers.LambdaName, res, err, mb.wantErr, mb.wantAttempts)
			if got, _ := auth.Load().(string); got != "Bearer "+lambdaTestKey {
				t.Errorf("Authorization %q, want the Bearer key", got)
			}
			if mb.wantErr == nil && len(res.Offers) != 14 {
				t.Errorf("%d offers, want 14", len(res.Offers))
			}
		})
	}
}

func TestLambdaPageFetchMisbehaving(t *testing.T) {
	good := mustReadLC(t, "lambda_pricing.html")
	for _, mb := range misbehaviours("text/html; charset=utf-8", mustReadLC(t, "lambda_pricing_changed.html")) {
		t.Run(mb.name, func(t *testing.T) {
			var hits, apiHits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/api/") {
					apiHits.Add(1)
					http.Error(w, `{"error":{"code":"global/invalid-api-key","message":"API key was invalid"}}`, http.StatusUnauthorized)
					return
				}
				if !strings.HasPrefix(r.UserAgent(), "Mozilla/5.0") {
					http.Error(w, "Forbidden", http.StatusForbidden)
					return
				}
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			l := scrapers.NewLambda(newClientLC(t, nil), scrapers.LambdaConfig{
				APIURL: srv.URL + "/api/v1/instance-types", PageURL: srv.URL + "/pricing", Delay: -1,
			}, nil)
			res, err := l.Fetch(context.Background(), lcRun)
			checkFetchLC(t, scrapers.LambdaName, res, err, mb.wantErr, mb.wantAttempts)
			if mb.wantErr == nil && len(res.Offers) != 17 {
				t.Errorf("%d offers, want 17", len(res.Offers))
			}
			if n := apiHits.Load(); n != 0 {
				t.Errorf("the API was called %d times without a key", n)
			}
		})
	}
}

// TestLambdaKeyNeverLeaks: a server that rejects the key and echoes it back (as some proxies
// do) must not get the key into the error, the logs, the payload or a recording.
func TestLambdaKeyNeverLeaks(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"code":"global/invalid-api-key","message":"API key was invalid: %s"}}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	client := newClientLC(t, func(c *scrapers.ClientConfig) { c.Logger, c.RecordDir = logger, dir })
	l := scrapers.NewLambda(client, scrapers.LambdaConfig{APIKey: lambdaTestKey, APIURL: srv.URL + "/api/v1/instance-types"}, logger)
	res, err := l.Fetch(context.Background(), lcRun)
	if !errors.Is(err, scrapers.ErrStatus) {
		t.Fatalf("Fetch error %v, want ErrStatus", err)
	}
	t.Logf("Fetch error: %v", err)
	if strings.Contains(err.Error(), lambdaTestKey) {
		t.Errorf("the key is in the error: %v", err)
	}
	if strings.Contains(logs.String(), lambdaTestKey) {
		t.Errorf("the key is in the logs:\n%s", logs.String())
	}
	for _, p := range res.Payloads {
		if bytes.Contains(p.Body, []byte(lambdaTestKey)) || strings.Contains(p.URL, lambdaTestKey) {
			t.Errorf("the key is in a payload: %s %s", p.URL, p.Body)
		}
	}
	// Recorded bodies are kept byte for byte (record.go), so an echoing server's body is not
	// scrubbed there; the request side (URL, headers, request body) must be.
	index, err := os.ReadFile(filepath.Join(dir, scrapers.LambdaName, scrapers.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(index, []byte(lambdaTestKey)) || bytes.Contains(index, []byte("Bearer")) {
		t.Errorf("the key reached the recording's index:\n%s", index)
	}
}

func TestLambdaRecordReplay(t *testing.T) {
	good := mustReadLC(t, "lambda_instance_types.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeBody(w, "application/json", good) }))
	defer srv.Close()
	dir := t.TempDir()
	cfg := scrapers.LambdaConfig{APIKey: lambdaTestKey, APIURL: srv.URL + "/api/v1/instance-types"}
	live, err := scrapers.NewLambda(newClientLC(t, func(c *scrapers.ClientConfig) { c.RecordDir = dir }), cfg, nil).Fetch(context.Background(), lcRun)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	replayed, err := scrapers.NewLambda(newClientLC(t, func(c *scrapers.ClientConfig) { c.ReplayDir = dir }), cfg, nil).Fetch(context.Background(), lcRun)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, replayed.Offers); diff != "" {
		t.Errorf("replayed offers differ (-live +replayed):\n%s", diff)
	}
	if !bytes.Equal(replayed.Payloads[0].Body, good) {
		t.Error("replayed payload is not the recorded body byte for byte")
	}
}

func TestLambdaInvalidConfig(t *testing.T) {
	for _, cfg := range []scrapers.LambdaConfig{
		{APIKey: lambdaTestKey, APIURL: "cloud.lambda.ai/api/v1/instance-types"},
		{PageURL: "ftp://lambda.ai/pricing"},
	} {
		_, err := scrapers.NewLambda(newClientLC(t, nil), cfg, nil).Fetch(context.Background(), lcRun)
		if err == nil || strings.Contains(err.Error(), lambdaTestKey) {
			t.Errorf("%+v: error %v", cfg, err)
		}
	}
}

// checkFuzzLC asserts what every parse must satisfy, whatever the input: an error that names the
// source, or at least one offer, each with a GPU count, a positive price and a per-GPU price
// consistent with it.
func checkFuzzLC(t *testing.T, source string, offers []schema.Offer, problems []error, err error) {
	t.Helper()
	if err != nil {
		var se *scrapers.Error
		if !errors.As(err, &se) || se.Source != source {
			t.Fatalf("error %v is not a %s *scrapers.Error", err, source)
		}
		return
	}
	if len(offers) == 0 {
		t.Fatal("nil error and no offers")
	}
	for _, o := range offers {
		if o.GPUCount == 0 || !o.PriceUSDPerHour.IsPositive() || !o.PriceUSDPerGPUHour.IsPositive() {
			t.Fatalf("offer %q: count %d, price %s, per GPU %s", o.OfferID, o.GPUCount, o.PriceUSDPerHour, o.PriceUSDPerGPUHour)
		}
		if o.Provider != source || o.OfferID == "" || o.RunID != lcRun.ID {
			t.Fatalf("offer identity %q/%q/%q", o.Provider, o.OfferID, o.RunID)
		}
	}
	for _, p := range problems {
		if p == nil {
			t.Fatal("nil problem")
		}
	}
}

func FuzzParseLambda(f *testing.F) {
	for _, name := range []string{"lambda_instance_types.json", "lambda_instance_types_traps.json"} {
		f.Add(mustReadLC(f, name))
	}
	f.Add([]byte(`{"data":{"gpu_1x_x":{"instance_type":{"name":"gpu_1x_x","description":"1x X (8 GB PCIe)","gpu_description":"X (8 GB PCIe)","price_cents_per_hour":"1e3","specs":{"gpus":1}},"regions_with_capacity_available":null}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseLambda(body, lcRun, scrapers.DefaultLambdaAPIURL)
		checkFuzzLC(t, scrapers.LambdaName, offers, problems, err)
		for _, o := range offers {
			if !o.PriceUSDPerGPUHour.Equal(schema.PerGPU(o.PriceUSDPerHour, o.GPUCount)) {
				t.Fatalf("offer %q: per GPU %s != %s / %d", o.OfferID, o.PriceUSDPerGPUHour, o.PriceUSDPerHour, o.GPUCount)
			}
		}
	})
}

func FuzzParseLambdaPage(f *testing.F) {
	for _, name := range []string{"lambda_pricing.html", "lambda_pricing_changed.html"} {
		f.Add(mustReadLC(f, name))
	}
	f.Add([]byte(`<h2>Instances pricing</h2><button role="tab" aria-controls="p">2x</button><div role="tabpanel" id="p"><table><tr data-plan="NVIDIA H100 SXM5"><td data-label="VRAM/GPU">80 GB</td><td data-label="PRICE/GPU/HR*">$1,001.5</td></tr></table></div>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseLambdaPage(body, lcRun, scrapers.DefaultLambdaPageURL)
		checkFuzzLC(t, scrapers.LambdaName, offers, problems, err)
	})
}

func BenchmarkParseLambda(b *testing.B) {
	body := mustReadLC(b, "lambda_instance_types.json")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := scrapers.ParseLambda(body, lcRun, scrapers.DefaultLambdaAPIURL); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseLambdaPage(b *testing.B) {
	body := mustReadLC(b, "lambda_pricing.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := scrapers.ParseLambdaPage(body, lcRun, scrapers.DefaultLambdaPageURL); err != nil {
			b.Fatal(err)
		}
	}
}
