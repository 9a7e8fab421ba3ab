package scrapers_test

import (
	"bytes"
	"context"
	"encoding/json"
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

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// Fake Verda credentials; they must never leave Fetch.
const (
	verdaTestID     = "verda-client-id-7d2e91"
	verdaTestSecret = "verda-client-secret_5b8f0a4c"
)

// verdaAPI answers like the Verda API on the fixtures: the token step, the instance types and
// both availability lists. It records what it was asked.
type verdaAPI struct {
	t        testing.TB
	token    []byte
	answers  map[string][]byte // by path and is_spot
	mu       sync.Mutex
	requests []*http.Request
	bodies   []string
}

func newVerdaAPI(t testing.TB) *verdaAPI {
	return &verdaAPI{t: t, token: readTestdata(t, "verda_token.json"), answers: map[string][]byte{
		"/v1/instance-types":                   readTestdata(t, "verda_instance_types.json"),
		"/v1/instance-availability?spot=false": readTestdata(t, "verda_instance_availability.json"),
		"/v1/instance-availability?spot=true":  readTestdata(t, "verda_instance_availability_spot.json"),
	}}
}

// answer is the body the API gives r (nil for an unknown request).
func (a *verdaAPI) answer(r *http.Request) []byte {
	switch p := r.URL.Path; {
	case strings.HasSuffix(p, "/oauth2/token"):
		return a.token
	case strings.HasSuffix(p, "/instance-types"):
		return a.answers["/v1/instance-types"]
	case strings.HasSuffix(p, "/instance-availability"):
		return a.answers["/v1/instance-availability?spot="+r.URL.Query().Get("is_spot")]
	}
	return nil
}

func (a *verdaAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := readAll(r)
	a.mu.Lock()
	a.requests = append(a.requests, r)
	a.bodies = append(a.bodies, body)
	a.mu.Unlock()
	b := a.answer(r)
	if b == nil {
		http.NotFound(w, r)
		return
	}
	writeBody(w, "application/json", b)
}

func readAll(r *http.Request) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.String(), err
}

func newVerdaAPISource(c *scrapers.Client, base string) *scrapers.Verda {
	return scrapers.NewVerda(c, scrapers.VerdaConfig{ClientID: verdaTestID, ClientSecret: verdaTestSecret, APIURL: base + "/v1"}, nil)
}

