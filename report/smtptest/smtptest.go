// Package smtptest gives tests a real SMTP server on a loopback port that keeps every message it
// accepts: the program deploy/smtpsink (github.com/emersion/go-smtp), built from this tree once
// per test binary and run once per Start. The SMTP server library is a dependency of the deploy
// module only; the product's go.mod does not list it.
//
// A server can offer STARTTLS, require AUTH PLAIN, refuse every CRAM-MD5 login, and answer
// chosen recipients 550 (for good) or 451 (a few times first). The program tells this package
// about every login, recipient and message and waits for the answer before it replies to the
// client, so what a client was told has been recorded here when the client knows it.
//
// Building the program needs the go command and the repository's deploy module (the test's
// working folder must be inside the repository, as under go test).
package smtptest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options say what a server offers and requires.
type Options struct {
	// Cert, when set, is offered with STARTTLS.
	Cert *tls.Certificate
	// User and Password: when User is set, AUTH PLAIN is offered once the connection is TLS,
	// MAIL needs that login (502 5.7.0 before it), and a wrong user or password is answered
	// 535 5.7.8.
	User, Password string
	// RefuseCRAMMD5 offers CRAM-MD5 instead (on plain TCP too: the only mechanism gpucost uses
	// without TLS) and refuses every login with a 535 5.7.8 that quotes the client's answer to
	// the challenge; MAIL needs a login, so no message is accepted. Not with User.
	RefuseCRAMMD5 bool
	// OnAuth, when set, is called with each login attempt, in order, before the client has the
	// server's answer.
	OnAuth func(Auth)
}

// Message is a message the server accepted.
type Message struct {
	From string   // MAIL FROM
	To   []string // the accepted RCPT TOs
	Data []byte   // the message as sent after DATA
	TLS  bool     // the connection was TLS
	User string   // the session's login, if any
}

// Auth is a login attempt.
type Auth struct {
	Mechanism string // PLAIN or CRAM-MD5
	User      string
	Response  string // CRAM-MD5: the client's answer to the challenge
	OK        bool
	TLS       bool
}

// Rcpt is a RCPT TO command and the reply code it got (250 when accepted).
type Rcpt struct {
	To   string
	Code int
}

// Server is a running server, stopped when the test that started it ends.
type Server struct {
	// Refuse and TempFail choose how recipients are answered at RCPT TO; the others are
	// accepted. Set them before a client connects (they are read under the server's lock).
	Refuse   map[string]bool // recipient → 550 5.1.1, every time
	TempFail map[string]int  // recipient → 451 4.3.0 for the next n times (counted down)

	addr   string
	onAuth func(Auth)

	mu    sync.Mutex
	msgs  []Message
	auths []Auth
	rcpts []Rcpt
}

// Start builds the program (once per test binary), starts a server with opts on a free loopback
// port and stops it when tb ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if opts.User != "" && opts.RefuseCRAMMD5 {
		tb.Fatal("smtptest: Options.User and RefuseCRAMMD5 exclude each other")
	}
	exe := program(tb)
	dir := tb.TempDir()
	path := filepath.Join(dir, "smtpsink")
	if err := os.WriteFile(path, exe, 0o755); err != nil {
		tb.Fatal(err)
	}
	args := []string{"-listen", "127.0.0.1:0"}
	if opts.Cert != nil {
		cert, key := writeCert(tb, dir, opts.Cert)
		args = append(args, "-cert", cert, "-key", key)
	}
	if opts.User != "" {
		pw := filepath.Join(dir, "password")
		if err := os.WriteFile(pw, []byte(opts.Password), 0o600); err != nil {
			tb.Fatal(err)
		}
		args = append(args, "-user", opts.User, "-password-file", pw)
	}
	if opts.RefuseCRAMMD5 {
		args = append(args, "-refuse-cram-md5")
	}

	// Pipes of our own rather than exec's: Wait closes those as soon as the program exits,
	// which would cut the reading of its last lines short.
	cmd := exec.Command(path, args...)
	inR, stdin, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, outW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, &stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		tb.Fatalf("smtptest: starting %s: %v", path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	s := &Server{Refuse: map[string]bool{}, TempFail: map[string]int{}, onAuth: opts.OnAuth}
	dec := json.NewDecoder(stdout)
	first := make(chan error, 1)
	go func() {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			first <- err
			return
		}
		if ev.Event != "listening" || ev.Addr == "" {
			first <- fmt.Errorf("first line %+v, want the listening address", ev)
			return
		}
		s.addr = ev.Addr
		first <- nil
	}()
	select {
	case err = <-first:
	case <-time.After(30 * time.Second):
		err = errors.New("no listening address after 30s")
	}
	if err != nil {
		cmd.Process.Kill()
		<-exited
		stdin.Close()
		stdout.Close()
		tb.Fatalf("smtptest: smtpsink did not start: %v\n%s", err, stderr.String())
	}

	served := make(chan error, 1)
	go func() { served <- s.serve(dec, json.NewEncoder(stdin)) }()
	tb.Cleanup(func() {
		stdin.Close() // the program stops at the end of its input
		var err error
		select {
		case err = <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			err = fmt.Errorf("still running 10s after its input ended; killed: %v", <-exited)
		}
		if err != nil {
			tb.Errorf("smtptest: smtpsink on %s: %v\n%s", s.addr, err, stderr.String())
		}
		// The end of its output, or an answer it no longer reads, is how it ends; anything else
		// is a line this package does not understand.
		err = <-served
		stdout.Close()
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, syscall.EPIPE) {
			tb.Errorf("smtptest: smtpsink on %s: %v\n%s", s.addr, err, stderr.String())
		}
	})
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.addr }

