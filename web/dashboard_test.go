package web

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
	"github.com/gpucost/gpucost/tooltest"
)

// memStore answers the dashboard's queries from a generated history in memory, for tests that
// run without ClickHouse.
type memStore struct {
	fx    *storetest.History
	extra []schema.Offer
}

func (m memStore) LatestOffers(_ context.Context, f schema.OfferFilter) ([]schema.Offer, error) {
	latest := map[schema.Key]schema.Offer{}
	for _, o := range append(append([]schema.Offer{}, m.fx.Offers...), m.extra...) {
		if l, ok := latest[o.Key()]; !ok || o.ObservedAt.After(l.ObservedAt) {
			latest[o.Key()] = o
		}
	}
	var out []schema.Offer
	for _, o := range latest {
		if f.MaxAge == 0 || time.Since(o.ObservedAt) <= f.MaxAge {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].PriceUSDPerGPUHour.Equal(out[j].PriceUSDPerGPUHour) {
			return out[i].PriceUSDPerGPUHour.LessThan(out[j].PriceUSDPerGPUHour)
		}
		return out[i].Provider+out[i].OfferID < out[j].Provider+out[j].OfferID
	})
	return out, nil
}

func (m memStore) LatestPerGPU(ctx context.Context, f schema.OfferFilter) ([]market.GPU, error) {
	offers, err := m.LatestOffers(ctx, f)
	return market.PerGPU(offers), err
}

func (m memStore) History(_ context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error) {
	var out []schema.HistoryPoint
	for _, h := range m.fx.HandHistory(q.Model(), q.Providers, q.Interval, q.From, q.To) {
		out = append(out, h.HistoryPoint)
	}
	return out, nil
}

func (m memStore) Changes(context.Context, schema.ChangesQuery) ([]schema.PriceChange, error) {
	return nil, nil
}

// requestLog records the paths a handler served.
type requestLog struct {
	h     http.Handler
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.paths = append(l.paths, r.Method+" "+r.URL.Path)
	l.mu.Unlock()
	l.h.ServeHTTP(w, r)
}

// consoleLine is how Chromium logs a page's console messages (errors, warnings, CSP violations)
// to stderr with --enable-logging=stderr --v=0.
var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// runChromium loads url in a fresh headless Chromium with the extra flags and returns its
// stdout and the console lines it logged.
func runChromium(t *testing.T, chromium, url string, extra ...string) (stdout string, console []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--hide-scrollbars"}, extra...)
	cmd := exec.CommandContext(ctx, chromium, append(args, url)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, errOut.String())
	}
	return out.String(), consoleLine.FindAllString(errOut.String(), -1)
}

