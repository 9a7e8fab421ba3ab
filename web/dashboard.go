package web

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpucost/gpucost/chart"
	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
)

// Dashboard bounds: what "now" means for the market table, how far back the charts go, and how
// many GPU models get a chart (those with the most offers).
const (
	dashboardMarketAge = 24 * time.Hour
	dashboardDays      = 30
	dashboardCharts    = 12
)

// dashboardPolicy forbids everything but the page's own inline styles and data: URIs: no
// scripts, no external fonts, styles or images.
const dashboardPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// chartBlock is one GPU model's history chart.
type chartBlock struct {
	GPUModel string
	SVG      template.HTML // rendered by chart.InlineSVG, which escapes its text
	Empty    bool
}

type dashboardPage struct {
	Now       time.Time
	MarketAge string
	Days      int
	Rows      []market.GPU
	// Values are the value figures of Rows at their cheapest on-demand prices, ranked at
	// dashboardValue's precision.
	Values     []market.Value
	Charts     []chartBlock
	MoreModels int
	Error      string
}

// dashboardValue is what the Value section ranks by: $ per dense BF16 TFLOP-hour (FP16 where a
// GPU has no BF16) at the cheapest on-demand price, the figure training and serving in 16 bits
// pay.
var dashboardValue = market.ValueQuery{Basis: market.Basis(schema.OnDemand), Precision: gpus.BF16}

// dashboardView is the dashboard as last built: its data and the page rendered from it.
type dashboardView struct {
	page dashboardPage
	html []byte
}

// dashboard serves the page at /: the cheapest offer per GPU model now (on-demand, spot, the
// cheapest commitment and serverless), what a dollar buys on each at its on-demand price
// (market.Values, from the same read), and the last month's daily history of each model across
// providers. It is rendered on the server, with inline SVG charts and no scripts. Its data
// changes hourly, so every request is served the page last built (see analytics.page): however
// many clients load it, the store sees one rebuild per Config.DashboardRefresh. When a rebuild
// fails, the last page is served with a notice saying how old it is; with no page yet, the
// answer is an error page with a 503 (504 for a slow store).
func (a *analytics) dashboard(w http.ResponseWriter, r *http.Request) {
	view, at, have, err := a.page.get(r.Context())
	status, body := http.StatusOK, view.html
	if err != nil {
		page := view.page
		if have {
			page.Error = "The price store did not answer the last refresh: these prices are from " + at.UTC().Format("2006-01-02 15:04") + " UTC. /healthz says more."
		} else {
			page = dashboardPage{Now: a.now().UTC(), MarketAge: "24 hours", Days: dashboardDays,
				Error: "The price store is unavailable, so there is nothing to show. /healthz says more."}
			status, _, _ = storeErrorStatus(err)
		}
		if body, err = renderDashboard(page); err != nil {
			a.logger.Error("Rendering the dashboard failed", "err", err)
			http.Error(w, "rendering the dashboard failed", http.StatusInternalServerError)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", dashboardPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// buildDashboard reads the dashboard's data from the store and renders the page (the
// refresher's load).
func (a *analytics) buildDashboard(ctx context.Context) (dashboardView, error) {
	now := a.now().UTC()
	page := dashboardPage{Now: now, MarketAge: "24 hours", Days: dashboardDays}
	if err := a.fillDashboard(ctx, now, &page); err != nil {
		a.logger.Error("Dashboard refresh failed", "err", err)
		return dashboardView{}, err
	}
	html, err := renderDashboard(page)
	if err != nil {
		return dashboardView{}, err
	}
	return dashboardView{page: page, html: html}, nil
}

func renderDashboard(page dashboardPage) ([]byte, error) {
	var buf bytes.Buffer
	if err := dashboardTemplate.Execute(&buf, page); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (a *analytics) fillDashboard(ctx context.Context, now time.Time, page *dashboardPage) error {
	if err := a.query(ctx, func(ctx context.Context, st Prices) (err error) {
		page.Rows, err = st.LatestPerGPU(ctx, schema.OfferFilter{MaxAge: dashboardMarketAge})
		return err
	}); err != nil {
		return err
	}
	page.Values = market.Values(page.Rows, dashboardValue)
	models := make([]market.GPU, len(page.Rows))
	copy(models, page.Rows)
	sort.SliceStable(models, func(i, j int) bool { return models[i].Offers > models[j].Offers })
	if len(models) > dashboardCharts {
		page.MoreModels = len(models) - dashboardCharts
		models = models[:dashboardCharts]
	}
	sort.Slice(models, func(i, j int) bool { return models[i].GPUModel < models[j].GPUModel })
	page.Charts = make([]chartBlock, len(models))
	to := schema.Day.Truncate(now).AddDate(0, 0, 1)
	from := to.AddDate(0, 0, -dashboardDays)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, m := range models {
		g.Go(func() error {
			q := schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{m.GPUModel}}, From: from, To: to, Interval: schema.Day}
			var points []schema.HistoryPoint
			if err := a.query(gctx, func(ctx context.Context, st Prices) (err error) {
				points, err = st.History(ctx, q)
				return err
			}); err != nil {
				return err
			}
			svg, err := chart.InlineSVG(chart.FromHistory("cheapest $/GPU-hour per day, by provider and price type", q, points), "chart")
			if err != nil {
				return err
			}
			mu.Lock()
			page.Charts[i] = chartBlock{GPUModel: m.GPUModel, SVG: template.HTML(svg), Empty: len(points) == 0}
			mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// templates holds the dashboard's page.
//
//go:embed templates/dashboard.html
var templates embed.FS

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
