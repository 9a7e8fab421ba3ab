package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// Sender hands one message to the mail system. *smtpmail.Client is one.
//
// Send returns the number of attempts it made, retries included, and the error of the last
// one; nil means the server accepted the message. Mail calls it for one team at a time and
// goes on with the next team whatever it returns. A Sender may keep state from one message to
// the next (smtpmail.Client tries a server it found unreachable once per message after).
type Sender interface {
	Send(ctx context.Context, msg *gomail.Msg) (attempts int, err error)
}

// SendLog is the record of report emails: who was sent which week. *store.Store is one.
type SendLog interface {
	// SentTeams returns the teams sent the report of the week starting at week, with the
	// time of the first successful send.
	SentTeams(ctx context.Context, week time.Time) (map[string]time.Time, error)
	// RecordSends appends sends to the log.
	RecordSends(ctx context.Context, sends ...schema.ReportSend) error
}

// Request says which teams of a report to mail, and how.
type Request struct {
	Teams []string
	// Force sends again to the teams already sent this week's report.
	Force bool
	// EMLDir makes the mailing a dry run: each message is written as DIR/WEEK/TEAM.eml, and
	// nothing is sent, read from or recorded in the send log.
	EMLDir string
}

// What happened to a team's email (Result.Status). Sent and Failed are the statuses of the
// send log (schema.SendStatus).
const (
	StatusSent        = string(schema.SendSent)
	StatusFailed      = string(schema.SendFailed)
	StatusAlreadySent = "already_sent" // sent earlier this week; not sent again
	StatusWritten     = "written"      // a dry run wrote the message as File
)

// Result is what happened to one team's email.
type Result struct {
	Team       string
	Recipients string // the To addresses, comma-separated
	Status     string // StatusSent, StatusFailed, StatusAlreadySent or StatusWritten
	MessageID  string // without angle brackets
	Attempts   int
	Err        error
	File       string // the .eml of a dry run
}

// Outcome is how a mailing went as a whole.
type Outcome string

// Outcomes.
const (
	OK      Outcome = "ok"      // every team sent (or written) or already sent
	Partial Outcome = "partial" // some teams failed, the others were sent
	Failed  Outcome = "failed"  // every team failed, or the mailing could not start
)

// OutcomeOf judges a mailing by its results and the error Mail returned with them.
func OutcomeOf(results []Result, err error) Outcome {
	sent, skipped, failed := count(results)
	switch {
	case failed == 0 && err == nil:
		return OK
	case failed > 0 && sent+skipped == 0:
		return Failed
	case err != nil && len(results) == 0:
		return Failed
	}
	return Partial
}

// Incomplete is the error of a mailing that did not reach every team: its outcome (Partial or
// Failed) and the error about the mailing as a whole, if any (the teams' own are in the
// results). gpucost report maps it to its exit code (cmd/gpucost/main.go).
type Incomplete struct {
	Outcome Outcome
	Err     error
}

func (e *Incomplete) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *Incomplete) Unwrap() error { return e.Err }

// Err returns nil for a mailing whose outcome is OK, else an *Incomplete.
func Err(results []Result, err error) error {
	if o := OutcomeOf(results, err); o != OK {
		return &Incomplete{Outcome: o, Err: err}
	}
	return nil
}

func count(results []Result) (sent, skipped, failed int) {
	for _, r := range results {
		switch r.Status {
		case StatusSent, StatusWritten:
			sent++
		case StatusAlreadySent:
			skipped++
		default:
			failed++
		}
	}
	return sent, skipped, failed
}

