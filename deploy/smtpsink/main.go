// Command smtpsink is a real SMTP server (github.com/emersion/go-smtp) for gpucost's tests: it
// listens on a loopback port, can offer STARTTLS and require a login, and tells a controller on
// its standard streams about every login, recipient and message, waiting for the controller's
// answer before it replies to the client. The tests do not run it by hand: the product's test
// helper report/smtptest builds it, starts one per test server and is its controller. It lives
// in the deploy module so that the SMTP server library stays out of the product's go.mod.
//
//	smtpsink [-listen 127.0.0.1:0] [-cert FILE -key FILE] [-user NAME -password-file FILE]
//	         [-refuse-cram-md5] [-max-bytes N]
//
// What it offers and requires:
//
//   - -cert and -key (PEM): STARTTLS with that certificate; without them, no STARTTLS.
//   - -user and -password-file: AUTH PLAIN (only once the connection is TLS, as go-smtp does
//     unless told otherwise); MAIL before a login is answered 502 5.7.0, a wrong user or
//     password 535 5.7.8.
//   - -refuse-cram-md5: instead, CRAM-MD5 only (offered on plain TCP too) and every login refused
//     with a 535 5.7.8 that quotes what the client answered to the challenge; MAIL needs a login,
//     so no message gets through.
//   - without either: no AUTH, and mail from anyone.
//
// The protocol, one JSON object a line. On standard output: first {"event":"listening",
// "addr":"127.0.0.1:PORT"}, then one line per event:
//
//	{"event":"auth","mechanism":"PLAIN","user":"NAME","ok":true,"tls":true}
//	{"event":"auth","mechanism":"CRAM-MD5","user":"NAME","response":"NAME DIGEST","tls":false}
//	{"event":"rcpt","rcpt":"ADDRESS","user":"NAME","tls":true}
//	{"event":"message","from":"ADDRESS","to":["ADDRESS"],"data":"BASE64","user":"NAME","tls":true}
//
// After each event (not after listening) it reads one answer line on standard input before it
// replies to the client, so the controller has recorded the event by the time the client knows
// the outcome. {} lets the rules above answer; {"code":550,"enhanced":[5,1,1],"message":"..."}
// answers RCPT TO or DATA with that reply instead (a refused message is not accepted; an auth
// event's answer is read and not used). Logins are not refused by answer. The end of standard
// input stops the server. By hand: yes '{}' | go run ./smtpsink
package main

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// event is what the program tells its controller; report/smtptest reads the same fields.
type event struct {
	Event     string   `json:"event"`
	Addr      string   `json:"addr,omitempty"`
	Mechanism string   `json:"mechanism,omitempty"`
	User      string   `json:"user,omitempty"`
	Response  string   `json:"response,omitempty"`
	OK        bool     `json:"ok,omitempty"`
	Rcpt      string   `json:"rcpt,omitempty"`
	From      string   `json:"from,omitempty"`
	To        []string `json:"to,omitempty"`
	Data      []byte   `json:"data,omitempty"`
	TLS       bool     `json:"tls"`
}

// answer is the controller's reply to an event: a zero Code lets the program's rules answer.
type answer struct {
	Code     int               `json:"code,omitempty"`
	Enhanced smtp.EnhancedCode `json:"enhanced,omitzero"`
	Message  string            `json:"message,omitempty"`
}

func (a answer) err() error {
	if a.Code == 0 {
		return nil
	}
	return &smtp.SMTPError{Code: a.Code, EnhancedCode: a.Enhanced, Message: a.Message}
}

// controller is the other end of standard output and input. One event at a time: the next
// waits until the answer to the last has come.
type controller struct {
	mu      sync.Mutex
	out     *json.Encoder
	answers <-chan answer
}

func newController(in io.Reader, out io.Writer) *controller {
	answers := make(chan answer)
	go func() {
		dec := json.NewDecoder(in)
		for {
			var a answer
			if err := dec.Decode(&a); err != nil {
				if !errors.Is(err, io.EOF) {
					fmt.Fprintln(os.Stderr, "smtpsink: reading an answer:", err)
					os.Exit(1)
				}
				os.Exit(0) // the controller is gone: so is the server
			}
			answers <- a
		}
	}()
	return &controller{out: json.NewEncoder(out), answers: answers}
}

// tell writes ev without waiting for an answer.
func (c *controller) tell(ev event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.out.Encode(ev); err != nil {
		fmt.Fprintln(os.Stderr, "smtpsink: writing an event:", err)
		os.Exit(1)
	}
}

