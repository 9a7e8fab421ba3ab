//go:build modern

// This file runs every example query of docs/analysts.md and every query of the Grafana
// dashboard on a current ClickHouse engine (embedded chDB), after the migrations, on a generated
// history. `make test-modern` runs it; analysts_doc_test.go runs the same queries on 18.16.

package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chdb-io/chdb-go/chdb"

	"github.com/gpucost/gpucost/schema"
)

func TestModernAnalystQueries(t *testing.T) {
	sess, err := chdb.NewSession(t.TempDir())
	if err != nil {
		t.Fatalf("starting chDB (is CHDB_LIB_PATH set? make test-modern sets it): %v", err)
	}
	defer sess.Close()
	exec := func(t *testing.T, what, sql string) string {
		t.Helper()
		r, err := sess.Query(sql, "TSV")
		if err != nil {
			t.Fatalf("%s fails on current ClickHouse: %v\nSQL: %s", what, err, sql)
		}
		return strings.TrimSpace(r.String())
	}
	migrations, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	for _, mg := range migrations {
		for i, stmt := range mg.Statements {
			exec(t, fmt.Sprintf("migration %s statement %d", mg.Name, i+1), stmt)
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
		exec(t, "generating "+o.id, fmt.Sprintf(`INSERT INTO offers (observed_at, run_id, source_url, provider, offer_id, tier, region, country,
			gpu_model, gpu_name_raw, gpu_count, vram_gb, price_type, price_usd_per_hour, price_usd_per_gpu_hour,
			intra_node, inter_node, available_count, stock, dq_flags)
		SELECT toDateTime(toStartOfHour(now()) - number * 21600, 'UTC'), concat('doc-', toString(number)), 'https://example.test', %s, %s,
			'secure', 'us-east', 'US', %s, %s, %s, 80, %s, price * %s, price, 'nvswitch', 'infiniband', toUInt32(number %% 5), 'low',
			if(number %% 9 = 0, ['vram_snapped'], [])
		FROM (SELECT number, %s AS price FROM system.numbers LIMIT 400)`,
			sqlString(o.provider), sqlString(o.id), sqlString(o.model), sqlString("NVIDIA "+o.model), o.count, sqlString(o.pt), o.count, o.price))
	}
	exec(t, "generating runs", `INSERT INTO scrape_runs (run_id, provider, started_at, finished_at, status, offers_parsed, offers_loaded, offers_rejected, error, http_attempts)
		SELECT concat('doc-', toString(number)), p, toDateTime(now() - number * 21600, 'UTC'), toDateTime(now() - number * 21600 + 20, 'UTC'),
			if(p = 'vastai' AND number % 10 = 0, 'failed', 'ok'), 2, 2, 0, '', 1
		FROM system.numbers ARRAY JOIN ['lambda', 'runpod', 'vastai'] AS p LIMIT 120`)
	exec(t, "an import", `INSERT INTO offers (observed_at, run_id, source_url, provider, offer_id, tier, region, gpu_model, gpu_name_raw, gpu_count, vram_gb,
			price_type, price_usd_per_hour, price_usd_per_gpu_hour)
		VALUES (toDateTime(now() - 3 * 86400, 'UTC'), 'import-0123456789abcdef', 'import:prices.csv', 'aws', 'import:H100-SXM-80GB/8x/datacenter/us-east-1',
			'datacenter', 'us-east-1', 'H100-SXM-80GB', 'H100-SXM-80GB', 8, 80, 'on_demand', 55.04, 6.88)`)

	run := func(what string, set func(testing.TB) (names, queries []string)) {
		names, queries := set(t)
		for i, q := range queries {
			t.Run(what+" "+names[i], func(t *testing.T) {
				if out := exec(t, names[i], q); out == "" {
					t.Errorf("found nothing on the generated history:\n%s", q)
				}
			})
		}
	}
	run("docs/analysts.md", analystQueries)
	run("grafana", grafanaQueries)
}

// sqlString quotes s as a ClickHouse string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
