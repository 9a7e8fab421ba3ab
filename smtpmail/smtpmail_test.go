package smtpmail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strings"
	"syscall"
	"testing"
	"time"

	gomail "github.com/wneessen/go-mail"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a 4xx reply", &textproto.Error{Code: 451, Msg: "try again later"}, true},
		{"a wrapped 4xx reply", fmt.Errorf("sending: %w", &textproto.Error{Code: 421, Msg: "closing"}), true},
		{"a 5xx reply", &textproto.Error{Code: 550, Msg: "mailbox unavailable"}, false},
		{"an authentication failure", &textproto.Error{Code: 535, Msg: "authentication failed"}, false},
		{"a permanent send error", &gomail.SendError{Reason: gomail.ErrSMTPRcptTo}, false},
		{"a connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"a connection reset", fmt.Errorf("reading: %w", syscall.ECONNRESET), true},
		{"a connection closed early", io.ErrUnexpectedEOF, true},
		{"a certificate nobody trusts", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, false},
		{"a canceled run", fmt.Errorf("dialing: %w", context.Canceled), false},
		{"a run out of time", context.DeadlineExceeded, false},
		{"anything else", errors.New("STARTTLS is required, but the server does not offer it"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := transient(tt.err); got != tt.want {
				t.Errorf("transient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	ok := Config{Host: "127.0.0.1", Port: 2525, StartTLS: Mandatory, Timeout: time.Second}
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr string // "" for none
	}{
		{"mandatory STARTTLS without authentication", func(*Config) {}, ""},
		{"opportunistic STARTTLS with a username and password", func(c *Config) {
			c.StartTLS, c.Username, c.Password = Opportunistic, "gpucost", "s3cret"
		}, ""},
		{"STARTTLS off", func(c *Config) { c.StartTLS = Off }, ""},
		{"an unknown STARTTLS policy", func(c *Config) { c.StartTLS = "sometimes" }, `STARTTLS policy "sometimes"`},
		{"no STARTTLS policy", func(c *Config) { c.StartTLS = "" }, `STARTTLS policy ""`},
		{"a username without a password", func(c *Config) { c.Username = "gpucost" }, ErrNoPassword.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			_, err := New(c)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("New: %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// TestSendToAnUnreachableServer: a server nobody answers on is retried with doubling waits for
// the first message; the next gets one attempt, until a message goes through.
func TestSendToAnUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens
	var waits []time.Duration
	c, err := New(Config{Host: "127.0.0.1", Port: port, StartTLS: Off, Timeout: 5 * time.Second, Retries: 2, RetryWait: 10 * time.Millisecond,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	msg := gomail.NewMsg()
	if err := msg.From("gpucost@example.com"); err != nil {
		t.Fatal(err)
	}
	if err := msg.To("search-ml@example.com"); err != nil {
		t.Fatal(err)
	}
	msg.SetBodyString(gomail.TypeTextPlain, "hello")
	var got []int
	for range 2 {
		attempts, err := c.Send(context.Background(), msg)
		var opErr *net.OpError
		if !errors.As(err, &opErr) {
			t.Fatalf("attempt %d: %v, want a network error", len(got)+1, err)
		}
		got = append(got, attempts)
	}
	if fmt.Sprint(got) != "[3 1]" || fmt.Sprint(waits) != "[10ms 20ms]" {
		t.Errorf("attempts %v with waits %v, want [3 1] with [10ms 20ms]", got, waits)
	}
}
