package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/report/smtptest"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// smtpSink is a real SMTP server on a loopback port that keeps every message it accepts
// (report/smtptest, which runs deploy/smtpsink). It can require STARTTLS and AUTH PLAIN, refuse
// a recipient for good (550), or refuse one a few times first (451).
type smtpSink struct {
	srv      *smtptest.Server
	port     int
	refuse   map[string]bool // recipient → 550 on RCPT (the server's own map: set before sending)
	tempLeft map[string]int  // recipient → 451 on the next n RCPTs (likewise)

	mu    sync.Mutex
	auths []bool // each successful AUTH: was the connection TLS?
}

type sinkMsg struct {
	from string
	to   []string
	data []byte
	tls  bool
}

// startSMTPSink starts the server; with cert it offers STARTTLS with that certificate.
func startSMTPSink(t *testing.T, cert *tls.Certificate, user, pass string) *smtpSink {
	t.Helper()
	sink := &smtpSink{}
	sink.srv = smtptest.Start(t, smtptest.Options{Cert: cert, User: user, Password: pass, OnAuth: func(a smtptest.Auth) {
		if a.OK {
			sink.mu.Lock()
			sink.auths = append(sink.auths, a.TLS)
			sink.mu.Unlock()
		}
	}})
	sink.port, sink.refuse, sink.tempLeft = sink.srv.Port(), sink.srv.Refuse, sink.srv.TempFail
	return sink
}

func (s *smtpSink) messages() []sinkMsg {
	var msgs []sinkMsg
	for _, m := range s.srv.Messages() {
		msgs = append(msgs, sinkMsg{from: m.From, to: m.To, data: m.Data, tls: m.TLS})
	}
	return msgs
}

// selfSigned returns a certificate for 127.0.0.1 and a client TLS config that trusts only it.
func selfSigned(t *testing.T) (*tls.Certificate, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpucost test smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

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
	data, err := os.ReadFile(filepath.Join("..", "..", "optimizer", "testdata", "offers.json"))
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
	path := filepath.Join("..", "..", "deploy", "workloads.sample.yaml")
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

// mailTestJob is a report job mailing through the sink on port, logging into logs.
func mailTestJob(t *testing.T, port int, logs *bytes.Buffer, getenv func(string) string) (*reportJob, *[]time.Duration) {
	t.Helper()
	cfg, err := config.Load("", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Report.SMTP.Host, cfg.Report.SMTP.Port = "127.0.0.1", port
	cfg.Report.SMTP.From = "gpucost <gpucost@example.com>"
	cfg.Report.SMTP.Timeout = config.Duration(10 * time.Second)
	cfg.Report.SMTP.RetryWait = config.Duration(10 * time.Millisecond)
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	job := newReportJob(cfg, env{getenv: getenv}, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	job.now = func() time.Time { return reportFixtureNow.Add(time.Hour) }
	var waits []time.Duration
	job.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	return job, &waits
}

// parsedMail is a received message read back with the standard library.
type parsedMail struct {
	header mail.Header
	text   string
	html   string
	images map[string][]byte // by Content-ID
}

func parseMail(t *testing.T, raw []byte) parsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not an RFC 5322 message: %v", err)
	}
	p := parsedMail{header: msg.Header, images: map[string][]byte{}}
	var walk func(ct, cte, cid string, body io.Reader)
	walk = func(ct, cte, cid string, body io.Reader) {
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatalf("Content-Type %q: %v", ct, err)
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				part, err := mr.NextRawPart()
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					t.Fatalf("reading %s: %v", mt, err)
				}
				walk(part.Header.Get("Content-Type"), part.Header.Get("Content-Transfer-Encoding"), part.Header.Get("Content-ID"), part)
			}
		}
		switch strings.ToLower(cte) {
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, body)
		case "quoted-printable":
			body = quotedprintable.NewReader(body)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			t.Fatalf("decoding a %s part: %v", mt, err)
		}
		switch {
		case mt == "text/plain":
			p.text = string(b)
		case mt == "text/html":
			p.html = string(b)
		case strings.HasPrefix(mt, "image/"):
			p.images[strings.Trim(cid, "<>")] = b
		}
	}
	walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body)
	return p
}

var cidSrc = regexp.MustCompile(`src="cid:([^"]+)"`)

