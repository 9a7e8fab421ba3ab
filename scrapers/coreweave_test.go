package scrapers_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

func TestParseCoreWeaveGolden(t *testing.T) {
	for _, name := range []string{"coreweave_pricing", "coreweave_pricing_traps"} {
		t.Run(name, func(t *testing.T) {
			offers, problems, err := scrapers.ParseCoreWeave(readTestdata(t, name+".html"), runAug22, scrapers.DefaultCoreWeaveURL)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name, offers, problems)
		})
	}
}

// TestParseCoreWeaveOracle pins the expected values docs/providers.md §4.7 gives for the live
// page of 2026-08-22 (gpu-index's test oracle): 32 priced observations, 17 in North America and
// 15 in Europe, and the per-GPU prices below.
func TestParseCoreWeaveOracle(t *testing.T) {
	offers, problems, err := scrapers.ParseCoreWeave(readTestdata(t, "coreweave_pricing.html"), runAug22, scrapers.DefaultCoreWeaveURL)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	perRegion := map[string]int{}
	byKey := map[string]schema.Offer{}
	for _, o := range offers {
		perRegion[o.Region]++
		byKey[o.OfferID+" "+string(o.PriceType)] = o
	}
	if diff := cmp.Diff(map[string]int{"north-america": 17, "europe": 15}, perRegion); diff != "" {
		t.Errorf("offers per region (-want +got):\n%s", diff)
	}
	type want struct {
		perHour, perGPU string
		count           uint16
		model           string
		intra           schema.IntraNode
		inter           schema.InterNode
	}
	tests := []struct {
		key  string
		want want
	}{
		{"nvidia-b200/north-america on_demand", want{"68.8", "8.6", 8, "B200-SXM-180GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-gb200-nvl72/north-america on_demand", want{"42", "10.5", 4, "GB200-186GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-gb200-nvl72/europe on_demand", want{"42", "10.5", 4, "GB200-186GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-b300/north-america spot", want{"35.84", "4.48", 8, "B300-SXM-288GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-b300/europe spot", want{"36.7", "4.5875", 8, "B300-SXM-288GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-l40s/north-america spot", want{"7.88", "0.985", 8, "L40S-48GB", schema.IntraPCIe, schema.InterUnknown}},
		{"hgx-h200/europe spot", want{"20.64", "2.58", 8, "H200-SXM-141GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"hgx-h100/north-america on_demand", want{"49.24", "6.155", 8, "H100-SXM-80GB", schema.IntraNVSwitch, schema.InterInfiniBand}},
		{"nvidia-a100/europe on_demand", want{"21.6", "2.7", 8, "A100-SXM-80GB", schema.IntraNVSwitch, schema.InterUnknown}},
		{"nvidia-gh200/north-america on_demand", want{"6.5", "6.5", 1, "GH200-96GB", schema.IntraUnknown, schema.InterUnknown}},
		{"nvidia-rtx-pro-6000-blackwell-server-edition/europe spot", want{"11.01", "1.37625", 8, "RTX-PRO-6000-96GB", schema.IntraPCIe, schema.InterUnknown}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			o, ok := byKey[tt.key]
			if !ok {
				t.Fatalf("no offer %q", tt.key)
			}
			got := want{o.PriceUSDPerHour.String(), o.PriceUSDPerGPUHour.String(), o.GPUCount, o.GPUModel, o.IntraNode, o.InterNode}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, absent := range []string{
		"nvidia-gb300-nvl72/north-america on_demand", // Contact sales
		"nvidia-gb300-nvl72/north-america spot",      // N/A
		"nvidia-b300/europe on_demand",               // Contact sales
		"nvidia-l40/europe spot",                     // N/A
		"nvidia-gh200/north-america spot",            // N/A
	} {
		if _, ok := byKey[absent]; ok {
			t.Errorf("%s is not offered on the page but became an offer", absent)
		}
	}
	for _, o := range offers {
		if strings.Contains(o.GPUNameRaw, "Genoa") || strings.Contains(o.GPUNameRaw, "Ice Lake") {
			t.Errorf("CPU row %q leaked into the GPU offers", o.GPUNameRaw)
		}
		// The inference column (per GPU, NA only) must never be taken for a price: B200's is 8.60,
		// the on-demand per-GPU price too, so compare instance prices.
		if o.OfferID == "nvidia-b200/north-america" && o.PriceUSDPerHour.String() == "8.6" {
			t.Error("B200 took the inference price")
		}
	}
}

func TestParseCoreWeaveTraps(t *testing.T) {
	offers, problems, err := scrapers.ParseCoreWeave(readTestdata(t, "coreweave_pricing_traps.html"), runAug22, scrapers.DefaultCoreWeaveURL)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]schema.Offer{}
	for _, o := range offers {
		byKey[o.OfferID+" "+string(o.PriceType)] = o
	}
	type want struct {
		perHour, perGPU string
		count           uint16
		model           string
		flags           []schema.DQFlag
	}
	tests := []struct {
		name, key string
		want      want
	}{
		{"thousands separator", "nvidia-hgx-b200-bulk/north-america on_demand", want{"1234.56", "154.32", 8, "B200-SXM-180GB", nil}},
		{"count rendered as 4<sup>1</sup>", "nvidia-gb200-nvl72/north-america on_demand", want{"42", "10.5", 4, "GB200-186GB", nil}},
		{"unknown GPU kept and flagged", "nvidia-vr200-nvl144/europe on_demand", want{"99", "24.75", 4, "", []schema.DQFlag{schema.FlagUnknownGPU}}},
		{"H100 row with the odd class", "hgx-h100/europe spot", want{"19.51", "2.43875", 8, "H100-SXM-80GB", nil}},
		{"PCIe card priced on demand (its NA spot is an em dash)", "nvidia-l40s/europe on_demand", want{"18", "2.25", 8, "L40S-48GB", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := byKey[tt.key]
			if !ok {
				t.Fatalf("no offer %q", tt.key)
			}
			got := want{o.PriceUSDPerHour.String(), o.PriceUSDPerGPUHour.String(), o.GPUCount, o.GPUModel, o.DQFlags}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, absent := range []string{
		"nvidia-hgx-b200-bulk/north-america spot", // "Contact sales" inside the value
		"nvidia-l40s/north-america spot",          // "—"
		"nvidia-a100/north-america on_demand",     // malformed price: the row is a problem
	} {
		if _, ok := byKey[absent]; ok {
			t.Errorf("%s became an offer", absent)
		}
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), `"$21.6O" is not a dollar amount`) {
		t.Errorf("problems = %v, want the one malformed A100 price", problems)
	}
}

func TestParseCoreWeaveLayoutChanged(t *testing.T) {
	page := string(readTestdata(t, "coreweave_pricing.html"))
	tests := []struct {
		name string
		body string
		want error
	}{
		{"rows are no longer table-row-v2 listitems", string(readTestdata(t, "coreweave_pricing_changed.html")), scrapers.ErrLayoutChanged},
		{"header renamed", string(readTestdata(t, "coreweave_pricing_renamed.html")), scrapers.ErrLayoutChanged},
		{"GPU anchor renamed", mustReplace(page, ">On-demand GPU instances<", ">GPU instances<"), scrapers.ErrLayoutChanged},
		{"CPU anchor gone", mustReplace(page, ">On-demand CPU instances<", ">CPU instances<"), scrapers.ErrLayoutChanged},
		{"GPU anchor twice", mustReplace(page, ">Storage</h2>", ">On-demand GPU instances</h2>"), scrapers.ErrLayoutChanged},
		{"no region headings", mustReplace(page, "REGION: ", "Region "), scrapers.ErrLayoutChanged},
		{"no header cells", mustReplace(page, "table-header-text", "th"), scrapers.ErrLayoutChanged},
		{"labelled price spans renamed", mustReplace(mustReplace(page, `class="instance-price"`, `class="od"`), `class="spot-price"`, `class="sp"`), scrapers.ErrNoOffers},
		{"labelled spec cells gone", mustReplace(page, "table-meta-value", "meta"), scrapers.ErrNoOffers},
		{"every price N/A", mustReplaceRegexp(page, `<span class="item-value">\$[0-9.,]+</span>`, `<span class="item-value">N/A</span>`), scrapers.ErrNoOffers},
		{"not HTML", "Forbidden", scrapers.ErrLayoutChanged},
		{"empty", "", scrapers.ErrIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			offers, _, err := scrapers.ParseCoreWeave([]byte(tt.body), runAug22, scrapers.DefaultCoreWeaveURL)
			if err == nil {
				t.Fatalf("no error, %d offers", len(offers))
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.CoreWeaveName {
				t.Errorf("error %v is not a coreweave *scrapers.Error", err)
			}
		})
	}
}

func TestCoreWeaveFetchMisbehaving(t *testing.T) {
	good := readTestdata(t, "coreweave_pricing.html")
	for _, mb := range misbehaviours("text/html; charset=utf-8", readTestdata(t, "coreweave_pricing_changed.html")) {
		t.Run(mb.name, func(t *testing.T) {
			var hits atomic.Int32
			var ua atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ua.Store(r.UserAgent())
				mb.serve(w, r, int(hits.Add(1)), good)
			}))
			defer srv.Close()
			cw := scrapers.NewCoreWeave(newTestClient(t, scrapers.ClientConfig{}), scrapers.CoreWeaveConfig{URL: srv.URL + "/pricing", Delay: -1}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cw.Fetch(ctx, runAug22)
			checkFetch(t, scrapers.CoreWeaveName, res, err, mb.wantErr, mb.wantAttempts)
			if mb.wantErr == nil {
				if len(res.Offers) != 32 {
					t.Errorf("%d offers, want 32", len(res.Offers))
				}
				if len(res.Payloads) == 0 || !bytes.Equal(res.Payloads[len(res.Payloads)-1].Body, good) {
					t.Error("the payload is not the page byte for byte")
				}
			}
			if got, _ := ua.Load().(string); !strings.HasPrefix(got, "Mozilla/5.0") {
				t.Errorf("User-Agent %q is not browser-like", got)
			}
		})
	}
}

// TestFetchHangingServer: the run's deadline wins, quickly, whether the server stalls before
// the headers or in the middle of the body.
func TestFetchHangingServer(t *testing.T) {
	// Each reads the request first: the server notices a client hanging up only once a
	// request's body (Verda's token POST) has been read.
	stalls := map[string]func(w http.ResponseWriter, r *http.Request, good []byte){
		"before headers": func(_ http.ResponseWriter, r *http.Request, _ []byte) {
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		},
		"mid body": func(w http.ResponseWriter, r *http.Request, good []byte) {
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = w.Write(good[:len(good)/3])
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		},
	}
	sources := []struct {
		name      string
		fixture   string
		newSource func(c *scrapers.Client, base string) pipeline.Source
	}{
		{scrapers.CoreWeaveName, "coreweave_pricing.html", func(c *scrapers.Client, base string) pipeline.Source {
			return scrapers.NewCoreWeave(c, scrapers.CoreWeaveConfig{URL: base + "/pricing", Delay: -1}, nil)
		}},
		{"lambda page", "lambda_pricing.html", func(c *scrapers.Client, base string) pipeline.Source {
			return scrapers.NewLambda(c, scrapers.LambdaConfig{PageURL: base + "/pricing", Delay: -1}, nil)
		}},
		{"lambda api", "lambda_instance_types.json", func(c *scrapers.Client, base string) pipeline.Source {
			return scrapers.NewLambda(c, scrapers.LambdaConfig{APIKey: "secret-key-123", APIURL: base + "/api/v1/instance-types"}, nil)
		}},
		{"verda page", "verda_pricing.html", func(c *scrapers.Client, base string) pipeline.Source {
			return scrapers.NewVerda(c, scrapers.VerdaConfig{PageURL: base + "/pricing", Delay: -1}, nil)
		}},
		{"verda api", "verda_token.json", func(c *scrapers.Client, base string) pipeline.Source {
			return newVerdaAPISource(c, base)
		}},
		{scrapers.NebiusName, "nebius_prices.html", func(c *scrapers.Client, base string) pipeline.Source {
			return scrapers.NewNebius(c, scrapers.NebiusConfig{URL: base + "/prices", Delay: -1}, nil)
		}},
	}
	for _, s := range sources {
		for stall, serve := range stalls {
			t.Run(s.name+" "+stall, func(t *testing.T) {
				good := readTestdata(t, s.fixture)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r, good) }))
				defer srv.Close()
				src := s.newSource(newTestClient(t, scrapers.ClientConfig{}), srv.URL)
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				start := time.Now()
				res, err := src.Fetch(ctx, runAug22)
				if took := time.Since(start); took > 3*time.Second {
					t.Errorf("Fetch took %v after a 300ms deadline", took)
				}
				t.Logf("Fetch error: %v", err)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Fetch error %v, want the deadline (%d offers)", err, len(res.Offers))
				}
			})
		}
	}
}

func TestCoreWeaveRecordReplay(t *testing.T) {
	good := readTestdata(t, "coreweave_pricing.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeBody(w, "text/html", good) }))
	defer srv.Close()
	dir := t.TempDir()
	cfg := scrapers.CoreWeaveConfig{URL: srv.URL + "/pricing", Delay: -1}
	live, err := scrapers.NewCoreWeave(newTestClient(t, scrapers.ClientConfig{RecordDir: dir}), cfg, nil).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close() // the replay must not need the network
	replayed, err := scrapers.NewCoreWeave(newTestClient(t, scrapers.ClientConfig{ReplayDir: dir}), cfg, nil).Fetch(context.Background(), runAug22)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live.Offers, replayed.Offers); diff != "" {
		t.Errorf("replayed offers differ (-live +replayed):\n%s", diff)
	}
	if !bytes.Equal(replayed.Payloads[0].Body, good) {
		t.Error("replayed payload is not the recorded page byte for byte")
	}
}

func FuzzParseCoreWeave(f *testing.F) {
	for _, name := range []string{"coreweave_pricing.html", "coreweave_pricing_traps.html", "coreweave_pricing_changed.html", "coreweave_pricing_renamed.html"} {
		f.Add(readTestdata(f, name))
	}
	f.Add([]byte(`<h2>On-demand GPU instances</h2><h5>REGION: X</h5><div class="table-header-text">GPU Model GPU Count VRAM On-Demand Price Spot Price</div>` +
		`<div role="listitem" class="table-row-v2 w-dyn-item"><h3 class="table-model-name">NVIDIA HGX H100</h3>` +
		`<div class="table-meta-value">4<sup>1</sup></div><div>GPU Count</div><span class="instance-price"><span class="item-value">$1,234.5</span></span></div><h2>On-demand CPU instances</h2>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		offers, problems, err := scrapers.ParseCoreWeave(body, runAug22, scrapers.DefaultCoreWeaveURL)
		checkParsed(t, scrapers.CoreWeaveName, runAug22, offers, problems, err)
		checkPerGPU(t, offers)
	})
}

func BenchmarkParseCoreWeave(b *testing.B) {
	benchmarkParse(b, scrapers.ParseCoreWeave, "coreweave_pricing.html", runAug22, scrapers.DefaultCoreWeaveURL)
}

func TestCoreWeaveInvalidConfig(t *testing.T) {
	tests := []struct {
		name   string
		client *scrapers.Client
		cfg    scrapers.CoreWeaveConfig
	}{
		{"relative URL", newTestClient(t, scrapers.ClientConfig{}), scrapers.CoreWeaveConfig{URL: "www.coreweave.com/pricing"}},
		{"not http", newTestClient(t, scrapers.ClientConfig{}), scrapers.CoreWeaveConfig{URL: "file:///etc/passwd"}},
		{"no client", nil, scrapers.CoreWeaveConfig{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scrapers.NewCoreWeave(tt.client, tt.cfg, nil).Fetch(context.Background(), runAug22)
			var se *scrapers.Error
			if !errors.As(err, &se) || se.Source != scrapers.CoreWeaveName || len(res.Offers) != 0 {
				t.Errorf("Fetch: %d offers, error %v; want a coreweave *scrapers.Error", len(res.Offers), err)
			}
		})
	}
}
