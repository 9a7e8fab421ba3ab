package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/optimizer"
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
	noEnv := func(string) string { return "" }

	good := write("good.yaml", "scrape:\n  parallelism: 2\n")
	env := map[string]string{"GPUCOST_SCRAPE_PROVIDERS": "vastai, runpod", "GPUCOST_SCRAPE_LOAD_TIMEOUT": "45s"}
	cfg, err := loadConfig(good, func(k string) string { return env[k] })
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
		"unknown key names file and line":  {file: write("typo.yaml", "scrape:\n  parallelism: 2\n  paralelism: 3\n"), want: "typo.yaml: [3:3] unknown field \"paralelism\""},
		"wrong type":                       {file: write("type.yaml", "scrape:\n  parallelism: many\n"), want: "type.yaml: [2:16]"},
		"unknown provider":                 {file: write("prov.yaml", "scrape:\n  providers: [vastai, aws]\n"), want: `scrape.providers: unknown provider "aws"`},
		"bad environment value":            {env: map[string]string{"GPUCOST_SCRAPE_LOAD_TIMEOUT": "soon"}, want: "GPUCOST_SCRAPE_LOAD_TIMEOUT: invalid duration"},
		"an optimizer option out of range": {file: write("opt.yaml", "optimize:\n  options:\n    utilization: 1.5\n"), want: "optimize.options: option utilization: 1.5 not in (0, 1]"},
		"a key that has moved":             {file: write("moved.yaml", "optimize:\n  offer_max_age: 6h\n"), want: "(offer_max_age has moved: optimize.options.max_offer_age_hours, in hours (default 24))"},
		"an unknown optimizer option":      {file: write("optkey.yaml", "optimize:\n  options:\n    max_scrape_age_hours: 6\n"), want: "optkey.yaml: [3:5] unknown field \"max_scrape_age_hours\""},
		"a bad boolean":                    {env: map[string]string{"GPUCOST_OPTIMIZE_OPTIONS_ALLOW_COMMITMENTS": "sometimes"}, want: "GPUCOST_OPTIMIZE_OPTIONS_ALLOW_COMMITMENTS: invalid boolean"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(tt.file, func(k string) string { return tt.env[k] })
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := loadConfig(filepath.Join(dir, "missing.yaml"), noEnv); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestConfigOptions: the embedded optimize.options are the optimizer's own defaults, and a file
// or the environment changes single options.
func TestConfigOptions(t *testing.T) {
	cfg, err := loadConfig("", func(string) string { return "" })
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
	env := map[string]string{"GPUCOST_OPTIMIZE_OPTIONS_ALLOW_COMMITMENTS": "true", "GPUCOST_OPTIMIZE_OPTIONS_MFU_SXM": "0.45"}
	cfg, err = loadConfig(file, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Optimize.Options
	if o.MaxOfferAgeHours != 72 || o.Scaling.PCIe != 0.5 || o.Scaling.NVSwitch != 0.9 || !o.AllowCommitments || o.MFU.SXM != 0.45 || o.Utilization != 0.9 {
		t.Errorf("options %+v: want max age 72, PCIe scaling 0.5 (NVSwitch kept 0.9), commitments, MFU 0.45 on SXM, the rest default", o)
	}
}

func TestConfigPrintMasksSecrets(t *testing.T) {
	code, out := runCLIEnv(map[string]string{
		"GPUCOST_CLICKHOUSE_DSN": "clickhouse://gpucost:hunter2@ch:9000/gpucost",
		"GPUCOST_LAMBDA_API_KEY": "secret_lambda_key",
	}, "config", "print")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if strings.Contains(out, "hunter2") || strings.Contains(out, "secret_lambda_key") {
		t.Errorf("config print shows a secret:\n%s", out)
	}
	if !strings.Contains(out, "clickhouse://gpucost:xxxxx@ch:9000/gpucost") || !strings.Contains(out, "lambda: set (masked)") {
		t.Errorf("config print does not show the masked DSN and the key's presence:\n%s", out)
	}
}
