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
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// The Nebius fixtures' runs: the page of 2026-08-22 is read at runAug22, the page of October
// 2026 (its "Effective October 1, 2026" column in effect) and the traps at runNov29.
var nebiusFixtures = []struct {
	name string
	run  schema.Run
}{
	{"nebius_prices", runAug22},
	{"nebius_prices_oct", runNov29},
	{"nebius_prices_traps", runNov29},
}

func TestParseNebiusGolden(t *testing.T) {
	for _, f := range nebiusFixtures {
		t.Run(f.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseNebius(readTestdata(t, f.name+".html"), f.run, scrapers.DefaultNebiusURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, f.name, offers, problems)
		})
	}
}

// nebiusWant is the part of a Nebius offer the tests pin by hand, next to the golden files.
type nebiusWant struct {
	model, raw   string
	perGPU       string
	vcpus, ram   *float64
	intra        schema.IntraNode
	flags        []schema.DQFlag
	count        uint16
	vram         float64
	region       string
	stock        schema.Stock
	inter        schema.InterNode
	perHourEqual bool // one GPU: the offer's price is the per-GPU price
}

func nebiusGot(o schema.Offer) nebiusWant {
	return nebiusWant{model: o.GPUModel, raw: o.GPUNameRaw, perGPU: o.PriceUSDPerGPUHour.String(), vcpus: o.VCPUs, ram: o.RAMGB,
		intra: o.IntraNode, flags: o.DQFlags, count: o.GPUCount, vram: o.VRAMGB, region: o.Region, stock: o.Stock, inter: o.InterNode,
		perHourEqual: o.PriceUSDPerHour.Equal(o.PriceUSDPerGPUHour)}
}

// nebiusOffer is a pinned offer: what every Nebius offer shares, and the given fields.
func nebiusOffer(model, raw, perGPU string, intra schema.IntraNode, vcpus, ram *float64, vram float64) nebiusWant {
	return nebiusWant{model: model, raw: raw, perGPU: perGPU, vcpus: vcpus, ram: ram, intra: intra,
		flags: []schema.DQFlag{schema.FlagVRAMMissing}, count: 1, vram: vram, stock: schema.StockUnknown, inter: schema.InterUnknown, perHourEqual: true}
}

