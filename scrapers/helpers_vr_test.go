package scrapers_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// Test helpers of the Vast.ai and RunPod tests (prefix vr: the package's other tests have their
// own).
//
// Fixtures (testdata/), built to providers.md §1 and §2 (no live access):
//
//   - vastai_offers.json: one search page of traps: the three verbatim sample offers of §1.6
//     (V100 deverified at 0.06 + storage, H100 SXM 81559 MiB with ", US", RTX 3090 Quebec), a V100
//     whose bw_nvlink proves SXM2, cpu_cores null and 0, min_bid above dph_total, a null
//     geolocation, a clustered 8x H100 SXM, an empty and an unknown gpu_name, a modded 48 GB RTX
//     4090, a row with no price, num_gpus 0 and "two", and a dph_base-only row in "Czechia, CZ, EU".
//   - vastai_market.json: a whole marketplace (122 asks, 25 GPU names) the fake search server
//     slices, sorts and clamps like Vast does; full field sets in the live shape, prices per offer
//     with storage at 8 GB. The snapshot's vastai part is recorded from it.
//   - runpod_gputypes.json: the gpuTypes answer to our query for 32 types with both clouds' flags,
//     on-demand and spot prices and lowestPrice, including the placeholder 0.5 (MI300X, H200 NVL
//     and RTX 2000 Ada community), zero and null prices, spot equal to on-demand, the unknown row,
//     and an unknown GPU (RTX PRO 4500 Blackwell). The snapshot's runpod part is recorded from it.
//   - runpod_gputypes_traps.json: the verbatim sample rows of §2.3 (yrys and gpu-index shapes: no
//     cloud flags, lowestPrice null-filled), plus rows without id and with a non-string id, and a
//     GraphQL error next to the data.
//
// Golden files hold the exact offers and problems; regenerate with
// go test ./scrapers/ -run 'Vast|RunPod|Snapshot' -update and review the diff.

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata/")
	}
}

func vrUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

var vrRun = scrapers.Run{ID: "run-20261129T1400Z", ObservedAt: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)}

func vrRead(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// vrGolden compares offers and problems with testdata/<name>.golden.json, or rewrites it.
func vrGolden(t *testing.T, name string, offers []schema.Offer, problems []error) {
	t.Helper()
	p := struct {
		Offers   []schema.Offer `json:"offers"`
		Problems []string       `json:"problems"`
	}{Offers: offers, Problems: []string{}}
	for _, e := range problems {
		p.Problems = append(p.Problems, e.Error())
	}
	got, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	vrCompare(t, filepath.Join("testdata", name+".golden.json"), append(got, '\n'))
}

func vrCompare(t *testing.T, path string, got []byte) {
	t.Helper()
	if vrUpdate() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := gocmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// vrClient is a client with millisecond waits for tests.
func vrClient(tb testing.TB, cfg scrapers.ClientConfig) *scrapers.Client {
	tb.Helper()
	if cfg.RetryMax == 0 {
		cfg.RetryMax = 2
	}
	if cfg.RetryWaitMin == 0 && cfg.RetryWaitMax == 0 {
		cfg.RetryWaitMin, cfg.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	}
	if cfg.AttemptTimeout == 0 {
		cfg.AttemptTimeout = 5 * time.Second
	}
	c, err := scrapers.NewClient(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// handlerTransport serves requests from an http.Handler without a network, so a source can be
// pointed at its real default URL (the snapshot is recorded that way).
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
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
	if err := json.Unmarshal(vrRead(tb, file), &page); err != nil {
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
			return cmp.Compare(b.price, a.price)
		}
		return cmp.Compare(a.price, b.price)
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

// vrHang is a handler that never answers: it reads the request (so the server notices the
// client hanging up) and waits for the client to give up, 10 s at most.
func vrHang(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}