// Mail emails each requested team its report through send, skipping the teams already sent
// this week unless forced, and records every send in log as it ends, so a crash later does not
// send a team again. One team's failure does not stop the others. The error is about the
// mailing as a whole (the send log, ctx); each team's own error is in its result. A dry run
// (req.EMLDir) needs no send and no log.
func Mail(ctx context.Context, r *report.Report, log SendLog, send Sender, req Request, o Options) ([]Result, error) {
	logger := o.logger()
	var sent map[string]time.Time
	if req.EMLDir == "" {
		if send == nil {
			return nil, errors.New("mailing the report: no sender")
		}
		var err error
		if sent, err = log.SentTeams(ctx, r.Week.Start); err != nil {
			return nil, fmt.Errorf("reading which teams were sent week %s: %w", r.Week.ID, err)
		}
	}
	var results []Result
	var logErr error
	for _, team := range req.Teams {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		res := Result{Team: team}
		if at, ok := sent[team]; ok && !req.Force {
			res.Status = StatusAlreadySent
			logger.Info("Report already sent", "week", r.Week.ID, "team", team, "sent_at", at)
			results = append(results, res)
			continue
		}
		msg, err := r.Email(team, report.EmailOptions{From: o.From, Date: o.now(), DashboardURL: o.DashboardURL})
		if err == nil {
			var to []string
			for _, a := range msg.GetTo() {
				to = append(to, a.Address)
			}
			res.Recipients = strings.Join(to, ", ")
			res.MessageID = strings.Trim(msg.GetMessageID(), "<>")
		}
		switch {
		case err != nil:
			res.Status, res.Err = StatusFailed, err
		case req.EMLDir != "":
			res.File, res.Err = writeEML(req.EMLDir, r.Week.ID, team, msg, o)
			res.Status = StatusWritten
			if res.Err != nil {
				res.Status = StatusFailed
			}
			results = append(results, res)
			continue
		default:
			res.Attempts, res.Err = send.Send(ctx, msg)
			res.Status = StatusSent
			if res.Err != nil {
				res.Status = StatusFailed
			}
		}
		if res.Err != nil {
			logger.Error("Report email failed", "week", r.Week.ID, "team", team, "attempts", res.Attempts, "err", res.Err)
		} else {
			logger.Info("Report email sent", "week", r.Week.ID, "team", team, "to", res.Recipients, "message_id", res.MessageID, "attempts", res.Attempts)
		}
		row := schema.ReportSend{Week: r.Week.Start, WeekID: r.Week.ID, Team: team, Recipients: res.Recipients,
			Status: schema.SendSent, SentAt: o.now(), MessageID: res.MessageID, Attempts: uint32(res.Attempts), Forced: req.Force && !sent[team].IsZero()}
		if res.Err != nil {
			row.Status, row.Error = schema.SendFailed, textcell.Clean(res.Err.Error(), 500)
		}
		// Record at once: a crash later must not send this team again.
		if err := log.RecordSends(ctx, row); err != nil {
			logger.Error("Recording a report send failed", "week", r.Week.ID, "team", team, "err", err)
			logErr = errors.Join(logErr, fmt.Errorf("recording the send to team %s: %w", team, err))
		}
		results = append(results, res)
	}
	return results, logErr
}

// Weekly is the weekly job of `gpucost serve`: it builds this week's report and mails it to
// every team not yet sent it, so a job run twice (a restart, a retry) emails each team once.
// The error says why the outcome is not OK.
func Weekly(ctx context.Context, s Store, log SendLog, send Sender, o Options) (Outcome, error) {
	rep, err := Build(ctx, s, report.Week{}, o)
	if err != nil {
		return Failed, err
	}
	results, err := Mail(ctx, rep, log, send, Request{Teams: rep.TeamNames()}, o)
	sent, skipped, failed := count(results)
	o.logger().Info("Weekly report done", "week", rep.Week.ID, "sent", sent, "already_sent", skipped, "failed", failed)
	switch outcome := OutcomeOf(results, err); outcome {
	case OK:
		return OK, nil
	case Partial:
		if err == nil {
			err = fmt.Errorf("%d of %d teams failed", failed, len(results))
		}
		return Partial, err
	default:
		if err == nil {
			err = fmt.Errorf("every team failed (%d)", failed)
		}
		return Failed, err
	}
}

// writeEML writes a message as DIR/WEEK/TEAM.eml, scrubbed by o.Secrets.
func writeEML(dir, week, team string, msg *gomail.Msg, o Options) (string, error) {
	folder := filepath.Join(dir, week)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", folder, err)
	}
	path := filepath.Join(folder, report.FileStem(team)+".eml")
	var b bytes.Buffer
	if _, err := msg.WriteTo(&b); err != nil {
		return "", fmt.Errorf("writing the message of team %s: %w", team, err)
	}
	if err := os.WriteFile(path, o.Secrets.Data(b.Bytes()), 0o644); err != nil {
		return "", fmt.Errorf("writing the message of team %s: %w", team, err)
	}
	return path, nil
}

// WriteResults writes the results of a mailing of week as a table: team, status, recipients,
// attempts, and the Message-ID, the error or the .eml file. Team names, addresses and errors
// are cleaned for a terminal (package textcell).
func WriteResults(w io.Writer, week report.Week, results []Result) error {
	if len(results) == 0 {
		return nil
	}
	tb := textcell.NewTable(w, 160)
	tb.Row("WEEK", "TEAM", "STATUS", "TO", "ATTEMPTS", "DETAIL")
	for _, r := range results {
		detail := r.MessageID
		switch {
		case r.Err != nil:
			detail = r.Err.Error()
		case r.File != "":
			detail = r.File
		}
		tb.Row(week.ID, textcell.Clean(r.Team, 40), r.Status, textcell.Clean(r.Recipients, 60), strconv.Itoa(r.Attempts), detail)
	}
	return tb.Flush()
}
