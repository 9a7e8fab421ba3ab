package web

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

// dashboardMarketAge is what "now" means for the dashboard's tables: offers seen in the last day
// (or valid until later).
const dashboardMarketAge = 24 * time.Hour

// dashboardPolicy lets the page load its own scripts, styles and data (the API) and nothing
// else: no inline script or style, no other origin.
const dashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// chartRange is a range the chart offers: how far back it reaches, and the buckets it is drawn
// in (hours for a week, days beyond).
type chartRange struct {
	Name     string // as the form and the address give it: 7d
	Since    string // the history's since: 7d, 365d
	Interval schema.Interval
	Label    string // the last 7 days
}

// chartRanges are the chart's ranges; the second is the default.
var chartRanges = []chartRange{
	{"7d", "7d", schema.Hour, "the last 7 days"},
	{"30d", "30d", schema.Day, "the last 30 days"},
	{"90d", "90d", schema.Day, "the last 90 days"},
	{"1y", "365d", schema.Day, "the last year"},
}

// dashboardData is what the dashboard reads of the store, at most once per refresh.
type dashboardData struct {
	Rows []market.GPU // the cheapest offers of every GPU model now
	// Values are the value figures of Rows at their cheapest on-demand prices, ranked at
	// dashboardValue's precision.
	Values []market.Value
}

// dashboardPage is the page as one request sees it: the data and the chart's selection.
type dashboardPage struct {
	dashboardData
	Now       time.Time
	MarketAge string
	Models    []string // the selector's GPU models: every one in the market, by name
	GPU       string   // the chart's GPU model
	Range     chartRange
	Ranges    []chartRange
	Notice    string // why the selection asked for is not the one shown
	Error     string
}

// dashboardValue is what the Value section ranks by: $ per dense BF16 TFLOP-hour (FP16 where a
// GPU has no BF16) at the cheapest on-demand price, the figure training and serving in 16 bits
// pay.
var dashboardValue = market.ValueQuery{Basis: market.Basis(schema.OnDemand), Precision: gpus.BF16}

