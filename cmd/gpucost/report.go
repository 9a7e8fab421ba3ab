package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const reportHelp = `Write the weekly savings report, or email it to every team.

The report plans the workloads file (optimize.workloads, or --workloads) on the latest offers in
the store, and adds the market this week (cheapest $/GPU-hour per provider now and a week ago,
the biggest moves, new cheapest offers), the caveats (spot placements, stale or failing
providers, workloads nothing fits) and a price-history chart per recommended GPU model.

--week names another week (the send log's key, the market's "now" and the charts' end); the
plan itself is always made on the latest offers in the store.

Without --email it writes --format (text, markdown, html, csv, json; a comma-separated list, or
all) to stdout, or into --out DIR/WEEK/: all.EXT for every team selected, TEAM.EXT for each
one, and the charts as charts/TEAM-CHART.svg and .png (linked from the Markdown).

With --email each team gets its own report from report.smtp (multipart text + HTML with the
charts as inline PNG images; STARTTLS and authentication as configured, the password from
report.smtp.password_env or password_file). A team's failure does not stop the others;
transient SMTP failures are retried. Each week is sent to a team once: sends are recorded in
ClickHouse (report_sends) and a rerun skips the teams already sent, unless --force.
--dry-run writes each message as an .eml file into --out (default report.out_dir) instead.

Exit codes: 0 done (every team sent or already sent); 3 some teams failed; 1 every team
failed, or the report could not be made; 2 bad flags, config or workloads file.`

func runReport(ctx context.Context, e env, args []string) error {
	fs := newFlags("report", "[flags]", reportHelp)
	fs.withConfig()
	workloads := fs.String("workloads", "", "workloads file (default optimize.workloads)")
	teams := fs.String("team", "", "comma-separated teams (default all)")
	weekFlag := fs.String("week", "", "the report week, as 2025-W48 or a date in it (default this week)")
	formats := fs.String("format", "text", "text, markdown, html, csv, json: one, a comma-separated list, or all")
	out := fs.String("out", "", "write files into this folder instead of stdout (the .eml files of --dry-run too)")
	email := fs.Bool("email", false, "email each team its report over SMTP (report.smtp)")
	dryRun := fs.Bool("dry-run", false, "with --email: write .eml files instead of sending; record nothing")
	force := fs.Bool("force", false, "with --email: send again to teams already sent this week's report")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	usageErr := badUsage
	if (*dryRun || *force) && !*email {
		return usageErr("--dry-run and --force go with --email")
	}
	var week report.Week
	if *weekFlag != "" {
		w, err := report.ParseWeek(*weekFlag)
		if err != nil {
			return usageErr("--week: %v", err)
		}
		week = w
	}
	fmts, err := parseReportFormats(*formats)
	if err != nil {
		return usageErr("--format: %v", err)
	}
	if !*email && *out == "" && len(fmts) > 1 {
		return usageErr("--format: several formats need --out DIR")
	}
	cfg, err := fs.config(e)
	if err != nil {
		return err
	}
	if *workloads != "" {
		cfg.Optimize.Workloads = *workloads
	}
	logger := newLogger(e)
	if *email {
		logger = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	job := newReportJob(cfg, e, logger)
	s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := job.build(ctx, s, week)
	if err != nil {
		return err
	}
	selected := selection.List(*teams)
	for _, name := range selected {
		if !slices.Contains(rep.TeamNames(), name) {
			return usageErr("--team: no team %q in %s (teams: %s)", name, cfg.Optimize.Workloads, strings.Join(rep.TeamNames(), ", "))
		}
	}
	if len(selected) == 0 {
		selected = rep.TeamNames()
	}

	if !*email {
		if *out == "" {
			return narrow(rep, selected).Render(e.stdout, fmts[0])
		}
		files, err := writeReportFiles(*out, rep, selected, fmts, e.secrets)
		for _, f := range files {
			fmt.Fprintln(e.stdout, f)
		}
		return err
	}

	req := mailRequest{teams: selected, force: *force, secrets: e.secrets}
	if *dryRun {
		req.emlDir = *out
		if req.emlDir == "" {
			req.emlDir = cfg.Report.OutDir
		}
	}
	results, err := job.mail(ctx, rep, s, req)
	printMailResults(e.stdout, rep.Week, results)
	return withCode(mailExitCode(results, err), err)
}

// sendWeekly is the weekly job of `gpucost serve`: it makes this week's report and emails it to
// every team not yet sent this week's report, recording each send in ClickHouse, so a job run
// twice (a restart, a retry) emails each team once. status is ok (every team sent or already
// sent), partial (some teams failed: the rest were sent) or failed.
func sendWeekly(ctx context.Context, cfg config.Config, e env, logger *slog.Logger) (status string, err error) {
	job := newReportJob(cfg, e, logger)
	s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: logger})
	if err != nil {
		return "failed", err
	}
	defer s.Close()
	return job.weekly(ctx, s)
}

