// Package smtpmail sends mail over SMTP (github.com/wneessen/go-mail): it makes the client from a
// host, port, deadline, STARTTLS policy, TLS configuration and credentials, retries the failures
// that may go away on their own, and tells them from the ones that will not. It knows nothing of
// reports: package delivery hands it one message at a time through its Sender interface
// (delivery/delivery.go), and cmd/gpucost fills Config from report.smtp.
package smtpmail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/textproto"
	"sync"
	"syscall"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// StartTLS says whether a connection upgrades to TLS before it authenticates and sends.
type StartTLS string

// STARTTLS policies.
const (
	// Mandatory fails a send to a server that does not offer STARTTLS: nothing goes out in clear.
	Mandatory StartTLS = "mandatory"
	// Opportunistic upgrades when the server offers STARTTLS and sends in clear otherwise.
	Opportunistic StartTLS = "opportunistic"
	// Off never upgrades.
	Off StartTLS = "off"
)

// ErrNoPassword is New's error for a Config with a Username but no Password.
var ErrNoPassword = errors.New("an SMTP username needs a password")

// Config says how to reach the mail server and how hard to try.
type Config struct {
	Host string
	Port int
	// Username and Password authenticate with the strongest mechanism the server offers;
	// PLAIN and LOGIN only over TLS. No Username: no authentication.
	Username, Password string
	StartTLS           StartTLS
	// TLSConfig is the TLS client configuration; nil means the system roots, with Host as the
	// server name and TLS 1.2 at least.
	TLSConfig *tls.Config
	// Timeout is the deadline of one attempt: dial, TLS, authentication and the message.
	Timeout time.Duration
	// Retries is how many times a transient failure is retried, waiting RetryWait before the
	// first retry and twice as long before each next one.
	Retries   int
	RetryWait time.Duration
	// Sleep waits between retries and returns early with ctx's error; nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger gets a warning before each retry; nil means discard.
	Logger *slog.Logger
}

// Client sends messages through one mail server. Send calls are serialized.
type Client struct {
	mail    *gomail.Client
	retries int
	wait    time.Duration
	sleep   func(ctx context.Context, d time.Duration) error
	logger  *slog.Logger

	mu sync.Mutex
	// unreachable is set when the last send ended on a network failure after its retries: the
	// sends after it get one attempt each until one succeeds, so a dead relay does not hold a
	// mailing for messages × retries waits.
	unreachable bool
}

// New configures a client; it does not connect.
func New(c Config) (*Client, error) {
	var policy gomail.TLSPolicy
	switch c.StartTLS {
	case Mandatory:
		policy = gomail.TLSMandatory
	case Opportunistic:
		policy = gomail.TLSOpportunistic
	case Off:
		policy = gomail.NoTLS
	default:
		return nil, fmt.Errorf("configuring the SMTP client: STARTTLS policy %q (want %s, %s or %s)", c.StartTLS, Mandatory, Opportunistic, Off)
	}
	tlsConfig := c.TLSConfig
	if tlsConfig == nil {
		tlsConfig = &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	}
	opts := []gomail.Option{
		gomail.WithPort(c.Port),
		gomail.WithTimeout(c.Timeout),
		gomail.WithTLSPolicy(policy),
		gomail.WithTLSConfig(tlsConfig),
	}
	if c.Username != "" {
		if c.Password == "" {
			return nil, ErrNoPassword
		}
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(c.Username), gomail.WithPassword(c.Password))
	}
	mc, err := gomail.NewClient(c.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("configuring the SMTP client for %s:%d: %w", c.Host, c.Port, err)
	}
	cl := &Client{mail: mc, retries: c.Retries, wait: c.RetryWait, sleep: c.Sleep, logger: c.Logger}
	if cl.sleep == nil {
		cl.sleep = sleep
	}
	if cl.logger == nil {
		cl.logger = slog.New(slog.DiscardHandler)
	}
	return cl, nil
}

// Send sends msg on a connection of its own, retrying transient failures (4xx replies, network
// errors), and returns the number of attempts made and the last attempt's error. 5xx replies,
// TLS and authentication errors are not retried, nor is anything once ctx is done.
func (c *Client) Send(ctx context.Context, msg *gomail.Msg) (attempts int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	retries := c.retries
	if c.unreachable {
		retries = 0
	}
	wait := c.wait
	for attempt := 1; ; attempt++ {
		err := c.mail.DialAndSendWithContext(ctx, msg)
		if err == nil {
			c.unreachable = false
			return attempt, nil
		}
		if attempt > retries || !transient(err) || ctx.Err() != nil {
			var opErr *net.OpError
			if errors.As(err, &opErr) {
				c.unreachable = true
			}
			return attempt, err
		}
		c.logger.Warn("SMTP send failed, retrying", "to", recipients(msg), "attempt", attempt, "wait", wait, "err", err)
		if err := c.sleep(ctx, wait); err != nil {
			return attempt, err
		}
		wait *= 2
	}
}

// transient reports whether a send error may go away on its own: a 4xx reply or a network
// failure. 5xx replies, TLS and authentication errors are permanent.
func transient(err error) bool {
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

func recipients(msg *gomail.Msg) []string {
	var to []string
	for _, a := range msg.GetTo() {
		to = append(to, a.Address)
	}
	return to
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
