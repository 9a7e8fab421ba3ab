package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/smtpmail"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// loadReportStore returns the DSN of a migrated test database holding the optimizer's fixed
// offers, observed an hour ago, and a good run of each of their providers.
func loadReportStore(t *testing.T) string {
	t.Helper()
	dsn := storetest.DSN(t)
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "optimizer", "testdata", "offers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var offers []schema.Offer
	if err := json.Unmarshal(data, &offers); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	byProvider := map[string][]schema.Offer{}
	for _, o := range offers {
		o.ObservedAt, o.RunID = now.Add(-time.Hour), "run-report-test"
		byProvider[o.Provider] = append(byProvider[o.Provider], o)
	}
	for p, list := range byProvider {
		if err := s.InsertOffers(ctx, "run-report-test", list); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordRun(ctx, schema.ScrapeRun{RunID: "run-report-test", Provider: p, StartedAt: now.Add(-61 * time.Minute),
			FinishedAt: now.Add(-time.Hour), Status: schema.RunOK, OffersParsed: uint32(len(list)), OffersLoaded: uint32(len(list))}); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

// TestWeeklyReportSendsOnce runs the weekly job of serve twice against a real ClickHouse and a
// real SMTP server: each team gets one email. (cmd/gpucost/report_test.go goes on with the
// command: --force sends again.)
func TestWeeklyReportSendsOnce(t *testing.T) {
	dsn := loadReportStore(t)
	sink := startSMTPSink(t, nil, "", "")
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	opts := delivery.Options{Workloads: filepath.Join("..", "deploy", "workloads.sample.yaml"), Planning: optimizer.DefaultOptions(),
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