// checkReportMail asserts a received message is a complete report email for team.
func checkReportMail(t *testing.T, m sinkMsg, team string) {
	t.Helper()
	if !slices.Equal(m.to, []string{teamAddress[team]}) {
		t.Errorf("%s: RCPT %v, want only %s", team, m.to, teamAddress[team])
	}
	p := parseMail(t, m.data)
	if to, err := p.header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != teamAddress[team] {
		t.Errorf("%s: To %v (%v)", team, to, err)
	}
	for _, h := range []string{"From", "Subject", "Date", "Message-Id", "Mime-Version"} {
		if p.header.Get(h) == "" {
			t.Errorf("%s: no %s header", team, h)
		}
	}
	if !strings.Contains(p.text, "TEAM "+team) || !strings.Contains(p.html, "Team "+team) {
		t.Errorf("%s: the text or HTML part is not the team's report", team)
	}
	refs := cidSrc.FindAllStringSubmatch(p.html, -1)
	if len(refs) == 0 {
		t.Errorf("%s: the HTML shows no chart", team)
	}
	for _, ref := range refs {
		img, ok := p.images[ref[1]]
		if !ok || !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s: cid:%s has no PNG part", team, ref[1])
		}
	}
}

func TestReportEmailOverSTARTTLSWithAuth(t *testing.T) {
	cert, clientTLS := selfSigned(t)
	const password = "s3cret-Pa55-word-9731"
	sink := startSMTPSink(t, cert, "gpucost", password)
	pwFile := filepath.Join(t.TempDir(), "smtp-password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	job, _ := mailTestJob(t, sink.port, &logs, nil)
	job.cfg.Report.SMTP.StartTLS = "mandatory"
	job.cfg.Report.SMTP.Username = "gpucost"
	job.cfg.Report.SMTP.PasswordFile = pwFile
	job.tlsConfig = clientTLS
	rep := fixtureReport(t)
	sends := &memSendLog{}
	results, err := job.mail(context.Background(), rep, sends, mailRequest{teams: rep.TeamNames()})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printMailResults(&out, rep.Week, results)
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
		got := parseMail(t, msgs[i].data).header.Get("Message-Id")
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
	cert, clientTLS := selfSigned(t)
	const password = "right-password-4411"
	tests := []struct {
		name     string
		tls      bool   // the server offers STARTTLS
		starttls string // report.smtp.starttls
		password string // the client's
		refuse   string // team refused for good
		temp     map[string]int
		retries  int
		want     map[string]string // team → status
		attempts map[string]int
		errLike  string // in the failed teams' errors
		waits    []time.Duration
		exit     int
	}{
		{
			name: "a refused recipient fails only its team", tls: true, starttls: "mandatory", password: password, refuse: "support-ai@example.com", retries: 3,
			want:     map[string]string{"search": "sent", "support": "failed", "research": "sent", "creative": "sent"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 1},
			errLike:  "550", exit: exitPartial,
		},
		{
			name: "a transient refusal is retried", tls: true, starttls: "mandatory", password: password, temp: map[string]int{"search-ml@example.com": 2}, retries: 3,
			want:     map[string]string{"search": "sent", "support": "sent", "research": "sent", "creative": "sent"},
			attempts: map[string]int{"search": 3, "support": 1, "research": 1, "creative": 1},
			waits:    []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}, exit: exitOK,
		},
		{
			name: "retries run out", tls: true, starttls: "mandatory", password: password, temp: map[string]int{"creative@example.com": 5}, retries: 1,
			want:     map[string]string{"search": "sent", "support": "sent", "research": "sent", "creative": "failed"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 2},
			errLike:  "451", waits: []time.Duration{10 * time.Millisecond}, exit: exitPartial,
		},
		{
			name: "mandatory STARTTLS and a server without it: nothing goes out in clear", tls: false, starttls: "mandatory", password: password, retries: 3,
			want:     map[string]string{"search": "failed", "support": "failed", "research": "failed", "creative": "failed"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 1},
			errLike:  "STARTTLS", exit: exitFailed,
		},
		{
			name: "a wrong password is not retried", tls: true, starttls: "mandatory", password: "wrong-password-0000", retries: 3,
			want:     map[string]string{"search": "failed", "support": "failed", "research": "failed", "creative": "failed"},
			attempts: map[string]int{"search": 1, "support": 1, "research": 1, "creative": 1},
			errLike:  "535", exit: exitFailed,
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
			job, waits := mailTestJob(t, sink.port, &logs, func(k string) string {
				if k == "GPUCOST_SMTP_PASSWORD" {
					return tt.password
				}
				return ""
			})
			job.cfg.Report.SMTP.StartTLS = tt.starttls
			job.cfg.Report.SMTP.Username = "gpucost"
			job.cfg.Report.SMTP.Retries = tt.retries
			job.tlsConfig = clientTLS
			sends := &memSendLog{}
			results, err := job.mail(context.Background(), rep, sends, mailRequest{teams: rep.TeamNames()})
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
			if code := mailExitCode(results, err); code != tt.exit {
				t.Errorf("exit code %d, want %d", code, tt.exit)
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
	job, waits := mailTestJob(t, port, &logs, nil)
	job.cfg.Report.SMTP.Retries = 2
	rep := withoutCharts(fixtureReport(t))
	sends := &memSendLog{}
	results, err := job.mail(context.Background(), rep, sends, mailRequest{teams: rep.TeamNames()})
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
	if len(*waits) != 2 || len(sends.rows) != 4 || mailExitCode(results, err) != exitFailed {
		t.Errorf("waits %v, %d send rows, exit %d", *waits, len(sends.rows), mailExitCode(results, err))
	}
}

func TestReportEmailSkipsSentTeamsUnlessForced(t *testing.T) {
	sink := startSMTPSink(t, nil, "", "")
	var logs bytes.Buffer
	job, _ := mailTestJob(t, sink.port, &logs, nil)
	rep := withoutCharts(fixtureReport(t))
	sends := &memSendLog{rows: []schema.ReportSend{
		{Week: rep.Week.Start, WeekID: rep.Week.ID, Team: "search", Status: schema.SendSent, SentAt: reportFixtureNow},
		{Week: rep.Week.Start, WeekID: rep.Week.ID, Team: "support", Status: schema.SendFailed, SentAt: reportFixtureNow},
		{Week: rep.Week.Start.AddDate(0, 0, -7), WeekID: "2025-W47", Team: "research", Status: schema.SendSent, SentAt: reportFixtureNow},
	}}
	results, err := job.mail(context.Background(), rep, sends, mailRequest{teams: rep.TeamNames()})
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
	results, err = job.mail(context.Background(), rep, sends, mailRequest{teams: []string{"search", "support"}, force: true})
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
	job, _ := mailTestJob(t, port, &logs, nil)
	job.cfg.Report.SMTP.Username = "gpucost" // and needs no password
	rep := fixtureReport(t)
	dir := t.TempDir()
	sends := &memSendLog{}
	results, err := job.mail(context.Background(), rep, sends, mailRequest{teams: rep.TeamNames(), emlDir: dir})
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
	data, err := os.ReadFile(filepath.Join("..", "..", "optimizer", "testdata", "offers.json"))
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
// real SMTP server: each team gets one email; --force sends again.
func TestWeeklyReportSendsOnce(t *testing.T) {
	dsn := loadReportStore(t)
	sink := startSMTPSink(t, nil, "", "")
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "gpucost.yaml")
	workloads := filepath.Join("..", "..", "deploy", "workloads.sample.yaml")
	cfgYAML := fmt.Sprintf("clickhouse:\n  dsn: %s\noptimize:\n  workloads: %s\nreport:\n  out_dir: %s\n  smtp:\n    port: %d\n    from: gpucost@example.com\n    starttls: \"off\"\n    retry_wait: 10ms\n",
		dsn, workloads, filepath.Join(dir, "out"), sink.port)
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
	e := env{stdout: io.Discard, stderr: io.Discard, getenv: getenv}
	ctx := context.Background()
	for run := 1; run <= 2; run++ {
		status, err := sendWeekly(ctx, cfg, e, logger)
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
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	week := report.WeekOf(time.Now())
	rows, err := s.Sends(ctx, week.Start)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Errorf("%d rows in report_sends, want 4: %+v", len(rows), rows)
	}

	// The command: a forced resend to one team, and a second one without --force.
	var stdout, stderr bytes.Buffer
	ce := env{stdout: &stdout, stderr: &stderr, getenv: getenv}
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
	// A dry run writes .eml files into report.out_dir and sends nothing.
	stdout.Reset()
	if code := runCommand("report", ctx, ce, []string{"--email", "--dry-run", "--team", "support"}); code != exitOK {
		t.Fatalf("dry run: exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out", week.ID, "support.eml")); err != nil || len(sink.messages()) != 5 {
		t.Errorf("dry run: %v, %d messages", err, len(sink.messages()))
	}
}

// TestReportCommandWritesFormats renders the report from ClickHouse to stdout and to a folder.
func TestReportCommandWritesFormats(t *testing.T) {
	dsn := loadReportStore(t)
	out := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "GPUCOST_CLICKHOUSE_DSN":
			return dsn
		case "GPUCOST_OPTIMIZE_WORKLOADS":
			return filepath.Join("..", "..", "deploy", "workloads.sample.yaml")
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	e := env{stdout: &stdout, stderr: &stderr, getenv: getenv}
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
