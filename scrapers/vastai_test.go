package scrapers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

func TestParseVastGolden(t *testing.T) {
	offers, problems, err := scrapers.ParseVast(readTestdata(t, "vastai_offers.json"), runNov29, scrapers.DefaultVastURL)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "vastai_offers", offers, problems)
}

// vastWant is the part of an offer each trap pins.
type vastWant struct {
	Model, Raw        string
	Count             uint16
	VRAM              float64
	Price, PerGPU     string
	Tier              schema.Tier
	Region, Country   string
	Intra             schema.IntraNode
	Inter             schema.InterNode
	NVLink, RAM, CPUs *float64
	Flags             []schema.DQFlag
}

func vastGot(o schema.Offer) vastWant {
	return vastWant{
		Model: o.GPUModel, Raw: o.GPUNameRaw, Count: o.GPUCount, VRAM: o.VRAMGB,
		Price: o.PriceUSDPerHour.String(), PerGPU: o.PriceUSDPerGPUHour.String(),
		Tier: o.Tier, Region: o.Region, Country: o.Country, Intra: o.IntraNode, Inter: o.InterNode,
		NVLink: o.NVLinkGbps, RAM: o.RAMGB, CPUs: o.VCPUs, Flags: o.DQFlags,
	}
}

func f64(v float64) *float64 { return &v }

// ramOf is an offer's host RAM as text, "unknown" when the source gave none.
func ramOf(o schema.Offer) string {
	if o.RAMGB == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*o.RAMGB, 'f', -1, 64)
}

func TestParseVastTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseVast(readTestdata(t, "vastai_offers.json"), runNov29, scrapers.DefaultVastURL)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]schema.Offer{}
	for _, o := range offers {
		byKey[o.OfferID+"/"+string(o.PriceType)] = o
		if o.RunID != runNov29.ID || !o.ObservedAt.Equal(runNov29.ObservedAt) || o.Provider != "vastai" || o.SourceURL != scrapers.DefaultVastURL {
			t.Errorf("offer %s: observation fields not stamped: %+v", o.OfferID, o)
		}
	}
	snapped := []schema.DQFlag{schema.FlagVRAMSnapped}
	// An unknown GPU's VRAM is the market's label, snapped as a known GPU's is (gpus.VRAMLabel).
	unknownSnapped := []schema.DQFlag{schema.FlagUnknownGPU, schema.FlagVRAMSnapped}
	tests := []struct {
		name string
		key  string
		want vastWant
	}{
		// 32768 MiB settles 32 GB but not the form (V100-PCIE-32GB or V100-SXM2-32GB), and one
		// GPU without NVLink proves no PCIe card: the model stays unknown, its VRAM 32.
		{"V100 sample: dph_total incl. 8 GB storage, no form stays unknown at 32 GB, deverified", "54420292/on_demand", vastWant{
			Raw: "Tesla V100", Count: 1, VRAM: 32, Price: "0.062963", PerGPU: "0.062963", Tier: schema.TierUnverified,
			Region: "us-california", Country: "US", Intra: schema.IntraPCIe, Inter: schema.InterNone, RAM: f64(16.1), CPUs: f64(7), Flags: unknownSnapped}},
		{"V100 sample spot: min_bid + storage", "54420292/spot", vastWant{
			Raw: "Tesla V100", Count: 1, VRAM: 32, Price: "0.062963", PerGPU: "0.062963", Tier: schema.TierUnverified,
			Region: "us-california", Country: "US", Intra: schema.IntraPCIe, Inter: schema.InterNone, RAM: f64(16.1), CPUs: f64(7), Flags: unknownSnapped}},
		{"H100 SXM 81559 MiB snaps to 80 GB, empty state", "48285735/on_demand", vastWant{
			Model: "H100-SXM-80GB", Raw: "H100 SXM", Count: 1, VRAM: 80, Price: "1.386741", PerGPU: "1.386741", Tier: schema.TierUnverified,
			Region: "us", Country: "US", Intra: schema.IntraNVSwitch, Inter: schema.InterNone, NVLink: f64(478.116), RAM: f64(226.49), CPUs: f64(26), Flags: snapped}},
		{"RTX 3090 sample: cpu_ram is the offer's share, as it comes", "38849859/on_demand", vastWant{
			Model: "RTX-3090-24GB", Raw: "RTX 3090", Count: 1, VRAM: 24, Price: "0.122222", PerGPU: "0.122222", Tier: schema.TierUnverified,
			Region: "ca-quebec", Country: "CA", Intra: schema.IntraPCIe, Inter: schema.InterNone, RAM: f64(128.93), CPUs: f64(16), Flags: snapped}},
		{"V100 with bw_nvlink is SXM2; 8 GPUs per-GPU price", "55000001/on_demand", vastWant{
			Model: "V100-SXM2-32GB", Raw: "Tesla V100", Count: 8, VRAM: 32, Tier: schema.TierVerified,
			Region: "us-oregon", Country: "US", Intra: schema.IntraNVLink, Inter: schema.InterNone, NVLink: f64(143.6), RAM: f64(515), CPUs: f64(80), Flags: snapped}},
		{"cpu_cores null: RAM still known; null geolocation", "55000002/on_demand", vastWant{
			Model: "RTX-4090-24GB", Raw: "RTX 4090", Count: 1, VRAM: 24, Tier: schema.TierVerified,
			Intra: schema.IntraPCIe, Inter: schema.InterNone, RAM: f64(32.23), CPUs: f64(8), Flags: snapped}},
		{"clustered 8x H100: inter-node unknown, cpu_cores 0", "55000003/on_demand", vastWant{
			Model: "H100-SXM-80GB", Raw: "H100 SXM", Count: 8, VRAM: 80, Tier: schema.TierVerified,
			Region: "us-texas", Country: "US", Intra: schema.IntraNVSwitch, Inter: schema.InterUnknown, NVLink: f64(478.116), RAM: f64(128.93), Flags: snapped}},
		{"empty gpu_name kept as unknown", "55000004/on_demand", vastWant{
			Raw: "", Count: 1, VRAM: 8, Tier: schema.TierVerified,
			Region: "pl-poland", Country: "PL", Intra: schema.IntraPCIe, Inter: schema.InterNone, RAM: f64(16.12), CPUs: f64(4), Flags: unknownSnapped}},
		{"dph_base fallback, georegion continent, bw_nvlink null", "55000013/on_demand", vastWant{
			Model: "A40-48GB", Raw: "A40", Count: 2, VRAM: 48, Price: "0.702222", PerGPU: "0.351111", Tier: schema.TierVerified,
			Region: "cz-czechia", Country: "CZ", Intra: schema.IntraUnknown, Inter: schema.InterNone, Flags: snapped}},
		{"modded 48 GB 4090 is unknown, labelled 48 GB", "55000014/on_demand", vastWant{
			Raw: "RTX 4090", Count: 1, VRAM: 48, Tier: schema.TierVerified,
			Region: "tw-taiwan", Country: "TW", Intra: schema.IntraPCIe, Inter: schema.InterNone, RAM: f64(16.12), CPUs: f64(4), Flags: unknownSnapped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := byKey[tt.key]
			if !ok {
				t.Fatalf("no offer %s", tt.key)
			}
			got := vastGot(o)
			if tt.want.Price == "" { // generated prices: check only the per-GPU arithmetic
				tt.want.Price, tt.want.PerGPU = got.Price, schema.PerGPU(o.PriceUSDPerHour, o.GPUCount).String()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("offer %s mismatch (-want +got):\n%s", tt.key, diff)
			}
		})
	}

	t.Run("two asks of one machine: RAM in proportion to their GPUs, not scaled again", func(t *testing.T) {
		// Vast's cpu_ram is already each ask's share: the 8-GPU and 4-GPU asks of one B200
		// host carry 2,063,854 and 1,031,927 MB.
		whole, half := byKey["52047333/on_demand"], byKey["52047334/on_demand"]
		if whole.GPUCount != 8 || half.GPUCount != 4 {
			t.Fatalf("GPU counts %d and %d, want 8 and 4", whole.GPUCount, half.GPUCount)
		}
		if whole.RAMGB == nil || half.RAMGB == nil || *whole.RAMGB != 2063.85 || *half.RAMGB != 1031.93 {
			t.Errorf("RAM %s and %s GB, want 2063.85 and 1031.93", ramOf(whole), ramOf(half))
		}
	})
	t.Run("min_bid above on-demand is recorded as is", func(t *testing.T) {
		od, spot := byKey["55000002/on_demand"], byKey["55000002/spot"]
		if !spot.PriceUSDPerHour.GreaterThan(od.PriceUSDPerHour) {
			t.Errorf("spot %s, on-demand %s: want spot above", spot.PriceUSDPerHour, od.PriceUSDPerHour)
		}
	})
	t.Run("no min_bid, no spot", func(t *testing.T) {
		for _, k := range []string{"55000003/spot", "55000013/spot"} {
			if _, ok := byKey[k]; ok {
				t.Errorf("unexpected spot offer %s", k)
			}
		}
	})
	t.Run("SXM, PCIe and NVL stay apart", func(t *testing.T) {
		models := map[string]bool{}
		for _, o := range offers {
			models[o.GPUModel] = true
		}
		for _, m := range []string{"H100-SXM-80GB", "H100-PCIE-80GB", "H100-NVL-94GB"} {
			if !models[m] {
				t.Errorf("no %s offer", m)
			}
		}
	})
	t.Run("bad rows are problems", func(t *testing.T) {
		var msgs []string
		for _, p := range problems {
			msgs = append(msgs, p.Error())
			var se *scrapers.Error
			if !errors.As(p, &se) || se.Source != "vastai" {
				t.Errorf("problem %q is not a vastai *Error", p)
			}
		}
		want := []string{"55000010", "55000011", "#"}
		if len(msgs) != len(want) {
			t.Fatalf("problems %q, want %d", msgs, len(want))
		}
		for i, w := range want {
			if !strings.Contains(msgs[i], w) {
				t.Errorf("problem %d = %q, want it to name %s", i, msgs[i], w)
			}
		}
	})
}

func TestParseVastErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr error
		offers  int
	}{
		{"truncated JSON", `{"offers": [{"id": 1, "num_gpus": 1, "gpu_name": "RTX 30`, scrapers.ErrIncomplete, 0},
		{"cut after a whole row", `{"offers": [{"id": 7, "num_gpus": 1, "gpu_name": "RTX 3090", "gpu_ram": 24576, "dph_total": 0.2},`, scrapers.ErrIncomplete, 0},
		{"empty body", ``, scrapers.ErrIncomplete, 0},
		{"trailing data", `{"offers": []} {"offers": []}`, scrapers.ErrLayoutChanged, 0},
		{"offers not an array", `{"offers": {"id": 1}}`, scrapers.ErrLayoutChanged, 0},
		{"HTML error page", `<html><body>502 Bad Gateway</body></html>`, scrapers.ErrLayoutChanged, 0},
		{"no offers key", `{"success": false, "error": "invalid_args", "msg": "bad"}`, scrapers.ErrLayoutChanged, 0},
		{"offers null", `{"offers": null}`, scrapers.ErrLayoutChanged, 0},
		{"not an object", `[1, 2]`, scrapers.ErrLayoutChanged, 0},
		{"empty page is not an error here", `{"offers": []}`, nil, 0},
		{"a row of the wrong type is a problem", `{"offers": ["x", {"id": 7, "num_gpus": 1, "gpu_name": "RTX 3090", "gpu_ram": 24576, "dph_total": 0.2}]}`, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseVast([]byte(tt.body), runNov29, scrapers.DefaultVastURL)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(offers) != tt.offers {
				t.Errorf("%d offers, want %d", len(offers), tt.offers)
			}
		})
	}
}