func TestDashboardInChromium(t *testing.T) {
	chromium := tooltest.Find(t, "chromium", "chromium", "chromium-browser")
	var h http.Handler
	var fx *storetest.History
	var extra []schema.Offer
	if os.Getenv("GPUCOST_INTEGRATION") == "1" {
		// The real thing: gpucost serve's handler on the generated history in ClickHouse.
		fx = storetest.NewHistory(t)
		extra = commitmentOffers(fx)
		if err := fx.Store.InsertOffers(context.Background(), extra[0].RunID, extra); err != nil {
			t.Fatal(err)
		}
		h = testHandler(t, fx)
	} else {
		fx = storetest.GenHistory(time.Now())
		extra = commitmentOffers(fx)
		h = testAnalytics(func(context.Context) (Prices, error) { return memStore{fx: fx, extra: extra}, nil })
	}
	log := &requestLog{h: h}
	ts := httptest.NewServer(log)
	defer ts.Close()

	t.Run("the console check sees policy violations", func(t *testing.T) {
		// The same policy as the dashboard on a page that breaks it: an inline script and an
		// external image must both show up as console errors.
		probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", dashboardPolicy)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><html><head><link rel="icon" href="data:,"></head><body><p>probe</p>
<script>console.error("gpucost-probe")</script><img src="http://127.0.0.1:9/x.png" alt=""></body></html>`)
		}))
		defer probe.Close()
		_, console := runChromium(t, chromium, probe.URL+"/", "--dump-dom")
		if len(console) == 0 || !strings.Contains(strings.Join(console, "\n"), "Content Security Policy") {
			t.Fatalf("chromium logged %q for a page that breaks the policy: the console check is blind", console)
		}
	})

	dom, console := runChromium(t, chromium, ts.URL+"/", "--dump-dom")
	if len(console) > 0 {
		t.Errorf("the dashboard logged console messages:\n%s", strings.Join(console, "\n"))
	}
	// The table: one row per GPU model, with the cheapest on-demand price now.
	models := map[string]decimal.Decimal{}
	for _, o := range fx.Offers {
		if !o.ObservedAt.Equal(fx.End.Add(-storetest.HistoryStep)) || o.PriceType != schema.OnDemand {
			continue
		}
		if p, ok := models[o.GPUModel]; !ok || o.PriceUSDPerGPUHour.LessThan(p) {
			models[o.GPUModel] = o.PriceUSDPerGPUHour
		}
	}
	table := dom[strings.Index(dom, "<tbody>"):strings.Index(dom, "</tbody>")]
	if n := strings.Count(table, "<tr>"); n != len(models) {
		t.Errorf("the table has %d rows, want one per GPU model (%d)", n, len(models))
	}
	for model, price := range models {
		row := regexp.MustCompile(`<tr><td>` + regexp.QuoteMeta(model) + `</td>.*?<td class="num price">\$([0-9.]+)</td>`).FindStringSubmatch(table)
		if row == nil || row[1] != price.StringFixed(2) {
			t.Errorf("%s: cheapest on-demand shown as %v, want $%s", model, row, price.StringFixed(2))
		}
	}
	// Beside on-demand and spot: the H100's cheapest commitment (lambda's 3 months under runpod's
	// year) and its serverless price; the other models have neither.
	rows := regexp.MustCompile(`(?s)<tr><td>([A-Z0-9-]+)</td>.*?</tr>`).FindAllStringSubmatch(table, -1)
	for _, row := range rows {
		commitment := regexp.MustCompile(`<td class="num commitment"><span class="price">([^<]*)</span> · ([^<]*)<br><span class="muted">([^<]*)</span></td>`).FindStringSubmatch(row[0])
		serverless := regexp.MustCompile(`<td class="num serverless"><span class="price">([^<]*)</span><br><span class="muted">([^<]*)</span></td>`).FindStringSubmatch(row[0])
		switch {
		case row[1] == "H100-SXM-80GB" && (commitment == nil || commitment[1] != "$2.79" || commitment[2] != "3 months" || commitment[3] != "lambda"):
			t.Errorf("H100: commitment %q, want $2.79 · 3 months at lambda", commitment)
		case row[1] == "H100-SXM-80GB" && (serverless == nil || serverless[1] != "$3.10" || serverless[2] != "verda"):
			t.Errorf("H100: serverless %q, want $3.10 at verda", serverless)
		case row[1] != "H100-SXM-80GB" && (commitment != nil || serverless != nil || strings.Count(row[0], `<td class="num muted">–</td>`) < 2):
			t.Errorf("%s has a commitment %q or serverless price %q, or lacks the dashes that say it has none", row[1], commitment, serverless)
		}
	}
	if len(rows) != len(models) {
		t.Errorf("%d rows read, want %d", len(rows), len(models))
	}
	// The Value section, worked out by hand from the generated market now (its last step):
	// the cheapest on-demand price over the catalog's dense rate, cheapest BF16 first.
	value := dom[strings.Index(dom, `<h2 id="value">`):]
	value = value[strings.Index(value, "<tbody>"):strings.Index(value, "</tbody>")]
	var ranked []string
	for _, row := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(value, -1) {
		var cells []string
		for _, c := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, regexp.MustCompile(`<[^>]+>`).ReplaceAllString(c[1], ""))
		}
		ranked = append(ranked, strings.Join(cells, " | "))
	}
	want := []string{
		"H100-SXM-80GB | $1.95 | vastai | $0.00197 | $0.000985 | – | $0.582", // 1.95 / 989, / 1979, / 3.35 TB/s
		"RTX-4090-24GB | $0.35 | vastai | $0.00212 | $0.00106 | – | $0.347",  // 0.35 / 165.2, / 330, / 1.008
		"A100-SXM-80GB | $1.29 | lambda | $0.00413 | – | – | $0.633",         // 1.29 / 312, no FP8, / 2.039
	}
	if diff := cmp.Diff(want, ranked); diff != "" {
		t.Errorf("the Value section (-hand +page):\n%s", diff)
	}
	// A chart per GPU model, with a line per provider and price type.
	if n := strings.Count(dom, `<svg class="chart"`); n != len(models) {
		t.Errorf("the page has %d charts, want %d", n, len(models))
	}
	for _, want := range []string{"<figcaption>H100-SXM-80GB</figcaption>", "lambda on_demand", "runpod spot", "vastai on_demand"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	shot := filepath.Join(artifactsDir(t), "dashboard.png")
	_, console = runChromium(t, chromium, ts.URL+"/", "--screenshot="+shot, "--window-size=1440,1800")
	if len(console) > 0 {
		t.Errorf("the dashboard logged console messages while taking the screenshot:\n%s", strings.Join(console, "\n"))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 1440 {
		t.Errorf("screenshot %s: %+v, %v", shot, cfg, err)
	}
	t.Logf("dashboard screenshot: %s", shot)

	// Nothing but the page itself was requested: no scripts, styles, fonts, images or favicon.
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, p := range log.paths {
		if p != "GET /" {
			t.Errorf("the browser requested %s", p)
		}
	}
}

// commitmentOffers are prices of the H100 beside the generated history's on-demand and spot
// ones, observed at its last step: two commitments, the cheaper a 3-month term, and a
// serverless price.
func commitmentOffers(fx *storetest.History) []schema.Offer {
	last := fx.Offers[len(fx.Offers)-1]
	offer := func(provider, id string, pt schema.PriceType, price string) schema.Offer {
		o := last
		o.RunID, o.Provider, o.OfferID, o.GPUModel, o.GPUCount, o.VRAMGB, o.PriceType = "commitments", provider, id, "H100-SXM-80GB", 8, 80, pt
		o.PriceUSDPerGPUHour = decimal.RequireFromString(price)
		o.PriceUSDPerHour = o.PriceUSDPerGPUHour.Mul(decimal.NewFromInt(8))
		return o
	}
	return []schema.Offer{
		offer("lambda", "1-Click Cluster 16x H100 (3 months)", schema.Term3M, "2.79"),
		offer("runpod", "NVIDIA H100 80GB HBM3/secure", schema.Term1Y, "2.99"),
		offer("verda", "serverless/H100", schema.Serverless, "3.10"),
	}
}

// artifactsDir is where tests leave files for people to look at: $GPUCOST_ARTIFACTS, else out/
// at the top of the repository (ignored by git).
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GPUCOST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func TestDashboardEscapesStoredText(t *testing.T) {
	fx := storetest.GenHistory(time.Now())
	evil := fx.Offers[len(fx.Offers)-1]
	evil.Provider, evil.OfferID, evil.Region = `<script>alert("p")</script>`, "x", `"><img src=x onerror=alert(1)>`
	evil.PriceUSDPerGPUHour = decimal.RequireFromString("0.01")
	evilTerm := evil
	evilTerm.PriceType, evilTerm.Provider = schema.Term6M, `<b onmouseover=alert(2)>term</b>`
	h := testAnalytics(func(context.Context) (Prices, error) {
		return memStore{fx: fx, extra: []schema.Offer{evil, evilTerm}}, nil
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	for _, bad := range []string{"<script", "<img", "onerror=alert(1)>", "<b onmouseover"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	// The cheapest offer shows in the market table and, its GPU being in the catalog, in the
	// Value section; the commitment in its cell with its term.
	table, value, _ := strings.Cut(body, `<h2 id="value">`)
	if !strings.Contains(table, "&lt;script&gt;") || !strings.Contains(value[:strings.Index(value, "</section>")], "&lt;script&gt;") {
		t.Errorf("the provider name is not shown escaped in the market table and the Value section")
	}
	if !strings.Contains(table, `· 6 months<br><span class="muted">&lt;b onmouseover=alert(2)&gt;term&lt;/b&gt;</span>`) {
		t.Errorf("the commitment's provider is not shown escaped beside its term")
	}
	if got := rec.Header().Get("Content-Security-Policy"); got != dashboardPolicy {
		t.Errorf("Content-Security-Policy %q", got)
	}
}
