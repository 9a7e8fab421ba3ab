package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// tensorDockTestKey is the API token the fetch tests send.
const tensorDockTestKey = "td-token-0123456789abcdef0123456789abcdef"

// tensorDockAPI serves TensorDock's v2 lists from the fixtures: /hostnodes (a 404 when
// noHostnodes) and /locations. It records the Authorization headers and the paths asked.
type tensorDockAPI struct {
	hostnodes, locations []byte
	noHostnodes          bool
	mu                   sync.Mutex
	auth, paths          []string
}

func newTensorDockAPI(t testing.TB) *tensorDockAPI {
	return &tensorDockAPI{hostnodes: readTestdata(t, "tensordock_hostnodes.json"), locations: readTestdata(t, "tensordock_locations.json")}
}

// answer is the body of r's answer (nil: not found).
func (a *tensorDockAPI) answer(r *http.Request) []byte {
	switch {
	case strings.HasSuffix(r.URL.Path, "/hostnodes") && !a.noHostnodes:
		return a.hostnodes
	case strings.HasSuffix(r.URL.Path, "/locations"):
		return a.locations
	}
	return nil
}

func (a *tensorDockAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.auth, a.paths = append(a.auth, r.Header.Get("Authorization")), append(a.paths, r.URL.Path)
	a.mu.Unlock()
	if b := a.answer(r); b != nil {
		writeBody(w, "application/json", b)
		return
	}
	http.Error(w, `{"error":"Not Found"}`, http.StatusNotFound)
}

// newTensorDockSource is the TensorDock source against a fake API at base.
func newTensorDockSource(c *scrapers.Client, base, key string) pipeline.Source {
	return scrapers.NewTensorDock(c, scrapers.TensorDockConfig{URL: base + "/api/v2", APIKey: key}, nil)
}