func TestParseVerdaGolden(t *testing.T) {
	for _, name := range []string{"verda_instance_types", "verda_instance_types_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseVerda(readTestdata(t, name+".json"), runAug22, scrapers.DefaultVerdaAPIURL+"/instance-types?currency=usd")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

func TestParseVerdaPageGolden(t *testing.T) {
	for _, name := range []string{"verda_pricing", "verda_pricing_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseVerdaPage(readTestdata(t, name+".html"), runAug22, scrapers.DefaultVerdaPageURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

// verdaWant is the part of an offer the Verda tests pin by hand, next to the golden files.
type verdaWant struct {
	model, raw      string
	count           uint16
	vram            float64
	perHour, perGPU string
	intra           schema.IntraNode
	stock           schema.Stock
	region, country string
	flags           []schema.DQFlag
}

func verdaGot(o schema.Offer) verdaWant {
	return verdaWant{model: o.GPUModel, raw: o.GPUNameRaw, count: o.GPUCount, vram: o.VRAMGB,
		perHour: o.PriceUSDPerHour.String(), perGPU: o.PriceUSDPerGPUHour.String(), intra: o.IntraNode,
		stock: o.Stock, region: o.Region, country: o.Country, flags: o.DQFlags}
}

func byOfferKey(offers []schema.Offer) map[string]schema.Offer {
	m := map[string]schema.Offer{}
	for _, o := range offers {
		m[o.OfferID+" "+string(o.PriceType)] = o
	}
	return m
}

func checkVerdaOffers(t *testing.T, got map[string]schema.Offer, tests map[string]verdaWant) {
	t.Helper()
	for key, want := range tests {
		t.Run(key, func(t *testing.T) {
			o, ok := got[key]
			if !ok {
				t.Fatalf("no offer %q", key)
			}
			if diff := cmp.Diff(want, verdaGot(o), cmp.AllowUnexported(verdaWant{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseVerdaPageOracle pins the values docs/providers.md §8.7 gives for the page of
// 2026-08-22: per GPU-hour prices of the 1x rows, the CC variants, the serverless containers
// at their N-GPU totals, no cluster, serverless spot, storage or CPU row, the duplicated H100
// rows once.
func TestParseVerdaPageOracle(t *testing.T) {
	offers, problems, err := scrapers.ParseVerdaPage(readTestdata(t, "verda_pricing.html"), runAug22, scrapers.DefaultVerdaPageURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	if len(offers) != 34 {
		t.Errorf("%d offers, want 34 (15 GPUs on demand and spot, 4 serverless containers)", len(offers))
	}
	sx := schema.IntraNVSwitch
	checkVerdaOffers(t, byOfferKey(offers), map[string]verdaWant{
		"1x B300 SXM6 268GB on_demand": {model: "B300-SXM-288GB", raw: "B300 SXM6 268GB", count: 1, vram: 288, perHour: "7.5", perGPU: "7.5", intra: sx,
			stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagVRAMSnapped}},
		"1x B200 SXM6 180GB spot":       {model: "B200-SXM-180GB", raw: "B200 SXM6 180GB", count: 1, vram: 180, perHour: "3.055", perGPU: "3.055", intra: sx, stock: schema.StockUnknown},
		"1x GB300 SXM6 288GB on_demand": {model: "GB300-288GB", raw: "GB300 SXM6 288GB", count: 1, vram: 288, perHour: "8.62", perGPU: "8.62", intra: sx, stock: schema.StockUnknown},
		"1x B200 CC SXM6 180GB on_demand": {model: "B200-SXM-180GB", raw: "B200 CC SXM6 180GB", count: 1, vram: 180, perHour: "6.232", perGPU: "6.232", intra: sx,
			stock: schema.StockUnknown},
		"1x RTX PRO 6000 CC 96GB spot": {model: "RTX-PRO-6000-96GB", raw: "RTX PRO 6000 CC 96GB", count: 1, vram: 96, perHour: "0.9639", perGPU: "0.9639",
			intra: schema.IntraPCIe, stock: schema.StockUnknown},
		"1x H100 SXM5 80GB on_demand": {model: "H100-SXM-80GB", raw: "H100 SXM5 80GB", count: 1, vram: 80, perHour: "3.25", perGPU: "3.25", intra: sx, stock: schema.StockUnknown},
		"1x A100 SXM4 40GB spot":      {model: "A100-SXM-40GB", raw: "A100 SXM4 40GB", count: 1, vram: 40, perHour: "0.645", perGPU: "0.645", intra: sx, stock: schema.StockUnknown},
		"1x RTX A6000 48GB on_demand": {model: "RTX-A6000-48GB", raw: "RTX A6000 48GB", count: 1, vram: 48, perHour: "0.61", perGPU: "0.61",
			intra: schema.IntraPCIe, stock: schema.StockUnknown},
		"1x Tesla V100 16GB on_demand": {model: "", raw: "Tesla V100 16GB", count: 1, vram: 16, perHour: "0.17", perGPU: "0.17",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU}},
		// A serverless container of 8 B200: the row's 53.77 is the 8 GPUs' total.
		"8x B200 SXM6 180GB serverless": {model: "B200-SXM-180GB", raw: "B200 SXM6 180GB", count: 8, vram: 180, perHour: "53.77", perGPU: "6.72125", intra: sx, stock: schema.StockUnknown},
		"1x H100 SXM5 80GB serverless":  {model: "H100-SXM-80GB", raw: "H100 SXM5 80GB", count: 1, vram: 80, perHour: "3.58", perGPU: "3.58", intra: sx, stock: schema.StockUnknown},
	})
	for _, o := range offers {
		if o.Region != "" || o.InterNode != schema.InterUnknown || o.Tier != schema.TierDatacenter {
			t.Errorf("offer %q: region %q, inter-node %s, tier %s", o.OfferID, o.Region, o.InterNode, o.Tier)
		}
		if strings.Contains(o.OfferID, "cluster") || strings.Contains(o.OfferID, "serverless") || (o.GPUCount != 1 && o.PriceType != schema.Serverless) {
			t.Errorf("offer %q (%d GPUs, %s) is neither a 1x instance row nor a serverless container", o.OfferID, o.GPUCount, o.PriceType)
		}
	}
}

func TestParseVerdaPageTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseVerdaPage(readTestdata(t, "verda_pricing_traps.html"), runAug22, scrapers.DefaultVerdaPageURL)
	if err != nil {
		t.Fatal(err)
	}
	got := byOfferKey(offers)
	checkVerdaOffers(t, got, map[string]verdaWant{
		// The price as text, "1.625".
		"1x H100 SXM5 80GB spot": {model: "H100-SXM-80GB", raw: "H100 SXM5 80GB", count: 1, vram: 80, perHour: "1.625", perGPU: "1.625", intra: schema.IntraNVSwitch, stock: schema.StockUnknown},
		// The first of a verbatim and a conflicting duplicate.
		"1x H100 SXM5 80GB on_demand": {model: "H100-SXM-80GB", raw: "H100 SXM5 80GB", count: 1, vram: 80, perHour: "3.25", perGPU: "3.25", intra: schema.IntraNVSwitch, stock: schema.StockUnknown},
		// "spot", not the "serverless spot" row before it.
		"1x B300 SXM6 268GB spot": {model: "B300-SXM-288GB", raw: "B300 SXM6 268GB", count: 1, vram: 288, perHour: "3.75", perGPU: "3.75", intra: schema.IntraNVSwitch,
			stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagVRAMSnapped}},
		"1x GB300 SXM6 288GB on_demand": {model: "GB300-288GB", raw: "GB300 SXM6 288GB", count: 1, vram: 288, perHour: "8.62", perGPU: "8.62", intra: schema.IntraNVSwitch, stock: schema.StockUnknown},
		// The label of before 2026-07 is 9% short of the B300's 288 GB: unknown, kept.
		"1x B300 SXM6 262GB on_demand": {raw: "B300 SXM6 262GB", count: 1, vram: 262, perHour: "7.5", perGPU: "7.5", intra: schema.IntraUnknown,
			stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU}},
		"1x A100 SXM4 40GB on_demand": {model: "A100-SXM-40GB", raw: "A100 SXM4 40GB", count: 1, vram: 40, perHour: "1.29", perGPU: "1.29", intra: schema.IntraNVSwitch, stock: schema.StockUnknown},
		"1x AMD 7900XTX on_demand": {model: "RX-7900-XTX-24GB", raw: "AMD 7900XTX", count: 1, vram: 24, perHour: "0.4", perGPU: "0.4", intra: schema.IntraPCIe, stock: schema.StockUnknown,
			flags: []schema.DQFlag{schema.FlagVRAMMissing}},
		"1x RTX PRO 6000 CC 96GB on_demand": {model: "RTX-PRO-6000-96GB", raw: "RTX PRO 6000 CC 96GB", count: 1, vram: 96, perHour: "1.928", perGPU: "1.928",
			intra: schema.IntraPCIe, stock: schema.StockUnknown},
		"1x RTX 6000 Ada 48GB on_demand": {model: "RTX-6000-ADA-48GB", raw: "RTX 6000 Ada 48GB", count: 1, vram: 48, perHour: "1.04", perGPU: "1.04", intra: schema.IntraPCIe, stock: schema.StockUnknown},
		"1x B200 CC SXM6 180GB spot":     {model: "B200-SXM-180GB", raw: "B200 CC SXM6 180GB", count: 1, vram: 180, perHour: "3.116", perGPU: "3.116", intra: schema.IntraNVSwitch, stock: schema.StockUnknown},
	})
	if len(offers) != 10 {
		t.Errorf("%d offers, want 10", len(offers))
	}
	for _, absent := range []string{"1x L40S 48GB on_demand", "1x L40S 48GB spot", "1x RTX A6000 48GB spot", "8x H200 SXM5 141GB on_demand",
		"1x A100 SXM4 40GB spot", "1x Tesla V100 16GB on_demand", "1x Tesla V100 16GB spot"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s became an offer", absent)
		}
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	for _, want := range []string{
		`"1x H100 SXM5 80GB on-demand" listed twice with different prices`,
		`"1x L40S 48GB on-demand": priceCurrency "EUR", want USD`,
		`"1x L40S 48GB spot": price 0.685 and priceSpecification.price 0.69 differ`,
		`"1x RTX A6000 48GB spot": the name says spot, the description on-demand`,
		`"8x H200 SXM5 141GB on-demand": an instance row of 8 GPUs`,
		`"1x H100 SXM5 80GB reserved": an offer of an unknown kind`,
		`"1x A100 SXM4 40GB spot": priceSpecification.unitText "month", want hour`,
		`"1x Tesla V100 16GB on-demand": price: -0.17 is negative`,
		`"1x Tesla V100 16GB spot": no positive price`,
	} {
		if !strings.Contains(strings.Join(msgs, "\n"), want) {
			t.Errorf("no problem %q in\n%s", want, strings.Join(msgs, "\n"))
		}
	}
	if len(problems) != 9 {
		t.Errorf("%d problems, want 9:\n%s", len(problems), strings.Join(msgs, "\n"))
	}
	for _, p := range problems {
		if !strings.HasPrefix(p.Error(), "verda: pricing page: offer ") {
			t.Errorf("problem %q does not name the provider and the offer", p)
		}
	}
}

func TestParseVerdaTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseVerda(readTestdata(t, "verda_instance_types_traps.json"), runAug22, scrapers.DefaultVerdaAPIURL)
	if err != nil {
		t.Fatal(err)
	}
	sx := schema.IntraNVSwitch
	got := byOfferKey(offers)
	checkVerdaOffers(t, got, map[string]verdaWant{
		"1H100.80S.30V on_demand": {model: "H100-SXM-80GB", raw: "H100 SXM5 80GB", count: 1, vram: 80, perHour: "3.95", perGPU: "3.95", intra: sx,
			stock: schema.StockUnknown}, // a price as a JSON number
		"1H200.141S.44V spot": {model: "H200-SXM-141GB", raw: "H200 SXM5 141GB", count: 1, vram: 141, perHour: "1.1865", perGPU: "1.1865", intra: sx,
			stock: schema.StockUnknown},
		// 262.5 per GPU fits the B300's 288 GB only as GiB (281.9 GB).
		"2B300.60V spot": {model: "B300-SXM-288GB", raw: "B300 SXM6 268GB", count: 2, vram: 288, perHour: "4.893", perGPU: "2.4465", intra: sx,
			stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagVRAMSnapped}},
		"4H100.80S.120V on_demand": {model: "H100-SXM-80GB", raw: "H100 SXM5 80GB", count: 4, vram: 80, perHour: "9.16", perGPU: "2.29", intra: sx,
			stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagCountParsed}},
		"2L40S.40V on_demand": {model: "L40S-48GB", raw: "L40S 48GB", count: 2, vram: 48, perHour: "1.82", perGPU: "0.91", intra: schema.IntraPCIe,
			stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagCountParsed}},
		// No gpu_memory: the label, decimal GB, fits exactly.
		"1RTX6000ADA.10V on_demand": {model: "RTX-6000-ADA-48GB", raw: "RTX 6000 Ada 48GB", count: 1, vram: 48, perHour: "0.84", perGPU: "0.84", intra: schema.IntraPCIe,
			stock: schema.StockUnknown},
		"1X7900XTX.8V on_demand": {model: "RX-7900-XTX-24GB", raw: "AMD 7900XTX", count: 1, vram: 24, perHour: "0.31", perGPU: "0.31", intra: schema.IntraPCIe,
			stock: schema.StockUnknown, flags: []schema.DQFlag{}},
		"1B300.30V on_demand": {raw: "B300 SXM6 262GB", count: 1, vram: 262, perHour: "6.99", perGPU: "6.99", intra: schema.IntraUnknown,
			stock: schema.StockUnknown, flags: []schema.DQFlag{schema.FlagUnknownGPU}},
		"1B200CC.30V spot": {model: "B200-SXM-180GB", raw: "B200 CC SXM6 180GB", count: 1, vram: 180, perHour: "3.116", perGPU: "3.116", intra: sx,
			stock: schema.StockUnknown},
		"1A6000.10V.OLD on_demand": {model: "RTX-A6000-48GB", raw: "NVidia RTX A6000 48GB", count: 1, vram: 48, perHour: "0.49", perGPU: "0.49", intra: schema.IntraPCIe,
			stock: schema.StockUnknown},
	})
	for _, absent := range []string{"2B300.60V on_demand", "8B200.240V on_demand", "8B200.240V spot", "1A100.22V spot", "1L40S.20V on_demand",
		"1A6000.10V on_demand", "2A6000.20V on_demand", "CPU.4V.16G on_demand", "1A100.40S.22V on_demand", "1V100.6V on_demand"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s became an offer", absent)
		}
	}
	if o := got["1RTX6000ADA.10V on_demand"]; o.DiskGB == nil || *o.DiskGB != 225 {
		t.Errorf("disk %v, want 225 GB", o.DiskGB)
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`verda: instance type "8B200.240V": neither price_per_hour nor spot_price is set`,
		`verda: instance type "1A100.22V": price_per_hour: -1.29 is negative`,
		`verda: instance type "1L40S.20V": currency "eur", want usd`,
		`verda: instance type "1A6000.10V": price_per_hour: "0,49" is not a number`,
		`verda: instance type "2A6000.20V": gpu.number_of_gpus: "two" is not a number`,
		`verda: instance type "1H100.80S.30V": listed twice`,
		`verda: instance type #15: a string where an object was expected`,
		`verda: instance type #16: gpu: a string where an object was expected`,
		`verda: instance type "1V100.6V": price_per_hour: "true" is not a number`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no problem %q in\n%s", want, all)
		}
	}
	if len(problems) != 9 {
		t.Errorf("%d problems, want 9:\n%s", len(problems), all)
	}
}

func TestParseVerdaErrors(t *testing.T) {
	full := string(readTestdata(t, "verda_instance_types.json"))
	tests := []struct {
		name string
		body string
		want error
	}{
		{"truncated", full[:len(full)/2], scrapers.ErrIncomplete},
		{"empty body", "", scrapers.ErrIncomplete},
		{"trailing data", full + "[]", scrapers.ErrLayoutChanged},
		{"wrapped in an object", `{"instance_types": ` + full + `}`, scrapers.ErrLayoutChanged},
		{"an API error", `{"code": "unauthorized_request", "message": "Access token is missing or invalid"}`, scrapers.ErrLayoutChanged},
		{"price fields renamed", mustReplace(mustReplace(full, `"price_per_hour"`, `"hourly_price"`), `"spot_price"`, `"spot_hourly"`), scrapers.ErrLayoutChanged},
		{"HTML", "<html><body>Bad gateway</body></html>", scrapers.ErrLayoutChanged},
		{"no types", `[]`, scrapers.ErrNoOffers},
		{"only CPU types", `[{"instance_type": "CPU.8V.32G", "price_per_hour": "0.0558", "gpu": {"description": "", "number_of_gpus": 0}}]`, scrapers.ErrNoOffers},
		{"a price with a huge exponent", `[{"instance_type": "1H100.80S.30V", "price_per_hour": "1e999999", "gpu": {"number_of_gpus": 1}}]`, scrapers.ErrNoOffers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseVerda([]byte(tt.body), runAug22, scrapers.DefaultVerdaAPIURL)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v (%d offers), want %v", err, len(offers), tt.want)
			}
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.VerdaName {
				t.Errorf("error %v is not a verda *scrapers.Error", err)
			}
		})
	}
}

