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
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// vultrTestKey is the optional API key the fetch tests send.
const vultrTestKey = "VULTRKEY0123456789ABCDEF0123456789AB"

// vultrCursor is the next cursor of vultr_plans.json, the first page of the VM plans.
const vultrCursor = "bmV4dF9fdmNnLWdoMjAw"

// vultrAPI serves the plan lists as Vultr does: the VM plans in two pages (the second behind
// the first page's cursor), the bare-metal plans in one. It records the Authorization headers.
type vultrAPI struct {
	plans, page2, metal []byte
	mu                  sync.Mutex
	auth                []string
}

func newVultrAPI(t testing.TB) *vultrAPI {
	return &vultrAPI{
		plans: readTestdata(t, "vultr_plans.json"),
		page2: readTestdata(t, "vultr_plans_page2.json"),
		metal: readTestdata(t, "vultr_plans_metal.json"),
	}
}

// answer is the body of r's answer (nil: not found).
func (a *vultrAPI) answer(r *http.Request) []byte {
	switch {
	case strings.HasSuffix(r.URL.Path, "/v2/plans-metal"):
		return a.metal
	case strings.HasSuffix(r.URL.Path, "/v2/plans") && r.URL.Query().Get("cursor") == "":
		return a.plans
	case strings.HasSuffix(r.URL.Path, "/v2/plans") && r.URL.Query().Get("cursor") == vultrCursor:
		return a.page2
	}
	return nil
}

func (a *vultrAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.auth = append(a.auth, r.Header.Get("Authorization"))
	a.mu.Unlock()
	if b := a.answer(r); b != nil {
		writeBody(w, "application/json", b)
		return
	}
	http.Error(w, `{"error":"Invalid cursor","status":400}`, http.StatusBadRequest)
}

// newVultrSource is the Vultr source against a fake API at base.
func newVultrSource(c *scrapers.Client, base, key string) pipeline.Source {
	return scrapers.NewVultr(c, scrapers.VultrConfig{
		PlansURL: base + "/v2/plans?type=all&per_page=500",
		MetalURL: base + "/v2/plans-metal?per_page=500",
		APIKey:   key,
	}, nil)
}

func TestParseVultrGolden(t *testing.T) {
	for _, name := range []string{"vultr_plans", "vultr_plans_page2", "vultr_plans_metal", "vultr_plans_traps", "vultr_plans_metal_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseVultr(readTestdata(t, name+".json"), runNov29, "https://api.vultr.com/v2/plans")
			checkParsed(t, scrapers.VultrName, runNov29, offers, problems, err)
			if err != nil {
				t.Fatal(err)
			}
			checkPerGPU(t, offers)
			checkGolden(t, name, offers, problems)
		})
	}
}

