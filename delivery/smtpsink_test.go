package delivery_test

// The SMTP server of these tests (report/smtptest, which runs deploy/smtpsink) and the
// certificate it offers over STARTTLS.

import (
	"crypto/tls"
	"sync"
	"testing"

	"github.com/gpucost/gpucost/report/smtptest"
)

// smtpSink is a real SMTP server on a loopback port that keeps every message it accepts. It can
// require STARTTLS and AUTH PLAIN, refuse a recipient for good (550), or refuse one a few times
// first (451).
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
