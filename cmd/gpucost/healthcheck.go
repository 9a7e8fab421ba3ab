package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"
)

const healthcheckHelp = `Ask a running gpucost serve whether it is ready: GET its readiness probe, by default
http://127.0.0.1:PORT/readyz with the port of serve.listen (the address itself when serve.listen
names one; loopback when it listens on every address). Exit 0 when it answers 200 within
--timeout, 1 otherwise (another status, a redirect, no answer, a configuration that does not
load); nothing is printed on success, one line on stderr otherwise. It is the healthcheck of the
distroless image, which has no shell, curl or wget:

  healthcheck:
    test: ["CMD", "/usr/local/bin/gpucost", "healthcheck"]

--url asks another URL (/livez for liveness, another host or port).`

// healthcheckTimeout is the default deadline of the probe: a healthcheck's own interval is
// seconds long.
const healthcheckTimeout = 3 * time.Second

func healthcheckCommand(e env) *cobra.Command {
	var (
		cf      configFlag
		target  string
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "healthcheck [--url URL] [--timeout 3s]",
		Short: "exit 0 when gpucost serve answers its readiness probe, 1 otherwise (for container healthchecks)",
		Long:  healthcheckHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if timeout <= 0 {
				return badUsage("--timeout %s: want a positive duration", timeout)
			}
			if target != "" {
				if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return badUsage("--url %q: want an http:// or https:// URL", target)
				}
			} else {
				cfg, err := cf.load(e)
				if err != nil {
					// Not a usage error: for a healthcheck, anything but healthy is 1.
					return fmt.Errorf("no probe to ask: %s", err)
				}
				if target, err = readyzURL(cfg.Serve.Listen); err != nil {
					return err
				}
			}
			return probe(cmd.Context(), target, timeout)
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&target, "url", "", "the probe to GET (default http://127.0.0.1:PORT/readyz, PORT from serve.listen)")
	cmd.Flags().DurationVar(&timeout, "timeout", healthcheckTimeout, "give up after this long")
	return cmd
}

// readyzURL is the readiness probe of a serve listening on listen (host:port): on loopback
// when the host is empty or unspecified (every address).
func readyzURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("serve.listen %q: %w", listen, err)
	}
	switch ip := net.ParseIP(host); {
	case host == "":
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified() && ip.To4() != nil:
		host = "127.0.0.1"
	case ip != nil && ip.IsUnspecified():
		host = "::1"
	}
	return (&url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/readyz"}).String(), nil
}

// probe GETs target within timeout: nil on 200, an error saying what came instead otherwise.
// A redirect is not followed: a probe that moved is not this serve's.
func probe(ctx context.Context, target string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("not healthy: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not healthy: %s answered %s", target, resp.Status)
	}
	return nil
}