// TestParseVultrValues pins, by hand, what the golden files hold for the documented cases.
func TestParseVultrValues(t *testing.T) {
	parse := func(file string) map[string]schema.Offer {
		offers, _, err := scrapers.ParseVultr(readTestdata(t, file), runNov29, "https://api.vultr.com/v2/plans")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]schema.Offer{}
		for _, o := range offers {
			m[o.OfferID+" "+string(o.PriceType)] = o
		}
		return m
	}
	vm, page2, metal, traps := parse("vultr_plans.json"), parse("vultr_plans_page2.json"), parse("vultr_plans_metal.json"), parse("vultr_plans_traps.json")
	tests := []struct {
		name   string
		got    schema.Offer
		ok     bool
		model  string
		count  uint16
		vram   float64
		price  string
		perGPU string
		intra  schema.IntraNode
		stock  schema.Stock
	}{
		{"8x H100 metal, HGX", metal["vbm-112c-2048gb-8-h100-gpu/sea on_demand"], true, "H100-SXM-80GB", 8, 80, "23.92", "2.99", schema.IntraNVSwitch, schema.StockUnknown},
		{"8x H100 metal spot", metal["vbm-112c-2048gb-8-h100-gpu/sea spot"], true, "H100-SXM-80GB", 8, 80, "18.4", "2.3", schema.IntraNVSwitch, schema.StockUnknown},
		{"8x MI300X metal", metal["vbm-256c-2048gb-8-mi300x-gpu/ord on_demand"], true, "MI300X-192GB", 8, 192, "17.52", "2.19", schema.IntraInfinityFabric, schema.StockUnknown},
		{"the l40 id is L40S", metal["vbm-64c-2048gb-8-l40-gpu/ord on_demand"], true, "L40S-48GB", 8, 48, "7.4", "0.925", schema.IntraPCIe, schema.StockUnknown},
		{"8x B200 listed nowhere, not orderable", metal["vbm-128c-2048gb-8-b200-gpu on_demand"], true, "B200-SXM-180GB", 8, 180, "68", "8.5", schema.IntraNVSwitch, schema.StockNone},
		{"A100 80 GB whole, unknown form", vm["vcg-a100-12c-120g-80vram/ewr on_demand"], true, "", 1, 80, "2.397", "2.397", schema.IntraUnknown, schema.StockUnknown},
		{"A100 slice from VRAM", vm["vcg-a100-1c-6g-4vram/ewr on_demand"], true, "", 1, 4, "0.123", "0.123", schema.IntraUnknown, schema.StockUnknown},
		{"4x L40S", vm["vcg-l40s-64c-750g-192vram/ord on_demand"], true, "L40S-48GB", 4, 48, "6.684", "1.671", schema.IntraPCIe, schema.StockUnknown},
		{"A16 count from VRAM", vm["vcg-a16-24c-256g-64vram/ewr on_demand"], true, "A16-16GB", 4, 16, "1.885", "0.47125", schema.IntraPCIe, schema.StockUnknown},
		{"location_cost override", page2["vcg-mi300x-32c-256g-192vram/chi on_demand"], true, "MI300X-192GB", 1, 192, "2.05", "2.05", schema.IntraInfinityFabric, schema.StockUnknown},
		{"vdm H100 from the id", page2["vcg-h100-216c-1914gb-640vram/sea on_demand"], true, "", 8, 80, "19.92", "2.49", schema.IntraUnknown, schema.StockUnknown},
		{"vdm MI325X from the id", page2["vcg-mi325x-252c-2872g-1536vram/ord on_demand"], true, "MI325X-256GB", 6, 256, "16.8", "2.8", schema.IntraInfinityFabric, schema.StockUnknown},
		{"deploy_ondemand false", traps["vcg-l40s-16c-180g-48vram/ord on_demand"], true, "L40S-48GB", 1, 48, "1.671", "1.671", schema.IntraPCIe, schema.StockNone},
		{"deploy_preemptible true", traps["vcg-l40s-16c-180g-48vram/ord spot"], true, "L40S-48GB", 1, 48, "1.004", "1.004", schema.IntraPCIe, schema.StockUnknown},
		{"A100 SXM 40 GB", traps["vcg-a100-sxm-6c-60g-40vram/ewr on_demand"], true, "A100-SXM-40GB", 1, 40, "1.29", "1.29", schema.IntraNVSwitch, schema.StockUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.got
			if o.OfferID == "" {
				t.Fatal("no such offer")
			}
			if o.GPUModel != tt.model || o.GPUCount != tt.count || o.VRAMGB != tt.vram || o.IntraNode != tt.intra || o.Stock != tt.stock {
				t.Errorf("got %s x%d %.2fGB %s %s, want %s x%d %.2fGB %s %s", o.GPUModel, o.GPUCount, o.VRAMGB, o.IntraNode, o.Stock, tt.model, tt.count, tt.vram, tt.intra, tt.stock)
			}
			if !o.PriceUSDPerHour.Equal(decimal.RequireFromString(tt.price)) || !o.PriceUSDPerGPUHour.Equal(decimal.RequireFromString(tt.perGPU)) {
				t.Errorf("price %s, per GPU %s; want %s, %s", o.PriceUSDPerHour, o.PriceUSDPerGPUHour, tt.price, tt.perGPU)
			}
			if o.InterNode != schema.InterUnknown {
				t.Errorf("inter-node %s, want unknown", o.InterNode)
			}
		})
	}
	// Left out with a problem: a count two readings explain, prices that are no price.
	for _, id := range []string{"vcg-a100-12c-120g-80vram-nocount/ewr on_demand", "vcg-a100-96c-896g-320vram/ewr on_demand",
		"vcg-a40-12c-60g-24vram/ewr on_demand", "vcg-a40-6c-30g-12vram/ewr on_demand", "vcg-l40s-32c-375g-96vram/ewr on_demand"} {
		if _, ok := traps[id]; ok {
			t.Errorf("%s: parsed, want it left out", id)
		}
	}
	if a := traps["vcg-a40-24c-120g-48vram/blr on_demand"]; a.Region != "blr" || !a.PriceUSDPerHour.Equal(decimal.RequireFromString("1.712")) {
		t.Errorf("the first of a plan listed twice: %+v", a)
	}
}