// dashboard serves the page at /: a chart of the price history of one GPU model over a range
// (chosen in the page, given in the address as ?gpu=MODEL&range=30d so a view can be linked),
// the cheapest offer per GPU model now (on-demand, spot, the cheapest commitment and
// serverless), and what a dollar buys on each at its on-demand price (market.Values, from the
// same read). The tables are rendered here; the chart is drawn in the browser, by
// static/dashboard.js, from /api/v1/history. The tables' data changes hourly, so it is read
// once per Config.DashboardRefresh however many clients load the page (see analytics.page);
// each request only renders it with its selection. When a read fails, the last data is shown
// with a notice saying how old it is; with none yet, the answer is an error page with a 503
// (504 for a slow store).
func (a *analytics) dashboard(w http.ResponseWriter, r *http.Request) {
	data, at, have, err := a.page.get(r.Context())
	page := dashboardPage{dashboardData: data, Now: a.now().UTC(), MarketAge: "24 hours", Ranges: chartRanges}
	status := http.StatusOK
	if err != nil {
		if have {
			page.Error = "The price store did not answer the last refresh: these prices are from " + at.UTC().Format("2006-01-02 15:04") + " UTC. /healthz says more."
		} else {
			page.Error = "The price store is unavailable, so there is nothing to show. /healthz says more."
			status, _, _ = storeErrorStatus(err)
		}
	}
	page.choose(r.URL.Query())
	var buf bytes.Buffer
	if err := dashboardTemplate.Execute(&buf, page); err != nil {
		a.logger.Error("Rendering the dashboard failed", "err", err)
		http.Error(w, "rendering the dashboard failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// choose sets the chart's GPU model and range from the address: gpu, any catalog name of a
// model (the one with the most offers now when none is given), and range, one of chartRanges
// (30d when none is given). What cannot be shown is said in Notice and the default shown.
func (p *dashboardPage) choose(q map[string][]string) {
	get := func(name string) string {
		if v := q[name]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	busiest := 0
	for _, row := range p.Rows {
		p.Models = append(p.Models, row.GPUModel)
		if row.Offers > busiest {
			p.GPU, busiest = row.GPUModel, row.Offers
		}
	}
	sort.Strings(p.Models)
	var notices []string
	if name := get("gpu"); name != "" {
		if model, err := selection.GPU(name); err != nil {
			notices = append(notices, err.Error()+".")
		} else {
			p.GPU = model
		}
	}
	if p.GPU == "" {
		p.GPU = "H100-SXM-80GB" // an empty market: the chart still has a model to ask about
	}
	if !slices.Contains(p.Models, p.GPU) {
		p.Models = append(p.Models, p.GPU)
		sort.Strings(p.Models)
	}
	p.Range = chartRanges[1]
	if name := get("range"); name != "" {
		i := slices.IndexFunc(chartRanges, func(c chartRange) bool { return c.Name == name })
		if i < 0 {
			notices = append(notices, "unknown range "+selection.Quote(name)+" (want 7d, 30d, 90d or 1y).")
		} else {
			p.Range = chartRanges[i]
		}
	}
	if len(notices) > 0 {
		p.Notice = "Not shown: " + strings.Join(notices, " ") + " Showing " + p.GPU + " over " + p.Range.Label + "."
	}
}

// readDashboard reads the dashboard's tables from the store (the refresher's load).
func (a *analytics) readDashboard(ctx context.Context) (dashboardData, error) {
	var d dashboardData
	if err := a.query(ctx, func(ctx context.Context, st Reader) (err error) {
		d.Rows, err = st.LatestPerGPU(ctx, schema.OfferFilter{MaxAge: dashboardMarketAge})
		return err
	}); err != nil {
		a.logger.Error("Dashboard refresh failed", "err", err)
		return dashboardData{}, err
	}
	d.Values = market.Values(d.Rows, dashboardValue)
	return d, nil
}

// templates holds the dashboard's page; static its scripts, styles and the chart library:
// uPlot's dist files (uPlot.iife.min.js, uPlot.min.css) and its licence (uPlot.LICENSE), as
// npm serves them, at the version the script's first line names. To update it:
// `npm pack uplot@VERSION`, then copy package/dist/uPlot.iife.min.js, package/dist/uPlot.min.css
// and package/LICENSE (as uPlot.LICENSE) into web/static/ and run the dashboard's browser test.
//
//go:embed templates/dashboard.html
var templates embed.FS

//go:embed static
var static embed.FS

// staticFiles serves web/static under /static/, cacheable for an hour.
var staticFiles = func() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, err := fs.Stat(sub, strings.TrimPrefix(r.URL.Path, "/static/")); err != nil || st.IsDir() {
			writeError(w, http.StatusNotFound, apiError{Error: "no such path: " + selection.Quote(r.URL.Path)})
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}()

var dashboardTemplate = template.Must(template.New("dashboard.html").Funcs(template.FuncMap{
	"price": func(o *schema.Offer) string { return money.Price(o.PriceUSDPerGPUHour) },
	"money": money.Price,
	"unit":  money.Unit,
	"upper": func(p gpus.Precision) string { return strings.ToUpper(string(p)) },
	"ago": func(now, t time.Time) string {
		d := now.Sub(t).Round(time.Minute)
		switch {
		case d < time.Minute:
			return "just now"
		case d < time.Hour:
			return d.String()[:len(d.String())-2] + " ago"
		default:
			return t.UTC().Format("Jan 2 15:04") + " UTC"
		}
	},
	"vram": formatGB,
}).ParseFS(templates, "templates/dashboard.html"))

// formatGB writes a VRAM size without a needless decimal.
func formatGB(gb float64) string {
	return strconv.FormatFloat(gb, 'f', -1, 64) + " GB"
}
