package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		"unknown key names file and line": {file: write("typo.yaml", "scrape:\n  parallelism: 2\n  paralelism: 3\n"), want: "typo.yaml: [3:3] unknown field \"paralelism\""},
		"wrong type":                      {file: write("type.yaml", "scrape:\n  parallelism: many\n"), want: "type.yaml: [2:16]"},
		"unknown provider":                {file: write("prov.yaml", "scrape:\n  providers: [vastai, aws]\n"), want: `scrape.providers: unknown provider "aws"`},
		"bad environment value":           {env: map[string]string{"GPUCOST_SCRAPE_LOAD_TIMEOUT": "soon"}, want: "GPUCOST_SCRAPE_LOAD_TIMEOUT: invalid duration"},
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