// TestVultrFetch: both lists, every page, the key sent as a Bearer and nowhere else; the offers
// are those of the pages parsed one by one.
func TestVultrFetch(t *testing.T) {
	api := newVultrAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	res, err := newVultrSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, vultrTestKey).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Payloads) != 3 || res.Attempts != 3 {
		t.Fatalf("%d payloads, %d attempts; want the 2 VM pages and the metal page", len(res.Payloads), res.Attempts)
	}
	var want []schema.Offer
	for _, f := range []string{"vultr_plans.json", "vultr_plans_page2.json", "vultr_plans_metal.json"} {
		offers, _, err := scrapers.ParseVultr(readTestdata(t, f), runNov29, "")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, offers...)
	}
	if len(res.Offers) != len(want) || len(res.Problems) != 0 {
		t.Errorf("%d offers (problems %v), want the pages' %d", len(res.Offers), res.Problems, len(want))
	}
	for _, a := range api.auth {
		if a != "Bearer "+vultrTestKey {
			t.Errorf("Authorization %q", a)
		}
	}
	for _, p := range res.Payloads {
		if strings.Contains(p.URL, vultrTestKey) || bytes.Contains(p.Body, []byte(vultrTestKey)) {
			t.Errorf("payload %s holds the key", p.URL)
		}
	}
	if !strings.Contains(res.Payloads[1].URL, "cursor="+vultrCursor) {
		t.Errorf("second page asked at %s, want the cursor", res.Payloads[1].URL)
	}

	// Without a key, no Authorization header.
	api.auth = nil
	if _, err := newVultrSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, "").Fetch(context.Background(), runNov29); err != nil {
		t.Fatal(err)
	}
	for _, a := range api.auth {
		if a != "" {
			t.Errorf("Authorization %q without a key", a)
		}
	}
}

// TestVultrPagination: a cursor that comes back, or pages that never end, fail the fetch; a
// failed second page fails it too (never a market without its last page).
func TestVultrPagination(t *testing.T) {
	first := readTestdata(t, "vultr_plans.json")
	tests := []struct {
		name string
		page func(r *http.Request) (int, []byte)
		want error
	}{
		{"the cursor comes back", func(*http.Request) (int, []byte) { return 200, first }, scrapers.ErrLayoutChanged},
		{"endless pages", func(r *http.Request) (int, []byte) {
			return 200, []byte(mustReplace(string(first), vultrCursor, "c"+r.URL.Query().Get("cursor")))
		}, scrapers.ErrLayoutChanged},
		{"the second page fails", func(r *http.Request) (int, []byte) {
			if r.URL.Query().Get("cursor") != "" {
				return 404, []byte(`{"error":"Not found","status":404}`)
			}
			return 200, first
		}, scrapers.ErrStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				code, b := tt.page(r)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				_, _ = w.Write(b)
			}))
			defer srv.Close()
			_, err := newVultrSource(newTestClient(t, scrapers.ClientConfig{RetryMax: -1}), srv.URL, "").Fetch(context.Background(), runNov29)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "vultr: ") {
				t.Fatalf("%v, want %v", err, tt.want)
			}
		})
	}
}

