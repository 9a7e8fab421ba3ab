//go:build modern

// This file runs every example query of docs/analysts.md on a current ClickHouse engine
// (embedded chDB), after the migrations, on a generated history. `make test-modern` runs it.

package store

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chdb-io/chdb-go/chdb"

	"github.com/gpucost/gpucost/schema"
)

var docSQL = regexp.MustCompile("(?s)```sql\n(.*?)```")

func TestModernAnalystQueries(t *testing.T) {
	doc, err := os.ReadFile("../docs/analysts.md")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := chdb.NewSession(t.TempDir())
	if err != nil {
		t.Fatalf("starting chDB (is CHDB_LIB_PATH set? make test-modern sets it): %v", err)
	}
	defer sess.Close()
	m := modern{t, sess}
	migrations, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	for _, mg := range migrations {
		for i, stmt := range mg.Statements {
			m.exec(fmt.Sprintf("migration %s statement %d", mg.Name, i+1), stmt)
		}
	}
	// 100 days of observations every six hours up to now, per offer: price moves, 8-GPU nodes,
	// availability and flags, then scrape runs and one imported row.
	offers := []struct{ provider, id, model, pt, count, price string }{
		{"vastai", "ask-1", "H100-SXM-80GB", "on_demand", "8", "toDecimal64(1.85 + (number % 7) * 0.05, 6)"},
		{"runpod", "H100 SXM/secure", "H100-SXM-80GB", "spot", "1", "toDecimal64(1.50 + intDiv(number, 40) % 2 * 0.25, 6)"},
		{"lambda", "gpu_8x_h100_sxm5", "H100-SXM-80GB", "on_demand", "8", "toDecimal64(if(number < 5, 2.49, 2.99), 6)"},
		{"lambda", "gpu_8x_a100_80gb_sxm4", "A100-SXM-80GB", "on_demand", "8", "toDecimal64(1.79 - intDiv(number, 100) * 0.1, 6)"},
	}
	for _, o := range offers {
		m.exec("generating "+o.id, fmt.Sprintf(`INSERT INTO offers (observed_at, run_id, source_url, provider, offer_id, tier, region, country,
			gpu_model, gpu_name_raw, gpu_count, vram_gb, price_type, price_usd_per_hour, price_usd_per_gpu_hour,
			intra_node, inter_node, available_count, stock, dq_flags)
		SELECT toDateTime(toStartOfHour(now()) - number * 21600, 'UTC'), concat('doc-', toString(number)), 'https://example.test', %s, %s,
			'secure', 'us-east', 'US', %s, %s, %s, 80, %s, price * %s, price, 'nvswitch', 'infiniband', toUInt32(number %% 5), 'low',
			if(number %% 9 = 0, ['vram_snapped'], [])
		FROM (SELECT number, %s AS price FROM system.numbers LIMIT 400)`,
			literal(o.provider), literal(o.id), literal(o.model), literal("NVIDIA "+o.model), o.count, literal(o.pt), o.count, o.price))
	}
	m.exec("generating runs", `INSERT INTO scrape_runs (`+runColumns+`)
		SELECT concat('doc-', toString(number)), p, toDateTime(now() - number * 21600, 'UTC'), toDateTime(now() - number * 21600 + 20, 'UTC'),
			if(p = 'vastai' AND number % 10 = 0, 'failed', 'ok'), 2, 2, 0, '', 1
		FROM system.numbers ARRAY JOIN ['lambda', 'runpod', 'vastai'] AS p LIMIT 120`)
	m.exec("an import", `INSERT INTO offers (observed_at, run_id, source_url, provider, offer_id, tier, region, gpu_model, gpu_name_raw, gpu_count, vram_gb,
			price_type, price_usd_per_hour, price_usd_per_gpu_hour)
		VALUES (toDateTime(now() - 3 * 86400, 'UTC'), 'import-0123456789abcdef', 'import:prices.csv', 'aws', 'import:H100-SXM-80GB/8x/datacenter/us-east-1',
			'datacenter', 'us-east-1', 'H100-SXM-80GB', 'H100-SXM-80GB', 8, 80, 'on_demand', 55.04, 6.88)`)

	text := string(doc)
	n := 0
	for _, loc := range docSQL.FindAllStringSubmatchIndex(text, -1) {
		before := text[:loc[0]]
		name := before[strings.LastIndex(before, "\n### ")+5:]
		name = strings.TrimSpace(name[:strings.Index(name, "\n")])
		q := strings.TrimSpace(text[loc[2]:loc[3]])
		n++
		t.Run(name, func(t *testing.T) {
			if out := (modern{t, sess}).exec(name, q); out == "" {
				t.Errorf("found nothing on the generated history:\n%s", q)
			}
		})
	}
	if n < 10 {
		t.Fatalf("docs/analysts.md has %d sql blocks, want at least 10", n)
	}

	// The Grafana dashboard's queries, with the plugin's macros expanded: production Grafana
	// talks to a current ClickHouse.
	data, err := os.ReadFile("../deploy/grafana/dashboards/gpucost.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RawSQL string `json:"rawSql"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	to := time.Now().UTC()
	from := to.AddDate(0, 0, -90)
	macro := regexp.MustCompile(`\$__(dateFilter|timeFilter)\(([a-z_]+)\)`)
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			q := macro.ReplaceAllStringFunc(strings.ReplaceAll(tg.RawSQL, "${gpu:singlequote}", "'H100-SXM-80GB'"), func(m string) string {
				sub := macro.FindStringSubmatch(m)
				if sub[1] == "dateFilter" {
					return fmt.Sprintf("%s >= toDate('%s') AND %s <= toDate('%s')", sub[2], from.Format("2006-01-02"), sub[2], to.Format("2006-01-02"))
				}
				return fmt.Sprintf("%s >= toDateTime(%d) AND %s <= toDateTime(%d)", sub[2], from.Unix(), sub[2], to.Unix())
			})
			t.Run("grafana "+p.Title, func(t *testing.T) {
				if out := (modern{t, sess}).exec(p.Title, q); out == "" {
					t.Errorf("found nothing on the generated history:\n%s", q)
				}
			})
		}
	}
}
