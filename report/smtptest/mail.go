package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"
)

// Mail is a received message read back with the standard library's MIME parsers.
type Mail struct {
	Header mail.Header
	Text   string
	HTML   string
	// Images maps Content-ID (without brackets) to the decoded image part.
	Images map[string][]byte
	// Types lists every leaf part's media type, in order.
	Types []string
}

// ParseMail reads raw as an RFC 5322 message with a MIME body, or fails the test.
func ParseMail(tb testing.TB, raw []byte) Mail {
	tb.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("not an RFC 5322 message: %v", err)
	}
	m := Mail{Header: msg.Header, Images: map[string][]byte{}}
	m.walk(tb, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body)
	return m
}

func (m *Mail) walk(tb testing.TB, contentType, encoding, contentID string, body io.Reader) {
	tb.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		tb.Fatalf("Content-Type %q: %v", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextRawPart()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				tb.Fatalf("reading a %s part: %v", mt, err)
			}
			m.walk(tb, part.Header.Get("Content-Type"), part.Header.Get("Content-Transfer-Encoding"), part.Header.Get("Content-ID"), part)
		}
	}
	switch strings.ToLower(encoding) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		tb.Fatalf("decoding a %s part: %v", mt, err)
	}
	m.Types = append(m.Types, mt)
	switch {
	case mt == "text/plain":
		m.Text = string(data)
	case mt == "text/html":
		m.HTML = string(data)
	case strings.HasPrefix(mt, "image/"):
		m.Images[strings.Trim(contentID, "<>")] = data
	}
}

// SelfSigned returns a certificate for 127.0.0.1 (and localhost), for Options.Cert, and a client
// TLS configuration that trusts only it.
func SelfSigned(tb testing.TB) (*tls.Certificate, *tls.Config) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpucost test smtp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}