// Port is the server's port on 127.0.0.1.
func (s *Server) Port() int {
	_, port, _ := net.SplitHostPort(s.addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Messages returns the messages accepted so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// Auths returns the login attempts so far, in order.
func (s *Server) Auths() []Auth {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.auths)
}

// Rcpts returns the RCPT TO commands so far, in order, with their reply codes.
func (s *Server) Rcpts() []Rcpt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rcpts)
}

// event and answer are the program's protocol (deploy/smtpsink/main.go says it whole).
type event struct {
	Event     string   `json:"event"`
	Addr      string   `json:"addr"`
	Mechanism string   `json:"mechanism"`
	User      string   `json:"user"`
	Response  string   `json:"response"`
	OK        bool     `json:"ok"`
	Rcpt      string   `json:"rcpt"`
	From      string   `json:"from"`
	To        []string `json:"to"`
	Data      []byte   `json:"data"`
	TLS       bool     `json:"tls"`
}

type answer struct {
	Code     int    `json:"code,omitempty"`
	Enhanced [3]int `json:"enhanced,omitzero"`
	Message  string `json:"message,omitempty"`
}

// serve answers the program's events until its output ends.
func (s *Server) serve(dec *json.Decoder, enc *json.Encoder) error {
	for {
		var ev event
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		var a answer
		switch ev.Event {
		case "auth":
			auth := Auth{Mechanism: ev.Mechanism, User: ev.User, Response: ev.Response, OK: ev.OK, TLS: ev.TLS}
			s.mu.Lock()
			s.auths = append(s.auths, auth)
			s.mu.Unlock()
			if s.onAuth != nil {
				s.onAuth(auth)
			}
		case "rcpt":
			a = s.rcpt(ev.Rcpt)
		case "message":
			s.mu.Lock()
			s.msgs = append(s.msgs, Message{From: ev.From, To: ev.To, Data: ev.Data, TLS: ev.TLS, User: ev.User})
			s.mu.Unlock()
		default:
			return fmt.Errorf("unknown event %q", ev.Event)
		}
		if err := enc.Encode(a); err != nil {
			return err
		}
	}
}

func (s *Server) rcpt(to string) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	var a answer
	switch {
	case s.Refuse[to]:
		a = answer{Code: 550, Enhanced: [3]int{5, 1, 1}, Message: "mailbox unavailable"}
	case s.TempFail[to] > 0:
		s.TempFail[to]--
		a = answer{Code: 451, Enhanced: [3]int{4, 3, 0}, Message: "try again later"}
	}
	code := a.Code
	if code == 0 {
		code = 250
	}
	s.rcpts = append(s.rcpts, Rcpt{To: to, Code: code})
	return a
}

// writeCert writes cert's chain and key as PEM files in dir.
func writeCert(tb testing.TB, dir string, cert *tls.Certificate) (certFile, keyFile string) {
	tb.Helper()
	var chain bytes.Buffer
	for _, der := range cert.Certificate {
		pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		tb.Fatalf("smtptest: the certificate's key: %v", err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, chain.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return certFile, keyFile
}

var built struct {
	once sync.Once
	exe  []byte
	err  error
}

// program returns the smtpsink executable, built on first use: `go build` in the deploy
// module of the repository around the working folder. It is kept in memory, not on disk,
// so nothing is left behind when the test binary ends; each Start writes it to its test's
// temporary folder.
func program(tb testing.TB) []byte {
	tb.Helper()
	built.once.Do(func() { built.exe, built.err = build() })
	if built.err != nil {
		tb.Fatalf("smtptest: %v", built.err)
	}
	return built.exe
}

var productModule = regexp.MustCompile(`(?m)^module\s+github\.com/gpucost/gpucost\s*$`)

func build() ([]byte, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root := ""
	for d := dir; ; d = filepath.Dir(d) {
		if gomod, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && productModule.Match(gomod) {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			return nil, fmt.Errorf("building deploy/smtpsink: no go.mod of github.com/gpucost/gpucost above %s", dir)
		}
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("building deploy/smtpsink needs the go command: %v", err)
	}
	tmp, err := os.MkdirTemp("", "gpucost-smtpsink-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	exe := filepath.Join(tmp, "smtpsink")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-C", filepath.Join(root, "deploy"), "-trimpath", "-ldflags=-s -w", "-o", exe, "./smtpsink")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build -C %s ./smtpsink: %v\n%s", filepath.Join(root, "deploy"), err, out)
	}
	return os.ReadFile(exe)
}

// syncBuffer is the program's standard error, written by exec's copier and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
