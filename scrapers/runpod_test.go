package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

func TestParseRunPodGolden(t *testing.T) {
	for _, name := range []string{"runpod_gputypes", "runpod_gputypes_traps", "runpod_gputypes_placeholders"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseRunPod(readTestdata(t, name+".json"), runNov29, scrapers.DefaultRunPodURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

// runPodWant is the part of an offer each trap pins.
type runPodWant struct {
	Model  string
	VRAM   float64
	Price  string
	Stock  schema.Stock
	Intra  schema.IntraNode
	Flags  []schema.DQFlag
	Absent bool
}

// runPodCase is a trap: the offer keyed "<offer id>/<price type>" and what it must be.
type runPodCase struct {
	name string
	key  string
	want runPodWant
}

// checkRunPodCases checks each case of file against byKey, the offers keyed "<offer id>/<price
// type>": an absent offer is absent, any other has the fields wanted.
func checkRunPodCases(t *testing.T, file string, byKey map[string]schema.Offer, cases []runPodCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(file+"/"+tt.name, func(t *testing.T) {
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
			got := runPodWant{o.GPUModel, o.VRAMGB, o.PriceUSDPerHour.String(), o.Stock, o.IntraNode, o.DQFlags, false}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("offer %s mismatch (-want +got):\n%s", tt.key, diff)
			}
		})
	}
}

func TestParseRunPodTraps(t *testing.T) {
	for _, file := range []string{"runpod_gputypes", "runpod_gputypes_traps", "runpod_gputypes_placeholders"} {
		offers, _, err := scrapers.ParseRunPod(readTestdata(t, file+".json"), runNov29, scrapers.DefaultRunPodURL)
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]schema.Offer{}
		for _, o := range offers {
			byKey[o.OfferID+"/"+string(o.PriceType)] = o
			if o.GPUCount != 1 || !o.PriceUSDPerGPUHour.Equal(o.PriceUSDPerHour) || o.Provider != "runpod" || o.RunID != runNov29.ID {
				t.Errorf("%s: per-GPU offer fields wrong: %+v", o.OfferID, o)
			}
			if strings.HasPrefix(o.OfferID, "unknown:") {
				t.Errorf("the unknown row became offer %s", o.OfferID)
			}
		}
		none := []schema.DQFlag{}
		tests := map[string][]runPodCase{
			"runpod_gputypes": {
				{"H100 80GB HBM3 is the SXM", "NVIDIA H100 80GB HBM3:secure/on_demand", runPodWant{"H100-SXM-80GB", 80, "3.29", schema.StockLow, schema.IntraNVSwitch, none, false}},
				{"spot equal to on-demand is not spot", "NVIDIA H100 80GB HBM3:secure/spot", runPodWant{Absent: true}},
				{"H100 PCIe, lowestPrice null-filled: no stock", "NVIDIA H100 PCIe:community/on_demand", runPodWant{"H100-PCIE-80GB", 80, "1.99", schema.StockNone, schema.IntraPCIe, none, false}},
				{"H100 NVL", "NVIDIA H100 NVL:secure/on_demand", runPodWant{"H100-NVL-94GB", 94, "3.07", schema.StockMedium, schema.IntraNVLink, none, false}},
				{"real spot below on-demand", "NVIDIA H100 NVL:secure/spot", runPodWant{"H100-NVL-94GB", 94, "2.14", schema.StockMedium, schema.IntraNVLink, none, false}},
				{"MI300X community placeholder 0.5 and flag false", "AMD Instinct MI300X OAM:community/on_demand", runPodWant{Absent: true}},
				{"MI300X secure kept; an OAM board is Infinity Fabric", "AMD Instinct MI300X OAM:secure/on_demand", runPodWant{"MI300X-192GB", 192, "2.39", schema.StockNone, schema.IntraInfinityFabric, none, false}},
				{"H200 NVL community placeholder 0.5: cheapest pod is 3.39", "NVIDIA H200 NVL:community/on_demand", runPodWant{Absent: true}},
				{"H200 NVL secure 143 GB snaps to 141", "NVIDIA H200 NVL:secure/on_demand", runPodWant{"H200-NVL-141GB", 141, "3.39", schema.StockLow, schema.IntraNVLink, []schema.DQFlag{schema.FlagVRAMSnapped}, false}},
				{"RTX 2000 Ada community 0.5 > secure 0.24: placeholder", "NVIDIA RTX 2000 Ada Generation:community/on_demand", runPodWant{Absent: true}},
				{"0.5 in both clouds: neither vouches for the other (community)", "NVIDIA RTX 5000 Ada Generation:community/on_demand", runPodWant{Absent: true}},
				{"0.5 in both clouds: neither vouches for the other (secure)", "NVIDIA RTX 5000 Ada Generation:secure/on_demand", runPodWant{Absent: true}},
				{"a secure spot 0.5 is not vouched for by on-demand", "NVIDIA L40:secure/spot", runPodWant{Absent: true}},
				{"secure price 0 is not offered", "NVIDIA A100-SXM4-40GB:secure/on_demand", runPodWant{Absent: true}},
				{"null prices: no offer", "Tesla V100-FHHL-16GB:secure/on_demand", runPodWant{Absent: true}},
				{"RTX PRO 4500 Blackwell, a PCIe card", "NVIDIA RTX PRO 4500 Blackwell:secure/on_demand", runPodWant{"RTX-PRO-4500-32GB", 32, "0.64", schema.StockHigh, schema.IntraPCIe, none, false}},
				{"B300 288 GB", "NVIDIA B300 SXM6 AC:secure/on_demand", runPodWant{"B300-SXM-288GB", 288, "8.49", schema.StockLow, schema.IntraNVSwitch, none, false}},
				{"H100 SXM savings plan, 3 months", "NVIDIA H100 80GB HBM3:secure/term_3m", runPodWant{"H100-SXM-80GB", 80, "2.79", schema.StockLow, schema.IntraNVSwitch, none, false}},
				{"H100 SXM savings plan, 6 months", "NVIDIA H100 80GB HBM3:secure/term_6m", runPodWant{"H100-SXM-80GB", 80, "2.59", schema.StockLow, schema.IntraNVSwitch, none, false}},
				{"H100 SXM savings plan, 1 week", "NVIDIA H100 80GB HBM3:secure/term_1w", runPodWant{"H100-SXM-80GB", 80, "3.19", schema.StockLow, schema.IntraNVSwitch, none, false}},
				{"savings plans are secure cloud only", "NVIDIA H100 80GB HBM3:community/term_3m", runPodWant{Absent: true}},
				{"a plan of 0 is no plan", "NVIDIA GeForce RTX 4090:secure/term_1m", runPodWant{Absent: true}},
				{"a 0.5 plan above a secure 0.24 is the placeholder", "NVIDIA RTX 2000 Ada Generation:secure/term_1w", runPodWant{Absent: true}},
				{"no plan where the secure cloud sells nothing", "NVIDIA A100-SXM4-40GB:secure/term_3m", runPodWant{Absent: true}},
				{"a plan that saves nothing is no plan", "NVIDIA L4:secure/term_6m", runPodWant{Absent: true}},
				{"null plans", "Tesla V100-FHHL-16GB:secure/term_1w", runPodWant{Absent: true}},
			},
			"runpod_gputypes_traps": {
				{"yrys MI300X: community 0.5 without flags is a placeholder", "AMD Instinct MI300X OAM:community/on_demand", runPodWant{Absent: true}},
				{"yrys A100 40GB community 1", "NVIDIA A100-SXM4-40GB:community/on_demand", runPodWant{"A100-SXM-40GB", 40, "1", schema.StockLow, schema.IntraNVSwitch, none, false}},
				{"yrys RTX 2000 Ada community 0.5 without flags", "NVIDIA RTX 2000 Ada Generation:community/on_demand", runPodWant{Absent: true}},
				{"gpu-index B200 spot echoes on-demand", "NVIDIA B200:community/spot", runPodWant{Absent: true}},
				{"gpu-index B200 no lowestPrice: stock unknown", "NVIDIA B200:community/on_demand", runPodWant{"B200-SXM-180GB", 180, "5.98", schema.StockUnknown, schema.IntraNVSwitch, none, false}},
				{"null secure price", "NVIDIA H100 NVL:secure/on_demand", runPodWant{Absent: true}},
				{"community spot without secure", "NVIDIA H100 NVL:community/spot", runPodWant{"H100-NVL-94GB", 94, "1.4", schema.StockUnknown, schema.IntraNVLink, none, false}},
				{"no prices at all: no offer", "NVIDIA RTX A4000:secure/on_demand", runPodWant{Absent: true}},
				{"unknown GPU (a MIG slice) kept with flag", "NVIDIA RTX PRO 6000 Blackwell MIG 1g.24gb:secure/on_demand", runPodWant{"", 24, "0.31", schema.StockLow, schema.IntraUnknown, []schema.DQFlag{schema.FlagUnknownGPU}, false}},
			},
			"runpod_gputypes_placeholders": {
				{"MI350X community 0.5 is the placeholder though lowestPrice repeats it", "AMD Instinct MI350X OAM:community/on_demand", runPodWant{Absent: true}},
				{"MI350X community spot 0.5 dropped too", "AMD Instinct MI350X OAM:community/spot", runPodWant{Absent: true}},
				{"MI350X secure 5.49 kept", "AMD Instinct MI350X OAM:secure/on_demand", runPodWant{"MI350X-288GB", 288, "5.49", schema.StockLow, schema.IntraInfinityFabric, none, false}},
				{"RTX 2000 Ada community 0.5 above secure 0.24, lowestPrice 0.5: placeholder", "NVIDIA RTX 2000 Ada Generation:community/on_demand", runPodWant{Absent: true}},
				{"RTX 2000 Ada secure 0.24 kept", "NVIDIA RTX 2000 Ada Generation:secure/on_demand", runPodWant{"RTX-2000-ADA-16GB", 16, "0.24", schema.StockHigh, schema.IntraPCIe, none, false}},
				{"a community 0.5 vouched for by secure 0.76", "NVIDIA RTX A6000:community/on_demand", runPodWant{"RTX-A6000-48GB", 48, "0.5", schema.StockHigh, schema.IntraPCIe, none, false}},
				{"its secure 0.76 kept", "NVIDIA RTX A6000:secure/on_demand", runPodWant{"RTX-A6000-48GB", 48, "0.76", schema.StockHigh, schema.IntraPCIe, none, false}},
				{"a spot 0.5 echoing a vouched on-demand 0.5 is no spot offer", "NVIDIA RTX A6000:community/spot", runPodWant{Absent: true}},
				{"a secure 0.5 vouched for by community 0.35", "NVIDIA A40:secure/on_demand", runPodWant{"A40-48GB", 48, "0.5", schema.StockHigh, schema.IntraPCIe, none, false}},
				{"a secure 0.5 over 3x community 0.13: placeholder", "NVIDIA GeForce RTX 3070:secure/on_demand", runPodWant{Absent: true}},
				{"RTX 3070 community 0.13 kept", "NVIDIA GeForce RTX 3070:community/on_demand", runPodWant{"RTX-3070-8GB", 8, "0.13", schema.StockHigh, schema.IntraPCIe, none, false}},
				{"a lone 0.5 in a one-cloud type has nothing to vouch for it", "NVIDIA RTX A4500:community/on_demand", runPodWant{Absent: true}},
			},
		}
		checkRunPodCases(t, file, byKey, tests[file])
	}
}