func TestParseTensorDockGolden(t *testing.T) {
	for _, name := range []string{"tensordock_hostnodes", "tensordock_locations", "tensordock_hostnodes_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseTensorDock(readTestdata(t, name+".json"), runNov29, scrapers.DefaultTensorDockURL+"/hostnodes")
			checkParsed(t, scrapers.TensorDockName, runNov29, offers, problems, err)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range offers {
				if want := o.PriceUSDPerGPUHour.Mul(decimal.NewFromInt(int64(o.GPUCount))); !o.PriceUSDPerHour.Equal(want) {
					t.Errorf("offer %q: price %s, want %d × %s", o.OfferID, o.PriceUSDPerHour, o.GPUCount, o.PriceUSDPerGPUHour)
				}
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

// TestParseTensorDockValues pins, by hand, what the golden files hold for the documented cases:
// the all-in price is the GPU's price_per_hr plus 8 vCPUs, 24 GB RAM and 100 GB disk per GPU at
// the host's rates.
func TestParseTensorDockValues(t *testing.T) {
	parse := func(file string) map[string]schema.Offer {
		offers, _, err := scrapers.ParseTensorDock(readTestdata(t, file), runNov29, "")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]schema.Offer{}
		for _, o := range offers {
			m[o.OfferID] = o
		}
		return m
	}
	hosts, locs, traps := parse("tensordock_hostnodes.json"), parse("tensordock_locations.json"), parse("tensordock_hostnodes_traps.json")
	const h1, h6 = "0b5c2f1e-6a3d-4c1b-9e8f-1a2b3c4d5e01", "0b5c2f1e-6a3d-4c1b-9e8f-1a2b3c4d5e06"
	tests := []struct {
		name          string
		got           schema.Offer
		model         string
		count         uint16
		vram          float64
		price, perGPU string
		intra         schema.IntraNode
		region        string
	}{
		// 2.25 + 8 × 0.003 + 24 × 0.002 + 100 × 0.00005 = 2.327 per GPU.
		{"8x H100 SXM5", hosts[h1+"/h100-sxm5-80gb"], "H100-SXM-80GB", 8, 80, "18.616", "2.327", schema.IntraNVSwitch, "usa-ashburn"},
		// 0.35 + 0.024 + 0.048 + 0.01 = 0.432.
		{"8x RTX 4090", hosts[h6+"/geforcertx4090-pcie-24gb"], "RTX-4090-24GB", 8, 24, "3.456", "0.432", schema.IntraPCIe, "usa-orlando"},
		{"LHR is the 3060 Ti", hosts["0b5c2f1e-6a3d-4c1b-9e8f-1a2b3c4d5e07/geforcertx3060tilhr-pcie-8gb"], "RTX-3060-TI-8GB", 4, 8, "0.488", "0.122", schema.IntraPCIe, "usa-kansas-city"},
		{"teslav100 is the V100 PCIe", hosts["0b5c2f1e-6a3d-4c1b-9e8f-1a2b3c4d5e05/teslav100-pcie-16gb"], "V100-PCIE-16GB", 2, 16, "0.428", "0.214", schema.IntraPCIe, "canada-winnipeg"},
		// The td-tf sample: 0.99 + 8 × 0.01 + 24 × 0.002 + 100 × 0.0001 = 1.128.
		{"locations: the td-tf sample", locs["loc-1/geforcertx4090-pcie-24gb"], "RTX-4090-24GB", 2, 24, "2.256", "1.128", schema.IntraPCIe, "usa-ashburn"},
		{"locations: max_count", locs["7d1e6f0a-3b2c-4d5e-8f90-bb0000000003/l40-pcie-48gb"], "L40-48GB", 2, 48, "1.854", "0.927", schema.IntraPCIe, "united-states-chicago"},
		{"a count sent as 2.0", traps["trap-float-count/geforcertx4090-pcie-24gb"], "RTX-4090-24GB", 2, 24, "0.854", "0.427", schema.IntraPCIe, "us-ashburn"},
		{"a zero rate is a rate", traps["trap-zero-rate/geforcertx3080ti-pcie-12gb"], "RTX-3080-TI-12GB", 1, 12, "0.126", "0.126", schema.IntraPCIe, "brazil-são-paulo"},
		// The GPU's own rates: 2.1 + 0.04 + 0.072 + 0.02.
		{"own pricing wins", traps["trap-own-pricing/h100-sxm5-80gb"], "H100-SXM-80GB", 1, 80, "2.232", "2.232", schema.IntraNVSwitch, "de-frankfurt"},
		{"displayName is not read", traps["trap-names/a100-pcie-80gb"], "A100-PCIE-80GB", 1, 80, "1.182", "1.182", schema.IntraPCIe, "usa-new-york"},
		{"no form token: unknown", traps["trap-names/h100-80gb"], "", 2, 80, "4.164", "2.082", schema.IntraUnknown, "usa-new-york"},
		{"no location", traps["trap-minimal/geforcertx3060tilhr-pcie-8gb"], "RTX-3060-TI-8GB", 1, 8, "0.122", "0.122", schema.IntraPCIe, ""},
		// 0.333333333333333333 (as the JSON has it, 0.3333333333333333) + 0.01 + 0.05 + 0.007407407407407407.
		{"exact sums", traps["trap-exact/geforcertx4090-pcie-24gb"], "RTX-4090-24GB", 1, 24, "0.400741", "0.400741", schema.IntraPCIe, "japan-tokyo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.got
			if o.OfferID == "" {
				t.Fatal("no such offer")
			}
			if o.GPUModel != tt.model || o.GPUCount != tt.count || o.VRAMGB != tt.vram || o.IntraNode != tt.intra || o.Region != tt.region {
				t.Errorf("got %s x%d %.2fGB %s %q, want %s x%d %.2fGB %s %q", o.GPUModel, o.GPUCount, o.VRAMGB, o.IntraNode, o.Region, tt.model, tt.count, tt.vram, tt.intra, tt.region)
			}
			if !o.PriceUSDPerHour.Equal(decimal.RequireFromString(tt.price)) || !o.PriceUSDPerGPUHour.Equal(decimal.RequireFromString(tt.perGPU)) {
				t.Errorf("price %s, per GPU %s; want %s, %s", o.PriceUSDPerHour, o.PriceUSDPerGPUHour, tt.price, tt.perGPU)
			}
			n := float64(tt.count)
			if *o.VCPUs != 8*n || *o.RAMGB != 24*n || *o.DiskGB != 100*n {
				t.Errorf("host %v vCPUs %v GB %v GB; want the recipe's for %d GPUs", *o.VCPUs, *o.RAMGB, *o.DiskGB, tt.count)
			}
			// A host's free GPUs are a count; a location's max_count is only a limit on one VM.
			switch location := strings.HasPrefix(tt.name, "locations:"); {
			case location && o.AvailableCount != nil:
				t.Errorf("a location's max_count stored as %d available", *o.AvailableCount)
			case !location && (o.AvailableCount == nil || *o.AvailableCount != uint32(tt.count)):
				t.Errorf("available %v, want %d", o.AvailableCount, tt.count)
			}
			if o.PriceType != schema.OnDemand || o.Tier != schema.TierCommunity || o.InterNode != schema.InterUnknown {
				t.Errorf("%s %s %s, want on_demand community unknown", o.PriceType, o.Tier, o.InterNode)
			}
		})
	}
	if c := traps["trap-float-count/geforcertx4090-pcie-24gb"].Country; c != "US" {
		t.Errorf("country %q, want US (a two-letter country)", c)
	}
	// Left out: none free, a rate missing, no price, a count that is no count.
	for _, id := range []string{
		"0b5c2f1e-6a3d-4c1b-9e8f-1a2b3c4d5e08/h100-sxm5-80gb", "7d1e6f0a-3b2c-4d5e-8f90-bb0000000002/a100-pcie-80gb",
	} {
		if _, ok := hosts[id]; ok {
			t.Errorf("%s: none free, want it skipped", id)
		}
		if _, ok := locs[id]; ok {
			t.Errorf("%s: none free, want it skipped", id)
		}
	}
	for _, id := range []string{"trap-no-storage-rate/geforcertx3090-pcie-24gb", "trap-no-pricing/geforcertx3090-pcie-24gb",
		"trap-bad-prices/geforcertx4090-pcie-24gb", "trap-bad-rate/geforcertx4090-pcie-24gb", "trap-float-count/a100-pcie-80gb",
		"trap-float-count/rtxa4000-pcie-16gb", "trap-float-count/l40-pcie-48gb", "trap-minimal/geforcertx3090-pcie-24gb"} {
		if _, ok := traps[id]; ok {
			t.Errorf("%s: parsed, want it left out", id)
		}
	}
	if o := traps["trap-names/geforcertx4090-pcie-24gb"]; o.GPUCount != 1 {
		t.Errorf("a GPU listed twice on a host: x%d, want the first (x1)", o.GPUCount)
	}
	if o := traps["trap-names/geforcertx5060-pcie-8gb"]; o.GPUModel != "" || !o.HasFlag(schema.FlagUnknownGPU) || o.VRAMGB != 8 {
		t.Errorf("unknown model: %s %.0fGB %v, want unknown with the name's 8 GB", o.GPUModel, o.VRAMGB, o.DQFlags)
	}
}

// TestTensorDockProblems: a left-out entry's problem names the hostnode, the GPU and the field,
// and a missing rate says it is not taken as 0.
func TestTensorDockProblems(t *testing.T) {
	_, problems, err := scrapers.ParseTensorDock(readTestdata(t, "tensordock_hostnodes_traps.json"), runNov29, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	for _, want := range []string{
		`tensordock: hostnode "trap-no-storage-rate": gpu "geforcertx3090-pcie-24gb": no pricing.per_gb_storage_hr: no all-in price (a missing rate is never taken as 0)`,
		`tensordock: hostnode "trap-bad-prices": gpu "geforcertx3090-pcie-24gb": price_per_hr -0.2 is not a price`,
		`tensordock: hostnode "trap-negative-rate": gpu "geforcertx4090-pcie-24gb": pricing.per_gb_ram_hr -0.002 is negative`,
		`tensordock: hostnode "trap-float-count": gpu "a100-pcie-80gb": availableCount 1.5 is not a GPU count`,
		`tensordock: hostnode "trap-minimal": listed twice`,
	} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("no problem %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
}

// TestTensorDockFetch: the token is sent as a Bearer to /hostnodes and kept out of every payload
// and error; /locations is read when /hostnodes is not found; a refused token is an
// authentication error; no token is a clear error before any request.
func TestTensorDockFetch(t *testing.T) {
	api := newTensorDockAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	res, err := newTensorDockSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, tensorDockTestKey).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := scrapers.ParseTensorDock(api.hostnodes, runNov29, srv.URL+"/api/v2/hostnodes")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, res.Offers); diff != "" || len(res.Problems) != 0 || len(res.Payloads) != 1 || res.Attempts != 1 {
		t.Errorf("%d payloads, %d attempts, problems %v; offers (-want +got):\n%s", len(res.Payloads), res.Attempts, res.Problems, diff)
	}
	if len(api.auth) != 1 || api.auth[0] != "Bearer "+tensorDockTestKey || api.paths[0] != "/api/v2/hostnodes" {
		t.Errorf("asked %v with %v", api.paths, api.auth)
	}
	for _, p := range res.Payloads {
		if strings.Contains(p.URL, tensorDockTestKey) || bytes.Contains(p.Body, []byte(tensorDockTestKey)) {
			t.Errorf("payload %s holds the token", p.URL)
		}
	}

	t.Run("hostnodes not found: the locations", func(t *testing.T) {
		api := newTensorDockAPI(t)
		api.noHostnodes = true
		srv := httptest.NewServer(api)
		defer srv.Close()
		res, err := newTensorDockSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, tensorDockTestKey).Fetch(context.Background(), runNov29)
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := scrapers.ParseTensorDock(api.locations, runNov29, srv.URL+"/api/v2/locations")
		if diff := cmp.Diff(want, res.Offers); diff != "" || len(res.Payloads) != 2 || res.Payloads[0].Status != 404 {
			t.Errorf("payloads %d; offers (-want +got):\n%s", len(res.Payloads), diff)
		}
		if len(api.paths) != 2 || api.paths[1] != "/api/v2/locations" || api.auth[1] != "Bearer "+tensorDockTestKey {
			t.Errorf("asked %v with %v", api.paths, api.auth)
		}
	})

	t.Run("the token refused", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"Unauthorized","token":"`+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}`, http.StatusUnauthorized)
		}))
		defer srv.Close()
		res, err := newTensorDockSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, tensorDockTestKey).Fetch(context.Background(), runNov29)
		if !errors.Is(err, scrapers.ErrStatus) || !strings.HasPrefix(err.Error(), "tensordock: listing hostnodes: the API token was refused: ") {
			t.Fatalf("%v, want the token refused", err)
		}
		if strings.Contains(err.Error(), tensorDockTestKey) || bytes.Contains(res.Payloads[0].Body, []byte(tensorDockTestKey)) || res.Attempts != 1 {
			t.Errorf("the token in %q or the payload, or retried (%d attempts)", err, res.Attempts)
		}
	})

	t.Run("no token", func(t *testing.T) {
		_, err := newTensorDockSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, " ").Fetch(context.Background(), runNov29)
		if err == nil || err.Error() != "tensordock: no API token: TensorDock publishes its prices only to an account's token" {
			t.Fatalf("%v", err)
		}
	})

	t.Run("an empty list: the source unavailable", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			writeBody(w, "application/json", []byte(`{"data":{"hostnodes":[]}}`))
		}))
		defer srv.Close()
		res, err := newTensorDockSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, tensorDockTestKey).Fetch(context.Background(), runNov29)
		if !errors.Is(err, scrapers.ErrNoOffers) || !strings.Contains(err.Error(), "the source is unavailable: the hostnodes list is empty") || len(res.Offers) != 0 {
			t.Fatalf("%v (%d offers), want the source unavailable", err, len(res.Offers))
		}
	})
}