// TestVultrParseErrors: a body that is not a plan list names the provider and says why.
func TestVultrParseErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       error
		says       string
	}{
		{"changed layout", string(readTestdata(t, "vultr_plans_changed.json")), scrapers.ErrLayoutChanged, `neither "plans" nor "plans_metal"`},
		{"no pagination", `{"plans": [], "links": {}}`, scrapers.ErrLayoutChanged, "meta.links.next"},
		{"an API error", `{"error": "Invalid API token.", "status": 401}`, nil, "api error: Invalid API token."},
		{"CPU plans only", `{"plans": [{"id": "vc2-1c-1gb", "hourly_cost": 0.007, "type": "vc2", "locations": ["ewr"]}], "meta": {"total": 1, "links": {"next": "", "prev": ""}}}`, scrapers.ErrNoOffers, "1 plans"},
		{"cut short", `{"plans": [{"id": "vc2-1c-1gb"`, scrapers.ErrIncomplete, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := scrapers.ParseVultr([]byte(tt.body), runNov29, "")
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.HasPrefix(err.Error(), "vultr: ") || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("%v, want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
	// A plan's problem names the plan and the field.
	_, problems, _ := scrapers.ParseVultr(readTestdata(t, "vultr_plans_traps.json"), runNov29, "")
	found := false
	for _, p := range problems {
		found = found || p.Error() == `vultr: plan "vcg-a40-12c-60g-24vram": hourly_cost -0.856 is negative`
	}
	if !found {
		t.Errorf("problems %v do not name the negative price's plan and field", problems)
	}
}

// TestVultrStored: a run's stored pages re-derive to the offers the run had, the CPU-only page
// of a stored run being no problem.
func TestVultrStored(t *testing.T) {
	srv := httptest.NewServer(newVultrAPI(t))
	defer srv.Close()
	live, err := newVultrSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL, "").Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	cpu := schema.RawPayload{URL: "https://api.vultr.com/v2/plans?cursor=x", Status: 200,
		Body: []byte(`{"plans": [{"id": "vc2-1c-1gb", "hourly_cost": 0.007, "type": "vc2"}], "meta": {"links": {"next": ""}}}`)}
	s, err := scrapers.NewStored(scrapers.VultrName, append(live.Payloads, cpu))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Fetch(context.Background(), runNov29)
	if err != nil || len(got.Problems) != 0 {
		t.Fatalf("%v, problems %v", err, got.Problems)
	}
	// Stored parses page by page; the live run sorts its pages' offers together.
	byKey := cmpopts.SortSlices(func(a, b schema.Offer) bool {
		return a.OfferID+" "+string(a.PriceType) < b.OfferID+" "+string(b.PriceType)
	})
	if diff := cmp.Diff(live.Offers, got.Offers, byKey); diff != "" {
		t.Errorf("re-derived offers differ (-live +stored):\n%s", diff)
	}
}

// TestSnapshotVultr replays the shipped snapshot's vultr/ part and checks the offers are those
// the source gives on the fixtures live, and the payloads the fixtures byte for byte. With
// -update it first records the folder again from the fixtures served at the default URLs.
func TestSnapshotVultr(t *testing.T) {
	api := newVultrAPI(t)
	transport := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Host != "api.vultr.com" {
			http.NotFound(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})}
	if *update {
		if err := os.RemoveAll(filepath.Join(snapshotDir, scrapers.VultrName)); err != nil {
			t.Fatal(err)
		}
		rec := newTestClient(t, scrapers.ClientConfig{RecordDir: snapshotDir, Transport: transport, Now: func() time.Time { return runNov29.ObservedAt }})
		if _, err := scrapers.NewVultr(rec, scrapers.VultrConfig{}, nil).Fetch(context.Background(), runNov29); err != nil {
			t.Fatalf("recording: %v", err)
		}
	}
	res, err := scrapers.NewVultr(newTestClient(t, scrapers.ClientConfig{ReplayDir: snapshotDir}), scrapers.VultrConfig{}, nil).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	live, err := scrapers.NewVultr(newTestClient(t, scrapers.ClientConfig{Transport: transport}), scrapers.VultrConfig{}, nil).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, res.Offers); diff != "" {
		t.Errorf("replayed offers differ from the live ones (-live +replay):\n%s", diff)
	}
	wantURLs := []string{scrapers.DefaultVultrPlansURL, "https://api.vultr.com/v2/plans?cursor=" + vultrCursor + "&per_page=500&type=all", scrapers.DefaultVultrMetalURL}
	if len(res.Payloads) != 3 || res.Attempts != 3 {
		t.Fatalf("%d payloads, %d attempts; want 3", len(res.Payloads), res.Attempts)
	}
	for i, f := range []string{"vultr_plans.json", "vultr_plans_page2.json", "vultr_plans_metal.json"} {
		if p := res.Payloads[i]; !bytes.Equal(p.Body, readTestdata(t, f)) || p.URL != wantURLs[i] {
			t.Errorf("payload %d at %s, want %s at %s byte for byte", i, p.URL, f, wantURLs[i])
		}
	}
	if len(res.Offers) < 40 || len(res.Problems) != 0 {
		t.Errorf("%d offers, problems %v", len(res.Offers), res.Problems)
	}
}

func FuzzParseVultr(f *testing.F) {
	for _, name := range []string{"vultr_plans.json", "vultr_plans_page2.json", "vultr_plans_metal.json", "vultr_plans_traps.json", "vultr_plans_metal_traps.json", "vultr_plans_changed.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`{"plans": [{"id": "vcg-x", "gpu_count": "1/0", "hourly_cost": 1e99}], "meta": {"links": {"next": ""}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseVultr(body, runNov29, scrapers.DefaultVultrPlansURL)
		checkParsed(t, scrapers.VultrName, runNov29, offers, problems, err)
		if err == nil {
			checkPerGPU(t, offers)
		}
	})
}
