package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// digitaloceanTestKey is the fake API token the fetch tests send; it must never leave Fetch.
const digitaloceanTestKey = "dop_v1_0f3c9a7e5b1d2468ace013579bdf02468ace013579bdf02468ace013579bd"

// digitaloceanAPI serves the size list as DigitalOcean does: two pages, the second behind the
// first's links.pages.next (page=2). It records the Authorization headers and the URLs asked.
type digitaloceanAPI struct {
	pages [2][]byte
	mu    sync.Mutex
	auth  []string
	asked []string
}

func newDigitalOceanAPI(t testing.TB) *digitaloceanAPI {
	return &digitaloceanAPI{pages: [2][]byte{readTestdata(t, "digitalocean_sizes.json"), readTestdata(t, "digitalocean_sizes_page2.json")}}
}

// answer is the body of r's answer (nil: not found).
func (a *digitaloceanAPI) answer(r *http.Request) []byte {
	if !strings.HasSuffix(r.URL.Path, "/v2/sizes") {
		return nil
	}
	switch r.URL.Query().Get("page") {
	case "", "1":
		return a.pages[0]
	case "2":
		return a.pages[1]
	}
	return nil
}

func (a *digitaloceanAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.auth = append(a.auth, r.Header.Get("Authorization"))
	a.asked = append(a.asked, r.URL.RequestURI())
	a.mu.Unlock()
	if b := a.answer(r); b != nil {
		writeBody(w, "application/json", b)
		return
	}
	http.Error(w, `{"id":"not_found","message":"The resource you were accessing could not be found."}`, http.StatusNotFound)
}

// newDigitalOceanAPISource is the DigitalOcean source with a token against a fake API at base.
func newDigitalOceanAPISource(c *scrapers.Client, base string) pipeline.Source {
	return scrapers.NewDigitalOcean(c, scrapers.DigitalOceanConfig{APIKey: digitaloceanTestKey, APIURL: base + "/v2/sizes?per_page=200"}, nil)
}

func TestParseDigitalOceanGolden(t *testing.T) {
	for _, name := range []string{"digitalocean_sizes", "digitalocean_sizes_page2", "digitalocean_sizes_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseDigitalOcean(readTestdata(t, name+".json"), runAug22, scrapers.DefaultDigitalOceanAPIURL)
			checkParsed(t, scrapers.DigitalOceanName, runAug22, offers, problems, err)
			if err != nil {
				t.Fatal(err)
			}
			checkPerGPU(t, offers)
			checkGolden(t, name, offers, problems)
		})
	}
}

func TestParseDigitalOceanPageGolden(t *testing.T) {
	for _, name := range []string{"digitalocean_pricing", "digitalocean_pricing_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseDigitalOceanPage(readTestdata(t, name+".html"), runAug22, scrapers.DefaultDigitalOceanPageURL)
			checkParsed(t, scrapers.DigitalOceanName, runAug22, offers, problems, err)
			if err != nil {
				t.Fatal(err)
			}
			checkPerGPU(t, offers)
			checkGolden(t, name, offers, problems)
		})
	}
}

