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
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// hyperstackTestKey is the Infrahub API key the fetch tests send.
const hyperstackTestKey = "hs-test-key-3f9a1c2e7b5d4a8f9e0c1b2a3d4e5f60"

// hyperstackAPI serves the Infrahub API as Hyperstack does: the pricebook and the flavors at
// their paths. It records the api_key and Authorization headers it is sent.
type hyperstackAPI struct {
	pricebook, flavors []byte
	mu                 sync.Mutex
	keys, auth         []string
}

func newHyperstackAPI(t testing.TB) *hyperstackAPI {
	return &hyperstackAPI{pricebook: readTestdata(t, "hyperstack_pricebook.json"), flavors: readTestdata(t, "hyperstack_flavors.json")}
}

// answer is the body of r's answer (nil: not found).
func (a *hyperstackAPI) answer(r *http.Request) []byte {
	switch {
	case strings.HasSuffix(r.URL.Path, "/pricebook"):
		return a.pricebook
	case strings.HasSuffix(r.URL.Path, "/core/flavors"):
		return a.flavors
	}
	return nil
}

func (a *hyperstackAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.keys = append(a.keys, r.Header.Get("api_key"))
	a.auth = append(a.auth, r.Header.Get("Authorization"))
	a.mu.Unlock()
	if b := a.answer(r); b != nil {
		writeBody(w, "application/json", b)
		return
	}
	http.NotFound(w, r)
}

// newHyperstackAPISource is the Hyperstack source with the test key against a fake API at base.
func newHyperstackAPISource(c *scrapers.Client, base string) *scrapers.Hyperstack {
	return scrapers.NewHyperstack(c, scrapers.HyperstackConfig{APIKey: hyperstackTestKey, APIURL: base + "/v1"}, nil)
}

// parseHyperstackFiles parses a pricebook and a flavors fixture.
func parseHyperstackFiles(t *testing.T, pricebook, flavors string) ([]schema.Offer, []error, error) {
	return scrapers.ParseHyperstack(readTestdata(t, pricebook), readTestdata(t, flavors), runAug22, scrapers.DefaultHyperstackAPIURL+"/core/flavors")
}

func TestParseHyperstackPageGolden(t *testing.T) {
	for _, name := range []string{"hyperstack_pricing", "hyperstack_pricing_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseHyperstackPage(readTestdata(t, name+".html"), runAug22, scrapers.DefaultHyperstackPageURL)
			checkParsed(t, scrapers.HyperstackName, runAug22, offers, problems, err)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

func TestParseHyperstackGolden(t *testing.T) {
	for name, files := range map[string][2]string{
		"hyperstack_api":       {"hyperstack_pricebook.json", "hyperstack_flavors.json"},
		"hyperstack_api_traps": {"hyperstack_pricebook_traps.json", "hyperstack_flavors_traps.json"},
	} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := parseHyperstackFiles(t, files[0], files[1])
			checkParsed(t, scrapers.HyperstackName, runAug22, offers, problems, err)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems) // per GPU is the pricebook's own price
		})
	}
}

// hyperstackWant is the part of an offer the Hyperstack tests pin by hand, next to the golden
// files.
type hyperstackWant struct {
	model           string
	count           uint16
	vram            float64
	perHour, perGPU string
	intra           schema.IntraNode
	stock           schema.Stock
	region, country string
}