func TestParseVerdaPageLayoutChanged(t *testing.T) {
	page := string(readTestdata(t, "verda_pricing.html"))
	tests := []struct {
		name string
		body string
		want error
	}{
		{"prices moved to Product nodes", string(readTestdata(t, "verda_pricing_changed.html")), scrapers.ErrLayoutChanged},
		{"no JSON-LD", mustReplace(page, `type="application/ld+json"`, `type="application/json"`), scrapers.ErrLayoutChanged},
		{"no @graph", mustReplace(page, `"@graph":`, `"graph":`), scrapers.ErrLayoutChanged},
		{"JSON-LD broken", mustReplace(page, `{"@context":"https://schema.org","@graph":[`, `{"@context":"https://schema.org","@graph":[[`), scrapers.ErrLayoutChanged},
		{"descriptions reworded", mustReplaceRegexp(page, `"Hourly (on-demand|spot) instance price"|"Hourly serverless container price"`, `"Per-hour price"`), scrapers.ErrNoOffers},
		{"every price in EUR", mustReplace(page, `"priceCurrency":"USD"`, `"priceCurrency":"EUR"`), scrapers.ErrNoOffers},
		{"not HTML", "Service Unavailable", scrapers.ErrLayoutChanged},
		{"empty", "", scrapers.ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseVerdaPage([]byte(tt.body), runAug22, scrapers.DefaultVerdaPageURL)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v (%d offers, problems %v), want %v", err, len(offers), problems, tt.want)
			}
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.VerdaName {
				t.Errorf("error %v is not a verda *scrapers.Error", err)
			}
		})
	}
}

