package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// sqlBlock matches a fenced sql block of a Markdown file.
var sqlBlock = regexp.MustCompile("(?s)```sql\n(.*?)```")

// analystQueries returns the sql blocks of docs/analysts.md, named by the heading above each.
func analystQueries(tb testing.TB) (names, queries []string) {
	tb.Helper()
	doc, err := os.ReadFile("../docs/analysts.md")
	if err != nil {
		tb.Fatal(err)
	}
	text := string(doc)
	for _, m := range sqlBlock.FindAllStringSubmatchIndex(text, -1) {
		before := text[:m[0]]
		name := before[strings.LastIndex(before, "\n### ")+5:]
		names = append(names, strings.TrimSpace(name[:strings.Index(name, "\n")]))
		queries = append(queries, strings.TrimSpace(text[m[2]:m[3]]))
	}
	if len(queries) < 10 {
		tb.Fatalf("docs/analysts.md has %d sql blocks, want at least 10", len(queries))
	}
	return names, queries
}

// storeAnalystHistory fills s with 100 days of observations ending now, every six hours, with
// price moves, multi-GPU nodes, availability, flags, scrape runs and an import: something for
// every example query to find.
func storeAnalystHistory(tb testing.TB, s *store.Store) {
	tb.Helper()
	ctx := context.Background()
	last := time.Now().UTC().Truncate(6 * time.Hour)
	type def struct {
		provider, id, model string
		pt                  schema.PriceType
		count               uint16
		cents               func(step int) int64
	}
	defs := []def{
		{"vastai", "ask-1", "H100-SXM-80GB", schema.OnDemand, 8, func(s int) int64 { return 185 + int64(s%7)*5 }},
		{"vastai", "ask-2", "RTX-4090-24GB", schema.OnDemand, 1, func(s int) int64 { return 35 + int64(s%3) }},
		{"runpod", "H100 SXM/secure", "H100-SXM-80GB", schema.OnDemand, 1, func(int) int64 { return 269 }},
		{"runpod", "H100 SXM/secure", "H100-SXM-80GB", schema.Spot, 1, func(s int) int64 { return 150 + int64(s/40%2)*25 }},
		{"lambda", "gpu_8x_h100_sxm5", "H100-SXM-80GB", schema.OnDemand, 8, func(s int) int64 {
			if s < 395 {
				return 299
			}
			return 249
		}},
		{"lambda", "gpu_8x_a100_80gb_sxm4", "A100-SXM-80GB", schema.OnDemand, 8, func(s int) int64 { return 179 - int64(s/100)*10 }},
	}
	const steps = 100 * 4
	var all []schema.Offer
	var runs []schema.ScrapeRun
	for step := 0; step < steps; step++ {
		at := last.Add(-time.Duration(steps-1-step) * 6 * time.Hour)
		runID := fmt.Sprintf("doc-%03d", step)
		var batch []schema.Offer
		for i, d := range defs {
			p := decimal.New(d.cents(step), -2)
			avail := uint32(step%5 + i)
			o := schema.Offer{ObservedAt: at, RunID: runID, SourceURL: "https://example.test/" + d.provider,
				Provider: d.provider, OfferID: d.id, Tier: schema.TierSecure, Region: "us-east", Country: "US",
				GPUModel: d.model, GPUNameRaw: "NVIDIA " + d.model, GPUCount: d.count, VRAMGB: 80,
				PriceType: d.pt, PriceUSDPerHour: p.Mul(decimal.NewFromInt(int64(d.count))), PriceUSDPerGPUHour: p,
				IntraNode: schema.IntraNVSwitch, InterNode: schema.InterInfiniBand, AvailableCount: &avail, Stock: schema.StockLow}
			if step%9 == 0 {
				o.DQFlags = []schema.DQFlag{schema.FlagVRAMSnapped}
			}
			batch = append(batch, o)
		}
		all = append(all, batch...)
		if step >= steps-40 {
			for _, p := range []string{"lambda", "runpod", "vastai"} {
				r := schema.ScrapeRun{RunID: runID, Provider: p, StartedAt: at, FinishedAt: at.Add(20 * time.Second), Status: schema.RunOK,
					OffersParsed: 2, OffersLoaded: 2, HTTPAttempts: 1}
				if p == "vastai" && step%10 == 0 {
					r.Status, r.OffersLoaded, r.Error = schema.RunFailed, 0, "HTTP 503"
				}
				runs = append(runs, r)
			}
		}
	}
	// One insert each: a few parts to merge, and a database that drops quickly.
	if err := s.InsertOffers(ctx, "doc", all); err != nil {
		tb.Fatal(err)
	}
	if err := s.RecordRun(ctx, runs...); err != nil {
		tb.Fatal(err)
	}
	imp := schema.Offer{ObservedAt: last.AddDate(0, 0, -3), RunID: "import-0123456789abcdef", SourceURL: "import:prices.csv",
		Provider: "aws", OfferID: "import:H100-SXM-80GB/8x/datacenter/us-east-1", Tier: schema.TierDatacenter, Region: "us-east-1",
		GPUModel: "H100-SXM-80GB", GPUNameRaw: "H100-SXM-80GB", GPUCount: 8, VRAMGB: 80, PriceType: schema.OnDemand,
		PriceUSDPerHour: decimal.RequireFromString("55.04"), PriceUSDPerGPUHour: decimal.RequireFromString("6.88")}
	validUntil := last.AddDate(1, 0, 0)
	imp.ValidUntil = &validUntil
	if _, err := s.LoadImport(ctx, schema.Import{RunID: imp.RunID, Offers: []schema.Offer{imp}}); err != nil {
		tb.Fatal(err)
	}
}

