package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/report/smtptest"
	"github.com/gpucost/gpucost/store/storetest"
)

// startSMTPSink starts a real SMTP server on a loopback port that keeps every message it
// accepts (report/smtptest, which runs deploy/smtpsink): no STARTTLS, no AUTH, no refusals.
func startSMTPSink(t *testing.T) *smtpSink { return &smtpSink{smtptest.Start(t, smtptest.Options{})} }

type smtpSink struct{ srv *smtptest.Server }

func (s *smtpSink) port() int { return s.srv.Port() }

func (s *smtpSink) messages() [][]byte {
	var msgs [][]byte
	for _, m := range s.srv.Messages() {
		msgs = append(msgs, m.Data)
	}
	return msgs
}

// TestReportCommandSendsOnce: once the weekly job of serve has mailed every team (sendWeekly,
// on a real ClickHouse and a real SMTP server; delivery/weekly_test.go runs it twice), the
// command sends again only with --force, and --dry-run writes .eml files and sends nothing.
func TestReportCommandSendsOnce(t *testing.T) {
	dsn := storetest.MarketDSN(t)
	sink := startSMTPSink(t)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "gpucost.yaml")
	workloads := filepath.Join("..", "..", "plans", "workloads.sample.yaml")
	cfgYAML := fmt.Sprintf("clickhouse:\n  dsn: %s\noptimize:\n  workloads: %s\nreport:\n  out_dir: %s\n  smtp:\n    port: %d\n    from: gpucost@example.com\n    starttls: \"off\"\n    retry_wait: 10ms\n",
		dsn, workloads, filepath.Join(dir, "out"), sink.port())
	if err := os.WriteFile(cfgFile, []byte(cfgYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "GPUCOST_CONFIG" {
			return cfgFile
		}
		return ""
	}
	cfg, err := config.Load(cfgFile, getenv)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	e := env{stdout: io.Discard, stderr: io.Discard, getenv: isolated(t.TempDir(), getenv)}
	ctx := context.Background()
	if status, err := sendWeekly(ctx, cfg, e, logger); status != "ok" || err != nil || len(sink.messages()) != 4 {
		t.Fatalf("the weekly job: status %s, %v, %d messages, want 4\n%s", status, err, len(sink.messages()), logs.String())
	}
	week := report.WeekOf(time.Now())

	// The command: a forced resend to one team, and a second one without --force.
	var stdout, stderr bytes.Buffer
	ce := env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), getenv)}
	if code := runCommand("report", ctx, ce, []string{"--email", "--force", "--team", "search"}); code != exitOK {
		t.Fatalf("report --email --force: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "search") || len(sink.messages()) != 5 {
		t.Errorf("forced resend: %d messages\n%s", len(sink.messages()), stdout.String())
	}
	stdout.Reset()
	if code := runCommand("report", ctx, ce, []string{"--email"}); code != exitOK || strings.Count(stdout.String(), "already_sent") != 4 || len(sink.messages()) != 5 {
		t.Errorf("rerun: exit %d, %d messages\n%s%s", code, len(sink.messages()), stdout.String(), stderr.String())
	}
	// A dry run writes .eml files into report.out_dir and sends nothing; it needs no SMTP
	// password, even with a username.
	stdout.Reset()
	de := env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "GPUCOST_REPORT_SMTP_USERNAME" {
			return "gpucost"
		}
		return getenv(k)
	}}
	if code := runCommand("report", ctx, de, []string{"--email", "--dry-run", "--team", "support"}); code != exitOK {
		t.Fatalf("dry run: exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out", week.ID, "support.eml")); err != nil || len(sink.messages()) != 5 {
		t.Errorf("dry run: %v, %d messages", err, len(sink.messages()))
	}
}

// TestReportCommandWritesFormats renders the report from ClickHouse to stdout and to a folder.
func TestReportCommandWritesFormats(t *testing.T) {
	dsn := storetest.MarketDSN(t)
	out := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "GPUCOST_CLICKHOUSE_DSN":
			return dsn
		case "GPUCOST_OPTIMIZE_WORKLOADS":
			return filepath.Join("..", "..", "plans", "workloads.sample.yaml")
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	e := env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), getenv)}
	ctx := context.Background()
	if code := runCommand("report", ctx, e, []string{"--format", "json", "--team", "support"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var r report.Report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("stdout is not the JSON report: %v", err)
	}
	if r.Schema != report.SchemaVersion || len(r.Teams) != 1 || r.Teams[0].Name != "support" || len(r.Org.Teams) != 4 {
		t.Errorf("report: schema %s, %d teams", r.Schema, len(r.Teams))
	}
	if len(r.Teams[0].Charts) == 0 || len(r.Teams[0].Market.Prices) == 0 {
		t.Error("no charts or market prices from the store's history")
	}
	stdout.Reset()
	if code := runCommand("report", ctx, e, []string{"--format", "all", "--out", out}); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	week := report.WeekOf(time.Now()).ID
	for _, name := range []string{"all.txt", "all.md", "all.html", "all.csv", "all.json", "search.html", "creative.md"} {
		if _, err := os.Stat(filepath.Join(out, week, name)); err != nil {
			t.Error(err)
		}
	}
	charts, _ := filepath.Glob(filepath.Join(out, week, "charts", "*.svg"))
	pngs, _ := filepath.Glob(filepath.Join(out, week, "charts", "*.png"))
	if len(charts) == 0 || len(charts) != len(pngs) {
		t.Errorf("%d SVG and %d PNG charts", len(charts), len(pngs))
	}
	md, _ := os.ReadFile(filepath.Join(out, week, "search.md"))
	for _, m := range regexp.MustCompile(`\]\((charts/[^)]+)\)`).FindAllStringSubmatch(string(md), -1) {
		if _, err := os.Stat(filepath.Join(out, week, m[1])); err != nil {
			t.Errorf("the Markdown links a chart that is not there: %v", err)
		}
	}

	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--team", "nobody"}, exitUsage, `no team "nobody"`},
		{[]string{"--format", "pdf"}, exitUsage, "unknown report format"},
		{[]string{"--format", "csv,json"}, exitUsage, "need --out"},
		{[]string{"--week", "2025-W60"}, exitUsage, "--week"},
		{[]string{"--force"}, exitUsage, "go with --email"},
		{[]string{"--workloads", "no-such-file.yaml"}, exitUsage, "no-such-file.yaml"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stderr.Reset()
			if code := runCommand("report", ctx, e, tt.args); code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, stderr.String(), tt.want)
			}
		})
	}
}
