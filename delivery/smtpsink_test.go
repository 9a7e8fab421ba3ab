package delivery_test

// The SMTP server of these tests: one self-contained block (the sink, then the certificate it
// offers over STARTTLS), so it can be swapped for a shared test server without touching the
// tests.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// smtpSink is a real SMTP server (github.com/emersion/go-smtp) on a loopback port that keeps
// every message it accepts. It can require STARTTLS and AUTH PLAIN, refuse a recipient for good
// (550), or refuse one a few times first (451).
type smtpSink struct {
	port       int
	user, pass string

	mu       sync.Mutex
	msgs     []sinkMsg
	refuse   map[string]bool // recipient → 550 on RCPT
	tempLeft map[string]int  // recipient → 451 on the next n RCPTs
	rcpts    map[string]int  // RCPT commands seen per recipient
	auths    []bool          // each successful AUTH: was the connection TLS?
	conns    int
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
	sink := &smtpSink{user: user, pass: pass, refuse: map[string]bool{}, tempLeft: map[string]int{}, rcpts: map[string]int{}}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		sink.mu.Lock()
		sink.conns++
		sink.mu.Unlock()
		return &sinkSession{sink: sink, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 20 << 20
	srv.ErrorLog = log.New(io.Discard, "", 0)
	if cert != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sink.port = ln.Addr().(*net.TCPAddr).Port
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return sink
}

func (s *smtpSink) messages() []sinkMsg {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

type sinkSession struct {
	sink   *smtpSink
	conn   *smtp.Conn
	authed bool
	from   string
	to     []string
}

func (s *sinkSession) isTLS() bool { _, ok := s.conn.TLSConnectionState(); return ok }

func (s *sinkSession) AuthMechanisms() []string {
	if s.sink.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *sinkSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.sink.user || password != s.sink.pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "authentication failed"}
		}
		s.authed = true
		s.sink.mu.Lock()
		s.sink.auths = append(s.sink.auths, s.isTLS())
		s.sink.mu.Unlock()
		return nil
	}), nil
}

func (s *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.sink.user != "" && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.sink.mu.Lock()
	defer s.sink.mu.Unlock()
	s.sink.rcpts[to]++
	if s.sink.refuse[to] {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "mailbox unavailable"}
	}
	if s.sink.tempLeft[to] > 0 {
		s.sink.tempLeft[to]--
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.sink.mu.Lock()
	s.sink.msgs = append(s.sink.msgs, sinkMsg{from: s.from, to: slices.Clone(s.to), data: b, tls: s.isTLS()})
	s.sink.mu.Unlock()
	return nil
}

func (s *sinkSession) Reset()        { s.from, s.to = "", nil }
func (s *sinkSession) Logout() error { return nil }

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