func checkNebiusOffers(t *testing.T, offers []schema.Offer, tests map[string]nebiusWant) {
	t.Helper()
	got := byOfferKey(offers)
	for key, want := range tests {
		t.Run(key, func(t *testing.T) {
			o, ok := got[key]
			if !ok {
				t.Fatalf("no offer %q", key)
			}
			if diff := cmp.Diff(want, nebiusGot(o), cmp.AllowUnexported(nebiusWant{})); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseNebiusOracle pins the values docs/providers.md §12.7 gives for the page of
// 2026-08-22: 7 priced items on demand and preemptible (14 offers), GB200 and GB300 NVL72
// unpriced, "from" prices as their floor, the two L40S rows apart.
func TestParseNebiusOracle(t *testing.T) {
	offers, problems, err := scrapers.ParseNebius(readTestdata(t, "nebius_prices.html"), runAug22, scrapers.DefaultNebiusURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	if len(offers) != 14 {
		t.Errorf("%d offers, want 14 (7 items on demand and spot)", len(offers))
	}
	sx, pcie := schema.IntraNVSwitch, schema.IntraPCIe
	checkNebiusOffers(t, offers, map[string]nebiusWant{
		"NVIDIA HGX B300 on_demand":            nebiusOffer("B300-SXM-288GB", "NVIDIA HGX B300", "7.85", sx, f64(24.0), f64(346.0), 288),
		"NVIDIA HGX B300 spot":                 nebiusOffer("B300-SXM-288GB", "NVIDIA HGX B300", "4.3", sx, f64(24.0), f64(346.0), 288),
		"NVIDIA HGX H100 on_demand":            nebiusOffer("H100-SXM-80GB", "NVIDIA HGX H100", "3.85", sx, f64(16.0), f64(200.0), 80),
		"NVIDIA HGX H100 spot":                 nebiusOffer("H100-SXM-80GB", "NVIDIA HGX H100", "2.15", sx, f64(16.0), f64(200.0), 80),
		"NVIDIA HGX H200 on_demand":            nebiusOffer("H200-SXM-141GB", "NVIDIA HGX H200", "4.5", sx, f64(16.0), f64(200.0), 141),
		"NVIDIA HGX B200 spot":                 nebiusOffer("B200-SXM-180GB", "NVIDIA HGX B200", "3.95", sx, f64(20.0), f64(224.0), 180),
		"NVIDIA RTX PRO 6000 on_demand":        nebiusOffer("RTX-PRO-6000-96GB", "NVIDIA RTX PRO 6000", "1.8", pcie, f64(24.0), f64(218.0), 96),
		"NVIDIA L40S with Intel CPU on_demand": nebiusOffer("L40S-48GB", "NVIDIA L40S with Intel CPU", "1.82", pcie, nil, nil, 48),
		"NVIDIA L40S with AMD CPU spot":        nebiusOffer("L40S-48GB", "NVIDIA L40S with AMD CPU", "0.74", pcie, nil, nil, 48),
		"NVIDIA L40S with AMD CPU on_demand":   nebiusOffer("L40S-48GB", "NVIDIA L40S with AMD CPU", "1.55", pcie, nil, nil, 48),
		"NVIDIA L40S with Intel CPU spot":      nebiusOffer("L40S-48GB", "NVIDIA L40S with Intel CPU", "0.9", pcie, nil, nil, 48),
		"NVIDIA RTX PRO 6000 spot":             nebiusOffer("RTX-PRO-6000-96GB", "NVIDIA RTX PRO 6000", "0.95", pcie, f64(24.0), f64(218.0), 96),
		"NVIDIA HGX B200 on_demand":            nebiusOffer("B200-SXM-180GB", "NVIDIA HGX B200", "7.15", sx, f64(20.0), f64(224.0), 180),
		"NVIDIA HGX H200 spot":                 nebiusOffer("H200-SXM-141GB", "NVIDIA HGX H200", "2.45", sx, f64(16.0), f64(200.0), 141),
	})
	for _, o := range offers {
		if strings.Contains(o.OfferID, "NVL72") || o.Country != "" || o.Tier != schema.TierDatacenter || o.ValidUntil != nil {
			t.Errorf("offer %q: country %q, tier %s, valid until %v", o.OfferID, o.Country, o.Tier, o.ValidUntil)
		}
	}
	// Unpriced rows are counted, not problems: a page of them alone says how many.
	page := mustReplaceRegexp(string(readTestdata(t, "nebius_prices.html")), `\\"(from )?\$[0-9.]+\\"`, `\"––\"`)
	_, _, err = scrapers.ParseNebius([]byte(page), runAug22, scrapers.DefaultNebiusURL)
	if !errors.Is(err, scrapers.ErrNoOffers) || !strings.Contains(err.Error(), "9 GPU rows, 9 of them unpriced") {
		t.Errorf("a page priced nowhere: %v, want ErrNoOffers counting 9 unpriced rows", err)
	}
}

// TestParseNebiusEffectiveColumn: the October 2026 page's on-demand price is its "Effective
// October 1, 2026" column from that date on, and the old "On-demand" column before it; the
// preemptible prices are "from" floors either way.
func TestParseNebiusEffectiveColumn(t *testing.T) {
	body := readTestdata(t, "nebius_prices_oct.html")
	at := func(ts string) schema.Run {
		d, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			t.Fatal(err)
		}
		return schema.Run{ID: "run-" + ts, ObservedAt: d}
	}
	sx := schema.IntraNVSwitch
	for _, tt := range []struct {
		run                schema.Run
		h100, h200, b200   string
		h100Spot, b200Spot string
	}{
		{runAug22, "3.85", "4.5", "7.15", "0.79", "0.99"},
		{at("2026-09-30T23:59:59Z"), "3.85", "4.5", "7.15", "0.79", "0.99"},
		{at("2026-10-01T00:00:00Z"), "4.5", "5.4", "8.5", "0.79", "0.99"},
		{runNov29, "4.5", "5.4", "8.5", "0.79", "0.99"},
	} {
		t.Run(tt.run.ObservedAt.Format(time.RFC3339), func(t *testing.T) {
			offers, problems, err := scrapers.ParseNebius(body, tt.run, scrapers.DefaultNebiusURL)
			if err != nil || len(problems) != 0 || len(offers) != 14 {
				t.Fatalf("%d offers, problems %v, %v", len(offers), problems, err)
			}
			checkNebiusOffers(t, offers, map[string]nebiusWant{
				"NVIDIA HGX H100 on_demand": nebiusOffer("H100-SXM-80GB", "NVIDIA HGX H100", tt.h100, sx, f64(16.0), f64(200.0), 80),
				"NVIDIA HGX H200 on_demand": nebiusOffer("H200-SXM-141GB", "NVIDIA HGX H200", tt.h200, sx, f64(16.0), f64(200.0), 141),
				"NVIDIA HGX B200 on_demand": nebiusOffer("B200-SXM-180GB", "NVIDIA HGX B200", tt.b200, sx, f64(20.0), f64(224.0), 180),
				"NVIDIA HGX H100 spot":      nebiusOffer("H100-SXM-80GB", "NVIDIA HGX H100", tt.h100Spot, sx, f64(16.0), f64(200.0), 80),
				"NVIDIA HGX B200 spot":      nebiusOffer("B200-SXM-180GB", "NVIDIA HGX B200", tt.b200Spot, sx, f64(20.0), f64(224.0), 180),
			})
		})
	}
}

func TestParseNebiusTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseNebius(readTestdata(t, "nebius_prices_traps.html"), runNov29, scrapers.DefaultNebiusURL)
	if err != nil {
		t.Fatal(err)
	}
	sx, pcie := schema.IntraNVSwitch, schema.IntraPCIe
	unknown := nebiusOffer("", "NVIDIA H300 Preview", "1234.5", schema.IntraUnknown, f64(16.0), f64(200.0), 0)
	unknown.flags = []schema.DQFlag{schema.FlagUnknownGPU}
	checkNebiusOffers(t, offers, map[string]nebiusWant{
		// October's column, not January's; the verbatim copies (the same table twice, the
		// plain-JSON and escaped previews) count once.
		"NVIDIA HGX H100 on_demand": nebiusOffer("H100-SXM-80GB", "NVIDIA HGX H100", "4.5", sx, f64(16.0), f64(200.0), 80),
		"NVIDIA HGX H100 spot":      nebiusOffer("H100-SXM-80GB", "NVIDIA HGX H100", "0.79", sx, f64(16.0), f64(200.0), 80),
		// The first of two listings with different prices.
		"NVIDIA HGX H200 on_demand": nebiusOffer("H200-SXM-141GB", "NVIDIA HGX H200", "5.4", sx, f64(16.0), f64(200.0), 141),
		// Preemptible "––": on demand only.
		"NVIDIA HGX B200 on_demand": nebiusOffer("B200-SXM-180GB", "NVIDIA HGX B200", "8.5", sx, f64(20.0), f64(224.0), 180),
		// A floor written with a non-breaking space.
		"NVIDIA L40S with Intel CPU on_demand": nebiusOffer("L40S-48GB", "NVIDIA L40S with Intel CPU", "1.95", pcie, nil, nil, 48),
		// Odd white space in the item; N/A preemptible; single figures, not ranges.
		"NVIDIA L40S with AMD CPU on_demand": nebiusOffer("L40S-48GB", "NVIDIA L40S with AMD CPU", "1.55", pcie, f64(8.0), f64(32.0), 48),
		// An unknown GPU, kept; a price with a thousands separator.
		"NVIDIA H300 Preview on_demand": unknown,
	})
	if len(offers) != 10 {
		t.Errorf("%d offers, want 10", len(offers))
	}
	got := byOfferKey(offers)
	for _, absent := range []string{"NVIDIA HGX B200 spot", "NVIDIA HGX B300 on_demand", "NVIDIA RTX PRO 6000 on_demand", "NVIDIA L40S with AMD CPU spot",
		"NVIDIA A100 on_demand", "NVIDIA L4 on_demand", "NVIDIA H100 NVL on_demand", "NVIDIA GB200 NVL72 on_demand", "NVIDIA GB300 NVL72 on_demand",
		"AMD EPYC Genoa (cpu-d3) on_demand", "Network SSD on_demand"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s became an offer", absent)
		}
	}
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Error())
	}
	for _, want := range []string{
		`GPU row "NVIDIA HGX H200": listed twice with different cells`,
		`GPU row "NVIDIA HGX B300": Preemptible, GPU-hour: price "€4.30" is not a dollar amount`,
		`GPU row "NVIDIA RTX PRO 6000": GPU-hour (Effective October 1, 2026): price "$0.00" is not positive`,
		`GPU row "NVIDIA A100": 4 cells under a header of 7`,
		`GPU row #13: a number where a string was expected`,
		`GPU row #14: no item`,
		`GPU row "NVIDIA H100 NVL": GPU-hour (Effective October 1, 2026): price "$3.95/h" is not a dollar amount`,
	} {
		if !strings.Contains(strings.Join(msgs, "\n"), want) {
			t.Errorf("no problem %q in\n%s", want, strings.Join(msgs, "\n"))
		}
	}
	if len(problems) != 7 {
		t.Errorf("%d problems, want 7:\n%s", len(problems), strings.Join(msgs, "\n"))
	}
	for _, p := range problems {
		if !strings.HasPrefix(p.Error(), "nebius: price page: GPU row ") {
			t.Errorf("problem %q does not name the provider and the row", p)
		}
	}
}