func checkHyperstackOffers(t *testing.T, offers []schema.Offer, tests map[string]hyperstackWant) {
	t.Helper()
	got := map[string]schema.Offer{}
	for _, o := range offers {
		got[o.OfferID+" "+string(o.PriceType)] = o
	}
	for key, w := range tests {
		o, ok := got[key]
		if !ok {
			t.Errorf("%s: no such offer", key)
			continue
		}
		g := hyperstackWant{o.GPUModel, o.GPUCount, o.VRAMGB, o.PriceUSDPerHour.String(), o.PriceUSDPerGPUHour.String(), o.IntraNode, o.Stock, o.Region, o.Country}
		w.perHour, w.perGPU = decimal.RequireFromString(w.perHour).String(), decimal.RequireFromString(w.perGPU).String()
		if diff := cmp.Diff(w, g, cmp.AllowUnexported(hyperstackWant{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
		if o.InterNode != schema.InterUnknown {
			t.Errorf("%s: inter-node %s, want unknown", key, o.InterNode)
		}
	}
}

// TestParseHyperstackPageOracle pins the rate card of 2026-08-22 as the documented oracle has
// it: 13 on-demand, 12 reserved and 5 spot rows, and their values.
func TestParseHyperstackPageOracle(t *testing.T) {
	offers, problems, err := scrapers.ParseHyperstackPage(readTestdata(t, "hyperstack_pricing.html"), runAug22, scrapers.DefaultHyperstackPageURL)
	if err != nil || len(problems) != 0 {
		t.Fatalf("%v, problems %v", err, problems)
	}
	counts := map[schema.PriceType]int{}
	for _, o := range offers {
		counts[o.PriceType]++
		if strings.Contains(o.GPUNameRaw, "GB200") || strings.Contains(o.GPUNameRaw, "HGX") || strings.Contains(o.GPUNameRaw, "CPU") {
			t.Errorf("a menu or CPU row became an offer: %q", o.OfferID)
		}
		if o.Region != "" || o.GPUCount != 1 {
			t.Errorf("%q: region %q, %d GPUs", o.OfferID, o.Region, o.GPUCount)
		}
	}
	if want := map[schema.PriceType]int{schema.OnDemand: 13, schema.Reserved: 12, schema.Spot: 5}; !cmp.Equal(counts, want) {
		t.Errorf("offers by price type %v, want %v", counts, want)
	}
	checkHyperstackOffers(t, offers, map[string]hyperstackWant{
		"1x NVIDIA B300 on_demand":            {"B300-SXM-288GB", 1, 288, "7.4", "7.4", schema.IntraNVSwitch, schema.StockUnknown, "", ""},
		"1x NVIDIA B200 on_demand":            {"B200-SXM-180GB", 1, 180, "6", "6", schema.IntraNVSwitch, schema.StockUnknown, "", ""},
		"1x NVIDIA B200 reserved":             {"B200-SXM-180GB", 1, 180, "5.1", "5.1", schema.IntraNVSwitch, schema.StockUnknown, "", ""},
		"1x NVIDIA H200 SXM reserved":         {"H200-SXM-141GB", 1, 141, "2.79", "2.79", schema.IntraNVSwitch, schema.StockUnknown, "", ""},
		"1x NVIDIA H100 SXM reserved":         {"H100-SXM-80GB", 1, 80, "2.72", "2.72", schema.IntraNVSwitch, schema.StockUnknown, "", ""},
		"1x NVIDIA A4000 reserved":            {"RTX-A4000-16GB", 1, 16, "0.11", "0.11", schema.IntraPCIe, schema.StockUnknown, "", ""},
		"1x NVIDIA H100 NVLink on_demand":     {"H100-PCIE-80GB", 1, 80, "2.6", "2.6", schema.IntraNVLink, schema.StockUnknown, "", ""},
		"1x NVIDIA H100 on_demand":            {"H100-PCIE-80GB", 1, 80, "2.5", "2.5", schema.IntraPCIe, schema.StockUnknown, "", ""},
		"1x NVIDIA H100 spot":                 {"H100-PCIE-80GB", 1, 80, "2", "2", schema.IntraPCIe, schema.StockUnknown, "", ""},
		"1x NVIDIA A6000 spot":                {"RTX-A6000-48GB", 1, 48, "0.4", "0.4", schema.IntraPCIe, schema.StockUnknown, "", ""},
		"1x NVIDIA A100 NVLink on_demand":     {"A100-PCIE-80GB", 1, 80, "1.4", "1.4", schema.IntraNVLink, schema.StockUnknown, "", ""},
		"1x NVIDIA A100 SXM reserved":         {"A100-SXM-80GB", 1, 80, "1.45", "1.45", schema.IntraNVSwitch, schema.StockUnknown, "", ""},
		"1x NVIDIA RTX Pro 6000 SE on_demand": {"RTX-PRO-6000-96GB", 1, 96, "1.85", "1.85", schema.IntraPCIe, schema.StockUnknown, "", ""},
	})
	for _, o := range offers {
		switch {
		case o.OfferID == "1x NVIDIA B300" && o.PriceType != schema.OnDemand:
			t.Errorf("a %s B300 offer: the B300 is on demand only", o.PriceType)
		case o.OfferID == "1x NVIDIA B200" && !o.HasFlag(schema.FlagVRAMSnapped):
			t.Errorf("B200 %s: the page's 192 GB is not flagged vram_snapped: %v", o.PriceType, o.DQFlags)
		case o.OfferID == "1x NVIDIA H100 SXM" && o.PriceType == schema.OnDemand && (deref(o.VCPUs) != 24 || deref(o.RAMGB) != 240):
			t.Errorf("H100 SXM host figures %v vCPUs, %v GB", o.VCPUs, o.RAMGB)
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestParseHyperstackPageTraps: the look-alike rows outside the tables, a header in row markup,
// a duplicate, an unknown GPU and the unreadable rows.
func TestParseHyperstackPageTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseHyperstackPage(readTestdata(t, "hyperstack_pricing_traps.html"), runAug22, scrapers.DefaultHyperstackPageURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offers {
		if strings.Contains(o.GPUNameRaw, "GB200") || strings.Contains(o.GPUNameRaw, "HGX") {
			t.Errorf("a menu row became an offer: %q", o.OfferID)
		}
		if o.GPUNameRaw == "NVIDIA L40S" || o.GPUNameRaw == "NVIDIA B300" && o.PriceType == schema.Reserved {
			t.Errorf("an unpriced row became an offer: %q %s", o.OfferID, o.PriceType)
		}
	}
	checkHyperstackOffers(t, offers, map[string]hyperstackWant{
		"1x NVIDIA Rubin CPX on_demand": {"", 1, 128, "1234.5", "1234.5", schema.IntraUnknown, schema.StockUnknown, "", ""},
		"1x NVIDIA H100 NVLink spot":    {"H100-PCIE-80GB", 1, 80, "2.1", "2.1", schema.IntraNVLink, schema.StockUnknown, "", ""},
	})
	want := []string{
		`hyperstack: pricing page: On-Demand GPU Pricing table: row "NVIDIA H200 SXM" listed twice`,
		`hyperstack: pricing page: On-Demand GPU Pricing table: row "NVIDIA RTX 5090": price "$0.9O" is not a dollar amount`,
		`hyperstack: pricing page: On-Demand GPU Pricing table: row "NVIDIA RTX 4090": response layout not recognised: no page-price_card_row_item_col3 cell`,
		`hyperstack: pricing page: On-Demand GPU Pricing table: row "": no GPU model`,
		`hyperstack: pricing page: On-Demand GPU Pricing table: row "NVIDIA A40": VRAM (GB): "forty-eight" is not a number`,
		`hyperstack: pricing page: Reservation Pricing table: row "NVIDIA L40": price "$-0.91" is not a dollar amount`,
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestParseHyperstackValues pins, by hand, what the API golden files hold for the documented
// cases.
func TestParseHyperstackValues(t *testing.T) {
	offers, problems, err := parseHyperstackFiles(t, "hyperstack_pricebook.json", "hyperstack_flavors.json")
	if err != nil || len(problems) != 0 {
		t.Fatalf("%v, problems %v", err, problems)
	}
	checkHyperstackOffers(t, offers, map[string]hyperstackWant{
		"n3-H100x1/CANADA-1 on_demand":           {"H100-PCIE-80GB", 1, 80, "2.5", "2.5", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-H100x1/CANADA-1 spot":                {"H100-PCIE-80GB", 1, 80, "2", "2", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-H100x8/CANADA-1 on_demand":           {"H100-PCIE-80GB", 8, 80, "20", "2.5", schema.IntraPCIe, schema.StockNone, "CANADA-1", "CA"},
		"n3-H100x8-NVLink/CANADA-1 on_demand":    {"H100-PCIE-80GB", 8, 80, "20.8", "2.6", schema.IntraNVLink, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-H100-SXM5x8/US-1 on_demand":          {"H100-SXM-80GB", 8, 80, "25.6", "3.2", schema.IntraNVSwitch, schema.StockUnknown, "US-1", "US"},
		"n3-A100x8-NVLink/CANADA-1 on_demand":    {"A100-PCIE-80GB", 8, 80, "11.2", "1.4", schema.IntraNVLink, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-A100-SXM4x8/US-1 on_demand":          {"A100-SXM-80GB", 8, 80, "12.8", "1.6", schema.IntraNVSwitch, schema.StockUnknown, "US-1", "US"},
		"n3-B200-SXM6x8/US-1 on_demand":          {"B200-SXM-180GB", 8, 180, "48", "6", schema.IntraNVSwitch, schema.StockUnknown, "US-1", "US"},
		"n3-B300-SXM6x8/US-1 on_demand":          {"B300-SXM-288GB", 8, 288, "59.2", "7.4", schema.IntraNVSwitch, schema.StockNone, "US-1", "US"},
		"n3-RTX-A4000x10/NORWAY-1 on_demand":     {"RTX-A4000-16GB", 10, 16, "1.5", "0.15", schema.IntraPCIe, schema.StockUnknown, "NORWAY-1", "NO"},
		"n3-RTX-A6000x8/NORWAY-1 spot":           {"RTX-A6000-48GB", 8, 48, "3.2", "0.4", schema.IntraPCIe, schema.StockUnknown, "NORWAY-1", "NO"},
		"n3-RTX-PRO6000-SEx1/CANADA-1 spot":      {"RTX-PRO-6000-96GB", 1, 96, "1.48", "1.48", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-L40x8/CANADA-1 on_demand":            {"L40-48GB", 8, 48, "8", "1", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-RTX-PRO6000-SEx1/CANADA-1 on_demand": {"RTX-PRO-6000-96GB", 1, 96, "1.85", "1.85", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
	})
	for _, o := range offers {
		switch {
		case strings.HasPrefix(o.OfferID, "n3-H200") || strings.HasPrefix(o.OfferID, "n1-cpu"):
			t.Errorf("%s: parsed, want it skipped (no price / no GPU)", o.OfferID)
		case o.OfferID == "n3-H100-SXM5x8/CANADA-1" && (deref(o.VCPUs) != 192 || deref(o.RAMGB) != 1800 || deref(o.DiskGB) != 100):
			t.Errorf("%s: host figures %v %v %v", o.OfferID, o.VCPUs, o.RAMGB, o.DiskGB)
		}
	}
	if len(offers) != 29 {
		t.Errorf("%d offers, want 29", len(offers))
	}
}

// TestParseHyperstackTraps: only list prices count, and a flavor's problem names it and the
// field.
func TestParseHyperstackTraps(t *testing.T) {
	offers, problems, err := parseHyperstackFiles(t, "hyperstack_pricebook_traps.json", "hyperstack_flavors_traps.json")
	if err != nil {
		t.Fatal(err)
	}
	checkHyperstackOffers(t, offers, map[string]hyperstackWant{
		// The string "2.50", not the account's discount of 1.75.
		"n3-H100x1/CANADA-1 on_demand": {"H100-PCIE-80GB", 1, 80, "2.5", "2.5", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		// Its region from its group; not the promotion of 0.99.
		"n3-H100x4/CANADA-1 on_demand": {"H100-PCIE-80GB", 4, 80, "10", "2.5", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-A100x1/NORWAY-1 on_demand": {"A100-PCIE-80GB", 1, 80, "1.35", "1.35", schema.IntraPCIe, schema.StockNone, "NORWAY-1", "NO"},
		// A flavor of the spot GPU is a spot offer only; the L40's two list prices leave its
		// on-demand offer out, not its spot one.
		"n3-L40x1-spot/CANADA-1 spot":   {"L40-48GB", 1, 48, "0.8", "0.8", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-L40x1/CANADA-1 spot":        {"L40-48GB", 1, 48, "0.8", "0.8", schema.IntraPCIe, schema.StockUnknown, "CANADA-1", "CA"},
		"n3-RTX-A4000x2/EU-2 on_demand": {"RTX-A4000-16GB", 2, 16, "0.3", "0.15", schema.IntraPCIe, schema.StockUnknown, "EU-2", ""},
		"n3-GH200x1/US-1 on_demand":     {"GH200-96GB", 1, 96, "3.5", "3.5", schema.IntraUnknown, schema.StockUnknown, "US-1", "US"},
	})
	if len(offers) != 7 {
		t.Errorf("%d offers, want 7", len(offers))
	}
	want := []string{
		`hyperstack: flavor "n3-H100x1" in CANADA-1: listed twice`,
		`hyperstack: flavor #2 of group #0: gpu_count: a string where a int was expected`,
		`hyperstack: flavor "n3-H100x8": region_name "<b>CANADA</b>" is not a region`,
		`hyperstack: a flavor of H100-80G-PCIe without a name`,
		`hyperstack: flavor "n3-H100x-1": gpu_count -1 is not a GPU count`,
		`hyperstack: flavor "n3-H100x1-nocount": gpu "H100-80G-PCIe" but no gpu_count`,
		`hyperstack: flavor "n3-RTX-4090x1" in CANADA-1: pricebook entry #15: original_value: "n/a" is not a number`,
		`hyperstack: flavor "n3-L40x1" in CANADA-1: pricebook: "L40" has two list prices, 1 and 1.1`,
		`hyperstack: flavor "n3-RTX-A6000x1" in NORWAY-1: pricebook entry #6: value -0.5 is not positive`,
		`hyperstack: flavor "n3-B200-SXM6x8" in US-1: pricebook entry #10: value: "true" is not a number`,
		`hyperstack: flavor #1 of group #8: a string where an object was expected`,
		`hyperstack: flavor group #10: no flavors array`,
		`hyperstack: flavor group #11: an array where an object was expected`,
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestParseHyperstackErrors: an answer or page that is not the known one names the provider and
// says why, never an empty success.
func TestParseHyperstackErrors(t *testing.T) {
	page := string(readTestdata(t, "hyperstack_pricing.html"))
	pricebook, flavors := readTestdata(t, "hyperstack_pricebook.json"), readTestdata(t, "hyperstack_flavors.json")
	pages := []struct {
		name, body string
		want       error
		says       string
	}{
		{"rows in other markup", string(readTestdata(t, "hyperstack_pricing_changed.html")), scrapers.ErrLayoutChanged, `"On-Demand GPU Pricing" table has no`},
		{"no spot table", mustReplace(page, ">Spot VM Pricing<", ">Spot Instances<"), scrapers.ErrLayoutChanged, `heading "Spot VM Pricing" found 0 times`},
		{"a heading twice", mustReplace(page, ">On-Demand CPU Pricing<", ">Reservation Pricing<"), scrapers.ErrLayoutChanged, `heading "Reservation Pricing" found 2 times`},
		{"the price per month", mustReplace(page, "Pricing Per Hour", "Pricing Per Month"), scrapers.ErrLayoutChanged, `no "Pricing Per Hour" header`},
		{"every price gone", mustReplaceRegexp(page, `<span>(&nbsp;)?\$[0-9.]+</span>`, `<span>—</span>`), scrapers.ErrNoOffers, "none priced"},
		{"cut short", page[:len(page)/2], scrapers.ErrIncomplete, ""},
	}
	for _, tt := range pages {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := scrapers.ParseHyperstackPage([]byte(tt.body), runAug22, scrapers.DefaultHyperstackPageURL)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "hyperstack: ") || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("%v, want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
	// The headings in another order.
	swapped := mustReplace(mustReplace(mustReplace(page, ">Reservation Pricing<", ">@@<"), ">Spot VM Pricing<", ">Reservation Pricing<"), ">@@<", ">Spot VM Pricing<")
	if _, _, err := scrapers.ParseHyperstackPage([]byte(swapped), runAug22, ""); !errors.Is(err, scrapers.ErrLayoutChanged) || !strings.Contains(err.Error(), "not in the order") {
		t.Errorf("headings swapped: %v", err)
	}

	apis := []struct {
		name               string
		pricebook, flavors string
		want               error
		says               string
	}{
		{"flavors under another key", string(pricebook), string(readTestdata(t, "hyperstack_flavors_changed.json")), scrapers.ErrLayoutChanged, "no status and data array"},
		{"an API error", string(pricebook), `{"status": false, "message": "Invalid API key", "data": []}`, scrapers.ErrLayoutChanged, "api error: Invalid API key"},
		{"the pricebook in an envelope", `{"status": true, "data": ` + string(pricebook) + `}`, string(flavors), scrapers.ErrLayoutChanged, "pricebook: "},
		{"an empty pricebook", `[]`, string(flavors), scrapers.ErrNoOffers, "no entries"},
		{"a pricebook of other fields", `[{"sku": "H100", "rate": 2.5}]`, string(flavors), scrapers.ErrLayoutChanged, "none with a name and a value"},
		{"no flavor priced", `[{"name": "GH200-96G", "value": 3.5, "original_value": 3.5, "discount_applied": false}]`, string(flavors), scrapers.ErrNoOffers, "without a list price"},
		{"flavors cut short", string(pricebook), string(flavors[:len(flavors)/2]), scrapers.ErrIncomplete, "flavors: "},
		{"pricebook cut short", string(pricebook[:len(pricebook)/2]), string(flavors), scrapers.ErrIncomplete, "pricebook: "},
	}
	for _, tt := range apis {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := scrapers.ParseHyperstack([]byte(tt.pricebook), []byte(tt.flavors), runAug22, "")
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "hyperstack: ") || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("%v, want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
}

// TestHyperstackFetch: with a key, the pricebook and the flavors, the key sent as the api_key
// header and nowhere else; without one, the rate card and never the API.
func TestHyperstackFetch(t *testing.T) {
	api := newHyperstackAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	res, err := newHyperstackAPISource(newTestClient(t, scrapers.ClientConfig{}), srv.URL).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := parseHyperstackFiles(t, "hyperstack_pricebook.json", "hyperstack_flavors.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, res.Offers, cmpopts.IgnoreFields(schema.Offer{}, "SourceURL")); diff != "" || len(res.Problems) != 0 {
		t.Errorf("offers differ from the fixtures' (problems %v):\n%s", res.Problems, diff)
	}
	if len(res.Payloads) != 2 || res.Attempts != 2 || res.Payloads[0].URL != srv.URL+"/v1/pricebook" || res.Payloads[1].URL != srv.URL+"/v1/core/flavors" {
		t.Fatalf("%d payloads (%v), %d attempts; want the pricebook and the flavors", len(res.Payloads), res.Payloads, res.Attempts)
	}
	for i := range api.keys {
		if api.keys[i] != hyperstackTestKey || api.auth[i] != "" {
			t.Errorf("request %d: api_key %q, Authorization %q", i, api.keys[i], api.auth[i])
		}
	}

	api.keys = nil
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/gpu-pricing" {
			api.ServeHTTP(w, r)
			return
		}
		writeBody(w, "text/html; charset=utf-8", readTestdata(t, "hyperstack_pricing.html"))
	}))
	defer page.Close()
	h := scrapers.NewHyperstack(newTestClient(t, scrapers.ClientConfig{}), scrapers.HyperstackConfig{APIURL: page.URL + "/v1", PageURL: page.URL + "/gpu-pricing", Delay: -1}, nil)
	res, err = h.Fetch(context.Background(), runAug22)
	if err != nil || len(res.Offers) != 30 {
		t.Fatalf("without a key: %d offers, %v; want the rate card's 30", len(res.Offers), err)
	}
	if len(api.keys) != 0 {
		t.Errorf("the API was asked %d times without a key", len(api.keys))
	}
}

// TestHyperstackFetchMisbehaving: the common failure modes of either server end in the offers
// or in a clear error of the provider.
func TestHyperstackFetchMisbehaving(t *testing.T) {
	for _, tc := range []struct {
		name, ctype string
		good        []byte
		changed     []byte
		source      func(c *scrapers.Client, base string) *scrapers.Hyperstack
	}{
		{"api", "application/json", nil, readTestdata(t, "hyperstack_flavors_changed.json"), newHyperstackAPISource},
		{"page", "text/html; charset=utf-8", readTestdata(t, "hyperstack_pricing.html"), readTestdata(t, "hyperstack_pricing_changed.html"),
			func(c *scrapers.Client, base string) *scrapers.Hyperstack {
				return scrapers.NewHyperstack(c, scrapers.HyperstackConfig{PageURL: base + "/gpu-pricing", Delay: -1}, nil)
			}},
	} {
		api := newHyperstackAPI(t)
		for _, mb := range misbehaviours(tc.ctype, tc.changed) {
			t.Run(tc.name+"/"+mb.name, func(t *testing.T) {
				var n atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					good := tc.good
					if good == nil {
						good = api.answer(r)
					}
					if tc.good == nil && strings.HasSuffix(r.URL.Path, "/pricebook") {
						writeBody(w, tc.ctype, good) // the faults hit the flavors, the second request
						return
					}
					mb.serve(w, r, int(n.Add(1)), good)
				}))
				defer srv.Close()
				res, err := tc.source(newTestClient(t, scrapers.ClientConfig{MaxBodyBytes: 4 << 20}), srv.URL).Fetch(context.Background(), runAug22)
				attempts := mb.wantAttempts
				if attempts > 0 && tc.good == nil {
					attempts++ // the pricebook's
				}
				checkFetch(t, scrapers.HyperstackName, res, err, mb.wantErr, attempts)
			})
		}
	}
}

// TestHyperstackKeyNeverLeaks: a server that rejects the key and echoes it back, or echoes it
// in a good answer, must not get it into the error, the logs, a payload or a recording.
func TestHyperstackKeyNeverLeaks(t *testing.T) {
	for _, tt := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
		want  error
	}{
		{"a 401 echoing the key", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"status": false, "message": "Invalid api_key %s"}`, r.Header.Get("api_key"))
		}, scrapers.ErrStatus},
		{"an answer echoing the key", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/pricebook") {
				writeBody(w, "application/json", readTestdata(t, "hyperstack_pricebook.json"))
				return
			}
			writeBody(w, "application/json", []byte(fmt.Sprintf(`{"status": false, "message": "key %s has no access to flavors", "data": []}`, r.Header.Get("api_key"))))
		}, scrapers.ErrLayoutChanged},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tt.serve))
			defer srv.Close()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			dir := t.TempDir()
			client := newTestClient(t, scrapers.ClientConfig{Logger: logger, RecordDir: dir, RetryMax: -1})
			res, err := scrapers.NewHyperstack(client, scrapers.HyperstackConfig{APIKey: hyperstackTestKey, APIURL: srv.URL + "/v1"}, logger).Fetch(context.Background(), runAug22)
			if !errors.Is(err, tt.want) || !strings.HasPrefix(err.Error(), "hyperstack: ") {
				t.Fatalf("Fetch error %v, want %v", err, tt.want)
			}
			t.Logf("Fetch error: %v", err)
			if strings.Contains(err.Error(), hyperstackTestKey) || strings.Contains(logs.String(), hyperstackTestKey) {
				t.Errorf("the key is in the error or the logs:\n%v\n%s", err, logs.String())
			}
			if len(res.Payloads) == 0 {
				t.Fatal("no payloads")
			}
			for _, p := range res.Payloads {
				if bytes.Contains(p.Body, []byte(hyperstackTestKey)) || strings.Contains(p.URL, hyperstackTestKey) {
					t.Errorf("the key is in a payload: %s %s", p.URL, p.Body)
				}
			}
			files, _ := filepath.Glob(filepath.Join(dir, scrapers.HyperstackName, "*"))
			if len(files) < 2 {
				t.Fatalf("recorded %v", files)
			}
			for _, f := range files {
				if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(hyperstackTestKey)) {
					t.Errorf("the key is in the recording's %s", filepath.Base(f))
				}
			}
		})
	}
}

// TestHyperstackRecordReplay: a recorded API run replays to the same offers and payloads.
func TestHyperstackRecordReplay(t *testing.T) {
	srv := httptest.NewServer(newHyperstackAPI(t))
	dir := t.TempDir()
	live, err := newHyperstackAPISource(newTestClient(t, scrapers.ClientConfig{RecordDir: dir}), srv.URL).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	replayed, err := newHyperstackAPISource(newTestClient(t, scrapers.ClientConfig{ReplayDir: dir}), srv.URL).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, replayed.Offers); diff != "" {
		t.Errorf("replayed offers differ (-live +replayed):\n%s", diff)
	}
	for i := range live.Payloads {
		if !bytes.Equal(live.Payloads[i].Body, replayed.Payloads[i].Body) {
			t.Errorf("payload %d is not the recorded body byte for byte", i)
		}
	}
}

// TestHyperstackStored: a run's stored answers, the API's or the rate card's, re-derive to the
// offers the run had.
func TestHyperstackStored(t *testing.T) {
	api := newHyperstackAPI(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gpu-pricing" {
			writeBody(w, "text/html", readTestdata(t, "hyperstack_pricing.html"))
			return
		}
		api.ServeHTTP(w, r)
	}))
	defer srv.Close()
	for _, cfg := range []scrapers.HyperstackConfig{
		{APIKey: hyperstackTestKey, APIURL: srv.URL + "/v1"},
		{PageURL: srv.URL + "/gpu-pricing", Delay: -1},
	} {
		live, err := scrapers.NewHyperstack(newTestClient(t, scrapers.ClientConfig{}), cfg, nil).Fetch(context.Background(), runAug22)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scrapers.NewStored(scrapers.HyperstackName, live.Payloads)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Fetch(context.Background(), runAug22)
		if err != nil || len(got.Problems) != 0 {
			t.Fatalf("%v, problems %v", err, got.Problems)
		}
		if diff := cmp.Diff(live.Offers, got.Offers); diff != "" {
			t.Errorf("re-derived offers differ (-live +stored):\n%s", diff)
		}
	}
	// Half of an API run is no run.
	s, _ := scrapers.NewStored(scrapers.HyperstackName, []schema.RawPayload{{URL: srv.URL + "/v1/pricebook", Status: 200, Body: api.pricebook}})
	if _, err := s.Fetch(context.Background(), runAug22); err == nil || !strings.Contains(err.Error(), "without flavors") {
		t.Errorf("a pricebook alone: %v", err)
	}
}

func TestHyperstackInvalidConfig(t *testing.T) {
	for _, cfg := range []scrapers.HyperstackConfig{
		{APIKey: hyperstackTestKey, APIURL: "infrahub-api.nexgencloud.com/v1"},
		{APIKey: hyperstackTestKey, APIURL: "https://infrahub-api.nexgencloud.com/v1?api_key=" + hyperstackTestKey},
		{PageURL: "ftp://www.hyperstack.cloud/gpu-pricing"},
	} {
		_, err := scrapers.NewHyperstack(newTestClient(t, scrapers.ClientConfig{}), cfg, nil).Fetch(context.Background(), runAug22)
		if err == nil || !strings.HasPrefix(err.Error(), "hyperstack: ") || strings.Contains(err.Error(), hyperstackTestKey) {
			t.Errorf("%+v: error %v", cfg, err)
		}
	}
}

func FuzzParseHyperstackPage(f *testing.F) {
	for _, name := range []string{"hyperstack_pricing.html", "hyperstack_pricing_traps.html", "hyperstack_pricing_changed.html"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`<html><h2>On-Demand GPU Pricing</h2>GPU Model VRAM (GB) Max pCPUs per GPU Max RAM (GB) per GPU Pricing Per Hour` +
		`<div class="page-price_card_row_item"><div class="page-price_card_row_item_col1">H100</div><div class="page-price_card_row_item_col2">80</div>` +
		`<div class="page-price_card_row_item_col3"></div><div class="page-price_card_row_item_col4"></div><div class="page-price_card_row_item_col5">$1,000.5</div></div>` +
		`<h2>Reservation Pricing</h2><h2>Spot VM Pricing</h2><h2>On-Demand CPU Pricing</h2></html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseHyperstackPage(body, runAug22, scrapers.DefaultHyperstackPageURL)
		checkParsed(t, scrapers.HyperstackName, runAug22, offers, problems, err) // per GPU is the page's own price
		for _, o := range offers {
			if o.GPUCount != 1 {
				t.Fatalf("offer %q of %d GPUs", o.OfferID, o.GPUCount)
			}
		}
	})
}

func FuzzParseHyperstack(f *testing.F) {
	pricebook, flavors := readTestdata(f, "hyperstack_pricebook.json"), readTestdata(f, "hyperstack_flavors.json")
	f.Add(pricebook, flavors)
	f.Add(readTestdata(f, "hyperstack_pricebook_traps.json"), readTestdata(f, "hyperstack_flavors_traps.json"))
	f.Add(pricebook, readTestdata(f, "hyperstack_flavors_changed.json"))
	f.Add([]byte(`[{"name":"X-spot","value":"1e3"}]`), []byte(`{"status":true,"data":[{"flavors":[{"name":"a","region_name":"US-1","gpu":"X-spot","gpu_count":3}]}]}`))
	f.Fuzz(func(t *testing.T, pricebook, flavors []byte) {
		offers, problems, err := scrapers.ParseHyperstack(pricebook, flavors, runAug22, scrapers.DefaultHyperstackAPIURL)
		checkParsed(t, scrapers.HyperstackName, runAug22, offers, problems, err) // per GPU is the pricebook's own price
	})
}

func BenchmarkParseHyperstackPage(b *testing.B) {
	benchmarkParse(b, scrapers.ParseHyperstackPage, "hyperstack_pricing.html", runAug22, scrapers.DefaultHyperstackPageURL)
}