// ask writes ev and returns the controller's answer.
func (c *controller) ask(ev event) answer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.out.Encode(ev); err != nil {
		fmt.Fprintln(os.Stderr, "smtpsink: writing an event:", err)
		os.Exit(1)
	}
	return <-c.answers
}

type backend struct {
	ctl            *controller
	user, password string
	refuseCRAMMD5  bool
}

func (b *backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{b: b, conn: c}, nil
}

type session struct {
	b    *backend
	conn *smtp.Conn
	user string // the login, once accepted
	from string
	to   []string
}

func (s *session) isTLS() bool { _, ok := s.conn.TLSConnectionState(); return ok }

func (s *session) AuthMechanisms() []string {
	switch {
	case s.b.refuseCRAMMD5:
		return []string{"CRAM-MD5"}
	case s.b.user != "":
		return []string{sasl.Plain}
	}
	return nil
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	if s.b.refuseCRAMMD5 {
		return &cramRefuser{s: s}, nil
	}
	return sasl.NewPlainServer(func(_, username, password string) error {
		ok := username == s.b.user && password == s.b.password
		s.b.ctl.ask(event{Event: "auth", Mechanism: sasl.Plain, User: username, OK: ok, TLS: s.isTLS()})
		if !ok {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "authentication failed"}
		}
		s.user = username
		return nil
	}), nil
}

// cramRefuser sends a CRAM-MD5 challenge and refuses the answer, quoting it.
type cramRefuser struct {
	s          *session
	challenged bool
}

func (c *cramRefuser) Next(resp []byte) ([]byte, bool, error) {
	if !c.challenged {
		c.challenged = true
		return []byte("<1896.697170952@localhost>"), false, nil
	}
	user, _, _ := strings.Cut(string(resp), " ")
	c.s.b.ctl.ask(event{Event: "auth", Mechanism: "CRAM-MD5", User: user, Response: string(resp), TLS: c.s.isTLS()})
	return nil, true, &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8},
		Message: "authentication failed for " + string(resp)}
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if (s.b.user != "" || s.b.refuseCRAMMD5) && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := s.b.ctl.ask(event{Event: "rcpt", Rcpt: to, User: s.user, TLS: s.isTLS()}).err(); err != nil {
		return err
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return s.b.ctl.ask(event{Event: "message", From: s.from, To: s.to, Data: data, User: s.user, TLS: s.isTLS()}).err()
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	certFile := flag.String("cert", "", "PEM certificate (chain) to offer with STARTTLS")
	keyFile := flag.String("key", "", "PEM private key of -cert")
	user := flag.String("user", "", "require AUTH PLAIN with this user")
	passwordFile := flag.String("password-file", "", "the password of -user (the file's first line)")
	refuseCRAMMD5 := flag.Bool("refuse-cram-md5", false, "offer CRAM-MD5 only and refuse every login")
	maxBytes := flag.Int64("max-bytes", 20<<20, "the largest message accepted")
	flag.Parse()
	if flag.NArg() > 0 || (*certFile == "") != (*keyFile == "") || (*user != "" && *refuseCRAMMD5) {
		fmt.Fprintln(os.Stderr, "usage: smtpsink [-listen ADDR] [-cert FILE -key FILE] [-user NAME -password-file FILE | -refuse-cram-md5] [-max-bytes N]")
		os.Exit(2)
	}

	b := &backend{user: *user, refuseCRAMMD5: *refuseCRAMMD5}
	if *user != "" {
		pw, err := os.ReadFile(*passwordFile)
		if err != nil {
			log.Fatalf("smtpsink: -password-file: %v", err)
		}
		line, _, _ := strings.Cut(string(pw), "\n")
		b.password = strings.TrimSuffix(line, "\r")
	}
	srv := smtp.NewServer(b)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = *maxBytes
	srv.AllowInsecureAuth = *refuseCRAMMD5
	srv.ErrorLog = log.New(os.Stderr, "smtpsink: ", 0)
	if *certFile != "" {
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			log.Fatalf("smtpsink: %v", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("smtpsink: %v", err)
	}
	b.ctl = newController(os.Stdin, os.Stdout)
	b.ctl.tell(event{Event: "listening", Addr: ln.Addr().String()})
	if err := srv.Serve(ln); err != nil {
		log.Fatalf("smtpsink: %v", err)
	}
}
