package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The latest-market benchmark's stores: a market of 100k and one of 1M offers, generated on the
// server by INSERT … SELECT from numbers() straight into offers_latest, each in a database of its
// own kept between runs (drop them with DROP DATABASE gpucost_bench_latest_100000_v1 and
// …_1000000_v1) and rebuilt when it does not hold the expected market.
const (
	benchLatestVersion = "v1" // bump when the generator changes
	// benchLatestSuperseded is the share of offers (in tenths) stored with an older version
	// beside the newest, as offers_latest holds them until background merges catch up: FINAL
	// has versions to drop.
	benchLatestSuperseded = 4
)

// benchLatestNow is the market's "now": every generated observation is dated from it, and the
// benchmark's store runs on this clock, so the same filters select the same offers on every run.
var benchLatestNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// BenchmarkLatestOffers reads the latest market of 100k and 1M offers in each shape its callers
// ask for: `gpucost offers` (the default view and each filter, the limit in the query, and its
// groups), the API's offers, the dashboard's market and the optimizer's read of the whole
// market. It reports ms/query and the rows each query returns. Run it with `make bench`;
// it needs the local ClickHouse and GPUCOST_INTEGRATION=1.
func BenchmarkLatestOffers(b *testing.B) {
	storetest.Enabled(b)
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("offers=%d", n), func(b *testing.B) {
			s := openBenchLatest(b, n)
			for _, shape := range latestShapes() {
				b.Run(shape.name, func(b *testing.B) {
					ctx := context.Background()
					rows := 0
					for b.Loop() {
						got, err := shape.read(ctx, s)
						if err != nil {
							b.Fatal(err)
						}
						rows = got
					}
					if rows == 0 {
						b.Fatalf("%s read no rows", shape.name)
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
					b.ReportMetric(float64(rows), "rows")
				})
			}
		})
	}
}

// latestShape is one way a caller reads the latest market; read returns the rows it got.
type latestShape struct {
	name string
	read func(ctx context.Context, s *store.Store) (int, error)
}

func latestShapes() []latestShape {
	offers := func(f schema.OfferFilter) func(ctx context.Context, s *store.Store) (int, error) {
		return func(ctx context.Context, s *store.Store) (int, error) {
			got, err := s.LatestOffers(ctx, f)
			return len(got), err
		}
	}
	perGPU := func(f schema.OfferFilter) func(ctx context.Context, s *store.Store) (int, error) {
		return func(ctx context.Context, s *store.Store) (int, error) {
			got, err := s.LatestPerGPU(ctx, f)
			return len(got), err
		}
	}
	grouped := func(f schema.OfferFilter, by ...market.Dimension) func(ctx context.Context, s *store.Store) (int, error) {
		return func(ctx context.Context, s *store.Store) (int, error) {
			got, err := s.LatestSummaries(ctx, f, by)
			return len(got), err
		}
	}
	toPlan := func(f schema.OfferFilter) func(ctx context.Context, s *store.Store) (int, error) {
		return func(ctx context.Context, s *store.Store) (int, error) {
			got, err := s.LatestOffersToPlan(ctx, f)
			return len(got), err
		}
	}
	// plans.Make's read with the optimizer's default max offer age (24 h, plus a week).
	planning := schema.OfferFilter{MaxAge: 8 * 24 * time.Hour, ExpiredWithin: 7 * 24 * time.Hour}
	// What `gpucost offers` asks by default: seen within 6 hours, catalog GPUs, 50 rows.
	view := func(edit func(*schema.OfferFilter)) schema.OfferFilter {
		f := schema.OfferFilter{MaxAge: 6 * time.Hour, KnownGPUs: true, Limit: 50}
		if edit != nil {
			edit(&f)
		}
		return f
	}
	return []latestShape{
		{"default-limit50", offers(view(nil))},
		{"gpu=H100-SXM-80GB", offers(view(func(f *schema.OfferFilter) { f.GPUModels = []string{"H100-SXM-80GB"} }))},
		{"provider=runpod", offers(view(func(f *schema.OfferFilter) { f.Providers = []string{"runpod"} }))},
		{"price-type=spot", offers(view(func(f *schema.OfferFilter) { f.PriceTypes = []schema.PriceType{schema.Spot} }))},
		{"min-vram=80", offers(view(func(f *schema.OfferFilter) { f.MinVRAMGB = 80 }))},
		{"interconnect=nvlink", offers(view(func(f *schema.OfferFilter) { f.MinIntraNode = schema.IntraNVLink }))},
		{"max-age=1h", offers(view(func(f *schema.OfferFilter) { f.MaxAge = time.Hour }))},
		{"max-age=0", offers(view(func(f *schema.OfferFilter) { f.MaxAge = 0 }))},
		// The API's /api/v1/offers by default: 100 rows and one more to tell it is cut.
		{"api-limit101", offers(view(func(f *schema.OfferFilter) { f.Limit = 101 }))},
		// offers' filters on the newest version of each offer, and an order other than the price's.
		{"gpu=H100:8,max-price=3", offers(view(func(f *schema.OfferFilter) {
			f.GPUs = []schema.GPUSpec{{Models: []string{"H100-NVL-94GB", "H100-PCIE-80GB", "H100-SXM-80GB"}, MinCount: 8, MaxCount: 8}}
			f.MaxUSDPerGPUHour = decimal.RequireFromString("3")
		}))},
		{"region=us,min-ram=128", offers(view(func(f *schema.OfferFilter) { f.Regions, f.MinRAMGB = []string{"us"}, 128 }))},
		{"sort=gpu", offers(view(func(f *schema.OfferFilter) { f.Sort = schema.SortGPU }))},
		{"group-by=gpu", grouped(view(nil), market.ByGPU)},
		{"group-by=gpu,provider,count", grouped(view(nil), market.ByGPU, market.ByProvider, market.ByCount)},
		// The dashboard's market: every offer seen within 24 hours, summarised per GPU model.
		{"dashboard-per-gpu", perGPU(schema.OfferFilter{MaxAge: 24 * time.Hour})},
		{"whole-market-for-optimizer", toPlan(planning)},
		// The same market with every column, as LatestOffers reads it (export's read of today).
		{"whole-market-all-columns", offers(planning)},
	}
}