func TestParseNebiusLayoutChanged(t *testing.T) {
	page := string(readTestdata(t, "nebius_prices.html"))
	oct := string(readTestdata(t, "nebius_prices_oct.html"))
	tests := []struct {
		name string
		body string
		run  schema.Run
		want error
	}{
		{"rows moved under rows and cells", string(readTestdata(t, "nebius_prices_changed.html")), runNov29, scrapers.ErrLayoutChanged},
		{"Item renamed", mustReplace(page, `[[\"Item\",\"vCPUs\"`, `[[\"Instance\",\"vCPUs\"`), runAug22, scrapers.ErrLayoutChanged},
		{"GPU-hour renamed", mustReplace(page, `GPU-hour\"`, `GPU, hour\"`), runAug22, scrapers.ErrLayoutChanged},
		{"on-demand column renamed", mustReplace(page, `\"On-demand, GPU-hour\"`, `\"Pay as you go, GPU-hour\"`), runAug22, scrapers.ErrLayoutChanged},
		{"only an announced price", mustReplace(oct, `\"On-demand, GPU-hour\",`, `\"Commitment, GPU-hour\",`), runAug22, scrapers.ErrLayoutChanged},
		{"an effective date that is none", mustReplace(oct, `Effective October 1, 2026`, `Effective Q4 2026`), runNov29, scrapers.ErrLayoutChanged},
		{"two current on-demand columns", mustReplace(oct, `GPU-hour (Effective October 1, 2026)`, `On-demand, GPU-hour`), runNov29, scrapers.ErrLayoutChanged},
		{"the script string broken", mustReplace(page, `\"table\":{\"content\":[[`, `\"table\":{\"content\":[[\x01`), runAug22, scrapers.ErrLayoutChanged},
		{"the table not JSON", mustReplace(page, `\"table\":{\"content\":[[`, `\"table\":{\"content\":[[[`), runAug22, scrapers.ErrLayoutChanged},
		{"every price in euros", mustReplaceRegexp(page, `\$([0-9])`, `€$1`), runAug22, scrapers.ErrNoOffers},
		{"not HTML", "Service Unavailable", runAug22, scrapers.ErrLayoutChanged},
		{"empty", "", runAug22, scrapers.ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseNebius([]byte(tt.body), tt.run, scrapers.DefaultNebiusURL)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v (%d offers, problems %v), want %v", err, len(offers), problems, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "nebius: price page: ") || len(offers) != 0 {
				t.Errorf("error %q (%d offers) does not name the provider and the page", err, len(offers))
			}
			t.Log(err)
		})
	}
}