// TestParseRunPodPlaceholderBounds pins where the other cloud's price stops vouching for a 0.5:
// community ≤ secure ≤ 3 × community, the other price offered and not 0.5 itself.
func TestParseRunPodPlaceholderBounds(t *testing.T) {
	tests := []struct {
		name string
		row  string // the fields of one gpuTypes entry after id and memoryInGb
		want []string
	}{
		{"community 0.5, secure 1.5: at 3x, kept", `"securePrice": 1.5, "communityPrice": 0.5`, []string{"community/on_demand 0.5", "secure/on_demand 1.5"}},
		{"community 0.5, secure 1.51: past 3x", `"securePrice": 1.51, "communityPrice": 0.5`, []string{"secure/on_demand 1.51"}},
		{"community 0.50 just under secure 0.51", `"securePrice": 0.51, "communityPrice": 0.50`, []string{"community/on_demand 0.5", "secure/on_demand 0.51"}},
		{"community 0.5 above secure 0.49", `"securePrice": 0.49, "communityPrice": 0.5`, []string{"secure/on_demand 0.49"}},
		{"secure 0.5, community 0.17: within 3x", `"securePrice": 0.5, "communityPrice": 0.17`, []string{"community/on_demand 0.17", "secure/on_demand 0.5"}},
		{"secure 0.5, community 0.16: past 3x", `"securePrice": 0.5, "communityPrice": 0.16`, []string{"community/on_demand 0.16"}},
		{"secure 0.5 above community 0.6", `"securePrice": 5e-1, "communityPrice": 0.6`, []string{"community/on_demand 0.6"}},
		{"0.5 in both clouds", `"securePrice": 0.5, "communityPrice": 0.500`, nil},
		{"a 0.5 with the other cloud null", `"securePrice": null, "communityPrice": 0.5, "lowestPrice": {"uninterruptablePrice": 0.5, "stockStatus": "High"}`, nil},
		{"a flagged-off cloud vouches for nothing", `"secureCloud": false, "securePrice": 0.76, "communityPrice": 0.5`, nil},
		{"spot 0.5 below a real on-demand: dropped", `"securePrice": 0.99, "secureSpotPrice": 0.5, "communityPrice": 0.69, "communitySpotPrice": 0.4`, []string{"community/on_demand 0.69", "community/spot 0.4", "secure/on_demand 0.99"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"data": {"gpuTypes": [{"id": "NVIDIA L40", "memoryInGb": 48, ` + tt.row + `}]}}`
			offers, problems, err := scrapers.ParseRunPod([]byte(body), runNov29, scrapers.DefaultRunPodURL)
			if tt.want == nil {
				if !errors.Is(err, scrapers.ErrNoOffers) || len(offers) != 0 {
					t.Fatalf("%d offers, err %v; want ErrNoOffers", len(offers), err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(problems) != 0 {
				t.Errorf("problems %v: a dropped placeholder is no problem", problems)
			}
			var got []string
			for _, o := range offers {
				got = append(got, strings.TrimPrefix(o.OfferID, "NVIDIA L40:")+"/"+string(o.PriceType)+" "+o.PriceUSDPerHour.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("offers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRunPodErrors(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantErr  error
		wantText string
	}{
		{"truncated JSON", `{"data": {"gpuTypes": [{"id": "NVIDIA L4", "securePr`, scrapers.ErrIncomplete, "decoding"},
		{"cut after the array", `{"data": {"gpuTypes": [{"id": "NVIDIA L4", "memoryInGb": 24, "securePrice": 0.44}]}`, scrapers.ErrIncomplete, "ends inside"},
		{"trailing data", `{"data": {"gpuTypes": []}} <!-- -->`, scrapers.ErrLayoutChanged, "after top-level value"},
		{"eleven graphql errors", `{"errors": [` + strings.Repeat(`{"message": "m"},`, 10) + `{"message": "last"}]}`, nil, "1 more graphql errors"},
		{"graphql error only", `{"errors": [{"message": "Something went wrong"}]}`, nil, "graphql error: Something went wrong"},
		{"no data", `{"data": null}`, scrapers.ErrLayoutChanged, "gpuTypes"},
		{"renamed field", `{"data": {"gpuTypeList": []}}`, scrapers.ErrLayoutChanged, "gpuTypes"},
		{"HTML", `<!doctype html><title>Cloudflare</title>`, scrapers.ErrLayoutChanged, ""},
		{"only the unknown row", `{"data": {"gpuTypes": [{"id": "unknown", "displayName": "unknown", "memoryInGb": 0, "securePrice": 0, "communityPrice": 0}]}}`, scrapers.ErrNoOffers, ""},
		{"every price zero or null", `{"data": {"gpuTypes": [{"id": "NVIDIA L4", "memoryInGb": 24, "securePrice": 0, "communityPrice": null}]}}`, scrapers.ErrNoOffers, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseRunPod([]byte(tt.body), runNov29, scrapers.DefaultRunPodURL)
			if err == nil || len(offers) != 0 {
				t.Fatalf("err %v, %d offers; want an error and none", err, len(offers))
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) || !strings.HasPrefix(err.Error(), "runpod: ") {
				t.Errorf("err %q: want runpod prefix and %q", err, tt.wantText)
			}
		})
	}
}

// TestRunPodMisbehaviour drives the GraphQL request through its failures, with a key: the
// catalog answers well, and is asked only once the GraphQL answer is good.
func TestRunPodMisbehaviour(t *testing.T) {
	good, catalog := readTestdata(t, "runpod_gputypes.json"), readTestdata(t, "runpod_catalog.json")
	jsonOK := func(w http.ResponseWriter, b []byte) { writeBody(w, "application/json; charset=utf-8", b) }
	tests := []struct {
		name     string
		handler  func(n int64) http.HandlerFunc
		timeout  time.Duration
		wantErr  error
		attempts int
	}{
		{"success with a key sent as Bearer, not in the URL", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if r.Header.Get("Authorization") != "Bearer rp-sekrit" || strings.Contains(r.URL.String(), "sekrit") ||
					!strings.Contains(string(body), "gpuTypes") || !strings.Contains(r.Header.Get("User-Agent"), "gpucost/") {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				jsonOK(w, good)
			}
		}, 0, nil, 2},
		{"429 with Retry-After then success", func(n int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "0")
					http.Error(w, "slow down", http.StatusTooManyRequests)
					return
				}
				jsonOK(w, good)
			}
		}, 0, nil, 3},
		{"500 until retries run out", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusBadGateway) }
		}, 0, scrapers.ErrStatus, 3},
		{"hanging server", func(int64) http.HandlerFunc { return hang }, 300 * time.Millisecond, context.DeadlineExceeded, -1},
		{"truncated JSON", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { jsonOK(w, good[:len(good)-100]) }
		}, 0, scrapers.ErrIncomplete, 1},
		{"50 MB body with Content-Length", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Length", "52428800")
				chunk := make([]byte, 1<<20)
				for range 50 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}
		}, 0, scrapers.ErrBodyTooLarge, 1},
		{"empty gpuTypes", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { jsonOK(w, []byte(`{"data": {"gpuTypes": []}}`)) }
		}, 0, scrapers.ErrNoOffers, 1},
		{"redirect to a foreign domain", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://phish.example/graphql", http.StatusTemporaryRedirect)
			}
		}, 0, scrapers.ErrStatus, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n, catalogAsked atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/v2/catalog/gpus" {
					catalogAsked.Add(1)
					jsonOK(w, catalog)
					return
				}
				tt.handler(n.Add(1))(w, r)
			}))
			defer srv.Close()
			ctx := timeoutContext(t, tt.timeout)
			rp := scrapers.NewRunPod(newTestClient(t, scrapers.ClientConfig{MaxBodyBytes: 8 << 20, Redactor: redact.New("rp-sekrit")}),
				scrapers.RunPodConfig{URL: srv.URL + "/graphql", CatalogURL: srv.URL + "/v2/catalog/gpus", APIKey: "rp-sekrit"}, nil)
			start := time.Now()
			res, err := rp.Fetch(ctx, runNov29)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if tt.wantErr == nil {
				if err != nil || len(res.Offers) == 0 {
					t.Fatalf("err %v, %d offers", err, len(res.Offers))
				}
				if len(res.Payloads) != 2 || len(res.Payloads[0].Body) != len(good) || len(res.Payloads[1].Body) != len(catalog) {
					t.Errorf("payloads %d, want the GraphQL answer and the catalog's", len(res.Payloads))
				}
			} else {
				if catalogAsked.Load() != 0 {
					t.Errorf("the catalog was asked after GraphQL failed")
				}
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				var se *scrapers.Error
				if !errors.As(err, &se) || se.Source != "runpod" {
					t.Errorf("err %v is not a runpod *Error", err)
				}
			}
			if tt.attempts > 0 && res.Attempts != tt.attempts {
				t.Errorf("attempts %d, want %d", res.Attempts, tt.attempts)
			}
		})
	}
}