// TestParseVastPricesExactly: prices are read as the decimals their JSON text says, summed
// exactly, and rounded once; a per-GPU price is the exact quotient rounded, never the rounded
// offer price divided. A price that is not a JSON number is a problem of its row.
func TestParseVastPricesExactly(t *testing.T) {
	row := func(fields string) string {
		return `{"offers": [{"id": 7, "num_gpus": 8, "gpu_name": "H100 SXM", "gpu_ram": 81559, "bw_nvlink": 400, ` + fields + `}]}`
	}
	tests := []struct {
		name         string
		body         string
		want         []string // price type, offer price, per-GPU price of each offer
		wantProblems int
	}{
		{"whole-offer price of 8 GPUs", row(`"dph_total": 35.159555555555556`), []string{"on_demand 35.159556 4.394944"}, 0},
		{"dph_base plus storage, exactly", row(`"dph_base": 0.1, "storage_total_cost": 0.2`), []string{"on_demand 0.3 0.0375"}, 0},
		{"spot is min_bid plus storage", row(`"dph_total": 8, "min_bid": 7.407407407407407e-05, "storage_total_cost": 7.407407407407407e-05`),
			[]string{"on_demand 8 1", "spot 0.000148 0.000019"}, 0},
		{"a price as a string is a problem", row(`"dph_total": "35.1"`), nil, 1},
		{"an exponent too large is a problem", row(`"dph_total": 1e999999`), nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseVast([]byte(tt.body), runNov29, scrapers.DefaultVastURL)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range offers {
				got = append(got, fmt.Sprintf("%s %s %s", o.PriceType, o.PriceUSDPerHour, o.PriceUSDPerGPUHour))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || len(problems) != tt.wantProblems {
				t.Errorf("offers (-want +got):\n%s\nproblems %v, want %d", diff, problems, tt.wantProblems)
			}
		})
	}
}

func TestVastFetch(t *testing.T) {
	market := newVastMarket(t, "vastai_market.json")
	srv := httptest.NewServer(market)
	defer srv.Close()
	client := newTestClient(t, scrapers.ClientConfig{})
	v := scrapers.NewVast(client, scrapers.VastConfig{URL: srv.URL + "/api/v0/bundles/", APIKey: "sekrit-vast-key", RequestInterval: -1}, nil)

	res, err := v.Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 {
		t.Errorf("problems: %v", res.Problems)
	}
	asks := map[string]bool{}
	for _, o := range res.Offers {
		asks[o.OfferID] = true
	}
	if len(asks) != len(market.offers) {
		t.Errorf("%d distinct asks, want every one of the market's %d", len(asks), len(market.offers))
	}
	// 20 slices, and the RTX 4090 slice (66 asks) is full at 64: asc and desc, which overlap.
	if got, want := len(res.Payloads), len(scrapers.DefaultVastGPUNames)+2; got != want {
		t.Errorf("%d payloads, want %d", got, want)
	}
	if res.Attempts != len(res.Payloads) {
		t.Errorf("attempts %d, want %d", res.Attempts, len(res.Payloads))
	}
	for i, a := range market.auth {
		if a != "Bearer sekrit-vast-key" {
			t.Errorf("request %d: Authorization %q", i, a)
		}
		if strings.Contains(market.urls[i], "sekrit") {
			t.Errorf("request %d: key in URL %s", i, market.urls[i])
		}
		if !strings.Contains(string(market.bodies[i]), `"allocated_storage":8`) {
			t.Errorf("request %d: storage not pinned: %s", i, market.bodies[i])
		}
	}
}

func TestVastFetchSlicing(t *testing.T) {
	tests := []struct {
		name      string
		pageLimit int
		clamp     int
		wantTrunc bool
		wantAll   bool
	}{
		{"full pages in both orders that meet are complete", 20, 0, false, true},
		{"full pages that do not meet split by GPU count, then report truncation", 15, 0, true, false},
		{"a silent server clamp at the page limit is handled as a full page", 40, 40, false, true},
		{"pages that meet are complete", 64, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			market := newVastMarket(t, "vastai_market.json")
			market.clamp = tt.clamp
			srv := httptest.NewServer(market)
			defer srv.Close()
			v := scrapers.NewVast(newTestClient(t, scrapers.ClientConfig{}), scrapers.VastConfig{
				URL: srv.URL, PageLimit: tt.pageLimit, RequestInterval: -1, GPUNames: []string{"RTX 4090", "H100 SXM"},
			}, nil)
			res, err := v.Fetch(context.Background(), runNov29)
			if err != nil {
				t.Fatal(err)
			}
			var trunc bool
			for _, p := range res.Problems {
				trunc = trunc || errors.Is(p, scrapers.ErrTruncated)
			}
			if trunc != tt.wantTrunc {
				t.Errorf("truncation reported %v, want %v (problems %v)", trunc, tt.wantTrunc, res.Problems)
			}
			asks := map[string]bool{}
			for _, o := range res.Offers {
				asks[o.OfferID] = true
			}
			if all := len(asks) == len(market.offers); all != tt.wantAll {
				t.Errorf("%d of %d asks seen", len(asks), len(market.offers))
			}
			if len(res.Offers) == 0 {
				t.Error("no offers")
			}
		})
	}
}

