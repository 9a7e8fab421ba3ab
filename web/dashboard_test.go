package web

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
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

func (m memStore) LatestPlan(context.Context) ([]schema.PlanRow, error) { return nil, nil }

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

// browser is a fresh headless Chromium driven over the DevTools protocol, and what its pages
// said on the console: console calls, uncaught exceptions and the browser's own log entries
// (Content-Security-Policy violations among them).
type browser struct {
	ctx     context.Context
	mu      sync.Mutex
	console []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	chromium := tooltest.Find(t, "chromium", "chromium", "chromium-browser")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-quic", true), chromedp.Flag("hide-scrollbars", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		var line string
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			line = "console." + string(e.Type) + ": " + strings.Join(args, " ")
		case *runtime.EventExceptionThrown:
			line = "exception: " + e.ExceptionDetails.Text
		case *cdplog.EventEntryAdded:
			line = "log " + string(e.Entry.Level) + ": " + e.Entry.Text
		default:
			return
		}
		b.mu.Lock()
		b.console = append(b.console, line)
		b.mu.Unlock()
	}))
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	// The first run starts the browser, which lives as long as ctx: no deadline on it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	b.ctx = ctx
	return b
}

// do runs the steps in the browser's tab, within a minute.
func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// get runs an action that returns a value in the browser's tab, within a minute.
func get[T any](t *testing.T, b *browser, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// said returns what the pages said on the console since the last call.
func (b *browser) said() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.console
	b.console = nil
	return out
}

// chartState is what the dashboard's chart says it holds (static/dashboard.js).
type chartState struct {
	GPU, Range, Series string
	XMin, XMax         float64
	Points             int
	Busy               string
	Search             string // the page's address query
	Legend             string // the legend's text
	Images             int    // img elements in the chart: scraped text must not make any
}

const readChart = `(() => { const c = document.getElementById("chart"); return {
	GPU: c.dataset.gpu || "", Range: c.dataset.range || "", Series: c.dataset.series || "",
	XMin: Number(c.dataset.xMin || 0), XMax: Number(c.dataset.xMax || 0), Points: Number(c.dataset.points || -1),
	Busy: c.getAttribute("aria-busy") || "", Search: location.search,
	Legend: (c.querySelector(".u-legend") || {}).textContent || "", Images: c.querySelectorAll("img").length }; })()`

// chartOf waits until the chart shows gpu over rng and returns what it holds.
func (b *browser) chartOf(t *testing.T, gpu, rng string) chartState {
	t.Helper()
	cond := fmt.Sprintf(`(() => { const c = document.getElementById("chart"); return c && c.dataset.gpu === %q && c.dataset.range === %q && c.getAttribute("aria-busy") === "false"; })()`, gpu, rng)
	get(t, b, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(30*time.Second)))
	return get(t, b, chromedp.Evaluate[chartState](readChart))
}

// layout is how a page fits its window: whether it overflows sideways, and where the market's
// and the Value section's price cells are.
type layout struct {
	InnerWidth, ScrollWidth int
	Prices                  []priceCell
}

type priceCell struct {
	Table, Text    string
	Left, Right    float64
	Width          float64
	Shown, Labeled bool // displayed; labelled in a card (a phone) or by its column head
}

const readLayout = `(() => {
	const cells = [];
	for (const [table, sel] of [["market", "td.on-demand"], ["market", "td.spot"], ["value", "td.price"]]) {
		for (const td of document.querySelectorAll("table[aria-describedby=" + table + "] tbody " + sel)) {
			const r = td.getBoundingClientRect();
			const style = getComputedStyle(td);
			const label = getComputedStyle(td, "::before").content;
			const head = document.querySelector("table[aria-describedby=" + table + "] thead");
			cells.push({Table: table, Text: td.textContent.trim(), Left: r.left, Right: r.right, Width: r.width,
				Shown: style.display !== "none" && style.visibility !== "hidden",
				Labeled: (label !== "none" && label !== "normal" && label.length > 2) || getComputedStyle(head).position !== "absolute"});
		}
	}
	return {InnerWidth: window.innerWidth, ScrollWidth: document.scrollingElement.scrollWidth, Prices: cells};
})()`