// TestTensorDockParseErrors: a body that is not a v2 list names the provider and says why.
func TestTensorDockParseErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       error
		says       string
	}{
		{"the v0 layout", string(readTestdata(t, "tensordock_hostnodes_changed.json")), scrapers.ErrLayoutChanged, "neither data.hostnodes nor data.locations"},
		{"gpus a map (v0) in the v2 envelope", `{"data": {"hostnodes": [{"id": "h1", "available_resources": {"gpus": {"l40-pcie-48gb": {"amount": 8}}}}]}}`, scrapers.ErrLayoutChanged, `hostnode "h1": gpus is an object (the v0 layout), not a list`},
		{"hostnodes a map", `{"data": {"hostnodes": {"h1": {}}}}`, scrapers.ErrLayoutChanged, "where an array was expected"},
		{"both lists", `{"data": {"hostnodes": [], "locations": []}}`, scrapers.ErrLayoutChanged, "both"},
		{"an error answer", `{"error": "Unauthorized"}`, scrapers.ErrLayoutChanged, "neither"},
		{"empty locations: unavailable", `{"data": {"locations": []}}`, scrapers.ErrNoOffers, "the source is unavailable: the locations list is empty"},
		{"nothing free", `{"data": {"hostnodes": [{"id": "h1", "available_resources": {"gpus": [{"v0Name": "l40-pcie-48gb", "availableCount": 0, "price_per_hr": 0.8}]}}]}}`, scrapers.ErrNoOffers, "1 hostnodes, no GPU available"},
		{"cut short", `{"data": {"hostnodes": [{"id": "h1"`, scrapers.ErrIncomplete, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := scrapers.ParseTensorDock([]byte(tt.body), runNov29, "")
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "tensordock: ") || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("%v, want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
}

// TestTensorDockStored: a run's stored answers re-derive to the offers the run had, the 404 of
// a run that fell back to the locations skipped.
func TestTensorDockStored(t *testing.T) {
	for _, noHostnodes := range []bool{false, true} {
		api := newTensorDockAPI(t)
		api.noHostnodes = noHostnodes
		srv := httptest.NewServer(api)
		live, err := newTensorDockSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, tensorDockTestKey).Fetch(context.Background(), runNov29)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		s, err := scrapers.NewStored(scrapers.TensorDockName, live.Payloads)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Fetch(context.Background(), runNov29)
		if err != nil || len(got.Problems) != 0 {
			t.Fatalf("%v, problems %v", err, got.Problems)
		}
		if diff := cmp.Diff(live.Offers, got.Offers); diff != "" {
			t.Errorf("re-derived offers differ (-live +stored):\n%s", diff)
		}
	}
}