const runPodTestKey = "rpa_TESTKEY0123456789ABCDEFGHIJKLMNOP" // a fake key; it must never leave Fetch

func TestParseRunPodCatalogGolden(t *testing.T) {
	for _, name := range []string{"runpod_catalog", "runpod_catalog_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseRunPodCatalog(readTestdata(t, name+".json"), runNov29, scrapers.DefaultRunPodCatalogURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

// TestParseRunPodCatalogTraps pins the serverless offers a user ranks: the price as published
// per GPU-hour, one GPU, no offer where the catalog sells none, and every bad value a problem
// naming the type and the field.
func TestParseRunPodCatalogTraps(t *testing.T) {
	none := []schema.DQFlag{}
	tests := map[string][]runPodCase{
		"runpod_catalog": {
			{"H100 SXM in the 80 GB PRO pool", "NVIDIA H100 80GB HBM3:serverless/serverless", runPodWant{"H100-SXM-80GB", 80, "4.176", schema.StockUnknown, schema.IntraNVSwitch, none, false}},
			{"H100 PCIe, same pool, same price", "NVIDIA H100 PCIe:serverless/serverless", runPodWant{"H100-PCIE-80GB", 80, "4.176", schema.StockUnknown, schema.IntraPCIe, none, false}},
			{"RTX 4090 at the documented 1.1", "NVIDIA GeForce RTX 4090:serverless/serverless", runPodWant{"RTX-4090-24GB", 24, "1.1", schema.StockUnknown, schema.IntraPCIe, none, false}},
			{"B200", "NVIDIA B200:serverless/serverless", runPodWant{"B200-SXM-180GB", 180, "8.64", schema.StockUnknown, schema.IntraNVSwitch, none, false}},
			{"AMD MI300X has no serverless price", "AMD Instinct MI300X OAM:serverless/serverless", runPodWant{Absent: true}},
			{"a type outside every pool has none", "NVIDIA H100 NVL:serverless/serverless", runPodWant{Absent: true}},
			{"the unknown row is dropped", "unknown:serverless/serverless", runPodWant{Absent: true}},
		},
		"runpod_catalog_traps": {
			{"the documented example, availability fields and all", "NVIDIA GeForce RTX 4090:serverless/serverless", runPodWant{"RTX-4090-24GB", 24, "1.1", schema.StockUnknown, schema.IntraPCIe, none, false}},
			{"a null serverless price: no offer", "NVIDIA L4:serverless/serverless", runPodWant{Absent: true}},
			{"no serverless key: no offer", "NVIDIA RTX A5000:serverless/serverless", runPodWant{Absent: true}},
			{"a zero serverless price: no offer", "NVIDIA A40:serverless/serverless", runPodWant{Absent: true}},
			{"a negative price: problem, no offer", "NVIDIA A30:serverless/serverless", runPodWant{Absent: true}},
			{"a boolean price: problem, no offer", "NVIDIA L40S:serverless/serverless", runPodWant{Absent: true}},
			{"a number out of bounds: problem, no offer", "NVIDIA L40:serverless/serverless", runPodWant{Absent: true}},
			{"an implausible price: problem, no offer", "NVIDIA RTX 6000 Ada Generation:serverless/serverless", runPodWant{Absent: true}},
			{"a price as a string is its number", "NVIDIA RTX A6000:serverless/serverless", runPodWant{"RTX-A6000-48GB", 48, "1.224", schema.StockUnknown, schema.IntraPCIe, none, false}},
			{"a MIG slice is no whole GPU: unknown, flagged", "NVIDIA RTX PRO 6000 Blackwell MIG 1g.24gb:serverless/serverless", runPodWant{"", 24, "0.684", schema.StockUnknown, schema.IntraUnknown, []schema.DQFlag{schema.FlagUnknownGPU}, false}},
			{"AMD without a serverless price", "AMD Instinct MI300X OAM:serverless/serverless", runPodWant{Absent: true}},
			{"AMD with one is read like any type", "AMD Instinct MI350X OAM:serverless/serverless", runPodWant{"MI350X-288GB", 288, "8.1", schema.StockUnknown, schema.IntraInfinityFabric, none, false}},
			{"the unknown row, priced, is still dropped", "unknown:serverless/serverless", runPodWant{Absent: true}},
			{"no price object: problem", "NVIDIA H200:serverless/serverless", runPodWant{Absent: true}},
			{"no memory: the catalog's VRAM, flagged", "NVIDIA H100 80GB HBM3:serverless/serverless", runPodWant{"H100-SXM-80GB", 80, "4.176", schema.StockUnknown, schema.IntraNVSwitch, []schema.DQFlag{schema.FlagVRAMMissing}, false}},
			{"memory as a string: problem", "NVIDIA H100 NVL:serverless/serverless", runPodWant{Absent: true}},
		},
	}
	wantProblems := []string{
		`runpod: v2 catalog: gpu "NVIDIA A30": price.serverless: -0.5 is negative`,
		`runpod: v2 catalog: gpu "NVIDIA L40S": price.serverless: "true" is not a number`,
		`runpod: v2 catalog: gpu "NVIDIA L40": price.serverless: "1e400" is not a number`,
		`runpod: v2 catalog: gpu "NVIDIA RTX 6000 Ada Generation": price.serverless: 1500000 is implausibly high`,
		`runpod: v2 catalog: gpu #13 ("H200 SXM"): no id`,
		`runpod: v2 catalog: gpu "NVIDIA GeForce RTX 4090": listed twice`,
		`runpod: v2 catalog: gpu "NVIDIA H200": no price object`,
		`runpod: v2 catalog: gpu #17: memory: a string where a float64 was expected`,
		`runpod: v2 catalog: gpu #18: a string where an object was expected`,
		`runpod: v2 catalog: gpu #19 (""): no id`,
	}
	for file, cases := range tests {
		offers, problems, err := scrapers.ParseRunPodCatalog(readTestdata(t, file+".json"), runNov29, scrapers.DefaultRunPodCatalogURL)
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]schema.Offer{}
		for _, o := range offers {
			byKey[o.OfferID+"/"+string(o.PriceType)] = o
			if o.PriceType != schema.Serverless || o.GPUCount != 1 || !o.PriceUSDPerGPUHour.Equal(o.PriceUSDPerHour) ||
				o.Tier != schema.TierSecure || o.Region != "" || o.InterNode != schema.InterNone || o.RunID != runNov29.ID || o.SourceURL != scrapers.DefaultRunPodCatalogURL {
				t.Errorf("%s: serverless offer fields wrong: %+v", o.OfferID, o)
			}
			if !strings.HasSuffix(o.OfferID, ":serverless") {
				t.Errorf("offer id %q could collide with a pod's", o.OfferID)
			}
		}
		checkRunPodCases(t, file, byKey, cases)
		if file == "runpod_catalog_traps" {
			var got []string
			for _, p := range problems {
				got = append(got, p.Error())
			}
			if diff := cmp.Diff(wantProblems, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		} else if len(problems) != 0 {
			t.Errorf("problems %v in a clean answer", problems)
		}
	}
}

func TestParseRunPodCatalogErrors(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantErr  error
		wantText string
	}{
		{"truncated JSON", `{"gpus": [{"id": "NVIDIA L4", "price": {"serverless": 0.6`, scrapers.ErrIncomplete, "decoding the v2 catalog"},
		{"cut after the array", `{"gpus": [{"id": "NVIDIA L4", "memory": 24, "price": {"serverless": 0.684}}]`, scrapers.ErrIncomplete, "ends inside"},
		{"trailing data", `{"gpus": []} <!-- -->`, scrapers.ErrLayoutChanged, "after top-level value"},
		{"a problem document with a 200", `{"type": "about:blank", "title": "Unauthorized", "status": 401, "detail": "invalid api key"}`, scrapers.ErrLayoutChanged, "no gpus array"},
		{"gpus null", `{"gpus": null}`, scrapers.ErrLayoutChanged, "no gpus array"},
		{"gpus an object", `{"gpus": {"NVIDIA L4": {}}}`, scrapers.ErrLayoutChanged, "where an array was expected"},
		{"the GraphQL answer instead", `{"data": {"gpuTypes": []}}`, scrapers.ErrLayoutChanged, "no gpus array"},
		{"price renamed in every type", `{"gpus": [{"id": "NVIDIA L4", "prices": {"serverless": 0.684}}, {"id": "NVIDIA A40", "prices": {"serverless": 1.224}}]}`, scrapers.ErrLayoutChanged, "2 GPU types in the v2 catalog, none with an id and a price object"},
		{"HTML", `<!doctype html><title>Cloudflare</title>`, scrapers.ErrLayoutChanged, ""},
		{"no type sold serverless", `{"gpus": [{"id": "NVIDIA L4", "memory": 24, "price": {"secure": 0.43, "community": 0}}, {"id": "NVIDIA A30", "price": {"serverless": null}}]}`, scrapers.ErrNoOffers, "2 GPU types in the v2 catalog, none with a serverless price"},
		{"an empty catalog", `{"gpus": []}`, scrapers.ErrNoOffers, "0 GPU types"},
		{"only the unknown row", `{"gpus": [{"id": "unknown", "memory": 0, "price": {"secure": 0, "community": 0, "serverless": 0.2}}]}`, scrapers.ErrNoOffers, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseRunPodCatalog([]byte(tt.body), runNov29, scrapers.DefaultRunPodCatalogURL)
			if err == nil || len(offers) != 0 {
				t.Fatalf("err %v, %d offers; want an error and none", err, len(offers))
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) || !strings.HasPrefix(err.Error(), "runpod: ") {
				t.Errorf("err %q: want runpod prefix and %q", err, tt.wantText)
			}
		})
	}
}

