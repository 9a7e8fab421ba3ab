package smtptest_test

import (
	"fmt"
	"net/smtp"
	"slices"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/report/smtptest"
)

func dial(t *testing.T, s *smtptest.Server) *smtp.Client {
	t.Helper()
	c, err := smtp.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func send(c *smtp.Client, from string, to []string, body string) error {
	if err := c.Mail(from); err != nil {
		return err
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(body)); err != nil {
		return err
	}
	return w.Close()
}

// wantCode fails unless err is an SMTP reply with code.
func wantCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprint(code)) {
		t.Errorf("%s: %v, want a %d reply", what, err, code)
	}
}

func TestSTARTTLSAndPlainLogin(t *testing.T) {
	cert, clientTLS := smtptest.SelfSigned(t)
	var seen []smtptest.Auth
	s := smtptest.Start(t, smtptest.Options{Cert: cert, User: "gpucost", Password: "pass word", OnAuth: func(a smtptest.Auth) { seen = append(seen, a) }})
	if s.Port() == 0 || s.Addr() != fmt.Sprintf("127.0.0.1:%d", s.Port()) {
		t.Fatalf("address %q, port %d", s.Addr(), s.Port())
	}

	c := dial(t, s)
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH offered before STARTTLS")
	}
	wantCode(t, "MAIL before a login", c.Mail("a@example.com"), 502)
	if err := c.StartTLS(clientTLS); err != nil {
		t.Fatal(err)
	}
	// net/smtp ends the session after a refused login: the right one on a new connection.
	wantCode(t, "a wrong password", c.Auth(smtp.PlainAuth("", "gpucost", "wrong", "127.0.0.1")), 535)
	c = dial(t, s)
	if err := c.StartTLS(clientTLS); err != nil {
		t.Fatal(err)
	}
	if err := c.Auth(smtp.PlainAuth("", "gpucost", "pass word", "127.0.0.1")); err != nil {
		t.Fatal(err)
	}
	body := "Subject: hi\r\n\r\nhello\r\n"
	if err := send(c, "a@example.com", []string{"b@example.com", "c@example.com"}, body); err != nil {
		t.Fatal(err)
	}
	msgs := s.Messages() // recorded before the client had its 250
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if m.From != "a@example.com" || !slices.Equal(m.To, []string{"b@example.com", "c@example.com"}) || string(m.Data) != body || !m.TLS || m.User != "gpucost" {
		t.Errorf("message %+v", m)
	}
	want := []smtptest.Auth{
		{Mechanism: "PLAIN", User: "gpucost", OK: false, TLS: true},
		{Mechanism: "PLAIN", User: "gpucost", OK: true, TLS: true},
	}
	if !slices.Equal(s.Auths(), want) || !slices.Equal(seen, want) {
		t.Errorf("logins %+v (OnAuth saw %+v), want %+v", s.Auths(), seen, want)
	}
}

func TestRecipientRefusals(t *testing.T) {
	s := smtptest.Start(t, smtptest.Options{})
	s.Refuse["gone@example.com"] = true
	s.TempFail["busy@example.com"] = 2
	c := dial(t, s)
	if ok, _ := c.Extension("STARTTLS"); ok {
		t.Error("STARTTLS offered without a certificate")
	}
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH offered without a user")
	}
	wantCode(t, "a refused recipient", send(c, "a@example.com", []string{"gone@example.com"}, "x\r\n"), 550)
	for range 2 {
		if err := c.Reset(); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "a busy recipient", send(c, "a@example.com", []string{"busy@example.com"}, "x\r\n"), 451)
	}
	if err := c.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := send(c, "a@example.com", []string{"busy@example.com"}, "third time\r\n"); err != nil {
		t.Fatalf("the third try: %v", err)
	}
	if msgs := s.Messages(); len(msgs) != 1 || string(msgs[0].Data) != "third time\r\n" || msgs[0].TLS || msgs[0].User != "" {
		t.Errorf("messages %+v", msgs)
	}
	want := []smtptest.Rcpt{{"gone@example.com", 550}, {"busy@example.com", 451}, {"busy@example.com", 451}, {"busy@example.com", 250}}
	if got := s.Rcpts(); !slices.Equal(got, want) {
		t.Errorf("RCPTs %v, want %v", got, want)
	}
}

func TestRefuseCRAMMD5(t *testing.T) {
	s := smtptest.Start(t, smtptest.Options{RefuseCRAMMD5: true})
	c := dial(t, s)
	err := c.Auth(smtp.CRAMMD5Auth("gpucost", "secret"))
	wantCode(t, "a CRAM-MD5 login", err, 535)
	auths := s.Auths()
	if len(auths) != 1 || auths[0].Mechanism != "CRAM-MD5" || auths[0].User != "gpucost" || auths[0].OK || auths[0].TLS ||
		!strings.HasPrefix(auths[0].Response, "gpucost ") || err == nil || !strings.Contains(err.Error(), auths[0].Response) {
		t.Errorf("logins %+v, error %v: want the refused one, quoted in the reply", auths, err)
	}
	wantCode(t, "MAIL without a login", dial(t, s).Mail("a@example.com"), 502)
}
