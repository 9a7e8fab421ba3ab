package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
)

// TestAdviceOnlyWhereItApplies gives one workload of the sample plan advice, with text that
// must be escaped, and checks every format shows it under that workload's team and nowhere
// else: a team without advice gets no advice section at all.
func TestAdviceOnlyWhereItApplies(t *testing.T) {
	offers := MustOffers(t)
	last, good := fixtureRuns()
	plan := MustSamplePlan(t, offers, good)
	const text = "Your 8 H100-SXM-80GB averaged 12% busy <b>last week</b>\x1b[31m"
	for i := range plan.Teams {
		for j := range plan.Teams[i].Workloads {
			if w := &plan.Teams[i].Workloads[j]; w.Name == "assistant-70b" {
				w.Advice = append(w.Advice, optimizer.Advice{Kind: optimizer.AdviceUtilization, Text: text})
			}
		}
	}
	r, err := report.Build(report.Input{Plan: plan, Now: fixtureNow, Offers: offers, History: fixtureHistory(offers), Runs: last, GoodRuns: good}, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	const shown = "Your 8 H100-SXM-80GB averaged 12% busy"
	for _, tc := range []struct {
		team, section string
		want          bool
	}{
		{"search", "ADVICE", true},
		{"support", "ADVICE", false},
	} {
		one, _ := r.ForTeam(tc.team)
		var txt, md, html bytes.Buffer
		if err := report.WriteText(&txt, one); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteMarkdown(&md, one, report.MarkdownOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteHTML(&html, one, report.HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		for format, got := range map[string]string{"text": txt.String(), "markdown": md.String(), "html": html.String()} {
			has := strings.Contains(got, shown)
			section := strings.Contains(got, "ADVICE") || strings.Contains(got, "### Advice") || strings.Contains(got, `class="advice"`)
			if has != tc.want || section != tc.want {
				t.Errorf("team %s, %s: advice shown %v, advice section %v; want %v", tc.team, format, has, section, tc.want)
			}
			if strings.Contains(got, "\x1b") {
				t.Errorf("team %s, %s: a control character reached the output", tc.team, format)
			}
		}
		if tc.want {
			if !strings.Contains(txt.String(), "  - assistant-70b: "+shown) {
				t.Errorf("text: the advice is not under its workload:\n%s", txt.String())
			}
			if strings.Contains(html.String(), "<b>last week</b>") || !strings.Contains(html.String(), "&lt;b&gt;last week&lt;/b&gt;") {
				t.Error("html: the advice text is not escaped")
			}
		}
	}
}
