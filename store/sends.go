package store

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpucost/gpucost/schema"
)

const sendColumns = "week, week_id, team, recipients, status, sent_at, message_id, attempts, error, forced"

// RecordSends appends rows to the send log.
func (s *Store) RecordSends(ctx context.Context, sends ...schema.ReportSend) error {
	if len(sends) == 0 {
		return nil
	}
	ctx = s.ctx(ctx, clickhouse.WithQueryID(queryID("report_sends", sends[0].WeekID)))
	batch, err := s.conn.PrepareBatch(ctx, "INSERT INTO "+s.table("report_sends")+" ("+sendColumns+")")
	if err != nil {
		return s.queryError("preparing the report send log insert", err)
	}
	defer batch.Close()
	for _, r := range sends {
		var forced uint8
		if r.Forced {
			forced = 1
		}
		if err := batch.Append(weekDate(r.Week), r.WeekID, r.Team, r.Recipients, string(r.Status), r.SentAt.UTC().Truncate(time.Second),
			r.MessageID, r.Attempts, r.Error, forced); err != nil {
			return fmt.Errorf("appending the send of week %s to team %s: %w", r.WeekID, r.Team, err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.queryError(fmt.Sprintf("recording %d report sends of week %s", len(sends), sends[0].WeekID), err)
	}
	return nil
}

// SentTeams returns the teams whose report of the week starting at week was sent, with the
// time of the first successful send.
func (s *Store) SentTeams(ctx context.Context, week time.Time) (map[string]time.Time, error) {
	rows, err := s.conn.Query(s.ctx(ctx), s.sentTeamsQuery(), weekDate(week))
	if err != nil {
		return nil, s.queryError("reading the teams already sent their report", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var team string
		var at time.Time
		if err := rows.Scan(&team, &at); err != nil {
			return nil, fmt.Errorf("reading the teams already sent their report: %w", err)
		}
		out[team] = at.UTC()
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the teams already sent their report", err)
	}
	return out, nil
}

func (s *Store) sentTeamsQuery() string {
	return "SELECT team, min(sent_at) FROM " + s.table("report_sends") +
		" WHERE week = toDate(?) AND status = 'sent' GROUP BY team ORDER BY team"
}

// Sends returns the send log of the week starting at week, oldest first.
func (s *Store) Sends(ctx context.Context, week time.Time) ([]schema.ReportSend, error) {
	rows, err := s.conn.Query(s.ctx(ctx), s.sendsQuery(), weekDate(week))
	if err != nil {
		return nil, s.queryError("reading the report send log", err)
	}
	defer rows.Close()
	var out []schema.ReportSend
	for rows.Next() {
		var r schema.ReportSend
		var status string
		var forced uint8
		if err := rows.Scan(&r.Week, &r.WeekID, &r.Team, &r.Recipients, &status, &r.SentAt, &r.MessageID, &r.Attempts, &r.Error, &forced); err != nil {
			return nil, fmt.Errorf("reading the report send log: %w", err)
		}
		// A Date comes back as midnight in some zone: keep its calendar day.
		r.Week = time.Date(r.Week.Year(), r.Week.Month(), r.Week.Day(), 0, 0, 0, 0, time.UTC)
		r.SentAt = r.SentAt.UTC()
		r.Status = schema.SendStatus(status)
		r.Forced = forced == 1
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError("reading the report send log", err)
	}
	return out, nil
}

func (s *Store) sendsQuery() string {
	return "SELECT " + sendColumns + " FROM " + s.table("report_sends") +
		" WHERE week = toDate(?) ORDER BY sent_at, team, status"
}

// weekDate is the UTC midnight of t's date: the value of a Date column.
func weekDate(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
