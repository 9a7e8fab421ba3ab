package main

import (
	"bytes"
	"context"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpucost/gpucost/chart"
	"github.com/gpucost/gpucost/gpus"
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

// marketRow is one GPU model in the dashboard's table.
type marketRow struct {
	GPUModel  string
	VRAMGB    float64
	OnDemand  *schema.Offer // cheapest on-demand offer now
	Spot      *schema.Offer // cheapest spot offer now
	Offers    int
	Providers int
	SeenAt    time.Time // newest observation of the model
}

// chartBlock is one GPU model's history chart.
type chartBlock struct {
	GPUModel string
	SVG      template.HTML // rendered by chart.InlineSVG, which escapes its text
	Empty    bool
}

type dashboardPage struct {
	Now        time.Time
	MarketAge  string
	Days       int
	Rows       []marketRow
	Charts     []chartBlock
	MoreModels int
	Error      string
}

// dashboardView is the dashboard as last built: its data and the page rendered from it.
type dashboardView struct {
	page dashboardPage
	html []byte
}

// dashboard serves the page at /: the cheapest offer per GPU model now, and the last month's
// daily history of each model across providers. It is rendered on the server, with inline SVG
// charts and no scripts. Its data changes hourly, so every request is served the page last
// built (see analytics.page): however many clients load it, the store sees one rebuild per
// serve.dashboard_refresh. When a rebuild fails, the last page is served with a notice saying
// how old it is; with no page yet, the answer is an error page with a 503 (504 for a slow store).
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
	var offers []schema.Offer
	if err := a.query(ctx, func(ctx context.Context, st analyticsStore) (err error) {
		offers, err = st.LatestOffers(ctx, schema.OfferFilter{MaxAge: dashboardMarketAge})
		return err
	}); err != nil {
		return err
	}
	page.Rows = marketRows(offers)
	models := make([]marketRow, len(page.Rows))
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
			if err := a.query(gctx, func(ctx context.Context, st analyticsStore) (err error) {
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

// marketRows picks, per GPU model, the cheapest on-demand and spot offers among offers (which
// come cheapest first), in model order. Offers of unknown GPUs are left out.
func marketRows(offers []schema.Offer) []marketRow {
	byModel := map[string]*marketRow{}
	providers := map[string]map[string]bool{}
	for i := range offers {
		o := &offers[i]
		if o.GPUModel == "" {
			continue
		}
		row := byModel[o.GPUModel]
		if row == nil {
			row = &marketRow{GPUModel: o.GPUModel, VRAMGB: o.VRAMGB}
			if m, ok := gpus.Lookup(o.GPUModel); ok {
				row.VRAMGB = m.VRAMGB
			}
			byModel[o.GPUModel] = row
			providers[o.GPUModel] = map[string]bool{}
		}
		row.Offers++
		providers[o.GPUModel][o.Provider] = true
		if o.ObservedAt.After(row.SeenAt) {
			row.SeenAt = o.ObservedAt
		}
		switch {
		case o.PriceType == schema.OnDemand && (row.OnDemand == nil || o.PriceUSDPerGPUHour.LessThan(row.OnDemand.PriceUSDPerGPUHour)):
			row.OnDemand = o
		case o.PriceType == schema.Spot && (row.Spot == nil || o.PriceUSDPerGPUHour.LessThan(row.Spot.PriceUSDPerGPUHour)):
			row.Spot = o
		}
	}
	out := make([]marketRow, 0, len(byModel))
	for model, row := range byModel {
		row.Providers = len(providers[model])
		out = append(out, *row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GPUModel < out[j].GPUModel })
	return out
}

var dashboardTemplate = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"price": func(o *schema.Offer) string { return "$" + o.PriceUSDPerGPUHour.StringFixed(2) },
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
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>gpucost: GPU prices</title>
<style>
  :root { color-scheme: light; }
  body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", Arial, sans-serif;
         margin: 0; color: #1d2327; background: #f6f7f9; }
  header { background: #14213d; color: #fff; padding: 14px 28px; }
  header h1 { margin: 0; font-size: 21px; font-weight: 600; }
  header p { margin: 2px 0 0; color: #c9d1e3; font-size: 13px; }
  main { padding: 18px 28px 36px; max-width: 1500px; margin: 0 auto; }
  h2 { font-size: 17px; margin: 22px 0 10px; }
  table { border-collapse: collapse; width: 100%; background: #fff; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
  th, td { padding: 7px 10px; text-align: left; border-bottom: 1px solid #e3e6ea; white-space: nowrap; }
  th { background: #eef1f5; font-weight: 600; font-size: 13px; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  td.price { font-weight: 600; }
  .muted { color: #6b7480; }
  .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
  figure { margin: 0; background: #fff; padding: 10px 12px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
  figcaption { font-weight: 600; margin-bottom: 4px; }
  svg.chart { width: 100%; height: auto; display: block; }
  .error { background: #fdecea; color: #8a1c14; padding: 10px 14px; border-left: 4px solid #c0392b; }
  footer { color: #6b7480; font-size: 13px; margin-top: 28px; }
  a { color: #1f5fbf; }
</style>
</head>
<body>
<header>
  <h1>gpucost: GPU prices</h1>
  <p>Cheapest $/GPU-hour per GPU model across providers · {{.Now.Format "2006-01-02 15:04"}} UTC</p>
</header>
<main>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<section>
<h2 id="market">Cheapest offer per GPU model now</h2>
<table aria-describedby="market">
<thead><tr><th>GPU model</th><th class="num">VRAM</th><th class="num">On-demand $/GPU-h</th><th>Provider</th>
<th class="num">Spot $/GPU-h</th><th>Provider</th><th class="num">Offers</th><th class="num">Providers</th><th>Last seen</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr><td>{{.GPUModel}}</td><td class="num">{{vram .VRAMGB}}</td>
{{- with .OnDemand}}<td class="num price">{{price .}}</td><td>{{.Provider}} <span class="muted">{{.GPUCount}}×{{with .Region}} · {{.}}{{end}}</span></td>{{else}}<td class="num muted">–</td><td></td>{{end}}
{{- with .Spot}}<td class="num price">{{price .}}</td><td>{{.Provider}} <span class="muted">{{.GPUCount}}×{{with .Region}} · {{.}}{{end}}</span></td>{{else}}<td class="num muted">–</td><td></td>{{end}}
<td class="num">{{.Offers}}</td><td class="num">{{.Providers}}</td><td class="muted">{{ago $.Now .SeenAt}}</td></tr>
{{- else}}
<tr><td colspan="9" class="muted">No offers seen in the last {{.MarketAge}}.</td></tr>
{{- end}}
</tbody>
</table>
</section>
<section>
<h2 id="history">Price history, last {{.Days}} days</h2>
{{if .MoreModels}}<p class="muted">The {{len .Charts}} GPU models with the most offers; {{.MoreModels}} more are in the table and in <code>gpucost history</code>.</p>{{end}}
<div class="grid">
{{- range .Charts}}
<figure><figcaption>{{.GPUModel}}</figcaption>{{.SVG}}</figure>
{{- end}}
</div>
</section>
<footer>JSON: <a href="api/v1/offers">api/v1/offers</a> · <a href="api/v1/changes">api/v1/changes</a> ·
api/v1/history?gpu=MODEL · <a href="healthz">healthz</a>. Prices are USD per GPU-hour; charts show the cheapest offer of each provider and price type per day (UTC).</footer>
</main>
</body>
</html>
`))

// formatGB writes a VRAM size without a needless decimal.
func formatGB(gb float64) string {
	return strconv.FormatFloat(gb, 'f', -1, 64) + " GB"
}