// TestParseDigitalOceanPageOracle pins the values docs/providers.md §13.4 gives for the page of
// 2026-08-22: 11 on-demand rows and 8 spot rows, prices per droplet, an (8x) row of 8 GPUs, the
// Ada cards and the L40S under their page names, the two B300 coolings as two offers.
func TestParseDigitalOceanPageOracle(t *testing.T) {
	offers, problems, err := scrapers.ParseDigitalOceanPage(readTestdata(t, "digitalocean_pricing.html"), runAug22, scrapers.DefaultDigitalOceanPageURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	byType := map[schema.PriceType]int{}
	for _, o := range offers {
		byType[o.PriceType]++
		if o.Region != "" || o.InterNode != schema.InterUnknown || o.Tier != schema.TierDatacenter || o.Stock != schema.StockUnknown {
			t.Errorf("offer %q: region %q, inter-node %s, tier %s, stock %s", o.OfferID, o.Region, o.InterNode, o.Tier, o.Stock)
		}
	}
	if byType[schema.OnDemand] != 11 || byType[schema.Spot] != 8 || len(offers) != 19 {
		t.Errorf("%v, want 11 on-demand and 8 spot offers (the contract rows are not read)", byType)
	}
	missing, vramMissing := []schema.DQFlag{schema.FlagUnknownGPU}, []schema.DQFlag{schema.FlagVRAMMissing}
	checkVerdaOffers(t, byOfferKey(offers), map[string]verdaWant{
		"NVIDIA H100 on_demand": {model: "", raw: "NVIDIA H100", count: 1, vram: 80, perHour: "4.41", perGPU: "4.41",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, flags: missing},
		"NVIDIA H200 (8x) on_demand": {model: "H200-SXM-141GB", raw: "NVIDIA H200", count: 8, vram: 141, perHour: "35.76", perGPU: "4.47",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA L40s on_demand": {model: "L40S-48GB", raw: "NVIDIA L40s", count: 1, vram: 48, perHour: "1.57", perGPU: "1.57",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, flags: vramMissing},
		"AMD MI300X on_demand": {model: "MI300X-192GB", raw: "AMD MI300X", count: 1, vram: 192, perHour: "2.59", perGPU: "2.59",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA RTX 4000 on_demand": {model: "RTX-4000-ADA-20GB", raw: "NVIDIA RTX 4000", count: 1, vram: 20, perHour: "0.76", perGPU: "0.76",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA RTX 6000 on_demand": {model: "RTX-6000-ADA-48GB", raw: "NVIDIA RTX 6000", count: 1, vram: 48, perHour: "1.57", perGPU: "1.57",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA B300, air-cooled spot": {model: "B300-SXM-288GB", raw: "NVIDIA B300, air-cooled", count: 1, vram: 288, perHour: "11.19", perGPU: "11.19",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA B300, liquid-cooled spot": {model: "B300-SXM-288GB", raw: "NVIDIA B300, liquid-cooled", count: 1, vram: 288, perHour: "11.19", perGPU: "11.19",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA B300, air-cooled (8x) spot": {model: "B300-SXM-288GB", raw: "NVIDIA B300, air-cooled", count: 8, vram: 288, perHour: "89.52", perGPU: "11.19",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, flags: vramMissing},
		"AMD MI350X spot": {model: "MI350X-288GB", raw: "AMD MI350X", count: 1, vram: 288, perHour: "4", perGPU: "4",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, flags: vramMissing},
		"AMD MI355X (8x) spot": {model: "MI355X-288GB", raw: "AMD MI355X", count: 8, vram: 288, perHour: "36", perGPU: "4.5",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, flags: vramMissing},
	})
}

// TestParseDigitalOceanPageTraps: what the traps page keeps, and the problems it reports.
func TestParseDigitalOceanPageTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseDigitalOceanPage(readTestdata(t, "digitalocean_pricing_traps.html"), runAug22, scrapers.DefaultDigitalOceanPageURL)
	if err != nil {
		t.Fatal(err)
	}
	got := byOfferKey(offers)
	vramMissing := []schema.DQFlag{schema.FlagVRAMMissing}
	checkVerdaOffers(t, got, map[string]verdaWant{
		// A non-breaking space in the label and the price; its verbatim duplicate counts once.
		"NVIDIA H100 on_demand": {raw: "NVIDIA H100", count: 1, vram: 80, perHour: "4.41", perGPU: "4.41",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU}},
		"NVIDIA H200 (8x) on_demand": {model: "H200-SXM-141GB", raw: "NVIDIA H200", count: 8, vram: 141, perHour: "35.76", perGPU: "4.47",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, flags: vramMissing},
		"AMD MI325X (8x) on_demand": {model: "MI325X-256GB", raw: "AMD MI325X", count: 8, vram: 256, perHour: "1024", perGPU: "128",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA L40s (16x) on_demand": {model: "L40S-48GB", raw: "NVIDIA L40s", count: 16, vram: 48, perHour: "25.12", perGPU: "1.57",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, flags: vramMissing},
		"NVIDIA RTX PRO 9000 on_demand": {raw: "NVIDIA RTX PRO 9000", count: 1, perHour: "3.99", perGPU: "3.99",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU}},
		// A label in a link, a price in <strong>: the cells' text.
		"NVIDIA RTX 6000 on_demand": {model: "RTX-6000-ADA-48GB", raw: "NVIDIA RTX 6000", count: 1, vram: 48, perHour: "1.57", perGPU: "1.57",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, flags: vramMissing},
	})
	for _, k := range []string{"NVIDIA B300 on_demand", "Intel Gaudi 3 on_demand", "NVIDIA RTX 4000 on_demand", "AMD MI300X on_demand", "AMD MI350X (8x) on_demand"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s: an offer, want none", k)
		}
	}
	if len(offers) != 7 { // and "NVIDIA H100 (8x)" at "$35.28 Per Hour"
		t.Errorf("%d offers, want 7", len(offers))
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`no <h2 id="spot-gpu-droplet-pricing">: no spot prices read`,
		`"NVIDIA H200 (8x)" listed twice with different prices`,
		`GPU "NVIDIA L40s (0x)": "0" is not a GPU count`,
		`GPU "Intel Gaudi 3" does not start with "NVIDIA " or "AMD "`,
		`GPU "NVIDIA RTX 4000": price "$0.76/hr" is not "$D.DD per hour"`,
		`GPU "NVIDIA RTX 6000": price "$0.00" is not positive`,
		`GPU "AMD MI300X": price "$2.59 per month" is not "$D.DD per hour"`,
		`GPU "AMD MI350X (8x)": price "" is not "$D.DD per hour"`,
		`3 cells, want 2 (GPU, Price)`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no problem saying %q in:\n%s", want, all)
		}
	}
	for _, p := range problems {
		if !strings.HasPrefix(p.Error(), "digitalocean: pricing page: ") {
			t.Errorf("problem %q does not name the provider and the page", p)
		}
	}
	if len(problems) != 9 {
		t.Errorf("%d problems, want 9 (the contact-sales row is none):\n%s", len(problems), all)
	}
}

// TestParseDigitalOceanValues pins, by hand, what the golden files hold for the documented
// cases of the size list.
func TestParseDigitalOceanValues(t *testing.T) {
	parse := func(file string) map[string]schema.Offer {
		offers, _, err := scrapers.ParseDigitalOcean(readTestdata(t, file), runAug22, scrapers.DefaultDigitalOceanAPIURL)
		if err != nil {
			t.Fatal(err)
		}
		return byOfferKey(offers)
	}
	p1, p2, traps := parse("digitalocean_sizes.json"), parse("digitalocean_sizes_page2.json"), parse("digitalocean_sizes_traps.json")
	unknown, none := []schema.DQFlag{schema.FlagUnknownGPU}, []schema.DQFlag{}
	checkVerdaOffers(t, p1, map[string]verdaWant{
		// vram.amount is the droplet's total: 640 over 8 GPUs (gpuhunt stores 640 a GPU).
		"gpu-h100x8-640gb/nyc2 on_demand": {raw: "nvidia_h100", count: 8, vram: 80, perHour: "35.28", perGPU: "4.41",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, region: "nyc2", country: "US", flags: unknown},
		"gpu-h100x1-80gb/ams3 on_demand": {raw: "nvidia_h100", count: 1, vram: 80, perHour: "4.41", perGPU: "4.41",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, region: "ams3", country: "NL", flags: unknown},
		"gpu-6000adax1-48gb/tor1 on_demand": {model: "RTX-6000-ADA-48GB", raw: "nvidia_rtx6000_ada", count: 1, vram: 48, perHour: "1.57", perGPU: "1.57",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, region: "tor1", country: "CA", flags: none},
	})
	checkVerdaOffers(t, p2, map[string]verdaWant{
		"gpu-mi300x8-1536gb/ams3 on_demand": {model: "MI300X-192GB", raw: "amd_mi300x", count: 8, vram: 192, perHour: "20.72", perGPU: "2.59",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, region: "ams3", country: "NL", flags: none},
		"gpu-h200x8-1128gb/atl1 on_demand": {model: "H200-SXM-141GB", raw: "nvidia_h200", count: 8, vram: 141, perHour: "35.76", perGPU: "4.47",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, region: "atl1", country: "US", flags: none},
		// available false: listed, not orderable now.
		"gpu-mi325x8-2048gb/atl1 on_demand": {model: "MI325X-256GB", raw: "amd_mi325x", count: 8, vram: 256, perHour: "26", perGPU: "3.25",
			intra: schema.IntraInfinityFabric, stock: schema.StockNone, region: "atl1", country: "US", flags: none},
		// A -spot slug is the spot price of the droplet without the suffix.
		"gpu-h100x1-80gb/nyc2 spot": {raw: "nvidia_h100", count: 1, vram: 80, perHour: "1", perGPU: "1",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, region: "nyc2", country: "US", flags: unknown},
		"gpu-mi355x8-2304gb/mem1 spot": {model: "MI355X-288GB", raw: "amd_mi355x", count: 8, vram: 288, perHour: "36", perGPU: "4.5",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, region: "mem1", flags: none},
	})
	checkVerdaOffers(t, traps, map[string]verdaWant{
		"gpu-mi300x8-1536gb/nyc1 on_demand": {model: "MI300X-192GB", raw: "amd_mi300x", count: 8, vram: 192, perHour: "15.92", perGPU: "1.99",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, region: "nyc1", country: "US", flags: none},
		// No vram: the catalog's, flagged; no model: the slug is the raw name.
		"gpu-mi300x1-192gb/ams3 on_demand": {model: "MI300X-192GB", raw: "amd_mi300x", count: 1, vram: 192, perHour: "2.59", perGPU: "2.59",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, region: "ams3", country: "NL", flags: []schema.DQFlag{schema.FlagVRAMMissing}},
		"gpu-6000adax1-48gb/tor1 on_demand": {model: "RTX-6000-ADA-48GB", raw: "gpu-6000adax1-48gb", count: 1, vram: 48, perHour: "1.57", perGPU: "1.57",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, region: "tor1", country: "CA", flags: none},
		"gpu-l40sx1-48gb/tor1 on_demand": {model: "L40S-48GB", raw: "nvidia_l40s", count: 1, vram: 48, perHour: "1.57", perGPU: "1.57",
			intra: schema.IntraPCIe, stock: schema.StockNone, region: "tor1", country: "CA", flags: none},
		"gpu-rtxpro9000x1-128gb/nyc2 on_demand": {raw: "nvidia_rtx_pro_9000", count: 1, vram: 128, perHour: "3.99", perGPU: "3.99",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, region: "nyc2", country: "US", flags: unknown},
		// The first of a slug listed twice; the malformed region is a problem, the offers stay.
		"gpu-mi325x1-256gb/atl1 on_demand": {model: "MI325X-256GB", raw: "amd_mi325x", count: 1, vram: 256, perHour: "3.25", perGPU: "3.25",
			intra: schema.IntraInfinityFabric, stock: schema.StockUnknown, region: "atl1", country: "US", flags: none},
	})
	// Left out: CPU sizes, sizes in no region, and the sizes of the problems below.
	for k := range p1 {
		if !strings.HasPrefix(k, "gpu-") || strings.HasPrefix(k, "gpu-4000adax1-20gb") {
			t.Errorf("%s: an offer, want none (a CPU size, or one in no region)", k)
		}
	}
	if len(traps) != 9 {
		t.Errorf("%d trap offers, want 9", len(traps))
	}
}

// TestParseDigitalOceanTraps: a size's problem names the size and the field.
func TestParseDigitalOceanTraps(t *testing.T) {
	_, problems, err := scrapers.ParseDigitalOcean(readTestdata(t, "digitalocean_sizes_traps.json"), runAug22, scrapers.DefaultDigitalOceanAPIURL)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`digitalocean: size "gpu-h100x1-80gb": price "4.41" is not a JSON number`,
		`digitalocean: size "gpu-h100x2-160gb": price_hourly -8.82 is not positive`,
		`digitalocean: size "gpu-h100x4-320gb": price_hourly 0 is not positive`,
		`digitalocean: size "gpu-h200x8-1128gb": price_hourly 100000000000000000000000000000… is implausibly high`,
		`digitalocean: size "gpu-l40sx2-96gb": gpu_info.count: none`,
		`digitalocean: size "gpu-l40sx0-0gb": gpu_info.count 0 is not a GPU count`,
		`digitalocean: size "gpu-l40sx4-192gb": gpu_info.vram.unit "mib", want gib`,
		`digitalocean: size "gpu-mi325x1-256gb": region "ATL 1; drop" is not a region slug`,
		`digitalocean: size "gpu-mi325x1-256gb": listed twice`,
		`digitalocean: size #20: no slug`,
		`digitalocean: size #21: a number where an object was expected`,
		`digitalocean: size "gpu-b300x8-2304gb-spot": gpu_info.count: a string where a int was expected`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no problem %q in:\n%s", want, all)
		}
	}
}

