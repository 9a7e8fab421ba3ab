package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/redact"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	onlyState := isolated(t.TempDir(), nil)

	good := write("good.yaml", "scrape:\n  parallelism: 2\n")
	env := map[string]string{"GPUCOST_SCRAPE_PROVIDERS": "vastai, runpod", "GPUCOST_SCRAPE_LOAD_TIMEOUT": "45s"}
	cfg, err := config.Load(good, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Scrape.Parallelism != 2 || cfg.Scrape.SourceTimeout.Std() != 3*time.Minute {
		t.Errorf("file over defaults: parallelism %d, source timeout %v", cfg.Scrape.Parallelism, cfg.Scrape.SourceTimeout.Std())
	}
	if strings.Join(cfg.Scrape.Providers, ",") != "vastai,runpod" || cfg.Scrape.LoadTimeout.Std() != 45*time.Second {
		t.Errorf("environment over the file: providers %v, load timeout %v", cfg.Scrape.Providers, cfg.Scrape.LoadTimeout.Std())
	}

	for name, tt := range map[string]struct {
		file, want string
		env        map[string]string
	}{
		"unknown key names file and line":  {file: write("typo.yaml", "scrape:\n  parallelism: 2\n  paralelism: 3\n"), want: "typo.yaml:3:3: unknown field \"paralelism\""},
		"wrong type":                       {file: write("type.yaml", "scrape:\n  parallelism: many\n"), want: "type.yaml:2:16: "},
		"unknown provider":                 {file: write("prov.yaml", "scrape:\n  providers: [vastai, aws]\n"), want: `config ` + dir + `/prov.yaml:2: scrape.providers: unknown provider "aws"`},
		"bad environment value":            {env: map[string]string{"GPUCOST_SCRAPE_LOAD_TIMEOUT": "soon"}, want: "environment variable GPUCOST_SCRAPE_LOAD_TIMEOUT: scrape.load_timeout: invalid duration \"soon\""},
		"an optimizer option out of range": {file: write("opt.yaml", "optimize:\n  options:\n    gpu_memory_utilization: 1.5\n"), want: "opt.yaml:3: optimize.options.gpu_memory_utilization: 1.5 not in (0, 1]"},
		"a key that has moved":             {file: write("moved.yaml", "optimize:\n  offer_max_age: 6h\n"), want: "(offer_max_age has moved: optimize.options.max_offer_age_hours, in hours (default 24))"},
		"an unknown optimizer option":      {file: write("optkey.yaml", "optimize:\n  options:\n    max_scrape_age_hours: 6\n"), want: "optkey.yaml:3:5: unknown field \"max_scrape_age_hours\""},
		"a bad boolean":                    {env: map[string]string{"GPUCOST_OPTIMIZE_OPTIONS_ALLOW_COMMITMENTS": "sometimes"}, want: "GPUCOST_OPTIMIZE_OPTIONS_ALLOW_COMMITMENTS: optimize.options.allow_commitments: invalid boolean"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Load(tt.file, func(k string) string { return tt.env[k] })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := config.Load(filepath.Join(dir, "missing.yaml"), onlyState); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestConfigOptions: the embedded optimize.options are the optimizer's own defaults, and a file
// or the environment changes single options.
func TestConfigOptions(t *testing.T) {
	cfg, err := config.Load("", isolated(t.TempDir(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(optimizer.DefaultOptions(), cfg.Optimize.Options); diff != "" {
		t.Errorf("gpucost.yaml's optimize.options differ from optimizer.DefaultOptions() (-defaults +yaml):\n%s", diff)
	}
	file := filepath.Join(t.TempDir(), "opt.yaml")
	if err := os.WriteFile(file, []byte("optimize:\n  options:\n    max_offer_age_hours: 72\n    scaling: {pcie: 0.5}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GPUCOST_OPTIMIZE_OPTIONS_ALLOW_COMMITMENTS": "true", "GPUCOST_OPTIMIZE_OPTIONS_MFU_SXM": "0.45",
		"GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_ELECTRICITY_USD_PER_KWH": "0.25", "GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_RESIDUAL": "0.15"}
	cfg, err = config.Load(file, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Optimize.Options
	if o.MaxOfferAgeHours != 72 || o.Scaling.PCIe != 0.5 || o.Scaling.NVSwitch != 0.9 || !o.AllowCommitments || o.MFU.SXM != 0.45 || o.GPUMemoryUtilization != 0.9 {
		t.Errorf("options %+v: want max age 72, PCIe scaling 0.5 (NVSwitch kept 0.9), commitments, MFU 0.45 on SXM, the rest default", o)
	}
	// A dollar amount and an optional share from the environment.
	if own := o.Ownership; own.ElectricityUSDPerKWh != 0.25 || own.Residual == nil || *own.Residual != 0.15 || own.PUE != 1.3 {
		t.Errorf("ownership %+v: want electricity $0.25/kWh and residual 0.15 from the environment, PUE 1.3 kept", own)
	}
}

// TestConfigValuesCheckedAtLoad: every bad value fails the configuration when it loads (so in
// config print as in every command), naming the file and line it was written on, or the
// variable it came from, and the key.
func TestConfigValuesCheckedAtLoad(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		yaml string            // a config file, when set
		env  map[string]string // GPUCOST_* variables
		want string            // after "config FILE:" for a file
		not  string            // must not appear (a secret)
	}{
		{name: "a malformed DSN", yaml: "clickhouse:\n  dsn: clickhouse://default@127.0.0.1:19000/gpucost?dial_timeout=banana\n",
			want: `:2: clickhouse.dsn: clickhouse [dsn parse]: dial timeout: time: invalid duration "banana"`},
		{name: "a malformed DSN with a password", yaml: "clickhouse:\n  dsn: clickhouse://u:hunter2@127.0.0.1:19000/gpucost?max_open_conns=many\n",
			want: `:2: clickhouse.dsn: max_open_conns invalid value`, not: "hunter2"},
		{name: "a DSN password that breaks the URL", yaml: "clickhouse:\n  dsn: \"clickhouse://u:hun/ter2@127.0.0.1:19000/gpucost\"\n",
			want: `:2: clickhouse.dsn: `, not: "ter2"},
		{name: "a DSN of another database", yaml: "clickhouse:\n  dsn: postgres://u@db:5432/gpucost\n", want: `:2: clickhouse.dsn: scheme "postgres"`},
		{name: "a DSN without a port", yaml: "clickhouse:\n  dsn: clickhouse://u@db/gpucost\n", want: `:2: clickhouse.dsn: address "db": want host:port`},
		{name: "a negative dial timeout", yaml: "clickhouse:\n  dsn: clickhouse://u@db:9000/gpucost?dial_timeout=-5s\n", want: `:2: clickhouse.dsn: dial_timeout, read_timeout and conn_max_lifetime must not be negative`},
		{name: "a bad duration", yaml: "scrape:\n  parallelism: 2\n  source_timeout: banana\n", want: `:3:19: invalid duration "banana"`},
		{name: "a duration without a unit", yaml: "report:\n  smtp:\n    timeout: 30\n", want: `:3:14: invalid duration "30"`},
		{name: "stale_after -1h", yaml: "serve:\n  listen: 127.0.0.1:0\n  stale_after: -1h\n", want: ":3: serve.stale_after: must be positive, not -1h0m0s"},
		{name: "a negative source timeout", yaml: "scrape:\n  source_timeout: -5s\n", want: ":2: scrape.source_timeout: must be positive, not -5s"},
		{name: "a zero load timeout", yaml: "scrape:\n  load_timeout: 0s\n", want: ":2: scrape.load_timeout: must be positive, not 0s"},
		{name: "a negative attempt timeout", yaml: "http:\n  attempt_timeout: -1s\n", want: ":2: http.attempt_timeout: must be positive"},
		{name: "a negative SMTP timeout", yaml: "report:\n  smtp:\n    timeout: -30s\n", want: ":3: report.smtp.timeout: must be positive"},
		{name: "a negative query timeout", yaml: "serve:\n  query_timeout: -1s\n", want: ":2: serve.query_timeout: must be positive"},
		{name: "a negative body limit", yaml: "http:\n  max_body_bytes: -1\n", want: ":2: http.max_body_bytes: must be positive, not -1"},
		{name: "a negative source byte budget", yaml: "http:\n  max_source_bytes: -5\n", want: ":2: http.max_source_bytes: must be positive, not -5"},
		{name: "a zero offer cap", yaml: "http:\n  max_source_offers: 0\n", want: ":2: http.max_source_offers: must be positive, not 0"},
		{name: "a page limit on a source without pages", yaml: "providers:\n  runpod:\n    page_limit: 100\n", want: ":3: providers.runpod.page_limit: only providers.vastai pages its answers"},
		{name: "a negative source deadline cap", yaml: "scrape:\n  source_timeout_max: -1h\n", want: ":2: scrape.source_timeout_max: must be positive, not -1h0m0s"},
		{name: "retry waits inverted", yaml: "http:\n  retry_wait_min: 10s\n  retry_wait_max: 1s\n", want: ":3: http.retry_wait_max: 1s is below http.retry_wait_min 10s"},
		{name: "retry waits inverted by the minimum", yaml: "http:\n  retry_wait_min: 1m\n", want: ":2: http.retry_wait_max: 30s is below http.retry_wait_min 1m0s"},
		{name: "an invalid cron spec", yaml: "serve:\n  scrape_schedule: \"61 * * * *\"\n", want: `:2: serve.scrape_schedule: "61 * * * *" is not a cron schedule`},
		{name: "a cron spec with six fields", yaml: "optimize:\n  schedule: \"0 30 2 * * *\"\n", want: `:2: optimize.schedule: "0 30 2 * * *" is not a cron schedule`},
		{name: "a cron descriptor typo", yaml: "report:\n  schedule: \"@weekley\"\n", want: `:2: report.schedule: "@weekley" is not a cron schedule`},
		{name: "a bad listen address", yaml: "serve:\n  listen: localhost\n", want: `:2: serve.listen: "localhost" is not an address`},
		{name: "a provider URL", yaml: "providers:\n  vastai:\n    url: ftp://example.com/\n", want: `:3: providers.vastai.url: "ftp://example.com/" is not an http(s):// URL`},
		{name: "a negative delay in a flow mapping", yaml: "providers:\n  coreweave: {url: \"https://example.com/\", delay: -1s}\n", want: ":2: providers.coreweave.delay: must not be negative, not -1s"},
		{name: "an outlier factor below 1", yaml: "scrape:\n  outlier_factor: 0.5\n", want: ":2: scrape.outlier_factor: must be above 1"},
		{name: "a provider twice", yaml: "scrape:\n  providers:\n    - vastai\n    - vastai\n", want: ":2: scrape.providers: vastai is listed twice"},
		{name: "no providers", yaml: "scrape:\n  providers: []\n", want: ":2: scrape.providers: name at least one"},
		{name: "a user agent with a header", yaml: "http:\n  user_agent: \"gpucost\\r\\nX-Evil: 1\"\n", want: ":2: http.user_agent: holds a control character"},
		{name: "an API key variable name", yaml: "providers:\n  lambda:\n    api_key_env: \"$KEY\"\n", want: `:3: providers.lambda.api_key_env: "$KEY" is not an environment variable name`},
		{name: "a client id variable name", yaml: "providers:\n  verda:\n    client_id_env: \"VERDA ID\"\n", want: `:3: providers.verda.client_id_env: "VERDA ID" is not an environment variable name`},
		{name: "a client id on a provider without one", yaml: "providers:\n  lambda:\n    client_id_env: LAMBDA_ID\n", want: ":3: providers.lambda.client_id_env: only providers.verda has a client id"},
		{name: "a page URL on a source without a page", yaml: "providers:\n  tensordock:\n    page_url: https://example.com/\n", want: ":3: providers.tensordock.page_url: only the providers with both an API and a pricing page read one"},
		{name: "a delay on a source of single requests", yaml: "providers:\n  runpod:\n    delay: 2s\n", want: ":3: providers.runpod.delay: runpod makes no paced requests"},
		{name: "a key for a source that reads none", yaml: "providers:\n  nebius:\n    api_key_env: NEBIUS_KEY\n", want: ":3: providers.nebius.api_key_env: nebius publishes its prices without a key"},
		{name: "a shapes catalog on a provider without one", yaml: "providers:\n  lambda:\n    shapes_url: https://example.com/shapes.json\n", want: ":3: providers.lambda.shapes_url: only providers.oci joins a shapes catalog"},
		{name: "an OCI shapes catalog not over http", yaml: "providers:\n  oci:\n    shapes_url: ftp://example.com/shapes.json\n", want: ":3: providers.oci.shapes_url: "},
		{name: "a v2 catalog on a provider without one", yaml: "providers:\n  lambda:\n    catalog_url: https://example.com/v2/catalog/gpus\n", want: ":3: providers.lambda.catalog_url: only providers.runpod reads a v2 catalog"},
		{name: "a RunPod catalog not over http", yaml: "providers:\n  runpod:\n    catalog_url: api.runpod.io/v2/catalog/gpus\n", want: `:3: providers.runpod.catalog_url: "api.runpod.io/v2/catalog/gpus" is not an http(s):// URL`},
		{name: "a RunPod catalog from the environment", env: map[string]string{"GPUCOST_PROVIDERS_RUNPOD_CATALOG_URL": "ftp://api.runpod.io/v2/catalog/gpus"},
			want: "environment variable GPUCOST_PROVIDERS_RUNPOD_CATALOG_URL: providers.runpod.catalog_url: "},
		{name: "an optimizer option", yaml: "optimize:\n  options:\n    mfu: {sxm: 2}\n", want: ":3: optimize.options.mfu.sxm: 2 not in (0, 1]"},
		{name: "an ownership residual", yaml: "optimize:\n  options:\n    ownership:\n      residual: 1.5\n", want: ":4: optimize.options.ownership.residual: 1.5 not in [0, 1)"},
		{name: "an ownership price point", yaml: "optimize:\n  options:\n    ownership: {purchase_point: median}\n", want: `:3: optimize.options.ownership.purchase_point: "median": want low, mid, high`},
		{name: "an electricity price that is no number", yaml: "optimize:\n  options:\n    ownership:\n      electricity_usd_per_kwh: cheap\n", want: ":4:32: "},
		{name: "a residual that is no number", yaml: "optimize:\n  options:\n    ownership:\n      residual: most\n", want: ":4:17: "},

		{name: "a malformed DSN from the environment", env: map[string]string{"GPUCOST_CLICKHOUSE_DSN": "clickhouse://u:hunter2@127.0.0.1:19000/gpucost?dial_timeout=banana"},
			want: `environment variable GPUCOST_CLICKHOUSE_DSN: clickhouse.dsn: clickhouse [dsn parse]: dial timeout`, not: "hunter2"},
		{name: "stale_after from the environment", env: map[string]string{"GPUCOST_SERVE_STALE_AFTER": "-1h"},
			want: "environment variable GPUCOST_SERVE_STALE_AFTER: serve.stale_after: must be positive"},
		{name: "the environment over the file", yaml: "serve:\n  stale_after: 1h\n", env: map[string]string{"GPUCOST_SERVE_STALE_AFTER": "-1h"},
			want: "environment variable GPUCOST_SERVE_STALE_AFTER: serve.stale_after: must be positive"},
		{name: "a body limit from the environment", env: map[string]string{"GPUCOST_HTTP_MAX_BODY_BYTES": "-5"},
			want: "environment variable GPUCOST_HTTP_MAX_BODY_BYTES: http.max_body_bytes: must be positive, not -5"},
		{name: "a schedule from the environment", env: map[string]string{"GPUCOST_SERVE_SCRAPE_SCHEDULE": "every hour"},
			want: `environment variable GPUCOST_SERVE_SCRAPE_SCHEDULE: serve.scrape_schedule: "every hour" is not a cron schedule`},
		{name: "a number from the environment", env: map[string]string{"GPUCOST_SCRAPE_PARALLELISM": "four"},
			want: `environment variable GPUCOST_SCRAPE_PARALLELISM: scrape.parallelism: invalid integer "four"`},
		{name: "a dollar amount from the environment", env: map[string]string{"GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_COLOCATION_USD_PER_KW_MONTH": "cheap"},
			want: `environment variable GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_COLOCATION_USD_PER_KW_MONTH: optimize.options.ownership.colocation_usd_per_kw_month: invalid number "cheap"`},
		{name: "a residual from the environment", env: map[string]string{"GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_RESIDUAL": "half"},
			want: `environment variable GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_RESIDUAL: optimize.options.ownership.residual: invalid number "half"`},
		{name: "a negative dollar amount from the environment", env: map[string]string{"GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_OPERATIONS_USD_PER_GPU_MONTH": "-3"},
			want: `environment variable GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_OPERATIONS_USD_PER_GPU_MONTH: optimize.options.ownership.operations_usd_per_gpu_month: -3 must not be negative`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			want := tt.want
			if tt.yaml != "" {
				path := filepath.Join(dir, fmt.Sprintf("bad%d.yaml", i))
				if err := os.WriteFile(path, []byte(tt.yaml), 0o600); err != nil {
					t.Fatal(err)
				}
				args = []string{"--config", path}
				if tt.env == nil {
					want = "config " + path + tt.want
				}
			}
			_, err := config.Load(strings.TrimPrefix(strings.Join(args, " "), "--config "), func(k string) string { return tt.env[k] })
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, want)
			}
			if tt.not != "" && strings.Contains(err.Error(), tt.not) {
				t.Errorf("the error shows %q: %v", tt.not, err)
			}
			// config print refuses what the commands refuse.
			code, out := runCLIEnv(tt.env, append([]string{"config", "print"}, args...)...)
			if code != exitUsage || !strings.Contains(out, want) {
				t.Errorf("config print: exit %d, want %d with the error\n%s", code, exitUsage, out)
			}
			if tt.not != "" && strings.Contains(out, tt.not) {
				t.Errorf("config print shows %q", tt.not)
			}
		})
	}
}

// TestScrapeWithABadDSNFailsAtLoad: a DSN the driver cannot parse stops gpucost scrape before
// any provider is fetched, with exit 2, instead of a run that spools every batch and exits 3.
func TestScrapeWithABadDSNFailsAtLoad(t *testing.T) {
	spool := t.TempDir()
	path := filepath.Join(t.TempDir(), "gpucost.yaml")
	cfg := fmt.Sprintf("clickhouse:\n  dsn: clickhouse://default@127.0.0.1:1/gpucost?dial_timeout=banana\nscrape:\n  spool_dir: %q\n", spool)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI("scrape", "--config", path)
	if code != exitUsage || !strings.Contains(out, "config "+path+":2: clickhouse.dsn: ") {
		t.Errorf("exit %d, want %d naming %s:2\n%s", code, exitUsage, path, out)
	}
	if entries, _ := os.ReadDir(spool); len(entries) != 0 {
		t.Errorf("the spool holds %d files: the run went ahead", len(entries))
	}
}

func TestConfigPrintMasksSecrets(t *testing.T) {
	for _, tt := range []struct{ dsn, masked string }{
		{"clickhouse://gpucost:hunter2@ch:9000/gpucost", "clickhouse://gpucost:REDACTED@ch:9000/gpucost"},
		// The driver also takes the password as a parameter.
		{"clickhouse://ch:9000/gpucost?username=gpucost&password=hunter2", "clickhouse://ch:9000/gpucost?username=gpucost&password=REDACTED"},
		// A password that is the user's and the database's name (as docker-compose's default
		// gpucost:gpucost) is masked in the DSN, and does not shred the name elsewhere in it.
		{"clickhouse://analytics:analytics@ch:9000/analytics", "clickhouse://analytics:REDACTED@ch:9000/analytics"},
		{"clickhouse://ch:9000/analytics?username=analytics&password=analytics", "clickhouse://ch:9000/analytics?username=analytics&password=REDACTED"},
	} {
		code, out := runCLIEnv(map[string]string{"GPUCOST_CLICKHOUSE_DSN": tt.dsn, "GPUCOST_LAMBDA_API_KEY": "secret_lambda_key",
			"GPUCOST_VERDA_CLIENT_ID": "verda_client_id_1", "GPUCOST_VERDA_CLIENT_SECRET": "verda_client_secret_1"}, "config", "print")
		if code != exitOK {
			t.Fatalf("exit %d\n%s", code, out)
		}
		for _, secret := range []string{"hunter2", "secret_lambda_key", "verda_client_id_1", "verda_client_secret_1"} {
			if strings.Contains(out, secret) {
				t.Errorf("config print shows a secret:\n%s", out)
			}
		}
		if !strings.Contains(out, "verda: set (masked), client id set (masked)") {
			t.Errorf("config print does not show the Verda credentials' presence:\n%s", out)
		}
		if !strings.Contains(out, tt.masked) || !strings.Contains(out, "lambda: set (masked)") {
			t.Errorf("config print does not show the masked DSN %s and the key's presence:\n%s", tt.masked, out)
		}
		if n := strings.Count(out, redact.Mark); n != 1 {
			t.Errorf("config print of %s says %s %d times, want once (the DSN's password):\n%s", tt.dsn, redact.Mark, n, out)
		}
	}
}