// TestRunPodServerlessNeedsAKey: without a key the source asks GraphQL only and records no
// serverless offer, with no problem (the catalog answers only to a key); with one it also reads
// the catalog, the key as Bearer on both requests and in no URL, and records the pod offers and
// the serverless ones together, sorted, as the parsers give them.
func TestRunPodServerlessNeedsAKey(t *testing.T) {
	gputypes, catalog := readTestdata(t, "runpod_gputypes.json"), readTestdata(t, "runpod_catalog.json")
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if strings.Contains(r.URL.String(), runPodTestKey) {
			http.Error(w, "a key in the URL", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/v2/catalog/gpus":
			if r.Method != http.MethodGet || r.Header.Get("Authorization") != "Bearer "+runPodTestKey || r.Header.Get("Accept") != "application/json" {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"title": "Unauthorized", "status": 401}`))
				return
			}
			writeBody(w, "application/json", catalog)
		default:
			writeBody(w, "application/json", gputypes)
		}
	}))
	defer srv.Close()
	cfg := scrapers.RunPodConfig{URL: srv.URL + "/graphql", CatalogURL: srv.URL + "/v2/catalog/gpus"}

	keyless, err := scrapers.NewRunPod(newTestClient(t, scrapers.ClientConfig{}), cfg, nil).Fetch(context.Background(), runNov29)
	if err != nil || len(keyless.Problems) != 0 {
		t.Fatalf("keyless: %v, problems %v", err, keyless.Problems)
	}
	pods, _, err := scrapers.ParseRunPod(gputypes, runNov29, cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pods, keyless.Offers); diff != "" {
		t.Errorf("keyless: not the GraphQL offers (-want +got):\n%s", diff)
	}
	if want := []string{"POST /graphql "}; !cmp.Equal(want, asked) || keyless.Attempts != 1 || len(keyless.Payloads) != 1 {
		t.Errorf("keyless: asked %q in %d attempts, %d payloads; want only %q", asked, keyless.Attempts, len(keyless.Payloads), want)
	}

	asked = nil
	cfg.APIKey = runPodTestKey
	keyed, err := scrapers.NewRunPod(newTestClient(t, scrapers.ClientConfig{}), cfg, nil).Fetch(context.Background(), runNov29)
	if err != nil || len(keyed.Problems) != 0 {
		t.Fatalf("keyed: %v, problems %v", err, keyed.Problems)
	}
	serverless, _, err := scrapers.ParseRunPodCatalog(catalog, runNov29, cfg.CatalogURL)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]schema.Offer{}, pods...), serverless...)
	slices.SortStableFunc(want, func(a, b schema.Offer) int {
		if c := strings.Compare(a.OfferID, b.OfferID); c != 0 {
			return c
		}
		return strings.Compare(string(a.PriceType), string(b.PriceType))
	})
	if diff := cmp.Diff(want, keyed.Offers); diff != "" {
		t.Errorf("keyed: not the pod and serverless offers, sorted (-want +got):\n%s", diff)
	}
	if wantAsked := []string{"POST /graphql Bearer " + runPodTestKey, "GET /v2/catalog/gpus Bearer " + runPodTestKey}; !cmp.Equal(wantAsked, asked) || keyed.Attempts != 2 {
		t.Errorf("keyed: asked %q in %d attempts, want %q", asked, keyed.Attempts, wantAsked)
	}
	if len(keyed.Payloads) != 2 || keyed.Payloads[1].URL != cfg.CatalogURL || !bytes.Equal(keyed.Payloads[1].Body, catalog) {
		t.Errorf("keyed: %d payloads; want the GraphQL answer, then the catalog's at %s", len(keyed.Payloads), cfg.CatalogURL)
	}
}

// TestRunPodCatalogRefusesTheKey: the catalog answers 401 with a problem document that echoes
// the key. The run keeps the pod offers, says the serverless prices are missing because the key
// was refused, and keeps the 401 answer as a payload, the key scrubbed from it and from the
// problem.
func TestRunPodCatalogRefusesTheKey(t *testing.T) {
	gputypes := readTestdata(t, "runpod_gputypes.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/catalog/gpus" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"type": "about:blank", "title": "Unauthorized", "status": 401, "detail": "invalid api key %s"}`, r.Header.Get("Authorization"))
			return
		}
		writeBody(w, "application/json", gputypes)
	}))
	defer srv.Close()
	c := newTestClient(t, scrapers.ClientConfig{Redactor: redact.New(runPodTestKey)})
	res, err := newRunPodAPISource(c, srv.URL).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatalf("Fetch: %v: a refused catalog must not fail the run", err)
	}
	pods, _, _ := scrapers.ParseRunPod(gputypes, runNov29, srv.URL+"/graphql")
	if diff := cmp.Diff(pods, res.Offers); diff != "" {
		t.Errorf("not the pod offers (-want +got):\n%s", diff)
	}
	if len(res.Problems) != 1 || !errors.Is(res.Problems[0], scrapers.ErrStatus) {
		t.Fatalf("problems %v, want one ErrStatus", res.Problems)
	}
	p := res.Problems[0].Error()
	if !strings.HasPrefix(p, "runpod: no serverless prices this run: querying the v2 catalog: the API refused the key: ") || !strings.Contains(p, "HTTP 401") || strings.Contains(p, runPodTestKey) {
		t.Errorf("problem %q", p)
	}
	if len(res.Payloads) != 2 || res.Payloads[1].Status != http.StatusUnauthorized || bytes.Contains(res.Payloads[1].Body, []byte(runPodTestKey)) ||
		!bytes.Contains(res.Payloads[1].Body, []byte("invalid api key Bearer "+redact.Mark)) {
		t.Errorf("payloads %d; the 401 answer %q should be kept, the key scrubbed", len(res.Payloads), res.Payloads[len(res.Payloads)-1].Body)
	}
}

