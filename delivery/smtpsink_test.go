package delivery_test

// The SMTP server of these tests (report/smtptest, which runs deploy/smtpsink) and the
// certificate it offers over STARTTLS.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

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
