package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/store/storetest"
)

// TestDurationsAreLoggedInSeconds: in both formats a duration is seconds under <key>_seconds,
// not JSON's integer nanoseconds or Go's 1m2.5s.
func TestDurationsAreLoggedInSeconds(t *testing.T) {
	var text, js bytes.Buffer
	newLogger(&text, config.LogConfig{Level: "info", Format: "text"}).Info("Job finished", "duration", 62500*time.Millisecond, "wait_seconds", 2*time.Second)
	newLogger(&js, config.LogConfig{Level: "info", Format: "json"}).Info("Job finished", "duration", 62500*time.Millisecond, "wait_seconds", 2*time.Second)
	if !strings.Contains(text.String(), " duration_seconds=62.5 wait_seconds=2\n") {
		t.Errorf("text: %s", text.String())
	}
	var rec map[string]any
	if err := json.Unmarshal(js.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["duration_seconds"] != 62.5 || rec["wait_seconds"] != 2.0 || rec["duration"] != nil {
		t.Errorf("json: %s", js.String())
	}
}

// TestOneLogFormatForEveryCommand: log.format and log.level (GPUCOST_LOG_FORMAT, _LEVEL) set
// how every command logs: a scrape and a migrate write the same JSON records, or the same
// text lines, and a level leaves out the records below it (a migrate's "Applied migration" is
// debug: it prints what it applied; a scrape's "Provider scraped" info).
func TestOneLogFormatForEveryCommand(t *testing.T) {
	commands := map[string]func() []string{
		"scrape": func() []string {
			return []string{"scrape", "--dry-run", "--replay", snapshotDir, "--providers", "lambda"}
		},
		// A database no migrate has made yet: every run applies the migrations.
		"migrate": func() []string { return []string{"migrate", "--dsn", storetest.DSN(t)} },
	}
	messages := map[string]string{"scrape": "Provider scraped", "migrate": "Applied migration"}
	for _, tc := range []struct {
		format, level string
		logged        map[string]bool // the commands whose record is at or above level
	}{
		{"json", "debug", map[string]bool{"scrape": true, "migrate": true}},
		{"text", "debug", map[string]bool{"scrape": true, "migrate": true}},
		{"text", "info", map[string]bool{"scrape": true}},
		{"json", "warn", nil},
	} {
		for _, name := range []string{"scrape", "migrate"} {
			var stdout, stderr bytes.Buffer
			vars := map[string]string{"GPUCOST_LOG_FORMAT": tc.format, "GPUCOST_LOG_LEVEL": tc.level, "GPUCOST_SCRAPE_SPOOL_DIR": t.TempDir()}
			e := env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), func(k string) string { return vars[k] })}
			if code := run(t.Context(), e, commands[name]()); code != exitOK {
				t.Fatalf("%s with log %s/%s: exit %d\n%s", name, tc.format, tc.level, code, stderr.String())
			}
			if !tc.logged[name] {
				if stderr.Len() > 0 {
					t.Errorf("%s at %s logged:\n%s", name, tc.level, stderr.String())
				}
				continue
			}
			seen := false
			for _, line := range strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n") {
				switch tc.format {
				case "json":
					var rec struct {
						Level, Msg string
						Time       time.Time
					}
					if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level == "" || rec.Time.IsZero() {
						t.Errorf("%s: a log line that is not a JSON record: %q", name, line)
					}
					seen = seen || rec.Msg == messages[name]
				default:
					if !regexp.MustCompile(`^time=\S+ level=[A-Z]+ msg=`).MatchString(line) {
						t.Errorf("%s: a log line that is not logfmt: %q", name, line)
					}
					seen = seen || strings.Contains(line, `msg="`+messages[name]+`"`)
				}
			}
			if !seen {
				t.Errorf("%s with log %s/%s: no %q record:\n%s", name, tc.format, tc.level, messages[name], stderr.String())
			}
			if name == "scrape" && !regexp.MustCompile(`"?duration_seconds"?[=:]\d+(\.\d+)?[ ,}]`).MatchString(stderr.String()) {
				t.Errorf("scrape's duration is not in seconds:\n%s", stderr.String())
			}
		}
	}
}

// TestMigrateOutputs: migrate says what it applied as a sentence a line, or as one record in
// JSON and CSV.
func TestMigrateOutputs(t *testing.T) {
	dsn := storetest.DSN(t)
	code, out, errOut := runOut("migrate", "--dsn", dsn, "--output", "json")
	if code != exitOK {
		t.Fatalf("the first migrate, JSON: exit %d\n%s%s", code, out, errOut)
	}
	m := oneItem[migration](t, []byte(out))
	if len(m.Applied) == 0 || m.SchemaVersion == 0 || m.ClickHouseVersion == "" || !strings.HasPrefix(m.Database, "gpucost_test_") {
		t.Fatalf("the first migrate, JSON: %+v\n%s%s", m, out, errOut)
	}
	code, out, _ = runOut("migrate", "--dsn", dsn, "--output", "csv")
	want := "database,schema_version,clickhouse_version,applied\n" + m.Database + "," + strconv.Itoa(m.SchemaVersion) + "," + m.ClickHouseVersion + ",\n"
	if code != exitOK || out != want {
		t.Errorf("the second migrate, CSV: exit %d\n%s\nwant\n%s", code, out, want)
	}
	code, out, _ = runOut("migrate", "--dsn", dsn)
	if code != exitOK || out != "database "+m.Database+" is up to date (schema version "+strconv.Itoa(m.SchemaVersion)+", ClickHouse "+m.ClickHouseVersion+")\n" {
		t.Errorf("the third migrate: exit %d\n%s", code, out)
	}
}
