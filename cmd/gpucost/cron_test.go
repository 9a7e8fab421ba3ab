package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gpucost/gpucost/pipeline"
)

// readmeCronLines returns the crontab of README.md's "Running it on a schedule": its variable
// lines, and each job's command line split into words.
func readmeCronLines(t *testing.T) (vars map[string]string, jobs [][]string) {
	t.Helper()
	doc, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Running it on a schedule")
	_, block, ok := strings.Cut(section, "```cron\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || block == "" {
		t.Fatal("README.md has no ```cron block under \"Running it on a schedule\"")
	}
	vars = map[string]string{}
	job := regexp.MustCompile(`^(\S+\s+){5}(.+)$`)
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.ContainsAny(k, " \t") {
			vars[k] = v
			continue
		}
		m := job.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("README.md: %q is neither a variable nor a cron job", line)
		}
		jobs = append(jobs, strings.Fields(m[2]))
	}
	return vars, jobs
}

// TestREADMECronLinesPrintNothing runs the crontab lines of README.md as written there (the
// configuration file they name is this test's: the fake providers, a fresh database, a real
// SMTP server): each exits 0 and prints nothing, so cron mails nothing. When something goes
// wrong the same line prints all of it.
func TestREADMECronLinesPrintNothing(t *testing.T) {
	var runpodDown atomic.Bool
	x := newE2E(t, map[string]func(http.ResponseWriter, *http.Request) bool{"runpod": func(w http.ResponseWriter, r *http.Request) bool {
		if runpodDown.Load() {
			http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
			return true
		}
		return false
	}})
	sink := startSMTPSink(t)
	base, err := os.ReadFile(x.configPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, t.TempDir(), "gpucost.yaml", string(base)+"report:\n  out_dir: "+t.TempDir()+"\n  smtp:\n    port: "+
		strconv.Itoa(sink.port())+"\n    from: gpucost@example.com\n    starttls: \"off\"\n    retry_wait: 10ms\n")

	vars, jobs := readmeCronLines(t)
	if vars["GPUCOST_CONFIG"] == "" || len(jobs) != 3 {
		t.Fatalf("README.md's crontab: variables %v, jobs %q; want GPUCOST_CONFIG and three jobs", vars, jobs)
	}
	vars["GPUCOST_CONFIG"] = cfg // in place of /etc/gpucost/gpucost.yaml
	cron := func(words []string, extra map[string]string) (int, string, string) {
		if words[0] != "gpucost" {
			t.Fatalf("a cron job that is not gpucost: %q", words)
		}
		var stdout, stderr bytes.Buffer
		e := env{stdout: &stdout, stderr: &stderr, getenv: isolated(t.TempDir(), func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return vars[k]
		})}
		code := run(t.Context(), e, words[1:])
		return code, stdout.String(), stderr.String()
	}
	for _, words := range jobs {
		code, out, errOut := cron(words, nil)
		if code != exitOK || out != "" || errOut != "" {
			t.Fatalf("%s: exit %d, printed:\n%s%s", strings.Join(words, " "), code, out, errOut)
		}
	}
	// They did their work.
	if n := x.count("offers", ""); n == 0 {
		t.Error("the scrape line stored no offers")
	}
	if n := x.count("plans", ""); n == 0 {
		t.Error("the optimize line stored no plan")
	}
	if n := len(sink.messages()); n != 4 {
		t.Errorf("the report line sent %d emails, want one to each of the 4 sample teams", n)
	}

	// A provider down: the scrape line exits 3 and prints its summary and the error.
	runpodDown.Store(true)
	code, out, errOut := cron(jobs[0], nil)
	if code != exitPartial || !regexp.MustCompile(`(?m)^run \S+: partial: 1 of \d+ providers failed`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^runpod\s+failed\s.*HTTP 503`).MatchString(out) || !strings.Contains(errOut, `level=ERROR msg="Provider scraped"`) {
		t.Errorf("scrape with a provider down: exit %d, want %d with everything printed:\n%s\n--- stderr\n%s", code, exitPartial, out, errOut)
	}
	// A workloads file that is not there: the optimize line says so.
	code, out, errOut = cron(jobs[1], map[string]string{"GPUCOST_OPTIMIZE_WORKLOADS": filepath.Join(t.TempDir(), "missing.yaml")})
	if code != exitUsage || out != "" || !strings.Contains(errOut, "gpucost optimize: ") || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("optimize without its workloads file: exit %d:\n%s\n--- stderr\n%s", code, out, errOut)
	}
}

// TestRunFromAnyFolder: scrape and optimize run from a folder that is not the checkout: the
// spool goes to the state folder (not ./.data/spool) and optimize plans the sample teams built
// in, saying so.
func TestRunFromAnyFolder(t *testing.T) {
	x := newE2E(t, nil)
	snapshot, err := filepath.Abs(snapshotDir)
	if err != nil {
		t.Fatal(err)
	}
	state, here := t.TempDir(), t.TempDir()
	t.Chdir(here)
	vars := map[string]string{"GPUCOST_CLICKHOUSE_DSN": x.dsn, "STATE_DIRECTORY": state}
	code, out, errOut := runEnvOut(vars, "scrape", "--replay", snapshot, "--quiet")
	if code != exitOK || out != "" || errOut != "" {
		t.Fatalf("scrape: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(state, "spool", "scrape.lock")); err != nil {
		t.Errorf("the spool is not in the state folder: %v", err)
	}
	code, out, errOut = runEnvOut(vars, "optimize")
	if code != exitOK || !strings.Contains(errOut, "gpucost optimize: planning the sample teams built in; name yours with --workloads FILE\n") ||
		!strings.Contains(out, "search") || !strings.Contains(out, "research") {
		t.Errorf("optimize: exit %d\n%s\n--- stderr\n%s", code, out, errOut)
	}
	if entries, err := os.ReadDir(here); err != nil || len(entries) > 0 {
		t.Errorf("the folder the commands ran in holds %v (%v), want nothing", entries, err)
	}
}

// TestScrapeProgressOnATerminal: on a terminal, scrape draws a progress line on stderr
// (providers done of all, offers so far, elapsed), with the log lines above it, and takes it
// away before the summary; not on a terminal, and never on stdout.
func TestScrapeProgressOnATerminal(t *testing.T) {
	args := []string{"scrape", "--dry-run", "--replay", snapshotDir, "--output", "json"}
	for _, tty := range []bool{true, false} {
		var stdout, stderr bytes.Buffer
		e := env{stdout: &stdout, stderr: &stderr, stderrTTY: tty, getenv: isolated(t.TempDir(), nil)}
		if code := run(t.Context(), e, args); code != exitOK {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
		s := oneItem[pipeline.Summary](t, stdout.Bytes())
		parsed := 0
		for _, p := range s.Providers {
			parsed += p.Parsed
		}
		// A status is drawn after an erase, or after a log line has ended the line.
		status := regexp.MustCompile(`(?:\r\x1b\[K)?scraping: (\d+) of (\d+) providers done, ([\d,]+) offers so far, \d+s elapsed`)
		drawn := status.FindAllStringSubmatch(stderr.String(), -1)
		if !tty {
			if len(drawn) > 0 || strings.Contains(stderr.String(), "\r") {
				t.Errorf("a progress line drawn on a stderr that is not a terminal:\n%q", stderr.String())
			}
			continue
		}
		if len(drawn) < len(s.Providers) {
			t.Fatalf("%d progress lines drawn for %d providers:\n%q", len(drawn), len(s.Providers), stderr.String())
		}
		last := drawn[len(drawn)-1]
		all := strconv.Itoa(len(s.Providers))
		if last[1] != all || last[2] != all || strings.ReplaceAll(last[3], ",", "") != strconv.Itoa(parsed) {
			t.Errorf("the last progress line says %q, want %s of %s providers done and the %d offers parsed", last[0], all, all, parsed)
		}
		// It is gone at the end, and every log line stands whole on its own line.
		if !strings.HasSuffix(stderr.String(), "\r\x1b[K") {
			t.Errorf("the progress line is not taken away at the end: %q", stderr.String()[max(0, stderr.Len()-120):])
		}
		logs := 0
		for _, line := range strings.Split(strings.ReplaceAll(status.ReplaceAllString(stderr.String(), ""), "\r\x1b[K", ""), "\n") {
			if line == "" {
				continue
			}
			if !regexp.MustCompile(`^time=\S+ level=INFO msg="Provider scraped" `).MatchString(line) {
				t.Errorf("a log line run into the progress line: %q", line)
			}
			logs++
		}
		if logs != len(s.Providers) {
			t.Errorf("%d log lines, want one per provider (%d)", logs, len(s.Providers))
		}
	}
}

// TestExportToDevNull: /dev/null is a character device but no terminal: Parquet goes there
// (x/term decides, not the file's mode).
func TestExportToDevNull(t *testing.T) {
	fx := newAnFixture(t)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	if st, err := devnull.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is not a character device here (%v): the case this test is about does not arise", os.DevNull, err)
	}
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	e := osEnv(devnull, stderr, func(k string) string {
		if k == "GPUCOST_CLICKHOUSE_DSN" {
			return fx.DSN
		}
		return ""
	})
	if e.stdoutTTY {
		t.Fatalf("%s taken for a terminal", os.DevNull)
	}
	code := run(t.Context(), e, []string{"export", "offers", "--output", "parquet", "--since", "2000-01-01"})
	msg, _ := os.ReadFile(stderr.Name())
	if code != exitOK || len(msg) > 0 {
		t.Errorf("export offers --output parquet > %s: exit %d\n%s", os.DevNull, code, msg)
	}
	// A terminal still gets no Parquet.
	var out bytes.Buffer
	if code, errOut := runEnvTTY(&out, "export", "offers", "--output", "parquet"); code != exitUsage || !strings.Contains(errOut, "not writing Parquet to a terminal") || out.Len() > 0 {
		t.Errorf("Parquet to a terminal: exit %d, %q", code, errOut)
	}
}

// runEnvTTY runs gpucost with stdout taken for a terminal.
func runEnvTTY(stdout *bytes.Buffer, args ...string) (int, string) {
	var stderr bytes.Buffer
	e := env{stdout: stdout, stderr: &stderr, stdoutTTY: true, getenv: isolated(testState, nil)}
	return run(context.Background(), e, args), stderr.String()
}