func TestParseVerdaAvailability(t *testing.T) {
	got, err := scrapers.ParseVerdaAvailability(readTestdata(t, "verda_instance_availability.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"FIN-02", "ICE-01"}, got["1H100.80S.32V"]); diff != "" {
		t.Errorf("1H100.80S.32V locations (-want +got):\n%s", diff)
	}
	if _, ok := got["2B300.60V"]; ok {
		t.Error("2B300.60V is listed nowhere on demand")
	}
	full := string(readTestdata(t, "verda_instance_availability.json"))
	for name, tt := range map[string]struct {
		body string
		want error
	}{
		"nothing available":  {`[]`, nil},
		"an empty location":  {`[{"location_code": "ICE-01", "availabilities": []}]`, nil},
		"cut short":          {full[:len(full)/2], scrapers.ErrIncomplete},
		"empty body":         {"", scrapers.ErrIncomplete},
		"an object":          {`{"FIN-01": ["1A100.22V"]}`, scrapers.ErrLayoutChanged},
		"no location code":   {`[{"location": "FIN-01", "availabilities": ["1A100.22V"]}]`, scrapers.ErrLayoutChanged},
		"not a code":         {`[{"location_code": "FIN 01; drop", "availabilities": []}]`, scrapers.ErrLayoutChanged},
		"types not a list":   {`[{"location_code": "FIN-01", "availabilities": "1A100.22V"}]`, scrapers.ErrLayoutChanged},
		"trailing data":      {full + "{}", scrapers.ErrLayoutChanged},
		"a location as text": {`["FIN-01"]`, scrapers.ErrLayoutChanged},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := scrapers.ParseVerdaAvailability([]byte(tt.body))
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var se *scrapers.Error
			if !errors.Is(err, tt.want) || !errors.As(err, &se) || se.Source != scrapers.VerdaName {
				t.Errorf("error %v, want a verda error wrapping %v", err, tt.want)
			}
		})
	}
}