func TestNebiusFetchMisbehaving(t *testing.T) {
	good := readTestdata(t, "nebius_prices.html")
	for _, mb := range misbehaviours("text/html; charset=utf-8", readTestdata(t, "nebius_prices_changed.html")) {
		t.Run(mb.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasPrefix(r.UserAgent(), "Mozilla/5.0") || r.URL.Path != "/prices" {
					http.Error(w, "Forbidden", http.StatusForbidden)
					return
				}
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			n := scrapers.NewNebius(newTestClient(t, scrapers.ClientConfig{}), scrapers.NebiusConfig{URL: srv.URL + "/prices", Delay: -1}, nil)
			res, err := n.Fetch(context.Background(), runAug22)
			checkFetch(t, scrapers.NebiusName, res, err, mb.wantErr, mb.wantAttempts)
			if mb.wantErr == nil && (len(res.Offers) != 14 || len(res.Payloads) != 1 || !bytes.Equal(res.Payloads[0].Body, good)) {
				t.Errorf("%d offers, %d payloads; want 14 and the page byte for byte", len(res.Offers), len(res.Payloads))
			}
		})
	}
}

func TestNebiusInvalidConfig(t *testing.T) {
	for name, tt := range map[string]struct {
		client *scrapers.Client
		cfg    scrapers.NebiusConfig
	}{
		"a relative URL":          {newTestClient(t, scrapers.ClientConfig{}), scrapers.NebiusConfig{URL: "nebius.com/prices"}},
		"a page that is not http": {newTestClient(t, scrapers.ClientConfig{}), scrapers.NebiusConfig{URL: "ftp://nebius.com/prices"}},
		"no client":               {nil, scrapers.NebiusConfig{}},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := scrapers.NewNebius(tt.client, tt.cfg, nil).Fetch(context.Background(), runAug22)
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.NebiusName || len(res.Offers) != 0 || res.Attempts != 0 {
				t.Fatalf("Fetch: %d offers, %d attempts, error %v; want a nebius *scrapers.Error before any request", len(res.Offers), res.Attempts, err)
			}
		})
	}
}