func TestParseDigitalOceanErrors(t *testing.T) {
	full := string(readTestdata(t, "digitalocean_sizes.json"))
	tests := []struct {
		name, body string
		want       error
		says       string
	}{
		{"the list renamed", string(readTestdata(t, "digitalocean_sizes_changed.json")), scrapers.ErrLayoutChanged, `no "sizes"`},
		{"an API error", `{"id": "unauthorized", "message": "Unable to authenticate you"}`, scrapers.ErrLayoutChanged, `api error "unauthorized": Unable to authenticate you`},
		{"sizes not a list", `{"sizes": {"gpu-h100x1-80gb": {}}, "links": {}, "meta": {"total": 1}}`, scrapers.ErrLayoutChanged, "where an array was expected"},
		{"next not a string", mustReplace(full, `"next": "https://api.digitalocean.com/v2/sizes?page=2&per_page=200"`, `"next": 2`), scrapers.ErrLayoutChanged, ""},
		{"CPU sizes only", `{"sizes": [{"slug": "s-1vcpu-1gb", "price_hourly": 0.00893, "regions": ["nyc1"]}], "links": {}, "meta": {"total": 1}}`, scrapers.ErrNoOffers, "1 sizes (1 CPU, 0 in no region)"},
		{"GPU sizes in no region", `{"sizes": [{"slug": "gpu-h100x1-80gb", "price_hourly": 4.41, "regions": [], "gpu_info": {"count": 1}}], "links": {}}`, scrapers.ErrNoOffers, "(0 CPU, 1 in no region)"},
		{"cut short", full[:len(full)/2], scrapers.ErrIncomplete, ""},
		{"empty body", "", scrapers.ErrIncomplete, ""},
		{"trailing data", full + "{}", scrapers.ErrLayoutChanged, ""},
		{"HTML", "<html><body>Bad gateway</body></html>", scrapers.ErrLayoutChanged, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseDigitalOcean([]byte(tt.body), runAug22, scrapers.DefaultDigitalOceanAPIURL)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "digitalocean: ") || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v (%d offers), want %v saying %q", err, len(offers), tt.want, tt.says)
			}
		})
	}
}