// TestVerdaAPIFetch: with credentials the source takes a token, reads the instance types and
// both availability lists with it, and places every offer in its locations (golden file).
func TestVerdaAPIFetch(t *testing.T) {
	api := newVerdaAPI(t)
	srv := httptest.NewServer(api)
	defer srv.Close()
	res, err := newVerdaAPISource(newTestClient(t, scrapers.ClientConfig{}), srv.URL).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Offers {
		res.Offers[i].SourceURL = strings.Replace(res.Offers[i].SourceURL, srv.URL+"/v1", scrapers.DefaultVerdaAPIURL, 1)
	}
	checkGolden(t, "verda_api", res.Offers, res.Problems)

	if res.Attempts != 4 || len(res.Payloads) != 3 {
		t.Errorf("%d attempts, %d payloads; want 4 requests and the 3 that are not the token's", res.Attempts, len(res.Payloads))
	}
	for _, p := range res.Payloads {
		if bytes.Contains(p.Body, []byte("access_token")) {
			t.Errorf("the token answer is a payload (%s)", p.URL)
		}
	}
	wantPaths := []string{"POST /v1/oauth2/token", "GET /v1/instance-types?currency=usd",
		"GET /v1/instance-availability?is_spot=false&isSpot=false", "GET /v1/instance-availability?is_spot=true&isSpot=true"}
	var paths []string
	for i, r := range api.requests {
		paths = append(paths, r.Method+" "+r.URL.RequestURI())
		auth := r.Header.Get("Authorization")
		if i == 0 {
			var body map[string]string
			if err := json.Unmarshal([]byte(api.bodies[0]), &body); err != nil || body["grant_type"] != "client_credentials" ||
				body["client_id"] != verdaTestID || body["client_secret"] != verdaTestSecret || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("token request %q (%s), want the client credentials as JSON", api.bodies[0], r.Header.Get("Content-Type"))
			}
			if auth != "" {
				t.Errorf("the token request sends Authorization %q", auth)
			}
		} else if auth != "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0ZXN0LWNsaWVudCJ9.ZmFrZS1zaWduYXR1cmUtZm9yLXRlc3Rz" {
			t.Errorf("%s: Authorization %q, want the access token", paths[i], auth)
		}
	}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	got := byOfferKey(res.Offers)
	checkVerdaOffers(t, got, map[string]verdaWant{
		"1H100.80S.32V/ICE-01 on_demand": {model: "H100-SXM-80GB", raw: "H100 SXM5 80GB", count: 1, vram: 80, perHour: "2.29", perGPU: "2.29",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, region: "ICE-01", country: "IS"},
		"4B300.120V/FIN-03 spot": {model: "B300-SXM-288GB", raw: "B300 SXM6 268GB", count: 4, vram: 288, perHour: "9.786", perGPU: "2.4465",
			intra: schema.IntraNVSwitch, stock: schema.StockUnknown, region: "FIN-03", country: "FI", flags: []schema.DQFlag{schema.FlagVRAMSnapped}},
		// Deployable nowhere on demand: kept once, without a region, stock none.
		"8B200.240V on_demand": {model: "B200-SXM-180GB", raw: "B200 SXM6 180GB", count: 8, vram: 180, perHour: "39.12", perGPU: "4.89",
			intra: schema.IntraNVSwitch, stock: schema.StockNone},
		// A bridgeable PCIe card, two of them: p2p "50GB/s" does not say the link.
		"2A6000.20V/FIN-01 on_demand": {model: "RTX-A6000-48GB", raw: "RTX A6000 48GB", count: 2, vram: 48, perHour: "1.98", perGPU: "0.99",
			intra: schema.IntraUnknown, stock: schema.StockUnknown, region: "FIN-01", country: "FI"},
		"1RTXPRO6000.30V/FIN-03 spot": {model: "RTX-PRO-6000-96GB", raw: "RTX PRO 6000 96GB", count: 1, vram: 96, perHour: "0.5915", perGPU: "0.5915",
			intra: schema.IntraPCIe, stock: schema.StockUnknown, region: "FIN-03", country: "FI"},
	})
	for _, o := range res.Offers {
		if strings.HasPrefix(o.OfferID, "CPU.") {
			t.Errorf("CPU type %s became an offer", o.OfferID)
		}
	}
}