// TestVastMisbehaviour points the source at servers that misbehave: each gives a clear vastai
// error or a correct result, never a hang, a panic or an empty success.
func TestVastMisbehaviour(t *testing.T) {
	good := readTestdata(t, "vastai_offers.json")
	tests := []struct {
		name      string
		handler   func(n int64) http.HandlerFunc
		timeout   time.Duration
		wantErr   error
		wantOK    bool
		attempts  int
		wantInErr string
	}{
		{"429 then success", func(n int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					http.Error(w, "API requests too frequent endpoint threshold=3.0", http.StatusTooManyRequests)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(good)
			}
		}, 0, nil, true, 2, ""},
		{"500 until retries run out", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { http.Error(w, "upstream exploded", 500) }
		}, 0, scrapers.ErrStatus, false, 3, "HTTP 500"},
		{"hanging server: the deadline wins", func(int64) http.HandlerFunc {
			return hang
		}, 300 * time.Millisecond, context.DeadlineExceeded, false, -1, ""},
		{"truncated JSON", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(good[:len(good)/2])
			}
		}, 0, scrapers.ErrIncomplete, false, 1, ""},
		{"HTML instead of JSON", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, "<html>Just a moment...</html>")
			}
		}, 0, scrapers.ErrLayoutChanged, false, 1, "text/html"},
		{"50 MB body", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				chunk := []byte(strings.Repeat(" ", 1<<20))
				for range 50 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}
		}, 0, scrapers.ErrBodyTooLarge, false, 1, ""},
		{"empty result", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"offers": []}`)
			}
		}, 0, scrapers.ErrNoOffers, false, 1, ""},
		{"redirect to a foreign domain is not followed", func(int64) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "http://evil.example/steal", http.StatusFound)
			}
		}, 0, scrapers.ErrStatus, false, 1, "HTTP 302"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tt.handler(n.Add(1))(w, r)
			}))
			defer srv.Close()
			ctx := timeoutContext(t, tt.timeout)
			v := scrapers.NewVast(newTestClient(t, scrapers.ClientConfig{MaxBodyBytes: 8 << 20}),
				scrapers.VastConfig{URL: srv.URL + "/?api_key=sekrit-in-url", GPUNames: []string{}, RequestInterval: -1}, nil)
			start := time.Now()
			res, err := v.Fetch(ctx, runNov29)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if tt.wantOK {
				if err != nil || len(res.Offers) == 0 {
					t.Fatalf("err %v, %d offers; want offers", err, len(res.Offers))
				}
			} else {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				var se *scrapers.Error
				if !errors.As(err, &se) || se.Source != "vastai" {
					t.Errorf("err %v is not a vastai *Error", err)
				}
				if !strings.Contains(err.Error(), tt.wantInErr) {
					t.Errorf("err %q does not mention %q", err, tt.wantInErr)
				}
			}
			if err != nil && strings.Contains(err.Error(), "sekrit") {
				t.Errorf("secret in error: %v", err)
			}
			for _, p := range res.Payloads {
				if strings.Contains(p.URL, "sekrit") {
					t.Errorf("secret in payload URL %s", p.URL)
				}
			}
			if tt.attempts > 0 && res.Attempts != tt.attempts {
				t.Errorf("attempts %d, want %d", res.Attempts, tt.attempts)
			}
		})
	}
}

func FuzzParseVast(f *testing.F) {
	f.Add(readTestdata(f, "vastai_offers.json"))
	f.Add([]byte(`{"offers": [{"id": 1, "num_gpus": 65536, "gpu_name": "H100 SXM", "gpu_ram": 1e308, "dph_total": 1e308}]}`))
	f.Add([]byte(`{"offers": [{"id": 2, "num_gpus": 1.5, "dph_total": -1, "min_bid": 1e-9, "geolocation": ",,,"}]}`))
	f.Add([]byte(`{"offers": null}`))
	f.Add([]byte(`{"offers": [null, {}, []]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseVast(body, runNov29, scrapers.DefaultVastURL)
		if err == nil && len(offers) == 0 {
			return // an empty page is no error for ParseVast: Fetch decides (ErrNoOffers)
		}
		checkParsed(t, scrapers.VastName, runNov29, offers, problems, err)
		checkPerGPU(t, offers)
	})
}