func TestParseDigitalOceanPageLayoutChanged(t *testing.T) {
	page := string(readTestdata(t, "digitalocean_pricing.html"))
	tests := []struct {
		name, body string
		want       error
		says       string
	}{
		{"prices as cards", string(readTestdata(t, "digitalocean_pricing_changed.html")), scrapers.ErrLayoutChanged, "section #on-demand-gpu-droplet-pricing has 0 tables"},
		{"the anchor renamed", mustReplace(page, `id="on-demand-gpu-droplet-pricing"`, `id="gpu-on-demand"`), scrapers.ErrLayoutChanged, `<h2 id="on-demand-gpu-droplet-pricing"> found 0 times`},
		{"the section twice", mustReplace(page, `<h2 id="contract-gpu-droplet-pricing"`, `<h2 id="on-demand-gpu-droplet-pricing"`), scrapers.ErrLayoutChanged, "found 2 times"},
		{"two tables in a section", mustReplace(page, `<h3 id="whats-included">`, `<table><tr><th>GPU</th><th>Price</th></tr></table><h3 id="whats-included">`), scrapers.ErrLayoutChanged, "has 2 tables"},
		{"a header renamed", mustReplace(page, "<th>Price</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>NVIDIA H100</td>", "<th>Price per GPU</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>NVIDIA H100</td>"), scrapers.ErrLayoutChanged, "table header"},
		{"no rows", mustReplaceRegexp(page, `(?s)(id="spot-gpu-droplet-pricing".*?<tbody>).*?(</tbody>)`, `$1$2`), scrapers.ErrLayoutChanged, "has no <td> rows"},
		{"every price on contract", mustReplaceRegexp(page, `<td>\$[0-9.,]+ per hour</td>`, `<td>Per contract after contacting sales</td>`), scrapers.ErrNoOffers, "19 rows"},
		{"not HTML", "Service Unavailable", scrapers.ErrLayoutChanged, ""},
		{"cut short", page[:len(page)/2], scrapers.ErrIncomplete, ""},
		{"empty", "", scrapers.ErrIncomplete, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseDigitalOceanPage([]byte(tt.body), runAug22, scrapers.DefaultDigitalOceanPageURL)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "digitalocean: ") || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("error %v (%d offers, problems %v), want %v saying %q", err, len(offers), problems, tt.want, tt.says)
			}
		})
	}
}