func TestVerdaAPIFetchMisbehaving(t *testing.T) {
	renamed := []byte(`{"instance_types": ` + string(readTestdata(t, "verda_instance_types.json")) + `}`)
	for _, mb := range misbehaviours("application/json", renamed) {
		t.Run(mb.name, func(t *testing.T) {
			api := newVerdaAPI(t)
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/instance-types") { // the misbehaving one
					mb.serve(w, r, int(hits.Add(1)), api.answer(r))
					return
				}
				api.ServeHTTP(w, r)
			}))
			defer srv.Close()
			res, err := newVerdaAPISource(newTestClient(t, scrapers.ClientConfig{}), srv.URL).Fetch(context.Background(), runAug22)
			want := 0
			if mb.wantAttempts > 0 { // the token request before, both availability lists after a good answer
				want = 1 + mb.wantAttempts
				if mb.wantErr == nil {
					want += 2
				}
			}
			checkFetch(t, scrapers.VerdaName, res, err, mb.wantErr, want)
		})
	}
}

func TestVerdaPageFetchMisbehaving(t *testing.T) {
	good := readTestdata(t, "verda_pricing.html")
	for _, mb := range misbehaviours("text/html; charset=utf-8", readTestdata(t, "verda_pricing_changed.html")) {
		t.Run(mb.name, func(t *testing.T) {
			var hits, apiHits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/v1/") {
					apiHits.Add(1)
					http.Error(w, `{"code":"unauthorized_request"}`, http.StatusUnauthorized)
					return
				}
				if !strings.HasPrefix(r.UserAgent(), "Mozilla/5.0") {
					http.Error(w, "Forbidden", http.StatusForbidden)
					return
				}
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			v := scrapers.NewVerda(newTestClient(t, scrapers.ClientConfig{}), scrapers.VerdaConfig{APIURL: srv.URL + "/v1", PageURL: srv.URL + "/pricing", Delay: -1}, nil)
			res, err := v.Fetch(context.Background(), runAug22)
			checkFetch(t, scrapers.VerdaName, res, err, mb.wantErr, mb.wantAttempts)
			if mb.wantErr == nil && len(res.Offers) != 34 {
				t.Errorf("%d offers, want 34", len(res.Offers))
			}
			if n := apiHits.Load(); n != 0 {
				t.Errorf("the API was called %d times without credentials", n)
			}
		})
	}
}