// TestNebiusStored: a stored run re-derives to the offers of its scrape, with the price column
// the run's time chose (the October page stored in August keeps its old on-demand prices).
func TestNebiusStored(t *testing.T) {
	for _, f := range []struct {
		file string
		run  schema.Run
	}{{"nebius_prices_oct.html", runAug22}, {"nebius_prices_oct.html", runNov29}, {"nebius_prices.html", runNov29}} {
		t.Run(f.file+" "+f.run.ID, func(t *testing.T) {
			srv := httptest.NewServer(fixtureHandler(t, f.file, "text/html; charset=utf-8"))
			defer srv.Close()
			live, err := scrapers.NewNebius(newTestClient(t, scrapers.ClientConfig{}), scrapers.NebiusConfig{URL: srv.URL + "/prices", Delay: -1}, nil).Fetch(context.Background(), f.run)
			if err != nil {
				t.Fatal(err)
			}
			moved := schema.RawPayload{URL: srv.URL + "/prices", Status: http.StatusMovedPermanently, Body: []byte("Moved")}
			s, err := scrapers.NewStored(scrapers.NebiusName, append([]schema.RawPayload{moved}, live.Payloads...))
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Fetch(context.Background(), f.run)
			if err != nil || len(got.Problems) != 0 {
				t.Fatalf("%v, problems %v", err, got.Problems)
			}
			if diff := cmp.Diff(live.Offers, got.Offers); diff != "" {
				t.Errorf("re-derived offers differ (-live +stored):\n%s", diff)
			}
		})
	}
}