// TestDigitalOceanAPIFetch: with a token the source reads every page of the size list, the
// token sent as a Bearer and nowhere else; the offers are those of the pages parsed one by one.
func TestDigitalOceanAPIFetch(t *testing.T) {
	api := newDigitalOceanAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	res, err := newDigitalOceanAPISource(newTestClient(t, scrapers.ClientConfig{}), srv.URL).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Payloads) != 2 || res.Attempts != 2 || len(res.Problems) != 0 {
		t.Fatalf("%d payloads, %d attempts, problems %v; want the 2 pages", len(res.Payloads), res.Attempts, res.Problems)
	}
	if diff := cmp.Diff([]string{"/v2/sizes?per_page=200", "/v2/sizes?page=2&per_page=200"}, api.asked); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	var want []schema.Offer
	for _, f := range []string{"digitalocean_sizes.json", "digitalocean_sizes_page2.json"} {
		offers, _, err := scrapers.ParseDigitalOcean(readTestdata(t, f), runAug22, "")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, offers...)
	}
	byKey := cmpopts.SortSlices(func(a, b schema.Offer) bool {
		return a.OfferID+" "+string(a.PriceType) < b.OfferID+" "+string(b.PriceType)
	})
	if diff := cmp.Diff(want, res.Offers, byKey, cmpopts.IgnoreFields(schema.Offer{}, "SourceURL")); diff != "" {
		t.Errorf("offers differ from the pages' (-pages +fetch):\n%s", diff)
	}
	for _, a := range api.auth {
		if a != "Bearer "+digitaloceanTestKey {
			t.Errorf("Authorization %q", a)
		}
	}
	for _, p := range res.Payloads {
		if strings.Contains(p.URL, digitaloceanTestKey) || bytes.Contains(p.Body, []byte(digitaloceanTestKey)) {
			t.Errorf("payload %s holds the token", p.URL)
		}
	}
}