// openBenchLatest opens the bench database of a market of n offers, generating it first when it
// does not hold that market.
func openBenchLatest(b *testing.B, n int) *store.Store {
	b.Helper()
	ctx := context.Background()
	db := fmt.Sprintf("gpucost_bench_latest_%d_%s", n, benchLatestVersion)
	open := func() *store.Store {
		s, err := store.Open(ctx, storetest.DatabaseDSN(b, db), store.Options{Now: func() time.Time { return benchLatestNow }})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	s := open()
	if _, err := s.Migrate(ctx); err != nil {
		// Built by an older schema: build it again.
		b.Logf("rebuilding %s: %v", db, err)
		s.Close()
		storetest.DropDatabase(b, db)
		s = open()
		if _, err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { s.Close() })
	conn := storetest.Conn(b, storetest.DatabaseDSN(b, db))
	var stored uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM offers_latest FINAL").Scan(&stored); err != nil {
		b.Fatal(err)
	}
	if stored != uint64(n) {
		b.Logf("generating a market of %d offers in database %s (once; kept for the next run)", n, db)
		t0 := time.Now()
		if err := generateBenchLatest(ctx, conn, n); err != nil {
			b.Fatal(err)
		}
		b.Logf("generated in %s", time.Since(t0).Round(time.Millisecond))
	}
	return s
}

