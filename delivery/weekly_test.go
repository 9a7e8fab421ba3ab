package delivery_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/report/smtptest"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/smtpmail"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// TestWeeklyReportSendsOnce runs the weekly job of serve twice against a real ClickHouse and a
// real SMTP server: each team gets one email. (cmd/gpucost/report_test.go goes on with the
// command: --force sends again.)
func TestWeeklyReportSendsOnce(t *testing.T) {
	dsn := storetest.MarketDSN(t)
	sink := startSMTPSink(t, nil, "", "")
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	opts := delivery.Options{Workloads: filepath.Join("..", "plans", "workloads.sample.yaml"), Planning: optimizer.DefaultOptions(),
		HistoryWeeks: 8, From: "gpucost@example.com", Logger: logger}
	send, err := smtpmail.New(smtpmail.Config{Host: "127.0.0.1", Port: sink.port, StartTLS: smtpmail.Off, Timeout: 30 * time.Second,
		Retries: 3, RetryWait: 10 * time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		status, err := delivery.Weekly(ctx, s, s, send, opts)
		if status != "ok" || err != nil {
			t.Fatalf("run %d: status %s, %v\n%s", run, status, err, logs.String())
		}
		if n := len(sink.messages()); n != 4 {
			t.Fatalf("after run %d: %d messages, want 4 (one per team, once)", run, n)
		}
	}
	for i, m := range sink.messages() {
		checkReportMail(t, m, []string{"search", "support", "research", "creative"}[i])
	}
	week := report.WeekOf(time.Now())
	rows, err := s.Sends(ctx, week.Start)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Errorf("%d rows in report_sends, want 4: %+v", len(rows), rows)
	}
}

// TestWeeklyEmailSinceLastWeek stores three earlier plans in a real ClickHouse, of 15 days, 8
// days and 1 day ago, runs the weekly job through a real SMTP server, and checks each team's
// email compares it with the plan of 8 days ago, the newest a week old: its figures (set by
// hand), the workload new since and the one recommended elsewhere, and none of the other
// plans' figures. The emails link the configured dashboard.
func TestWeeklyEmailSinceLastWeek(t *testing.T) {
	dsn := storetest.MarketDSN(t)
	sink := startSMTPSink(t, nil, "", "")
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	workloads := filepath.Join("..", "plans", "workloads.sample.yaml")
	wl, err := plans.ReadWorkloads(workloads)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	today, err := plans.Make(ctx, s, plans.Measuring{}, wl, optimizer.DefaultOptions(), now)
	if err != nil {
		t.Fatal(err)
	}
	d := func(v string) *decimal.Decimal { x := decimal.RequireFromString(v); return &x }
	// earlier is today's plan as stored at, except research's: ft-13b did not exist, and
	// pretrain-70b was recommended 512 H100s at lambda, costing cur, saving save.
	earlier := func(at time.Time, cur, rec, save string) []schema.PlanRow {
		var rows []schema.PlanRow
		for _, r := range today.Plan.Rows("plan-" + at.Format("20060102T150405Z")) {
			r.GeneratedAt = at
			if r.Team == "research" {
				if r.Workload == "ft-13b" {
					continue
				}
				r.RecProvider, r.RecRegion, r.RecGPUModel, r.RecGPUCount, r.RecNodes = "lambda", "us-east-1", "H100-SXM-80GB", 512, 64
				r.CurrentUSDPerMonth, r.RecUSDPerMonth, r.SavingsUSDPerMonth = d(cur), d(rec), d(save)
			}
			rows = append(rows, r)
		}
		return rows
	}
	weekAgo := now.AddDate(0, 0, -8)
	for _, rows := range [][]schema.PlanRow{
		earlier(now.AddDate(0, 0, -15), "390000.00", "345555.56", "44444.44"),
		earlier(weekAgo, "380000.00", "300000.00", "80000.00"),
		earlier(now.AddDate(0, 0, -1), "370000.00", "314444.45", "55555.55"),
	} {
		if err := s.InsertPlan(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	const dashboard = "https://gpucost.example.com/"
	opts := delivery.Options{Workloads: workloads, Planning: optimizer.DefaultOptions(), HistoryWeeks: 8, From: "gpucost@example.com",
		DashboardURL: dashboard, Now: func() time.Time { return now }}
	send, err := smtpmail.New(smtpmail.Config{Host: "127.0.0.1", Port: sink.port, StartTLS: smtpmail.Off, Timeout: 30 * time.Second, Retries: 1, RetryWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if status, err := delivery.Weekly(ctx, s, s, send, opts); status != delivery.OK || err != nil {
		t.Fatalf("weekly job: %s, %v", status, err)
	}
	texts := map[string]string{}
	for i, m := range sink.messages() {
		team := []string{"search", "support", "research", "creative"}[i]
		p := smtptest.ParseMail(t, m.data)
		texts[team] = strings.ReplaceAll(p.Text, "\r\n", "\n")
		if !strings.Contains(texts[team], "\nDashboard: "+dashboard+"\n") || !strings.Contains(p.HTML, `href="`+dashboard+`"`) {
			t.Errorf("%s: the email does not link the dashboard", team)
		}
		for _, other := range []string{"$44,444.44", "$55,555.55", "$390,000.00", "$370,000.00"} {
			if strings.Contains(texts[team], other) || strings.Contains(p.HTML, other) {
				t.Errorf("%s: the email shows %s, of a plan other than the week-old one", team, other)
			}
		}
	}
	since := "SINCE LAST WEEK (against the plan of " + weekAgo.Format("2006-01-02 15:04") + " UTC)\n"
	want := map[string][]string{
		"research": {since,
			"  Savings on offer: $97,800.31 a month, up $17,800.31 from $80,000.00.\n",
			"  Today's spend: $376,787.04 a month, down $3,212.96 from $380,000.00.\n",
			"  - ft-13b: new this week; recommended runpod H100-SXM-80GB ×4 on-demand\n",
			"  - pretrain-70b: now recommended coreweave US-WEST-01 B200-SXM-180GB ×168 (21\n    nodes) on-demand; last week lambda us-east-1 H100-SXM-80GB ×512 (64 nodes)\n",
		},
		"search": {since, "  Savings on offer: $17,326.68 a month, as a week earlier.\n", "  Today's spend: $18,566.30 a month, as a week earlier.\n\nWORKLOADS"},
	}
	for team, lines := range want {
		for _, l := range lines {
			if !strings.Contains(texts[team], l) {
				t.Errorf("%s's email lacks %q:\n%s", team, l, texts[team])
			}
		}
	}
}