// TestDigitalOceanPagination: links that come back or never end fail the fetch, as does a
// failed second page (never a market without its last page); a next link naming another host
// is asked at the configured one, so the token goes nowhere else.
func TestDigitalOceanPagination(t *testing.T) {
	first := string(readTestdata(t, "digitalocean_sizes.json"))
	next := "https://api.digitalocean.com/v2/sizes?page=2&per_page=200"
	tests := []struct {
		name string
		page func(r *http.Request) (int, string)
		want error
	}{
		{"the link comes back", func(*http.Request) (int, string) {
			return 200, mustReplace(first, next, "https://api.digitalocean.com/v2/sizes?per_page=200&page=1")
		}, scrapers.ErrLayoutChanged},
		{"endless pages", func(r *http.Request) (int, string) {
			return 200, mustReplace(first, "page=2", "page=9"+r.URL.Query().Get("page")) // 9, 99, 999, …
		}, scrapers.ErrLayoutChanged},
		{"a link without a page", func(*http.Request) (int, string) { return 200, mustReplace(first, next, "/v2/sizes") }, scrapers.ErrLayoutChanged},
		{"the second page fails", func(r *http.Request) (int, string) {
			if r.URL.Query().Get("page") != "" {
				return 500, `{"id":"server_error","message":"Unexpected server-side error"}`
			}
			return 200, first
		}, scrapers.ErrStatus},
		{"a foreign host in the link", func(r *http.Request) (int, string) {
			if r.URL.Query().Get("page") == "2" {
				return 200, string(readTestdata(t, "digitalocean_sizes_page2.json"))
			}
			return 200, mustReplace(first, next, "https://evil.example/v2/sizes?page=2&per_page=200")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hosts []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hosts = append(hosts, r.Host)
				code, b := tt.page(r)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				_, _ = w.Write([]byte(b))
			}))
			defer srv.Close()
			res, err := newDigitalOceanAPISource(newTestClient(t, scrapers.ClientConfig{RetryMax: -1}), srv.URL).Fetch(context.Background(), runAug22)
			if tt.want == nil {
				if err != nil || len(res.Payloads) != 2 {
					t.Fatalf("%v after %d pages", err, len(res.Payloads))
				}
				for _, h := range hosts {
					if h != strings.TrimPrefix(srv.URL, "http://") {
						t.Errorf("asked %s", h)
					}
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "digitalocean: ") {
				t.Fatalf("%v, want %v", err, tt.want)
			}
			t.Logf("%v", err)
		})
	}
}