// TestSnapshotTensorDock replays the shipped snapshot's tensordock/ part (the hostnodes fixture
// answered at the default URL to a test token) and checks the offers are those the source gives
// on the fixture live, and the payload the fixture byte for byte. With -update it first records
// the folder again.
func TestSnapshotTensorDock(t *testing.T) {
	api := newTensorDockAPI(t)
	transport := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host != "dashboard.tensordock.com" {
			http.NotFound(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})}
	cfg := scrapers.TensorDockConfig{APIKey: "snapshot-key"}
	if *update {
		if err := os.RemoveAll(filepath.Join(snapshotDir, scrapers.TensorDockName)); err != nil {
			t.Fatal(err)
		}
		rec := newTestClient(t, scrapers.ClientConfig{RecordDir: snapshotDir, Transport: transport, Now: func() time.Time { return runNov29.ObservedAt }})
		if _, err := scrapers.NewTensorDock(rec, cfg, nil).Fetch(context.Background(), runNov29); err != nil {
			t.Fatalf("recording: %v", err)
		}
	}
	res, err := scrapers.NewTensorDock(newTestClient(t, scrapers.ClientConfig{ReplayDir: snapshotDir}), cfg, nil).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	live, err := scrapers.NewTensorDock(newTestClient(t, scrapers.ClientConfig{Transport: transport}), cfg, nil).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, res.Offers); diff != "" {
		t.Errorf("replayed offers differ from the live ones (-live +replay):\n%s", diff)
	}
	if len(res.Payloads) != 1 || res.Attempts != 1 {
		t.Fatalf("%d payloads, %d attempts; want 1", len(res.Payloads), res.Attempts)
	}
	if p := res.Payloads[0]; !bytes.Equal(p.Body, api.hostnodes) || p.URL != scrapers.DefaultTensorDockURL+"/hostnodes" {
		t.Errorf("payload at %s, want tensordock_hostnodes.json at the default URL byte for byte", p.URL)
	}
	if len(res.Offers) < 12 || len(res.Problems) != 0 {
		t.Errorf("%d offers, problems %v", len(res.Offers), res.Problems)
	}
}

func FuzzParseTensorDock(f *testing.F) {
	for _, name := range []string{"tensordock_hostnodes.json", "tensordock_locations.json", "tensordock_hostnodes_traps.json", "tensordock_hostnodes_changed.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`{"data": {"hostnodes": [{"id": "h", "available_resources": {"gpus": [{"v0Name": "x-pcie-1e2gb", "availableCount": 1e3, "price_per_hr": 1e-30}]}, "pricing": {"per_vcpu_hr": 0, "per_gb_ram_hr": 0, "per_gb_storage_hr": 0}}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseTensorDock(body, runNov29, scrapers.DefaultTensorDockURL+"/hostnodes")
		checkParsed(t, scrapers.TensorDockName, runNov29, offers, problems, err)
	})
}