// generateBenchLatest fills offers_latest with a market of n offers, varied like the real one:
// 30 providers (Vast's marketplace the largest), the 41 catalog GPU models and a few unknown
// GPUs, 1 to 8 GPUs per offer, on-demand, spot and reserved prices, tiers, regions,
// interconnects, optional columns sometimes NULL; 88% observed within the last 5 hours, 10%
// stale (observed 6 hours to 30 days ago), 2% imported price tables with a valid_until (most still
// ahead). benchLatestSuperseded tenths of the offers also have an older version, stored in a part
// of its own before the newest versions. offers_latest_mv is dropped (offers stays empty), so
// nothing else is computed.
func generateBenchLatest(ctx context.Context, conn driver.Conn, n int) error {
	for _, stmt := range []string{"DROP TABLE IF EXISTS offers_daily_mv", "DROP TABLE IF EXISTS offers_latest_mv",
		"TRUNCATE TABLE offers", "TRUNCATE TABLE offers_latest"} {
		if err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	models := []string{"A10-24GB", "A100-PCIE-40GB", "A100-PCIE-80GB", "A100-SXM-40GB", "A100-SXM-80GB", "A30-24GB", "A40-48GB",
		"B200-SXM-180GB", "B300-SXM-288GB", "GB200-186GB", "GB300-288GB", "GH200-96GB", "H100-NVL-94GB", "H100-PCIE-80GB",
		"H100-SXM-80GB", "H200-NVL-141GB", "H200-SXM-141GB", "L4-24GB", "L40-48GB", "L40S-48GB", "MI300X-192GB", "P40-24GB",
		"QUADRO-RTX-6000-24GB", "RTX-2000-ADA-16GB", "RTX-3070-8GB", "RTX-3090-24GB", "RTX-4000-ADA-20GB", "RTX-4090-24GB",
		"RTX-5000-ADA-32GB", "RTX-5090-32GB", "RTX-6000-ADA-48GB", "RTX-A4000-16GB", "RTX-A4500-20GB", "RTX-A5000-24GB",
		"RTX-A6000-48GB", "RTX-PRO-6000-96GB", "T4-16GB", "TITAN-RTX-24GB", "V100-PCIE-16GB", "V100-PCIE-32GB", "V100-SXM2-16GB"}
	vram := []string{"24", "40", "80", "40", "80", "24", "48", "180", "288", "186", "288", "96", "94", "80", "80", "141", "141", "24",
		"48", "48", "192", "24", "24", "16", "8", "24", "20", "24", "32", "32", "48", "16", "20", "24", "48", "96", "16", "24", "16", "32", "16"}
	base := []string{"0.6", "1.1", "1.5", "1.2", "1.6", "0.7", "0.8", "5.0", "6.5", "6.0", "7.5", "3.2", "2.4", "2.2", "2.5", "3.1",
		"3.5", "0.5", "0.9", "1.0", "2.9", "0.2", "0.3", "0.3", "0.1", "0.25", "0.35", "0.4", "0.6", "0.7", "0.8", "0.2", "0.25",
		"0.3", "0.5", "1.3", "0.15", "0.2", "0.15", "0.2", "0.15"}
	providers := []string{"runpod", "lambda", "coreweave", "tensordock", "paperspace", "fluidstack", "datacrunch", "oblivus",
		"latitude", "crusoe", "hyperstack", "jarvislabs", "massedcompute", "vultr", "ovh", "scaleway", "gcp", "aws", "azure",
		"oci", "ibm", "linode", "genesiscloud", "nebius", "voltagepark", "shadeform", "cudocompute", "seeweb", "togetherai"}
	quoted := func(ss []string) string { return "['" + strings.Join(ss, "', '") + "']" }
	// h, h2, h3: independent hashes of the offer's number; age: seconds before now it was
	// observed.
	sel := fmt.Sprintf(`SELECT
			toDateTime(?, 'UTC') - age AS observed_at,
			if(h %% 50 = 0, toDateTime(?, 'UTC') + (toInt64(h2 %% 30) - 3) * 86400, NULL) AS valid_until,
			concat('run-', provider, '-', toString(toStartOfHour(observed_at))) AS run_id,
			concat('https://', provider, '.example/api/offers') AS source_url,
			if(h %% 10 < 4, 'vastai', %[1]s[h2 %% %[2]d + 1]) AS provider,
			concat(if(provider = 'vastai', 'ask-', 'sku-'), toString(number)) AS offer_id,
			['secure', 'community', 'standard'][h3 %% 3 + 1] AS tier,
			['us-east-1', 'us-west-2', 'US-TX-3', 'eu-west-1', 'eu-central-1', 'ap-northeast-1', 'ap-south-1', 'ca-central-1',
			 'NO-1', 'FI-1', 'IS-1', 'sa-east-1', 'uk-south', 'au-east', 'jp-tokyo', 'de-fra', 'nl-ams', 'sg-1', 'in-bom', 'kr-seoul'][h3 %% 20 + 1] AS region,
			['US', 'US', 'US', 'IE', 'DE', 'JP', 'IN', 'CA', 'NO', 'FI', 'IS', 'BR', 'GB', 'AU', 'JP', 'DE', 'NL', 'SG', 'IN', 'KR'][h3 %% 20 + 1] AS country,
			if(h2 %% 100 = 7, '', %[3]s[model + 1]) AS gpu_model,
			if(gpu_model = '', 'Mystery GPU 9000', concat('NVIDIA ', gpu_model)) AS gpu_name_raw,
			toUInt16([1, 1, 1, 1, 2, 2, 4, 8][h3 %% 8 + 1]) AS gpu_count,
			toFloat64(%[4]s[model + 1]) AS vram_gb,
			if(h %% 5 = 0, NULL, toFloat64(gpu_count * 8)) AS vcpus,
			if(h %% 5 = 1, NULL, toFloat64(gpu_count * 64)) AS ram_gb,
			if(h %% 5 = 2, NULL, toFloat64(100 + h3 %% 900)) AS disk_gb,
			multiIf(h2 %% 4 = 0, 'spot', h2 %% 50 = 1, 'reserved', 'on_demand') AS price_type,
			toDecimal64(%[5]s[model + 1] * (0.6 + (h %% 800 + version * 7) / 1000) * if(price_type = 'spot', 0.6, 1), 6) AS price_usd_per_gpu_hour,
			toDecimal64(price_usd_per_gpu_hour * gpu_count, 6) AS price_usd_per_hour,
			if(gpu_count = 1, 'unknown', ['nvswitch', 'nvlink', 'pcie', 'unknown'][h3 %% 4 + 1]) AS intra_node,
			if(intra_node IN ('nvswitch', 'nvlink'), toFloat64(900), NULL) AS nvlink_gbps,
			['infiniband', 'ethernet', 'unknown'][h2 %% 3 + 1] AS inter_node,
			if(h3 %% 3 = 0, NULL, toUInt32(h %% 16)) AS available_count,
			['high', 'medium', 'low', 'unknown'][h %% 4 + 1] AS stock,
			if(provider = 'vastai', 0.9 + (h3 %% 100) / 1000, NULL) AS reliability,
			if(h %% 40 = 0, ['price_outlier'], if(h %% 41 = 0, ['vram_snapped', 'count_parsed'], emptyArrayString())) AS dq_flags
		FROM (
			SELECT number, intHash64(number) AS h, intHash64(number + 1000000000) AS h2, intHash64(number + 2000000000) AS h3,
				h2 %% %[6]d AS model, version,
				multiIf(h %% 50 = 0, toInt64(10 * 86400), h %% 100 < 88, toInt64(h3 %% 18000), h %% 100 < 98, toInt64(21600 + h3 %% (30 * 86400)), toInt64(h3 %% 18000))
					+ version * toInt64(3600 + h %% 43200) AS age
			FROM (SELECT number, ? AS version FROM numbers(?) WHERE ? = 0 OR intHash64(number) %% 10 < ?)
		)`, quoted(providers), len(providers), quoted(models), quoted(vram), "["+strings.Join(base, ", ")+"]", len(models))
	insert := `INSERT INTO offers_latest (observed_at, valid_until, run_id, source_url, provider, offer_id, tier, region, country,
		gpu_model, gpu_name_raw, gpu_count, vram_gb, vcpus, ram_gb, disk_gb, price_type, price_usd_per_hour, price_usd_per_gpu_hour,
		intra_node, nvlink_gbps, inter_node, available_count, stock, reliability, dq_flags) ` + sel
	// The older versions first, then the newest, in parts of their own as later scrapes store them.
	if err := conn.Exec(ctx, insert, benchLatestNow, benchLatestNow, 1, n, 1, benchLatestSuperseded); err != nil {
		return fmt.Errorf("generating the superseded versions: %w", err)
	}
	if err := conn.Exec(ctx, insert, benchLatestNow, benchLatestNow, 0, n, 0, 0); err != nil {
		return fmt.Errorf("generating the newest versions: %w", err)
	}
	return nil
}