// TestVerdaCredentialsNeverLeak: a token endpoint that rejects the credentials and echoes them,
// and an API that echoes the access token, get neither the client id, the secret nor the token
// into the error, the logs, the payloads or a recording.
func TestVerdaCredentialsNeverLeak(t *testing.T) {
	token := "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0ZXN0LWNsaWVudCJ9.ZmFrZS1zaWduYXR1cmUtZm9yLXRlc3Rz"
	secrets := []string{verdaTestID, verdaTestSecret, token, "rt_fake-refresh-token-for-tests-0c1d"}
	for _, tt := range []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request, body string)
	}{
		{"the token step echoes the credentials", func(w http.ResponseWriter, r *http.Request, body string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"code":"invalid_client","message":"unknown client, request was %s"}`, body)
		}},
		{"the API echoes the token", func(w http.ResponseWriter, r *http.Request, _ string) {
			if strings.HasSuffix(r.URL.Path, "/oauth2/token") {
				writeBody(w, "application/json", readTestdata(t, "verda_token.json"))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"code":"forbidden","message":"token %s lacks scope"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := readAll(r)
				tt.serve(w, r, body)
			}))
			defer srv.Close()
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			dir := t.TempDir()
			client := newTestClient(t, scrapers.ClientConfig{Logger: logger, RecordDir: dir})
			v := scrapers.NewVerda(client, scrapers.VerdaConfig{ClientID: verdaTestID, ClientSecret: verdaTestSecret, APIURL: srv.URL + "/v1"}, logger)
			res, err := v.Fetch(context.Background(), runAug22)
			if !errors.Is(err, scrapers.ErrStatus) {
				t.Fatalf("Fetch error %v, want ErrStatus", err)
			}
			t.Logf("Fetch error: %v", err)
			if msg := client.Redact(err.Error()); !strings.Contains(msg, srv.URL) {
				t.Errorf("redacted for the run log, the error loses its URL: %q", msg)
			}
			var recorded []byte
			files, _ := filepath.Glob(filepath.Join(dir, scrapers.VerdaName, "*"))
			for _, f := range files {
				b, _ := os.ReadFile(f)
				recorded = append(recorded, b...)
			}
			if len(files) < 2 {
				t.Fatalf("recorded %v", files)
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) || strings.Contains(logs.String(), s) || bytes.Contains(recorded, []byte(s)) {
					t.Errorf("%q is in the error, the logs or the recording", s)
				}
				for _, p := range res.Payloads {
					if bytes.Contains(p.Body, []byte(s)) || strings.Contains(p.URL, s) {
						t.Errorf("%q is in a payload: %s %s", s, p.URL, p.Body)
					}
				}
			}
		})
	}
}

// TestVerdaRecordReplay: a recorded API run replays to the same offers with other credentials
// (the token request is matched with its secrets masked), the recording holds neither the
// credentials nor the token, and the page replays byte for byte.
func TestVerdaRecordReplay(t *testing.T) {
	api := newVerdaAPI(t)
	page := readTestdata(t, "verda_pricing.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pricing" {
			writeBody(w, "text/html", page)
			return
		}
		api.ServeHTTP(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	apiCfg := scrapers.VerdaConfig{ClientID: verdaTestID, ClientSecret: verdaTestSecret, APIURL: srv.URL + "/v1"}
	pageCfg := scrapers.VerdaConfig{PageURL: srv.URL + "/pricing", Delay: -1}
	rec := newTestClient(t, scrapers.ClientConfig{RecordDir: dir})
	var live []schema.Extract
	for _, cfg := range []scrapers.VerdaConfig{apiCfg, pageCfg} {
		res, err := scrapers.NewVerda(rec, cfg, nil).Fetch(context.Background(), runAug22)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, res)
	}
	srv.Close() // the replay must not need the network

	other := apiCfg
	other.ClientID, other.ClientSecret = "another-client-id", "another-client-secret"
	rep := newTestClient(t, scrapers.ClientConfig{ReplayDir: dir})
	for i, cfg := range []scrapers.VerdaConfig{other, pageCfg} {
		res, err := scrapers.NewVerda(rep, cfg, nil).Fetch(context.Background(), runAug22)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(live[i].Offers, res.Offers); diff != "" {
			t.Errorf("replayed offers differ (-live +replayed):\n%s", diff)
		}
		for j, p := range res.Payloads {
			if !bytes.Equal(p.Body, live[i].Payloads[j].Body) {
				t.Errorf("replayed payload %s is not the recorded body byte for byte", p.URL)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, scrapers.VerdaName, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, s := range []string{verdaTestID, verdaTestSecret, "eyJhbGciOiJSUzI1NiJ9", "rt_fake-refresh"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", filepath.Base(f), s)
			}
		}
	}
}

func TestVerdaInvalidConfig(t *testing.T) {
	c := newTestClient(t, scrapers.ClientConfig{})
	for name, tt := range map[string]struct {
		client *scrapers.Client
		cfg    scrapers.VerdaConfig
	}{
		"a relative API URL": {c, scrapers.VerdaConfig{ClientID: verdaTestID, ClientSecret: verdaTestSecret, APIURL: "api.verda.com/v1"}},
		"an API URL with a query": {c, scrapers.VerdaConfig{ClientID: verdaTestID, ClientSecret: verdaTestSecret,
			APIURL: "https://api.verda.com/v1?client_secret=" + verdaTestSecret}},
		"a page that is not http":    {c, scrapers.VerdaConfig{PageURL: "ftp://verda.com/pricing"}},
		"a client id without secret": {c, scrapers.VerdaConfig{ClientID: verdaTestID}},
		"a secret without client id": {c, scrapers.VerdaConfig{ClientSecret: verdaTestSecret}},
		"no client":                  {nil, scrapers.VerdaConfig{}},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := scrapers.NewVerda(tt.client, tt.cfg, nil).Fetch(context.Background(), runAug22)
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.VerdaName || len(res.Offers) != 0 || res.Attempts != 0 {
				t.Fatalf("Fetch: %d offers, %d attempts, error %v; want a verda *scrapers.Error before any request", len(res.Offers), res.Attempts, err)
			}
			if strings.Contains(err.Error(), verdaTestSecret) {
				t.Errorf("the secret is in the error %q", err)
			}
			// The run log shows the error redacted: one about the credentials must still read as
			// written ("secret: only …" would be masked as a credential).
			if strings.Contains(name, "without") {
				if msg := tt.client.Redact(err.Error()); msg != err.Error() || !strings.Contains(msg, "only one of them is set") {
					t.Errorf("the error reads %q once redacted", msg)
				}
			}
		})
	}
}

func FuzzParseVerda(f *testing.F) {
	for _, name := range []string{"verda_instance_types.json", "verda_instance_types_traps.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`[{"instance_type":"2X.1V","price_per_hour":"1e3","spot_price":7.5e-1,"gpu":{"description":"2x H100 SXM5 80GB"},"gpu_memory":{"size_in_gigabytes":"160"}}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseVerda(body, runAug22, scrapers.DefaultVerdaAPIURL)
		checkParsed(t, scrapers.VerdaName, runAug22, offers, problems, err)
		checkPerGPU(t, offers)
	})
}

