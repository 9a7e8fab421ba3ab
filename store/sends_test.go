package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

func TestSendsRecordAndRead(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	w48 := time.Date(2025, 11, 24, 0, 0, 0, 0, time.UTC)
	w49 := w48.AddDate(0, 0, 7)
	at := time.Date(2025, 11, 24, 7, 0, 12, 0, time.UTC)
	send := func(week time.Time, id, team string, st schema.SendStatus, at time.Time, attempts uint32, errText string) schema.ReportSend {
		return schema.ReportSend{Week: week, WeekID: id, Team: team, Recipients: team + "@example.com", Status: st, SentAt: at,
			MessageID: team + "." + id + "@gpucost", Attempts: attempts, Error: errText}
	}
	first := []schema.ReportSend{
		send(w48, "2025-W48", "search", schema.SendSent, at, 1, ""),
		send(w48, "2025-W48", "support", schema.SendFailed, at, 3, "550 5.1.1 mailbox unavailable"),
		send(w49, "2025-W49", "search", schema.SendSent, at.AddDate(0, 0, 7), 1, ""),
	}
	if err := s.RecordSends(ctx, first...); err != nil {
		t.Fatal(err)
	}
	// A later run sends support, and a forced resend to search.
	retry := send(w48, "2025-W48", "support", schema.SendSent, at.Add(time.Hour), 2, "")
	forced := send(w48, "2025-W48", "search", schema.SendSent, at.Add(2*time.Hour), 1, "")
	forced.Forced = true
	if err := s.RecordSends(ctx, retry, forced); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordSends(ctx); err != nil {
		t.Fatalf("recording nothing: %v", err)
	}

	tests := []struct {
		name string
		week time.Time
		want map[string]time.Time
	}{
		{"week 48: first successful send per team", w48, map[string]time.Time{"search": at, "support": at.Add(time.Hour)}},
		{"week 48 named by another time of its Monday", w48.Add(7 * time.Hour), map[string]time.Time{"search": at, "support": at.Add(time.Hour)}},
		{"week 49", w49, map[string]time.Time{"search": at.AddDate(0, 0, 7)}},
		{"a week never sent", w48.AddDate(0, 0, -7), map[string]time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SentTeams(ctx, tt.week)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SentTeams (-want +got):\n%s", diff)
			}
		})
	}

	log, err := s.Sends(ctx, w48)
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.ReportSend{first[0], first[1], retry, forced}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("Sends (-want +got):\n%s", diff)
	}
}