// TestRunPodInvalidConfig: a URL that is not one fails every fetch with an error naming the
// source and the setting, before any request.
func TestRunPodInvalidConfig(t *testing.T) {
	for _, cfg := range []scrapers.RunPodConfig{
		{URL: "api.runpod.io/graphql"},
		{CatalogURL: "ftp://api.runpod.io/v2/catalog/gpus", APIKey: runPodTestKey},
	} {
		_, err := scrapers.NewRunPod(newTestClient(t, scrapers.ClientConfig{}), cfg, nil).Fetch(context.Background(), runNov29)
		if err == nil || !strings.HasPrefix(err.Error(), "runpod: ") || !strings.Contains(err.Error(), "URL") || strings.Contains(err.Error(), runPodTestKey) {
			t.Errorf("%+v: error %v", cfg, err)
		}
	}
}

// TestRunPodStored: a keyed run's stored answers, in either order and with a failed one among
// them, re-derive to the offers the run had; a keyless run's to its pod offers. A stored catalog
// answer that no longer parses fails the re-derivation (the run keeps what it stored), rather
// than dropping its serverless offers.
func TestRunPodStored(t *testing.T) {
	gputypes, catalog := readTestdata(t, "runpod_gputypes.json"), readTestdata(t, "runpod_catalog.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, "application/json", runPodAnswer(gputypes, catalog)(r))
	}))
	defer srv.Close()
	for _, key := range []string{runPodTestKey, ""} {
		live, err := scrapers.NewRunPod(newTestClient(t, scrapers.ClientConfig{}),
			scrapers.RunPodConfig{URL: srv.URL + "/graphql", CatalogURL: srv.URL + "/v2/catalog/gpus", APIKey: key}, nil).Fetch(context.Background(), runNov29)
		if err != nil {
			t.Fatal(err)
		}
		payloads := append([]schema.RawPayload{{URL: srv.URL + "/v2/catalog/gpus", Status: 503, Body: []byte("busy")}}, live.Payloads...)
		slices.Reverse(payloads)
		s, err := scrapers.NewStored(scrapers.RunPodName, payloads)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Fetch(context.Background(), runNov29)
		if err != nil || len(got.Problems) != 0 {
			t.Fatalf("key %t: %v, problems %v", key != "", err, got.Problems)
		}
		if diff := cmp.Diff(live.Offers, got.Offers); diff != "" {
			t.Errorf("key %t: re-derived offers differ (-live +stored):\n%s", key != "", diff)
		}
	}
	cut := []schema.RawPayload{{URL: srv.URL + "/graphql", Status: 200, Body: gputypes}, {URL: srv.URL + "/v2/catalog/gpus", Status: 200, Body: catalog[:len(catalog)/2]}}
	s, _ := scrapers.NewStored(scrapers.RunPodName, cut)
	if _, err := s.Fetch(context.Background(), runNov29); !errors.Is(err, scrapers.ErrIncomplete) || !strings.Contains(err.Error(), "runpod: response body incomplete: decoding the v2 catalog") {
		t.Errorf("a stored catalog cut short: %v, want a runpod ErrIncomplete", err)
	}
}