func FuzzParseVerdaPage(f *testing.F) {
	for _, name := range []string{"verda_pricing.html", "verda_pricing_traps.html", "verda_pricing_changed.html"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`<html><script type="application/ld+json">{"@graph":[{"@type":"Offer","name":"1x H100 SXM5 80GB spot","description":"Hourly spot instance price",` +
		`"price":"1,625","priceCurrency":"USD"}]}</script></html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseVerdaPage(body, runAug22, scrapers.DefaultVerdaPageURL)
		checkParsed(t, scrapers.VerdaName, runAug22, offers, problems, err) // per GPU is the page's own price
		for _, o := range offers {
			if o.GPUCount != 1 && o.PriceType != schema.Serverless {
				t.Fatalf("offer %q of %d GPUs", o.OfferID, o.GPUCount)
			}
		}
	})
}

func FuzzParseVerdaAvailability(f *testing.F) {
	for _, name := range []string{"verda_instance_availability.json", "verda_instance_availability_spot.json"} {
		f.Add(readTestdata(f, name))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := scrapers.ParseVerdaAvailability(body)
		var se *scrapers.Error
		if err != nil && (!errors.As(err, &se) || se.Source != scrapers.VerdaName || got != nil) {
			t.Fatalf("error %v (%d types) is not a verda *scrapers.Error alone", err, len(got))
		}
		for typ, locs := range got {
			if typ == "" || len(locs) == 0 {
				t.Fatalf("type %q in %v", typ, locs)
			}
		}
	})
}

func BenchmarkParseVerda(b *testing.B) {
	benchmarkParse(b, scrapers.ParseVerda, "verda_instance_types.json", runAug22, scrapers.DefaultVerdaAPIURL)
}

func BenchmarkParseVerdaPage(b *testing.B) {
	benchmarkParse(b, scrapers.ParseVerdaPage, "verda_pricing.html", runAug22, scrapers.DefaultVerdaPageURL)
}