// TestDigitalOceanTokenRefused: a 401 is an error saying the token was refused, naming the
// provider; a server that echoes the token (as some proxies do) gets it into neither the error,
// the logs, the payloads nor a recording.
func TestDigitalOceanTokenRefused(t *testing.T) {
	for name, body := range map[string]func(r *http.Request) string{
		"unauthorized": func(*http.Request) string { return `{"id":"unauthorized","message":"Unable to authenticate you"}` },
		"echoed": func(r *http.Request) string {
			return fmt.Sprintf(`{"id":"unauthorized","message":"token %s is not valid"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(body(r)))
			}))
			defer srv.Close()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			dir := t.TempDir()
			client := newTestClient(t, scrapers.ClientConfig{Logger: logger, RecordDir: dir})
			src := scrapers.NewDigitalOcean(client, scrapers.DigitalOceanConfig{APIKey: digitaloceanTestKey, APIURL: srv.URL + "/v2/sizes?per_page=200"}, logger)
			res, err := src.Fetch(context.Background(), runAug22)
			if !errors.Is(err, scrapers.ErrStatus) || !strings.HasPrefix(err.Error(), "digitalocean: listing sizes (page 1): the API refused the token: ") {
				t.Fatalf("Fetch error %v, want the refused token", err)
			}
			t.Logf("Fetch error: %v", err)
			index, ierr := os.ReadFile(filepath.Join(dir, scrapers.DigitalOceanName, scrapers.IndexFile))
			if ierr != nil {
				t.Fatal(ierr)
			}
			if strings.Contains(err.Error(), digitaloceanTestKey) || strings.Contains(logs.String(), digitaloceanTestKey) ||
				bytes.Contains(index, []byte(digitaloceanTestKey)) || bytes.Contains(index, []byte("Bearer")) {
				t.Errorf("the token is in the error, the logs or the recording's index")
			}
			for _, p := range res.Payloads {
				if bytes.Contains(p.Body, []byte(digitaloceanTestKey)) || strings.Contains(p.URL, digitaloceanTestKey) {
					t.Errorf("the token is in a payload: %s %s", p.URL, p.Body)
				}
			}
		})
	}
}

func TestDigitalOceanAPIFetchMisbehaving(t *testing.T) {
	for _, mb := range misbehaviours("application/json", readTestdata(t, "digitalocean_sizes_changed.json")) {
		t.Run(mb.name, func(t *testing.T) {
			api := newDigitalOceanAPI(t)
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("page") == "" { // the first page misbehaves
					mb.serve(w, r, int(hits.Add(1)), api.answer(r))
					return
				}
				api.ServeHTTP(w, r)
			}))
			defer srv.Close()
			res, err := newDigitalOceanAPISource(newTestClient(t, scrapers.ClientConfig{}), srv.URL).Fetch(context.Background(), runAug22)
			want := mb.wantAttempts
			if want > 0 && mb.wantErr == nil {
				want++ // the second page
			}
			checkFetch(t, scrapers.DigitalOceanName, res, err, mb.wantErr, want)
		})
	}
}

func TestDigitalOceanPageFetchMisbehaving(t *testing.T) {
	good := readTestdata(t, "digitalocean_pricing.html")
	for _, mb := range misbehaviours("text/html; charset=utf-8", readTestdata(t, "digitalocean_pricing_changed.html")) {
		t.Run(mb.name, func(t *testing.T) {
			var hits, apiHits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/v2/") {
					apiHits.Add(1)
					http.Error(w, `{"id":"unauthorized","message":"Unable to authenticate you"}`, http.StatusUnauthorized)
					return
				}
				if !strings.HasPrefix(r.UserAgent(), "Mozilla/5.0") { // the docs host refuses the default agents
					http.Error(w, "Forbidden", http.StatusForbidden)
					return
				}
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			d := scrapers.NewDigitalOcean(newTestClient(t, scrapers.ClientConfig{}), scrapers.DigitalOceanConfig{
				APIURL: srv.URL + "/v2/sizes?per_page=200", PageURL: srv.URL + "/products/droplets/details/pricing/", Delay: -1,
			}, nil)
			res, err := d.Fetch(context.Background(), runAug22)
			checkFetch(t, scrapers.DigitalOceanName, res, err, mb.wantErr, mb.wantAttempts)
			if mb.wantErr == nil && len(res.Offers) != 19 {
				t.Errorf("%d offers, want 19", len(res.Offers))
			}
			if n := apiHits.Load(); n != 0 {
				t.Errorf("the API was called %d times without a token", n)
			}
		})
	}
}

// TestDigitalOceanStored: a run's stored answers re-derive to the offers the run had, an API
// run page by page (a page of CPU sizes only is no problem) and a page run alike.
func TestDigitalOceanStored(t *testing.T) {
	api := newDigitalOceanAPI(t)
	page := readTestdata(t, "digitalocean_pricing.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/pricing/") {
			writeBody(w, "text/html", page)
			return
		}
		api.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cpu := schema.RawPayload{URL: "https://api.digitalocean.com/v2/sizes?page=3&per_page=200", Status: 200,
		Body: []byte(`{"sizes": [{"slug": "s-1vcpu-1gb", "price_hourly": 0.00893, "regions": ["nyc1"]}], "links": {}, "meta": {"total": 1}}`)}
	for name, src := range map[string]pipeline.Source{
		"api": newDigitalOceanAPISource(newTestClient(t, scrapers.ClientConfig{}), srv.URL),
		"page": scrapers.NewDigitalOcean(newTestClient(t, scrapers.ClientConfig{}),
			scrapers.DigitalOceanConfig{PageURL: srv.URL + "/products/droplets/details/pricing/", Delay: -1}, nil),
	} {
		t.Run(name, func(t *testing.T) {
			live, err := src.Fetch(context.Background(), runAug22)
			if err != nil {
				t.Fatal(err)
			}
			payloads := live.Payloads
			if name == "api" {
				payloads = append(payloads, cpu)
			}
			s, err := scrapers.NewStored(scrapers.DigitalOceanName, payloads)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Fetch(context.Background(), runAug22)
			if err != nil || len(got.Problems) != 0 {
				t.Fatalf("%v, problems %v", err, got.Problems)
			}
			byKey := cmpopts.SortSlices(func(a, b schema.Offer) bool {
				return a.OfferID+" "+string(a.PriceType) < b.OfferID+" "+string(b.PriceType)
			})
			if diff := cmp.Diff(live.Offers, got.Offers, byKey); diff != "" {
				t.Errorf("re-derived offers differ (-live +stored):\n%s", diff)
			}
		})
	}
}

func TestDigitalOceanInvalidConfig(t *testing.T) {
	c := newTestClient(t, scrapers.ClientConfig{})
	for name, tt := range map[string]struct {
		client *scrapers.Client
		cfg    scrapers.DigitalOceanConfig
	}{
		"a relative API URL":      {c, scrapers.DigitalOceanConfig{APIKey: digitaloceanTestKey, APIURL: "api.digitalocean.com/v2/sizes"}},
		"a page that is not http": {c, scrapers.DigitalOceanConfig{PageURL: "ftp://docs.digitalocean.com/products/droplets/details/pricing/"}},
		"no client":               {nil, scrapers.DigitalOceanConfig{}},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := scrapers.NewDigitalOcean(tt.client, tt.cfg, nil).Fetch(context.Background(), runAug22)
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.DigitalOceanName || len(res.Offers) != 0 || res.Attempts != 0 {
				t.Fatalf("Fetch: %d offers, %d attempts, error %v; want a digitalocean *scrapers.Error before any request", len(res.Offers), res.Attempts, err)
			}
			if strings.Contains(err.Error(), digitaloceanTestKey) {
				t.Errorf("the token is in the error %q", err)
			}
		})
	}
}

func FuzzParseDigitalOcean(f *testing.F) {
	for _, name := range []string{"digitalocean_sizes.json", "digitalocean_sizes_page2.json", "digitalocean_sizes_traps.json", "digitalocean_sizes_changed.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`{"sizes": [{"slug": "gpu-x-spot", "price_hourly": 1e-30, "regions": ["a1"], "gpu_info": {"count": 3, "vram": {"amount": 1e15, "unit": "GB"}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseDigitalOcean(body, runAug22, scrapers.DefaultDigitalOceanAPIURL)
		checkParsed(t, scrapers.DigitalOceanName, runAug22, offers, problems, err)
		checkPerGPU(t, offers)
	})
}

func FuzzParseDigitalOceanPage(f *testing.F) {
	for _, name := range []string{"digitalocean_pricing.html", "digitalocean_pricing_traps.html", "digitalocean_pricing_changed.html"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`<html><h2 id="on-demand-gpu-droplet-pricing"></h2><table><tr><th>GPU</th><th>Price</th></tr>` +
		`<tr><td>AMD MI300X (64x)</td><td>$0.000001 per hour</td></tr></table></html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseDigitalOceanPage(body, runAug22, scrapers.DefaultDigitalOceanPageURL)
		checkParsed(t, scrapers.DigitalOceanName, runAug22, offers, problems, err)
		checkPerGPU(t, offers)
	})
}