// vastMarket is a fake Vast search endpoint over a marketplace file: it filters on gpu_name
// (eq, notin) and num_gpus (eq, gte, lte), sorts on dph_total, applies limit and a silent clamp,
// and answers with the offers' original bytes.
type vastMarket struct {
	offers []marketOffer
	clamp  int // 0 = none

	mu     sync.Mutex
	bodies [][]byte // request bodies seen
	auth   []string // Authorization headers seen
	urls   []string
}

type marketOffer struct {
	raw     json.RawMessage
	gpuName string
	numGPUs float64
	price   float64
}

func newVastMarket(tb testing.TB, file string) *vastMarket {
	tb.Helper()
	var page struct {
		Offers []json.RawMessage `json:"offers"`
	}
	if err := json.Unmarshal(readTestdata(tb, file), &page); err != nil {
		tb.Fatal(err)
	}
	m := &vastMarket{}
	for _, raw := range page.Offers {
		var f struct {
			GPUName  string   `json:"gpu_name"`
			NumGPUs  float64  `json:"num_gpus"`
			DPHTotal *float64 `json:"dph_total"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			tb.Fatal(err)
		}
		p := 1e9
		if f.DPHTotal != nil {
			p = *f.DPHTotal
		}
		m.offers = append(m.offers, marketOffer{raw: raw, gpuName: f.GPUName, numGPUs: f.NumGPUs, price: p})
	}
	return m
}

func (m *vastMarket) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	m.urls = append(m.urls, r.URL.String())
	m.mu.Unlock()
	var q struct {
		GPUName map[string]json.RawMessage `json:"gpu_name"`
		NumGPUs map[string]float64         `json:"num_gpus"`
		Order   [][]string                 `json:"order"`
		Limit   int                        `json:"limit"`
	}
	if r.Method != http.MethodPost || json.Unmarshal(body, &q) != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_request","msg":"Invalid json body"}`)
		return
	}
	var sel []marketOffer
	for _, o := range m.offers {
		if !vastNameMatch(q.GPUName, o.gpuName) || !vastNumMatch(q.NumGPUs, o.numGPUs) {
			continue
		}
		sel = append(sel, o)
	}
	desc := len(q.Order) > 0 && len(q.Order[0]) == 2 && q.Order[0][1] == "desc"
	slices.SortStableFunc(sel, func(a, b marketOffer) int {
		if desc {
			a, b = b, a
		}
		switch {
		case a.price < b.price:
			return -1
		case a.price > b.price:
			return 1
		}
		return 0
	})
	n := len(sel)
	if q.Limit > 0 {
		n = min(n, q.Limit)
	}
	if m.clamp > 0 {
		n = min(n, m.clamp)
	}
	var buf bytes.Buffer
	buf.WriteString(`{"offers": [`)
	for i, o := range sel[:n] {
		if i > 0 {
			buf.WriteString(", ")
		}
		buf.Write(o.raw)
	}
	buf.WriteString("]}")
	w.Header().Set("Content-Type", "application/json")
	w.Write(buf.Bytes())
}

func vastNameMatch(f map[string]json.RawMessage, name string) bool {
	if raw, ok := f["eq"]; ok {
		var s string
		json.Unmarshal(raw, &s)
		return s == name
	}
	if raw, ok := f["notin"]; ok {
		var l []string
		json.Unmarshal(raw, &l)
		return !slices.Contains(l, name)
	}
	return true
}

func vastNumMatch(f map[string]float64, n float64) bool {
	if v, ok := f["eq"]; ok && n != v {
		return false
	}
	if v, ok := f["gte"]; ok && n < v {
		return false
	}
	if v, ok := f["lte"]; ok && n > v {
		return false
	}
	return true
}