// fits checks that the page does not overflow its window sideways and that every price cell of
// the two tables is shown, labelled and whole within the window.
func (b *browser) fits(t *testing.T, width int) {
	t.Helper()
	l := get(t, b, chromedp.Evaluate[layout](readLayout))
	if l.InnerWidth != width || l.ScrollWidth > l.InnerWidth {
		t.Errorf("at %d px: the page is %d px wide in a window of %d: it overflows sideways", width, l.ScrollWidth, l.InnerWidth)
	}
	market := 0
	for _, c := range l.Prices {
		if c.Table == "market" {
			market++
		}
		if !c.Shown || !c.Labeled || c.Width <= 0 || c.Left < 0 || c.Right > float64(l.InnerWidth) {
			t.Errorf("at %d px: a price of the %s table (%q) is not shown whole and labelled within the window: %+v", width, c.Table, c.Text, c)
		}
	}
	if market == 0 {
		t.Errorf("at %d px: no price cells in the market table", width)
	}
}

// screenshot saves the whole page as name in the artifacts folder and checks its width.
func (b *browser) screenshot(t *testing.T, name string, width int) string {
	t.Helper()
	shot := get(t, b, chromedp.FullScreenshot(100))
	path := filepath.Join(artifactsDir(t), name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil || cfg.Width != width {
		t.Errorf("screenshot %s: %+v, %v; want %d px wide", path, cfg, err, width)
	}
	t.Logf("dashboard screenshot: %s", path)
	return path
}

// TestDashboardInChromium opens the dashboard, served by gpucost serve's handler on the
// generated history in ClickHouse, in a real Chromium: the tables it renders, then the chart
// drawn from the API as a GPU model and a range are picked in the selectors, on a desktop and
// on a phone 390 px wide, with screenshots of both.
func TestDashboardInChromium(t *testing.T) {
	fx := storetest.NewHistory(t)
	extra := commitmentOffers(fx)
	// A provider whose name is markup, on the H100 the chart shows first: the legend must show
	// the text, and the browser make nothing of it.
	evil := fx.Offers[len(fx.Offers)-1]
	evil.RunID, evil.Provider, evil.OfferID, evil.GPUModel = "evil", `<img src=x onerror="window.pwned=1">`, "evil-1", "H100-SXM-80GB"
	evil.PriceUSDPerGPUHour, evil.PriceUSDPerHour = decimal.RequireFromString("9.99"), decimal.RequireFromString("9.99")
	extra = append(extra, evil)
	if err := fx.Store.InsertOffers(context.Background(), "extra", extra); err != nil {
		t.Fatal(err)
	}
	log := &requestLog{h: testHandler(t, fx.Store)}
	ts := httptest.NewServer(log)
	defer ts.Close()
	b := newBrowser(t)

	t.Run("the console check sees policy violations", func(t *testing.T) {
		// The dashboard's policy on a page that breaks it: an inline script and an external
		// image must both show up.
		probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", dashboardPolicy)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><html><head><link rel="icon" href="data:,"></head><body><p>probe</p>
<script>console.error("gpucost-probe")</script><img src="http://127.0.0.1:9/x.png" alt=""></body></html>`)
		}))
		defer probe.Close()
		b.do(t, chromedp.Navigate(probe.URL+"/"), chromedp.WaitVisible(chromedp.CSS("p")), chromedp.Sleep(300*time.Millisecond))
		if said := strings.Join(b.said(), "\n"); !strings.Contains(said, "Content Security Policy") || strings.Contains(said, "gpucost-probe") {
			t.Fatalf("the browser said %q on a page that breaks the policy: the console check is blind", said)
		}
	})

	b.do(t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(ts.URL+"/"))
	page := get(t, b, chromedp.OuterHTML(chromedp.CSS("html")))
	// The chart first shows the GPU model with the most offers (the H100: five generated and
	// four added) over the default 30 days, a line per provider and price type.
	first := b.chartOf(t, "H100-SXM-80GB", "30d")
	if first.Series != `<img src=x onerror="window.pwned=1"> on_demand|lambda on_demand|lambda term_3m|runpod on_demand|runpod spot|runpod term_1y|vastai on_demand|verda serverless` ||
		first.XMax-first.XMin != 30*86400 {
		t.Errorf("the first chart: %+v, want the H100's eight series over 30 days", first)
	}
	pwned := get(t, b, chromedp.Evaluate[bool](`window.pwned === 1`))
	if pwned || first.Images != 0 || !strings.Contains(first.Legend, `<img src=x onerror="window.pwned=1"> on_demand`) {
		t.Errorf("a provider named with markup: ran %v, %d images in the chart, legend %q; want its name shown as text", pwned, first.Images, first.Legend)
	}

	// The tables: one row per GPU model, the cheapest on-demand price now in each.
	models := map[string]decimal.Decimal{}
	for _, o := range fx.Offers {
		if !o.ObservedAt.Equal(fx.End.Add(-storetest.HistoryStep)) || o.PriceType != schema.OnDemand {
			continue
		}
		if p, ok := models[o.GPUModel]; !ok || o.PriceUSDPerGPUHour.LessThan(p) {
			models[o.GPUModel] = o.PriceUSDPerGPUHour
		}
	}
	checkMarketTable(t, page, models)

	// Pick the A100 and the last 7 days: the chart holds the A100's two offers, hour by hour,
	// over exactly the week up to now, as computed by hand from the generated offers.
	b.do(t, chromedp.SetValue(chromedp.CSS("#gpu"), "A100-SXM-80GB"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("gpu").dispatchEvent(new Event("change", {bubbles: true})), undefined`),
		chromedp.Click(chromedp.CSS(`label[for="range-7d"]`)))
	week := b.chartOf(t, "A100-SXM-80GB", "7d")
	from, to := time.Unix(int64(week.XMin), 0), time.Unix(int64(week.XMax), 0)
	hand := fx.HandHistory("A100-SXM-80GB", nil, schema.Hour, from, to)
	if week.Series != "lambda on_demand|runpod on_demand" || to.Sub(from) != 7*24*time.Hour || time.Since(to) > time.Minute ||
		week.Points != len(hand) || len(hand) < 2*7*4-2 || week.Search != "?gpu=A100-SXM-80GB&range=7d" {
		t.Errorf("the A100 over 7 days: %+v (%s to %s), want lambda's and runpod's on-demand lines over the week to now, %d hourly points, in the address",
			week, from.UTC(), to.UTC(), len(hand))
	}
	// And 90 days: the same offers over a wider range.
	b.do(t, chromedp.Click(chromedp.CSS(`label[for="range-90d"]`)))
	quarter := b.chartOf(t, "A100-SXM-80GB", "90d")
	if quarter.Series != week.Series || quarter.XMax-quarter.XMin != 90*86400 || quarter.Search != "?gpu=A100-SXM-80GB&range=90d" {
		t.Errorf("the A100 over 90 days: %+v", quarter)
	}
	b.fits(t, 1440)
	b.screenshot(t, "dashboard-desktop.png", 1440)

	// A phone 390 px wide opens the same view from its address: the tables become cards, the
	// prices stay on the screen, nothing overflows sideways.
	b.do(t, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(ts.URL+"/?gpu=A100-SXM-80GB&range=90d"))
	phone := b.chartOf(t, "A100-SXM-80GB", "90d")
	if phone.Series != week.Series || phone.XMax-phone.XMin != 90*86400 {
		t.Errorf("the phone's chart: %+v", phone)
	}
	canvas := get(t, b, chromedp.Evaluate[float64](`document.querySelector("#chart canvas").getBoundingClientRect().right`))
	if canvas > 390 {
		t.Errorf("the chart reaches %.0f px on a 390 px screen", canvas)
	}
	b.fits(t, 390)
	b.screenshot(t, "dashboard-390.png", 390)

	if said := b.said(); len(said) > 0 {
		t.Errorf("the dashboard said on the console:\n%s", strings.Join(said, "\n"))
	}
	// The browser asked for the page, its own files and the API's history: nothing else.
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, p := range log.paths {
		switch p {
		case "GET /", "GET /static/uPlot.iife.min.js", "GET /static/uPlot.min.css", "GET /static/dashboard.css", "GET /static/dashboard.js", "GET /api/v1/history":
		default:
			t.Errorf("the browser requested %s", p)
		}
	}
}

// checkMarketTable checks the market table of a dashboard page: a row per GPU model with its
// cheapest on-demand price (models), and the H100's commitment and serverless prices beside it
// (commitmentOffers), dashes where the other models have none.
func checkMarketTable(t *testing.T, page string, models map[string]decimal.Decimal) {
	t.Helper()
	section := page[strings.Index(page, `<h2 id="market">`):]
	table := section[strings.Index(section, "<tbody>"):strings.Index(section, "</tbody>")]
	rows := regexp.MustCompile(`(?s)<tr><td class="model"><a href="\?gpu=([A-Z0-9-]+)&amp;range=[0-9a-z]+#history">([A-Z0-9-]+)</a></td>.*?</tr>`).FindAllStringSubmatch(table, -1)
	if len(rows) != len(models) || strings.Count(table, "<tr>") != len(models) {
		t.Errorf("the table has %d rows (%d read), want one per GPU model (%d)", strings.Count(table, "<tr>"), len(rows), len(models))
	}
	for _, row := range rows {
		price := regexp.MustCompile(`<td class="num price on-demand" data-label="On-demand \$/GPU-h">\$([0-9.]+)</td>`).FindStringSubmatch(row[0])
		if want, ok := models[row[2]]; !ok || row[1] != row[2] || price == nil || price[1] != want.StringFixed(2) {
			t.Errorf("%s: cheapest on-demand shown as %v, want $%s", row[2], price, want.StringFixed(2))
		}
		commitment := regexp.MustCompile(`<td class="num commitment" data-label="Commitment \$/GPU-h"><span class="price">([^<]*)</span> · ([^<]*)<br><span class="muted">([^<]*)</span></td>`).FindStringSubmatch(row[0])
		serverless := regexp.MustCompile(`<td class="num serverless" data-label="Serverless \$/GPU-h"><span class="price">([^<]*)</span><br><span class="muted">([^<]*)</span></td>`).FindStringSubmatch(row[0])
		switch {
		case row[2] == "H100-SXM-80GB" && (commitment == nil || commitment[1] != "$2.79" || commitment[2] != "3 months" || commitment[3] != "lambda"):
			t.Errorf("H100: commitment %q, want $2.79 · 3 months at lambda", commitment)
		case row[2] == "H100-SXM-80GB" && (serverless == nil || serverless[1] != "$3.10" || serverless[2] != "verda"):
			t.Errorf("H100: serverless %q, want $3.10 at verda", serverless)
		case row[2] != "H100-SXM-80GB" && (commitment != nil || serverless != nil || strings.Count(row[0], `<td class="num muted" data-label=`) < 2):
			t.Errorf("%s has a commitment %q or serverless price %q, or lacks the dashes that say it has none", row[2], commitment, serverless)
		}
	}
	// The Value section, worked out by hand from the generated market now (its last step):
	// the cheapest on-demand price over the catalog's dense rate, cheapest BF16 first.
	value := page[strings.Index(page, `<h2 id="value">`):]
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
	h := testAnalytics(func(context.Context) (Reader, error) {
		return memStore{fx: fx, extra: []schema.Offer{evil, evilTerm}}, nil
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	for _, bad := range []string{`<script>alert("p")`, "<img", "onerror=alert(1)>", "<b onmouseover"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
	if scripts := regexp.MustCompile(`<script[^>]*>`).FindAllString(body, -1); !slices.Equal(scripts, []string{`<script src="static/uPlot.iife.min.js">`, `<script src="static/dashboard.js">`}) {
		t.Errorf("the page's scripts are %q, want the chart library's and the dashboard's own", scripts)
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

// TestDashboardSelectionWithoutJavaScript: the chart's choice is in the address and the page
// rendered for it, so a link opens the same view and the form works without JavaScript: the
// model and range asked for are selected, the JSON of the chart linked; a choice that cannot be
// shown is said, and the default shown.
func TestDashboardSelectionWithoutJavaScript(t *testing.T) {
	fx := storetest.GenHistory(time.Now())
	h := testAnalytics(func(context.Context) (Reader, error) { return memStore{fx: fx}, nil })
	page := func(query string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+query, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d", query, rec.Code)
		}
		return rec.Body.String()
	}
	selected := func(body string) (gpu, rng string, models []string) {
		for _, m := range regexp.MustCompile(`<option value="([^"]+)"( selected)?>`).FindAllStringSubmatch(body, -1) {
			models = append(models, m[1])
			if m[2] != "" {
				gpu = m[1]
			}
		}
		if m := regexp.MustCompile(`<input type="radio" id="range-[^"]+" name="range" value="([^"]+)"[^>]* checked>`).FindStringSubmatch(body); m != nil {
			rng = m[1]
		}
		return gpu, rng, models
	}
	for _, tt := range []struct {
		query, gpu, rng, notice, link string
	}{
		{"", "H100-SXM-80GB", "30d", "", "api/v1/history?gpu=H100-SXM-80GB&amp;since=30d&amp;interval=day"},
		{"?gpu=a100-sxm-80gb&range=7d", "A100-SXM-80GB", "7d", "", "api/v1/history?gpu=A100-SXM-80GB&amp;since=7d&amp;interval=hour"},
		{"?gpu=RTX-4090-24GB&range=1y", "RTX-4090-24GB", "1y", "", "api/v1/history?gpu=RTX-4090-24GB&amp;since=365d&amp;interval=day"},
		// A catalog model with no offer now still has a history to show.
		{"?gpu=V100-SXM2-32GB&range=90d", "V100-SXM2-32GB", "90d", "", "api/v1/history?gpu=V100-SXM2-32GB&amp;since=90d&amp;interval=day"},
		{"?gpu=" + url.QueryEscape(`<script>alert(1)</script>`) + "&range=2y", "H100-SXM-80GB", "30d",
			`Not shown: unknown GPU model &#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;`, "api/v1/history?gpu=H100-SXM-80GB&amp;since=30d"},
	} {
		body := page(tt.query)
		gpu, rng, models := selected(body)
		if gpu != tt.gpu || rng != tt.rng {
			t.Errorf("%q: %s over %s selected, want %s over %s", tt.query, gpu, rng, tt.gpu, tt.rng)
		}
		want := []string{"A100-SXM-80GB", "H100-SXM-80GB", "RTX-4090-24GB"} // every model of the market
		if tt.gpu == "V100-SXM2-32GB" {
			want = []string{"A100-SXM-80GB", "H100-SXM-80GB", "RTX-4090-24GB", "V100-SXM2-32GB"}
		}
		if !slices.Equal(models, want) {
			t.Errorf("%q: the selector offers %v, want %v", tt.query, models, want)
		}
		if !strings.Contains(body, tt.link) {
			t.Errorf("%q: the page does not link %s", tt.query, tt.link)
		}
		notice := regexp.MustCompile(`<p class="notice" role="status">([^<]*)</p>`).FindStringSubmatch(body)
		if (tt.notice == "") != (notice == nil) || (notice != nil && !strings.HasPrefix(notice[1], tt.notice)) {
			t.Errorf("%q: notice %q, want %q", tt.query, notice, tt.notice)
		}
		if tt.notice != "" && !strings.Contains(notice[1], `unknown range &#34;2y&#34; (want 7d, 30d, 90d or 1y).`) {
			t.Errorf("%q: the notice does not name the unknown range: %q", tt.query, notice[1])
		}
	}
}