func FuzzParseRunPod(f *testing.F) {
	f.Add(readTestdata(f, "runpod_gputypes.json"))
	f.Add(readTestdata(f, "runpod_gputypes_traps.json"))
	f.Add(readTestdata(f, "runpod_gputypes_placeholders.json"))
	f.Add([]byte(`{"data": {"gpuTypes": [{"id": "x", "securePrice": 1e400}]}}`))
	f.Add([]byte(`{"errors": [{"message": ""}], "data": {"gpuTypes": null}}`))
	f.Add([]byte(`{"data": {"gpuTypes": [null, {"id": "NVIDIA H100 NVL", "communityPrice": 0.5, "lowestPrice": {"uninterruptablePrice": 0.5}}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseRunPod(body, runNov29, scrapers.DefaultRunPodURL)
		checkParsed(t, scrapers.RunPodName, runNov29, offers, problems, err)
		checkPerGPU(t, offers)
	})
}

func FuzzParseRunPodCatalog(f *testing.F) {
	f.Add(readTestdata(f, "runpod_catalog.json"))
	f.Add(readTestdata(f, "runpod_catalog_traps.json"))
	f.Add([]byte(`{"gpus": [{"id": "x", "price": {"serverless": 1e400}}, {"id": "NVIDIA L4", "memory": 1e308, "price": {"serverless": "0.684"}}]}`))
	f.Add([]byte(`{"gpus": [null, {"id": "unknown", "price": {}}, {"id": "NVIDIA L4", "price": {"serverless": 5e-1}}, {"id": "NVIDIA L4", "price": null}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseRunPodCatalog(body, runNov29, scrapers.DefaultRunPodCatalogURL)
		checkParsed(t, scrapers.RunPodName, runNov29, offers, problems, err)
		checkPerGPU(t, offers)
		for _, o := range offers {
			if o.PriceType != schema.Serverless || o.GPUCount != 1 || !strings.HasSuffix(o.OfferID, ":serverless") {
				t.Fatalf("offer %q: %s of %d GPUs", o.OfferID, o.PriceType, o.GPUCount)
			}
		}
	})
}

func BenchmarkParseRunPodCatalog(b *testing.B) {
	benchmarkParse(b, scrapers.ParseRunPodCatalog, "runpod_catalog.json", runNov29, scrapers.DefaultRunPodCatalogURL)
}

func BenchmarkParseRunPod(b *testing.B) {
	benchmarkParse(b, scrapers.ParseRunPod, "runpod_gputypes.json", runNov29, scrapers.DefaultRunPodURL)
}