// TestAnalystQueriesRun runs every example query of docs/analysts.md on the local ClickHouse,
// on a generated history, and checks that each finds something.
func TestAnalystQueriesRun(t *testing.T) {
	runOnHistory(t, analystQueries)
}

// grafanaQueries returns every SQL query of the provisioned Grafana dashboard (panel targets and
// template variables) with the plugin's macros expanded as grafana-clickhouse-datasource expands
// them, for the last 90 days and the GPU model H100-SXM-80GB.
func grafanaQueries(tb testing.TB) (names, queries []string) {
	tb.Helper()
	data, err := os.ReadFile("../deploy/grafana/dashboards/gpucost.json")
	if err != nil {
		tb.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title      string `json:"title"`
			Type       string `json:"type"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				RawSQL string `json:"rawSql"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query string `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		tb.Fatalf("deploy/grafana/dashboards/gpucost.json: %v", err)
	}
	prov, err := os.ReadFile("../deploy/grafana/provisioning/datasources/clickhouse.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	to := time.Now().UTC()
	from := to.AddDate(0, 0, -90)
	expand := strings.NewReplacer(
		"${gpu:singlequote}", "'H100-SXM-80GB'",
	)
	macro := regexp.MustCompile(`\$__(dateFilter|timeFilter)\(([a-z_]+)\)`)
	for _, v := range dash.Templating.List {
		names, queries = append(names, "variable "+v.Name), append(queries, v.Query)
	}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if !strings.Contains(string(prov), "uid: "+p.Datasource.UID) {
			tb.Errorf("panel %q uses data source %q, which is not provisioned", p.Title, p.Datasource.UID)
		}
		for _, tg := range p.Targets {
			q := macro.ReplaceAllStringFunc(expand.Replace(tg.RawSQL), func(m string) string {
				sub := macro.FindStringSubmatch(m)
				if sub[1] == "dateFilter" {
					return fmt.Sprintf("%s >= toDate('%s') AND %s <= toDate('%s')", sub[2], from.Format("2006-01-02"), sub[2], to.Format("2006-01-02"))
				}
				return fmt.Sprintf("%s >= toDateTime(%d) AND %s <= toDateTime(%d)", sub[2], from.Unix(), sub[2], to.Unix())
			})
			if strings.Contains(q, "$") {
				tb.Errorf("panel %q: a macro or variable is left unexpanded:\n%s", p.Title, q)
			}
			names, queries = append(names, p.Title), append(queries, q)
		}
	}
	if len(queries) < 8 {
		tb.Fatalf("the dashboard has %d queries, want at least 8", len(queries))
	}
	return names, queries
}

// TestGrafanaDashboardQueriesRun runs every query of the provisioned Grafana dashboard on the
// local ClickHouse, on the same generated history as the analysts' examples.
func TestGrafanaDashboardQueriesRun(t *testing.T) {
	runOnHistory(t, grafanaQueries)
}

// runOnHistory runs each query of a set on a store filled by storeAnalystHistory and checks that
// each finds something.
func runOnHistory(t *testing.T, set func(testing.TB) (names, queries []string)) {
	names, queries := set(t)
	s := storetest.Open(t)
	storeAnalystHistory(t, s)
	conn := rawConn(t, s)
	for i, q := range queries {
		t.Run(names[i], func(t *testing.T) {
			rows, err := conn.Query(context.Background(), q)
			if err != nil {
				t.Fatalf("fails on ClickHouse %s: %v\n%s", s.ServerVersion(), err, q)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				n++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Errorf("found nothing on the generated history:\n%s", q)
			}
		})
	}
}

// TestAnalystsDocDescribesEveryOffersColumn checks the column table of offers in
// docs/analysts.md against the table the migrations create: every column, in order, with its type.
func TestAnalystsDocDescribesEveryOffersColumn(t *testing.T) {
	doc, err := os.ReadFile("../docs/analysts.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n### `offers` — ")
	if !ok {
		t.Fatal("docs/analysts.md has no section on offers")
	}
	section, _, _ = strings.Cut(section, "\n### ")
	row := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| ([^|]+) \\|")
	var described []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		described = append(described, m[1]+" "+strings.TrimSpace(m[2]))
	}
	s := storetest.Open(t)
	if diff := cmp.Diff(columnsOf(t, s, "offers"), described); diff != "" {
		t.Errorf("docs/analysts.md on offers (-table +doc):\n%s", diff)
	}
}