// TestSnapshotNebius replays the shipped snapshot's nebius/ part (the October 2026 page, recorded
// at runNov29) and checks the offers are those the source gives on the fixture live, and the
// payload the fixture byte for byte. With -update it first records the folder again from the
// fixture served at the default URL.
func TestSnapshotNebius(t *testing.T) {
	transport := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.String() != scrapers.DefaultNebiusURL {
			http.NotFound(w, r)
			return
		}
		fixtureHandler(t, "nebius_prices_oct.html", "text/html; charset=utf-8").ServeHTTP(w, r)
	})}
	if *update {
		if err := os.RemoveAll(filepath.Join(snapshotDir, scrapers.NebiusName)); err != nil {
			t.Fatal(err)
		}
		rec := newTestClient(t, scrapers.ClientConfig{RecordDir: snapshotDir, Transport: transport, Now: func() time.Time { return runNov29.ObservedAt }})
		if _, err := scrapers.NewNebius(rec, scrapers.NebiusConfig{Delay: -1}, nil).Fetch(context.Background(), runNov29); err != nil {
			t.Fatalf("recording: %v", err)
		}
	}
	res, err := scrapers.NewNebius(newTestClient(t, scrapers.ClientConfig{ReplayDir: snapshotDir}), scrapers.NebiusConfig{Delay: -1}, nil).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	live, err := scrapers.NewNebius(newTestClient(t, scrapers.ClientConfig{Transport: transport}), scrapers.NebiusConfig{Delay: -1}, nil).Fetch(context.Background(), runNov29)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, res.Offers); diff != "" {
		t.Errorf("replayed offers differ from the live ones (-live +replay):\n%s", diff)
	}
	if len(res.Payloads) != 1 || res.Attempts != 1 {
		t.Fatalf("%d payloads, %d attempts; want 1", len(res.Payloads), res.Attempts)
	}
	if p := res.Payloads[0]; !bytes.Equal(p.Body, readTestdata(t, "nebius_prices_oct.html")) || p.URL != scrapers.DefaultNebiusURL {
		t.Errorf("payload at %s, want nebius_prices_oct.html at %s byte for byte", p.URL, scrapers.DefaultNebiusURL)
	}
	if len(res.Offers) != 14 || len(res.Problems) != 0 {
		t.Errorf("%d offers, problems %v; want 14", len(res.Offers), res.Problems)
	}
}

func FuzzParseNebius(f *testing.F) {
	for _, name := range []string{"nebius_prices.html", "nebius_prices_oct.html", "nebius_prices_traps.html", "nebius_prices_changed.html"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`<html><script>x("{\"table\":{\"content\":[[\"Item\",\"Preemptible, GPU-hour\",\"GPU-hour (Effective Oct 1, 2026)\"],` +
		`[\"NVIDIA HGX H100\",\"from $1,5\",\"$1e3\"]]}}")</script></html>`))
	f.Add([]byte(`<html>"table":{"content":[["Item","On-demand, GPU-hour"],["NVIDIA L40S","$1.00"]]} \"table\":{\"content\":[</html>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseNebius(body, runNov29, scrapers.DefaultNebiusURL)
		checkParsed(t, scrapers.NebiusName, runNov29, offers, problems, err)
		for _, o := range offers {
			if o.GPUCount != 1 || !o.PriceUSDPerHour.Equal(o.PriceUSDPerGPUHour) {
				t.Fatalf("offer %q of %d GPUs at %s, %s per GPU", o.OfferID, o.GPUCount, o.PriceUSDPerHour, o.PriceUSDPerGPUHour)
			}
		}
	})
}

func BenchmarkParseNebius(b *testing.B) {
	benchmarkParse(b, scrapers.ParseNebius, "nebius_prices_oct.html", runNov29, scrapers.DefaultNebiusURL)
}

// TestParseNebiusSkipsAnUnknownDatedColumn: a price column the parser does not read (a
// commitment price, say) is skipped with whatever date it carries, however unreadable; the
// on-demand prices still parse.
func TestParseNebiusSkipsAnUnknownDatedColumn(t *testing.T) {
	page := mustReplace(string(readTestdata(t, "nebius_prices.html")), `\"Preemptible, GPU-hour\"`, `\"Commitment, GPU-hour (Effective Q1 2027)\"`)
	offers, _, err := scrapers.ParseNebius([]byte(page), runAug22, scrapers.DefaultNebiusURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offers {
		if o.PriceType != schema.OnDemand {
			t.Errorf("offer %s at %s from the commitment column", o.OfferID, o.PriceType)
		}
	}
	if len(offers) != 7 {
		t.Errorf("%d offers, want the 7 priced items on demand", len(offers))
	}
}