// reportJob makes reports and mails them. Its fields are what tests replace.
type reportJob struct {
	cfg    config.Config
	logger *slog.Logger
	getenv func(string) string
	now    func() time.Time
	// tlsConfig is the TLS client configuration of SMTP; nil means the system roots with the
	// server name from report.smtp.host.
	tlsConfig *tls.Config
	// sleep waits between SMTP retries; it returns early with ctx's error.
	sleep func(ctx context.Context, d time.Duration) error
}

func newReportJob(cfg config.Config, e env, logger *slog.Logger) *reportJob {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	getenv := e.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return &reportJob{cfg: cfg, logger: logger, getenv: getenv, now: time.Now, sleep: sleepCtx}
}

// weekly sends this week's report to every team not yet sent it.
func (j *reportJob) weekly(ctx context.Context, s *store.Store) (string, error) {
	rep, err := j.build(ctx, s, report.Week{})
	if err != nil {
		return "failed", err
	}
	results, err := j.mail(ctx, rep, s, mailRequest{teams: rep.TeamNames()})
	sent, skipped, failed := countResults(results)
	j.logger.Info("Weekly report done", "week", rep.Week.ID, "sent", sent, "already_sent", skipped, "failed", failed)
	switch code := mailExitCode(results, err); code {
	case exitOK:
		return "ok", nil
	case exitPartial:
		if err == nil {
			err = fmt.Errorf("%d of %d teams failed", failed, len(results))
		}
		return "partial", err
	default:
		if err == nil {
			err = fmt.Errorf("every team failed (%d)", failed)
		}
		return "failed", err
	}
}

// build makes the report of week (zero: this week): it plans the workloads on the latest
// offers, and reads the run log and the price history of every GPU model in the plan.
func (j *reportJob) build(ctx context.Context, s *store.Store, week report.Week) (*report.Report, error) {
	wl, err := plans.ReadWorkloads(j.cfg.Optimize.Workloads)
	if err != nil {
		return nil, err
	}
	last, err := s.LastRuns(ctx)
	if err != nil {
		return nil, err
	}
	now := j.now().UTC().Truncate(time.Second)
	today, err := plans.Make(ctx, s, j.cfg.Optimize.Workloads, wl, j.cfg.Optimize.Options, now)
	if err != nil {
		return nil, err
	}
	plan, offers, good := today.Plan, today.Offers, today.GoodRuns
	if week.ID == "" {
		week = report.WeekOf(now)
	}
	in := report.Input{Plan: plan, Now: now, Week: week.Start, Runs: last, GoodRuns: good}
	asOf := now
	if week.End.After(now) {
		in.Offers = offers // the market now is today's offers; a past week's comes from history
	} else {
		asOf = week.End
	}
	opts := report.DefaultOptions()
	opts.HistoryWeeks = j.cfg.Report.HistoryWeeks
	opts.MaxOfferAge = time.Duration(plan.Options.MaxOfferAgeHours * float64(time.Hour))
	end := asOf.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from := end.AddDate(0, 0, -7*opts.HistoryWeeks-9)
	for _, model := range planModels(plan) {
		points, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{model}}, From: from, To: end, Interval: schema.Day})
		if err != nil {
			return nil, err
		}
		in.History = append(in.History, points...)
	}
	return report.Build(in, opts)
}

