package delivery_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/report/smtptest"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/smtpmail"
)

var _ delivery.SendLog = (*memSendLog)(nil)

// memSendLog is an in-memory send log for tests without ClickHouse.
type memSendLog struct {
	mu   sync.Mutex
	rows []schema.ReportSend
}

func (m *memSendLog) SentTeams(_ context.Context, week time.Time) (map[string]time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]time.Time{}
	for _, r := range m.rows {
		if r.Week.Equal(week) && r.Status == schema.SendSent {
			if at, ok := out[r.Team]; !ok || r.SentAt.Before(at) {
				out[r.Team] = r.SentAt
			}
		}
	}
	return out, nil
}

func (m *memSendLog) RecordSends(_ context.Context, rows ...schema.ReportSend) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows = append(m.rows, rows...)
	return nil
}

// reportFixtureNow is the plan time of the fixed offer set.
var reportFixtureNow = time.Date(2025, 11, 29, 13, 0, 0, 0, time.UTC)

// fixtureReport builds the sample workloads' report on the report package's fixed offers,
// without ClickHouse.
func fixtureReport(t *testing.T) *report.Report {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "optimizer", "testdata", "offers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var offers []schema.Offer
	if err := json.Unmarshal(data, &offers); err != nil {
		t.Fatal(err)
	}
	wl := mustWorkloads(t)
	plan, err := optimizer.Optimize(optimizer.Input{Now: reportFixtureNow, Workloads: wl, Offers: offers}, optimizer.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var history []schema.HistoryPoint
	for d := 0; d < 30; d++ {
		for _, o := range offers {
			if o.GPUModel != "" && o.ObservedAt.After(reportFixtureNow.Add(-24*time.Hour)) {
				history = append(history, schema.HistoryPoint{Bucket: reportFixtureNow.Truncate(24*time.Hour).AddDate(0, 0, -d), Provider: o.Provider,
					GPUModel: o.GPUModel, PriceType: o.PriceType, Min: o.PriceUSDPerGPUHour})
			}
		}
	}
	r, err := report.Build(report.Input{Plan: plan, Offers: offers, History: history}, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withoutCharts drops the charts of every team: rendering PNGs is the slow part of an email.
func withoutCharts(r *report.Report) *report.Report {
	for i := range r.Teams {
		r.Teams[i].Charts = nil
	}
	return r
}

func mustWorkloads(t *testing.T) *optimizer.File {
	t.Helper()
	path := filepath.Join("..", "plans", "workloads.sample.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := optimizer.ParseWorkloads(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// teamAddress is each sample team's address.
var teamAddress = map[string]string{
	"search": "search-ml@example.com", "support": "support-ai@example.com",
	"research": "research@example.com", "creative": "creative@example.com",
}

// mailJob is a mailing through the sink: the settings of its SMTP client and of the delivery.
type mailJob struct {
	smtp smtpmail.Config
	opts delivery.Options
}

// mailTestJob is a report job mailing through the sink on port, logging into logs. The SMTP
// settings are report.smtp's defaults (config/gpucost.yaml) with a 10s deadline and a short
// wait between retries, which it records instead of waiting.
func mailTestJob(t *testing.T, port int, logs *bytes.Buffer) (*mailJob, *[]time.Duration) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var waits []time.Duration
	job := &mailJob{
		smtp: smtpmail.Config{Host: "127.0.0.1", Port: port, StartTLS: smtpmail.Opportunistic, Timeout: 10 * time.Second,
			Retries: 3, RetryWait: 10 * time.Millisecond, Logger: logger,
			Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }},
		opts: delivery.Options{From: "gpucost <gpucost@example.com>", Logger: logger,
			Now: func() time.Time { return reportFixtureNow.Add(time.Hour) }},
	}
	return job, &waits
}

// mail mails rep as `gpucost report --email` does (cmd/gpucost/report.go): through an SMTP
// client made from j.smtp, or for a dry run through none.
func (j *mailJob) mail(ctx context.Context, rep *report.Report, log delivery.SendLog, req delivery.Request) ([]delivery.Result, error) {
	var send delivery.Sender
	if req.EMLDir == "" {
		c, err := smtpmail.New(j.smtp)
		if err != nil {
			return nil, err
		}
		send = c
	}
	return delivery.Mail(ctx, rep, log, send, req, j.opts)
}

var cidSrc = regexp.MustCompile(`src="cid:([^"]+)"`)

// checkReportMail asserts a received message is a complete report email for team.
func checkReportMail(t *testing.T, m sinkMsg, team string) {
	t.Helper()
	if !slices.Equal(m.to, []string{teamAddress[team]}) {
		t.Errorf("%s: RCPT %v, want only %s", team, m.to, teamAddress[team])
	}
	p := smtptest.ParseMail(t, m.data)
	if to, err := p.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != teamAddress[team] {
		t.Errorf("%s: To %v (%v)", team, to, err)
	}
	for _, h := range []string{"From", "Subject", "Date", "Message-Id", "Mime-Version"} {
		if p.Header.Get(h) == "" {
			t.Errorf("%s: no %s header", team, h)
		}
	}
	if !strings.Contains(p.Text, "gpucost weekly savings for team "+team+",") || !strings.Contains(p.HTML, ">"+team+": gpucost weekly savings</h1>") {
		t.Errorf("%s: the text or HTML part is not the team's report", team)
	}
	refs := cidSrc.FindAllStringSubmatch(p.HTML, -1)
	if len(refs) == 0 {
		t.Errorf("%s: the HTML shows no chart", team)
	}
	for _, ref := range refs {
		img, ok := p.Images[ref[1]]
		if !ok || !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s: cid:%s has no PNG part", team, ref[1])
		}
	}
}

func TestReportEmailOverSTARTTLSWithAuth(t *testing.T) {
	cert, clientTLS := smtptest.SelfSigned(t)
	const password = "s3cret-Pa55-word-9731"
	sink := startSMTPSink(t, cert, "gpucost", password)
	var logs bytes.Buffer
	job, _ := mailTestJob(t, sink.port, &logs)
	job.smtp.StartTLS = smtpmail.Mandatory
	job.smtp.Username = "gpucost"
	job.smtp.Password = password
	job.smtp.TLSConfig = clientTLS
	rep := fixtureReport(t)
	sends := &memSendLog{}
	results, err := job.mail(context.Background(), rep, sends, delivery.Request{Teams: rep.TeamNames()})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := delivery.WriteResults(&out, rep.Week, results); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Status != "sent" || r.Attempts != 1 {
			t.Errorf("team %s: %s after %d attempts: %v", r.Team, r.Status, r.Attempts, r.Err)
		}
	}
	msgs := sink.messages()
	if len(msgs) != 4 {
		t.Fatalf("%d messages arrived, want one per team (4)", len(msgs))
	}
	for i, m := range msgs {
		if !m.tls {
			t.Errorf("message %d travelled without TLS", i)
		}
		checkReportMail(t, m, rep.TeamNames()[i])
	}
	if len(sink.auths) != 4 || slices.Contains(sink.auths, false) {
		t.Errorf("authentications %v, want 4, each over TLS", sink.auths)
	}
	// The send log has each team once, with the Message-ID the team received.
	if len(sends.rows) != 4 {
		t.Fatalf("%d send rows, want 4", len(sends.rows))
	}
	for i, row := range sends.rows {
		got := smtptest.ParseMail(t, msgs[i].data).Header.Get("Message-Id")
		if row.Status != schema.SendSent || row.WeekID != "2025-W48" || "<"+row.MessageID+">" != got || row.Recipients != teamAddress[row.Team] {
			t.Errorf("send row %+v, message id %s", row, got)
		}
	}
	for what, s := range map[string]string{"logs": logs.String(), "output": out.String()} {
		if strings.Contains(s, password) || strings.Contains(s, base64.StdEncoding.EncodeToString([]byte("\x00gpucost\x00"+password))) {
			t.Errorf("the SMTP password appears in the %s", what)
		}
	}
}

func TestReportEmailFailures(t *testing.T) {
	cert, clientTLS := smtptest.SelfSigned(t)
	const password = "right-password-4411"
	tests := []struct {
		name     string
		tls      bool              // the server offers STARTTLS
		starttls smtpmail.StartTLS // the client's
		password string            // the client's
		refuse   string            // team refused for good
		temp     map[string]int
		retries  int
		want     map[string]string // team → status
		attempts map[string]int
		errLike  string // in the failed teams' errors
		waits    []time.Duration
		outcome  delivery.Outcome
	}{
		{
			name: "a refused recipient fails only its team", tls: true, starttls: "mandatory", password: password, refuse: "support-ai@example.com", retries: 3,
			want:     map[string]string{"search": "sent", "support": "failed", "research": "sent", "creative": "sent"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 1},
			errLike:  "550", outcome: delivery.Partial,
		},
		{
			name: "a transient refusal is retried", tls: true, starttls: "mandatory", password: password, temp: map[string]int{"search-ml@example.com": 2}, retries: 3,
			want:     map[string]string{"search": "sent", "support": "sent", "research": "sent", "creative": "sent"},
			attempts: map[string]int{"search": 3, "support": 1, "research": 1, "creative": 1},
			waits:    []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}, outcome: delivery.OK,
		},
		{
			name: "retries run out", tls: true, starttls: "mandatory", password: password, temp: map[string]int{"creative@example.com": 5}, retries: 1,
			want:     map[string]string{"search": "sent", "support": "sent", "research": "sent", "creative": "failed"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 2},
			errLike:  "451", waits: []time.Duration{10 * time.Millisecond}, outcome: delivery.Partial,
		},
		{
			name: "mandatory STARTTLS and a server without it: nothing goes out in clear", tls: false, starttls: "mandatory", password: password, retries: 3,
			want:     map[string]string{"search": "failed", "support": "failed", "research": "failed", "creative": "failed"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 1},
			errLike:  "STARTTLS", outcome: delivery.Failed,
		},
		{
			name: "a wrong password is not retried", tls: true, starttls: "mandatory", password: "wrong-password-0000", retries: 3,
			want:     map[string]string{"search": "failed", "support": "failed", "research": "failed", "creative": "failed"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 1},
			errLike:  "535", outcome: delivery.Failed,
		},
	}
	rep := withoutCharts(fixtureReport(t)) // what fails here is SMTP, not the charts: keep it quick
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srvCert *tls.Certificate
			if tt.tls {
				srvCert = cert
			}
			sink := startSMTPSink(t, srvCert, "gpucost", password)
			if tt.refuse != "" {
				sink.refuse[tt.refuse] = true
			}
			for k, v := range tt.temp {
				sink.tempLeft[k] = v
			}
			var logs bytes.Buffer
			job, waits := mailTestJob(t, sink.port, &logs)
			job.smtp.StartTLS = tt.starttls
			job.smtp.Username = "gpucost"
			job.smtp.Password = tt.password
			job.smtp.Retries = tt.retries
			job.smtp.TLSConfig = clientTLS
			sends := &memSendLog{}
			results, err := job.mail(context.Background(), rep, sends, delivery.Request{Teams: rep.TeamNames()})
			if err != nil {
				t.Fatal(err)
			}
			got, attempts := map[string]string{}, map[string]int{}
			for _, r := range results {
				got[r.Team], attempts[r.Team] = r.Status, r.Attempts
				if r.Status == "failed" && !strings.Contains(r.Err.Error(), tt.errLike) {
					t.Errorf("team %s failed with %v, want an error mentioning %q", r.Team, r.Err, tt.errLike)
				}
				if r.Err != nil && strings.Contains(r.Err.Error(), tt.password) {
					t.Errorf("team %s: the password is in the error", r.Team)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || fmt.Sprint(attempts) != fmt.Sprint(tt.attempts) {
				t.Errorf("statuses %v attempts %v, want %v and %v", got, attempts, tt.want, tt.attempts)
			}
			if fmt.Sprint(*waits) != fmt.Sprint(tt.waits) {
				t.Errorf("waits between retries %v, want %v", *waits, tt.waits)
			}
			if outcome := delivery.OutcomeOf(results, err); outcome != tt.outcome {
				t.Errorf("outcome %s, want %s", outcome, tt.outcome)
			}
			sent := 0
			for _, s := range got {
				if s == "sent" {
					sent++
				}
			}
			if n := len(sink.messages()); n != sent {
				t.Errorf("%d messages arrived, want %d", n, sent)
			}
			// Every attempt that ended is in the send log, failures with their reason.
			if len(sends.rows) != 4 {
				t.Fatalf("%d send rows, want 4", len(sends.rows))
			}
			for _, row := range sends.rows {
				if string(row.Status) != tt.want[row.Team] || int(row.Attempts) != tt.attempts[row.Team] ||
					(row.Status == schema.SendFailed) != (row.Error != "") {
					t.Errorf("send row %+v", row)
				}
			}
			if strings.Contains(logs.String(), tt.password) {
				t.Error("the password is in the logs")
			}
		})
	}
}

