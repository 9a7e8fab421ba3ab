package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/gpuusage/gpuusagetest"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report/smtptest"
)

// TestWeeklyEmailAdviceWhereItApplies sends the sample teams' weekly email, as serve's weekly
// job and `gpucost report --email` do, from the shipped snapshot on a real ClickHouse, with a
// real Prometheus scraping the DCGM-style exporter of search's GPUs (the 8 H100s of
// assistant-70b 12% busy, the A100 of chat-7b idle), through a real SMTP server. Each team's
// email shows the advice of its own workloads, every piece of it, under ADVICE in the text part
// and in the HTML's advice list, and no other team's: a team whose plan has no advice gets no
// advice section at all.
func TestWeeklyEmailAdviceWhereItApplies(t *testing.T) {
	ex := gpuusagetest.Serve(t, searchGPUs()...)
	sink := startSMTPSink(t)

	x := newE2E(t, nil)
	cfg := x.writeConfig(measuredSampleTeams(ex.Prometheus, ex.Job) + fmt.Sprintf(
		"report:\n  out_dir: %s\n  smtp:\n    port: %d\n    from: gpucost@example.com\n    starttls: \"off\"\n    retry_wait: 10ms\n",
		t.TempDir(), sink.port()))
	if code, out := runCLI("scrape", "--replay", snapshotDir, "--config", cfg); code != exitOK {
		t.Fatalf("scrape: exit %d\n%s", code, out)
	}

	// What the plan advises each team, workload by workload.
	advised := map[string]map[string][]optimizer.Advice{}
	for _, w := range optimizeJSON(t, cfg) {
		if advised[w.Team] == nil {
			advised[w.Team] = map[string][]optimizer.Advice{}
		}
		if len(w.Advice) > 0 {
			advised[w.Team][w.Workload] = w.Advice
		}
	}
	// The measured workloads are advised on their utilization; the sample teams' others only
	// where a way of paying or owning wins, so some teams have no advice at all.
	for _, name := range []string{"assistant-70b", "chat-7b"} {
		if !slices.ContainsFunc(advised["search"][name], func(a optimizer.Advice) bool { return a.Kind == optimizer.AdviceUtilization }) {
			t.Errorf("search/%s: advice %+v, want its measured utilization", name, advised["search"][name])
		}
	}
	var quiet []string
	for team, ws := range advised {
		if len(ws) == 0 {
			quiet = append(quiet, team)
		}
	}
	if len(quiet) == 0 {
		t.Errorf("every sample team has advice %v: the test would not see a team without", advised)
	}

	if code, out := runCLI("report", "--email", "--config", cfg); code != exitOK {
		t.Fatalf("report --email: exit %d\n%s", code, out)
	}
	msgs := sink.messages()
	if len(msgs) != len(advised) {
		t.Fatalf("%d emails, want one per team (%d)", len(msgs), len(advised))
	}
	for _, raw := range msgs {
		m := smtptest.ParseMail(t, raw)
		team := ""
		for name := range advised {
			if strings.HasSuffix(m.Header.Get("Subject"), ": "+name) || strings.Contains(m.Header.Get("Subject"), ": "+name+",") {
				team = name
			}
		}
		if team == "" {
			t.Fatalf("an email to no sample team: %q", m.Header.Get("Subject"))
		}
		text := strings.ReplaceAll(m.Text, "\r\n", "\n")
		_, advice, hasSection := strings.Cut(text, "\nADVICE\n")
		advice, _, _ = strings.Cut(advice, "\n\n")
		advice = strings.ReplaceAll(advice, "\n    ", " ") // each piece is wrapped to 78 columns
		htmlSection := strings.Contains(m.HTML, `<ul class="advice"`)
		if want := len(advised[team]) > 0; hasSection != want || htmlSection != want {
			t.Errorf("%s: advice section in text %v, in HTML %v; the plan has advice for %v", team, hasSection, htmlSection, slices.Sorted(maps.Keys(advised[team])))
		}
		// Every piece of the team's advice, under its workload; nothing of another team's.
		lines := 0
		for other, ws := range advised {
			for name, pieces := range ws {
				for _, a := range pieces {
					line := "  - " + name + ": " + a.Text
					if inText := strings.Contains(advice, line); inText != (other == team) {
						t.Errorf("%s's email: %s/%s's %s advice shown %v", team, other, name, a.Kind, inText)
					}
					if other == team {
						lines++
						if !strings.Contains(m.HTML, "<strong>"+name+"</strong>: ") {
							t.Errorf("%s's email: the HTML advice list lacks %s", team, name)
						}
					}
				}
			}
		}
		got := 0
		for _, l := range strings.Split(advice, "\n") {
			if strings.HasPrefix(l, "  - ") {
				got++
			}
		}
		if got != lines {
			t.Errorf("%s's email: %d advice lines, want %d:\n%s", team, got, lines, advice)
		}
		if team == "search" && !strings.Contains(advice, "  - assistant-70b: Your 8 H100-SXM-80GB averaged 12% busy over the 30 seconds to ") {
			t.Errorf("search's email does not say what its H100s did:\n%s", advice)
		}
	}
}