// planModels lists the GPU models of every current and recommended placement of a plan.
func planModels(p *optimizer.Plan) []string {
	var out []string
	for _, t := range p.Teams {
		for _, w := range t.Workloads {
			for _, pl := range []*optimizer.Placement{w.Current, w.Recommended} {
				if pl != nil && pl.GPUModel != "" && !slices.Contains(out, pl.GPUModel) {
					out = append(out, pl.GPUModel)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func narrow(r *report.Report, teams []string) *report.Report {
	if len(teams) == len(r.Teams) {
		return r
	}
	c := *r
	c.Teams = nil
	for _, t := range r.Teams {
		if slices.Contains(teams, t.Name) {
			c.Teams = append(c.Teams, t)
		}
	}
	return &c
}

func parseReportFormats(s string) ([]report.Format, error) {
	if strings.TrimSpace(s) == "all" {
		return report.Formats, nil
	}
	var out []report.Format
	for _, name := range selection.List(s) {
		f, err := report.ParseFormat(name)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no format given")
	}
	return out, nil
}

// writeReportFiles writes DIR/WEEK/all.EXT, DIR/WEEK/TEAM.EXT and the charts, scrubbed of
// secrets, and returns the files written.
func writeReportFiles(dir string, r *report.Report, teams []string, fmts []report.Format, secrets *redact.Redactor) ([]string, error) {
	base := filepath.Join(dir, r.Week.ID)
	if err := os.MkdirAll(filepath.Join(base, "charts"), 0o755); err != nil {
		return nil, fmt.Errorf("creating the report folder: %w", err)
	}
	var files []string
	write := func(name string, render func(io.Writer) error) error {
		path := filepath.Join(base, name)
		var b bytes.Buffer
		if err := render(&b); err != nil {
			return err
		}
		if err := os.WriteFile(path, secrets.Data(b.Bytes()), 0o644); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
		files = append(files, path)
		return nil
	}
	all := narrow(r, teams)
	render := func(rep *report.Report, f report.Format) func(io.Writer) error {
		return func(w io.Writer) error {
			if f == report.FormatMarkdown {
				return report.WriteMarkdown(w, rep, report.MarkdownOptions{ChartDir: "charts"})
			}
			return rep.Render(w, f)
		}
	}
	for _, f := range fmts {
		if err := write("all."+f.Ext(), render(all, f)); err != nil {
			return files, err
		}
		for _, t := range all.Teams {
			one, _ := r.ForTeam(t.Name)
			if err := write(report.FileStem(t.Name)+"."+f.Ext(), render(one, f)); err != nil {
				return files, err
			}
		}
	}
	for _, t := range all.Teams {
		for _, c := range t.Charts {
			if err := write(filepath.Join("charts", report.ChartFile(t.Name, c, "svg")), func(w io.Writer) error { return report.WriteChartSVG(w, c) }); err != nil {
				return files, err
			}
			if err := write(filepath.Join("charts", report.ChartFile(t.Name, c, "png")), func(w io.Writer) error { return report.WriteChartPNG(w, c) }); err != nil {
				return files, err
			}
		}
	}
	return files, nil
}

// mailRequest says which teams to mail and how.
type mailRequest struct {
	teams  []string
	force  bool   // send to teams already sent this week's report
	emlDir string // dry run: write DIR/WEEK/TEAM.eml files, send and record nothing
	// secrets scrubs the .eml files of a dry run.
	secrets *redact.Redactor
}

// mailResult is what happened to one team's email.
type mailResult struct {
	Team       string
	Recipients string
	Status     string // sent, failed, already_sent, written (dry run)
	MessageID  string
	Attempts   int
	Err        error
	File       string // the .eml of a dry run
}

// sendLog is the record of report emails: who was sent which week. *store.Store is one.
type sendLog interface {
	SentTeams(ctx context.Context, week time.Time) (map[string]time.Time, error)
	RecordSends(ctx context.Context, sends ...schema.ReportSend) error
}

// mail emails each requested team its report, skipping teams already sent this week unless
// forced, and records every attempt. One team's failure does not stop the others. The error is
// about the run as a whole (the password, the send log); per-team errors are in the results.
func (j *reportJob) mail(ctx context.Context, rep *report.Report, log sendLog, req mailRequest) ([]mailResult, error) {
	smtpCfg := j.cfg.Report.SMTP
	var client *gomail.Client
	if req.emlDir == "" {
		password, err := smtpCfg.Password(j.getenv)
		if err != nil {
			return nil, err
		}
		if client, err = j.smtpClient(password); err != nil {
			return nil, err
		}
	}
	var sent map[string]time.Time
	if req.emlDir == "" {
		var err error
		if sent, err = log.SentTeams(ctx, rep.Week.Start); err != nil {
			return nil, fmt.Errorf("reading which teams were sent week %s: %w", rep.Week.ID, err)
		}
	}
	var results []mailResult
	var logErr error
	retries := smtpCfg.Retries
	for _, team := range req.teams {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		res := mailResult{Team: team}
		if at, ok := sent[team]; ok && !req.force {
			res.Status = "already_sent"
			j.logger.Info("Report already sent", "week", rep.Week.ID, "team", team, "sent_at", at)
			results = append(results, res)
			continue
		}
		msg, err := rep.Email(team, report.EmailOptions{From: smtpCfg.From, Date: j.now()})
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
			res.Status, res.Err = "failed", err
		case req.emlDir != "":
			res.File, res.Err = writeEML(req.emlDir, rep.Week.ID, team, msg, req.secrets)
			res.Status = "written"
			if res.Err != nil {
				res.Status = "failed"
			}
			results = append(results, res)
			continue
		default:
			res.Attempts, res.Err = j.sendWithRetries(ctx, client, team, msg, retries)
			res.Status = "sent"
			if res.Err != nil {
				res.Status = "failed"
			}
			// A server that stayed unreachable through every retry gets one attempt per
			// remaining team, not a full round of waits each.
			var opErr *net.OpError
			if res.Err != nil && errors.As(res.Err, &opErr) {
				retries = 0
			} else if res.Err == nil {
				retries = smtpCfg.Retries
			}
		}
		if res.Err != nil {
			j.logger.Error("Report email failed", "week", rep.Week.ID, "team", team, "attempts", res.Attempts, "err", res.Err)
		} else {
			j.logger.Info("Report email sent", "week", rep.Week.ID, "team", team, "to", res.Recipients, "message_id", res.MessageID, "attempts", res.Attempts)
		}
		row := schema.ReportSend{Week: rep.Week.Start, WeekID: rep.Week.ID, Team: team, Recipients: res.Recipients,
			Status: schema.SendSent, SentAt: j.now(), MessageID: res.MessageID, Attempts: uint32(res.Attempts), Forced: req.force && !sent[team].IsZero()}
		if res.Err != nil {
			row.Status, row.Error = schema.SendFailed, textcell.Clean(res.Err.Error(), 500)
		}
		// Record at once: a crash later must not send this team again.
		if err := log.RecordSends(ctx, row); err != nil {
			j.logger.Error("Recording a report send failed", "week", rep.Week.ID, "team", team, "err", err)
			logErr = errors.Join(logErr, fmt.Errorf("recording the send to team %s: %w", team, err))
		}
		results = append(results, res)
	}
	return results, logErr
}

// sendWithRetries sends msg, retrying transient failures (4xx replies, network errors) up to
// retries times with a doubling wait. It returns the number of attempts made.
func (j *reportJob) sendWithRetries(ctx context.Context, c *gomail.Client, team string, msg *gomail.Msg, retries int) (int, error) {
	wait := j.cfg.Report.SMTP.RetryWait.Std()
	for attempt := 1; ; attempt++ {
		err := c.DialAndSendWithContext(ctx, msg)
		if err == nil {
			return attempt, nil
		}
		if attempt > retries || !transientSMTP(err) || ctx.Err() != nil {
			return attempt, err
		}
		j.logger.Warn("Report email failed, retrying", "team", team, "attempt", attempt, "wait", wait, "err", err)
		if err := j.sleep(ctx, wait); err != nil {
			return attempt, err
		}
		wait *= 2
	}
}

// transientSMTP reports whether a send error may go away on its own: a 4xx reply or a network
// failure. 5xx replies, TLS and authentication errors are permanent.
func transientSMTP(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var se *gomail.SendError
	if errors.As(err, &se) {
		return se.IsTemp()
	}
	var tpe *textproto.Error
	if errors.As(err, &tpe) {
		return tpe.Code >= 400 && tpe.Code < 500
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// smtpClient configures the SMTP client from report.smtp.
func (j *reportJob) smtpClient(password string) (*gomail.Client, error) {
	c := j.cfg.Report.SMTP
	policy := gomail.TLSOpportunistic
	switch c.StartTLS {
	case "mandatory":
		policy = gomail.TLSMandatory
	case "off":
		policy = gomail.NoTLS
	}
	tlsConfig := j.tlsConfig
	if tlsConfig == nil {
		tlsConfig = &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	}
	opts := []gomail.Option{
		gomail.WithPort(c.Port),
		gomail.WithTimeout(c.Timeout.Std()),
		gomail.WithTLSPolicy(policy),
		gomail.WithTLSConfig(tlsConfig),
	}
	if c.Username != "" {
		if password == "" {
			return nil, fmt.Errorf("report.smtp.username is set but no password was found (set $%s or report.smtp.password_file)", c.PasswordEnv)
		}
		// The strongest mechanism the server offers; PLAIN and LOGIN only over TLS.
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(c.Username), gomail.WithPassword(password))
	}
	client, err := gomail.NewClient(c.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("configuring the SMTP client for %s:%d: %w", c.Host, c.Port, err)
	}
	return client, nil
}

// writeEML writes a message as DIR/WEEK/TEAM.eml, scrubbed of secrets.
func writeEML(dir, week, team string, msg *gomail.Msg, secrets *redact.Redactor) (string, error) {
	folder := filepath.Join(dir, week)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", folder, err)
	}
	path := filepath.Join(folder, report.FileStem(team)+".eml")
	var b bytes.Buffer
	if _, err := msg.WriteTo(&b); err != nil {
		return "", fmt.Errorf("writing the message of team %s: %w", team, err)
	}
	if err := os.WriteFile(path, secrets.Data(b.Bytes()), 0o644); err != nil {
		return "", fmt.Errorf("writing the message of team %s: %w", team, err)
	}
	return path, nil
}

func printMailResults(w io.Writer, week report.Week, results []mailResult) {
	if len(results) == 0 {
		return
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
	_ = tb.Flush() // a terminal that cannot be written to has no one to tell
}

func countResults(results []mailResult) (sent, skipped, failed int) {
	for _, r := range results {
		switch r.Status {
		case "sent", "written":
			sent++
		case "already_sent":
			skipped++
		default:
			failed++
		}
	}
	return sent, skipped, failed
}

// mailExitCode maps the results to an exit code: ok, partial when some teams failed, failed
// when all did.
func mailExitCode(results []mailResult, err error) int {
	sent, skipped, failed := countResults(results)
	switch {
	case failed == 0 && err == nil:
		return exitOK
	case failed > 0 && sent+skipped == 0:
		return exitFailed
	case err != nil && len(results) == 0:
		return exitFailed
	}
	return exitPartial
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