// TestReportEmailServerDown: an unreachable server is retried for the first team only; the
// others get one attempt each, so a dead relay does not hold the job for teams × retries.
func TestReportEmailServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var logs bytes.Buffer
	job, waits := mailTestJob(t, port, &logs)
	job.smtp.Retries = 2
	rep := withoutCharts(fixtureReport(t))
	sends := &memSendLog{}
	results, err := job.mail(context.Background(), rep, sends, delivery.Request{Teams: rep.TeamNames()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range results {
		got = append(got, fmt.Sprintf("%s:%s:%d", r.Team, r.Status, r.Attempts))
	}
	if want := "search:failed:3 support:failed:1 research:failed:1 creative:failed:1"; strings.Join(got, " ") != want {
		t.Errorf("results %v, want %s", got, want)
	}
	if len(*waits) != 2 || len(sends.rows) != 4 || delivery.OutcomeOf(results, err) != delivery.Failed {
		t.Errorf("waits %v, %d send rows, outcome %s", *waits, len(sends.rows), delivery.OutcomeOf(results, err))
	}
}

func TestReportEmailSkipsSentTeamsUnlessForced(t *testing.T) {
	sink := startSMTPSink(t, nil, "", "")
	var logs bytes.Buffer
	job, _ := mailTestJob(t, sink.port, &logs)
	rep := withoutCharts(fixtureReport(t))
	sends := &memSendLog{rows: []schema.ReportSend{
		{Week: rep.Week.Start, WeekID: rep.Week.ID, Team: "search", Status: schema.SendSent, SentAt: reportFixtureNow},
		{Week: rep.Week.Start, WeekID: rep.Week.ID, Team: "support", Status: schema.SendFailed, SentAt: reportFixtureNow},
		{Week: rep.Week.Start.AddDate(0, 0, -7), WeekID: "2025-W47", Team: "research", Status: schema.SendSent, SentAt: reportFixtureNow},
	}}
	results, err := job.mail(context.Background(), rep, sends, delivery.Request{Teams: rep.TeamNames()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range results {
		got = append(got, r.Team+":"+r.Status)
	}
	if want := "search:already_sent support:sent research:sent creative:sent"; strings.Join(got, " ") != want {
		t.Errorf("results %v, want %s", got, want)
	}
	results, err = job.mail(context.Background(), rep, sends, delivery.Request{Teams: []string{"search", "support"}, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Status != "sent" || results[1].Status != "sent" {
		t.Errorf("forced results %+v", results)
	}
	last := sends.rows[len(sends.rows)-2:]
	if !last[0].Forced || last[0].Team != "search" || !last[1].Forced {
		t.Errorf("forced resends are not marked: %+v", last)
	}
	if n := len(sink.messages()); n != 5 {
		t.Errorf("%d messages, want 3 then 2 forced", n)
	}
}

func TestReportEmailDryRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens: a dry run must not connect
	var logs bytes.Buffer
	job, _ := mailTestJob(t, port, &logs)
	rep := fixtureReport(t)
	dir := t.TempDir()
	sends := &memSendLog{}
	results, err := job.mail(context.Background(), rep, sends, delivery.Request{Teams: rep.TeamNames(), EMLDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(sends.rows) != 0 {
		t.Errorf("a dry run recorded %d sends", len(sends.rows))
	}
	for _, r := range results {
		if r.Status != "written" || r.File != filepath.Join(dir, "2025-W48", r.Team+".eml") {
			t.Errorf("team %s: %s %s %v", r.Team, r.Status, r.File, r.Err)
			continue
		}
		raw, err := os.ReadFile(r.File)
		if err != nil {
			t.Fatal(err)
		}
		checkReportMail(t, sinkMsg{to: []string{teamAddress[r.Team]}, data: raw}, r.Team)
	}
}
