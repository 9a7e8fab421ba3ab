package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHealthcheck: gpucost healthcheck exits 0, silently, when the probe answers 200, and 1 with
// one line on stderr for any other answer, a redirect, or none within --timeout.
func TestHealthcheck(t *testing.T) {
	var paths atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths.Store(r.URL.Path)
		switch r.URL.Path {
		case "/readyz":
			w.WriteHeader(http.StatusOK)
		case "/unready":
			http.Error(w, "store unreachable", http.StatusServiceUnavailable)
		case "/moved":
			http.Redirect(w, r, "/readyz", http.StatusFound)
		case "/slow":
			time.Sleep(2 * time.Second)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // on stderr; "" nothing at all
	}{
		{"ready", []string{"--url", srv.URL + "/readyz"}, exitOK, ""},
		{"not ready", []string{"--url", srv.URL + "/unready"}, exitFailed, "answered 503 Service Unavailable"},
		{"a redirect is not followed", []string{"--url", srv.URL + "/moved"}, exitFailed, "answered 302 Found"},
		{"no answer in time", []string{"--url", srv.URL + "/slow", "--timeout", "200ms"}, exitFailed, "context deadline exceeded"},
		{"nobody listening", []string{"--url", "http://" + closedAddr(t) + "/readyz"}, exitFailed, "connection refused"},
		{"a URL that is not one", []string{"--url", "localhost:8080/readyz"}, exitUsage, `--url "localhost:8080/readyz": want an http:// or https:// URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := runOut(append([]string{"healthcheck"}, tc.args...)...)
			if code != tc.code || out != "" || (tc.want == "") != (errOut == "") || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr %q", code, out, errOut, tc.code, tc.want)
			}
			if tc.code == exitFailed && strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %s: the timeout did not hold", d)
			}
		})
	}
	// Without --url it asks /readyz on the port serve.listen names.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	paths.Store("")
	code, out, errOut := runEnvOut(map[string]string{"GPUCOST_SERVE_LISTEN": "0.0.0.0:" + port}, "healthcheck")
	if code != exitOK || out != "" || errOut != "" || paths.Load() != "/readyz" {
		t.Errorf("healthcheck on serve.listen 0.0.0.0:%s: exit %d, %q %q; asked %q, want /readyz", port, code, out, errOut, paths.Load())
	}
	// A configuration that does not load is unhealthy, 1, not a usage error.
	if code, _, errOut := runEnvOut(map[string]string{"GPUCOST_SERVE_LISTEN": "localhost"}, "healthcheck"); code != exitFailed || !strings.Contains(errOut, "serve.listen") {
		t.Errorf("a bad serve.listen: exit %d, %q; want %d naming serve.listen", code, errOut, exitFailed)
	}
}

// TestReadyzURL: the probe of a serve listening on every address is asked on loopback.
func TestReadyzURL(t *testing.T) {
	for listen, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/readyz",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/readyz",
		"[::]:8080":      "http://[::1]:8080/readyz",
		"10.0.0.5:9000":  "http://10.0.0.5:9000/readyz",
		"127.0.0.1:8080": "http://127.0.0.1:8080/readyz",
	} {
		if got, err := readyzURL(listen); got != want || err != nil {
			t.Errorf("readyzURL(%q) = %q, %v; want %q", listen, got, err, want)
		}
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
