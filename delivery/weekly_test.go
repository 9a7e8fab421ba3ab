package delivery_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
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
