package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/report"
)

// TestSinceLastWeek compares the sample plan with the plan stored a week earlier
// (fixtureLastWeek): per team the savings and spend then and the change, and the workloads new,
// gone or recommended elsewhere; a team unchanged has no changes, a team new since has every
// workload new. The figures are the fixture's, added up by hand.
func TestSinceLastWeek(t *testing.T) {
	r := MustSampleReportSince(t, fixtureNow)
	team := func(name string) report.Team {
		one, ok := r.ForTeam(name)
		if !ok {
			t.Fatalf("no team %s", name)
		}
		return one.Teams[0]
	}
	type figures struct {
		Compared                               int
		SpendThen, SavingsThen, Savings, Spend string
		Changes                                []string
	}
	got := func(tm report.Team) figures {
		s := tm.SinceLastWeek
		if s == nil {
			t.Fatalf("team %s: no comparison", tm.Name)
		}
		f := figures{Compared: s.Totals.Compared, SpendThen: s.Totals.CurrentUSDPerMonth.StringFixed(2), SavingsThen: s.Totals.SavingsUSDPerMonth.StringFixed(2),
			Savings: s.SavingsChangeUSDPerMonth.StringFixed(2), Spend: s.SpendChangeUSDPerMonth.StringFixed(2)}
		for _, c := range s.Changes {
			f.Changes = append(f.Changes, string(c.Kind)+": "+c.Message)
		}
		return f
	}
	for _, tc := range []struct {
		team string
		want figures
	}{
		{"research", figures{Compared: 2, SpendThen: "377447.33", SavingsThen: "76547.33", Savings: "21252.98", Spend: "-660.29", Changes: []string{
			"new: ft-13b: new this week; recommended runpod H100-SXM-80GB ×4 on-demand",
			"recommendation: pretrain-70b: now recommended coreweave US-WEST-01 B200-SXM-180GB ×168 (21 nodes) on-demand; last week lambda us-east-1 H100-SXM-80GB ×512 (64 nodes) on-demand",
			"gone: old-eval: in the plan of 2025-11-22, not in this one",
		}}},
		{"search", figures{Compared: 3, SpendThen: "18566.30", SavingsThen: "17326.68", Savings: "0.00", Spend: "0.00"}},
		{"creative", figures{Compared: 0, SpendThen: "0.00", SavingsThen: "0.00", Savings: "1316.00", Spend: "3929.20", Changes: []string{
			"new: sdxl-images: new this week; recommended vastai US RTX-4090-24GB ×1 spot",
			"new: video-diffusion: new this week; recommended runpod H100-SXM-80GB ×8 on-demand",
		}}},
	} {
		if diff := cmp.Diff(tc.want, got(team(tc.team))); diff != "" {
			t.Errorf("team %s since last week (-want +got):\n%s", tc.team, diff)
		}
	}
	if at := team("search").SinceLastWeek.PlanGeneratedAt; !at.Equal(time.Date(2025, 11, 22, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("compared with the plan of %s, want 2025-11-22 03:00", at)
	}

	// The email says it, in both parts; without an earlier plan it says there is none.
	text, html := emailParts(t, r, "research", "")
	for _, s := range []string{
		"SINCE LAST WEEK (against the plan of 2025-11-22 03:00 UTC)",
		"Savings on offer: $97,800.31 a month, up $21,252.98 from $76,547.33.",
		"Today's spend: $376,787.04 a month, down $660.29 from $377,447.33.",
		"  - ft-13b: new this week; recommended runpod H100-SXM-80GB ×4 on-demand",
		"  - old-eval: in the plan of 2025-11-22, not in this one",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the text part lacks %q:\n%s", s, text)
		}
	}
	for _, s := range []string{"<li>Savings on offer: $97,800.31 a month, up $21,252.98 from $76,547.33.</li>", "<li>old-eval: in the plan of 2025-11-22, not in this one</li>"} {
		if !strings.Contains(html, s) {
			t.Errorf("the HTML part lacks %q", s)
		}
	}
	var md bytes.Buffer
	if err := report.WriteMarkdown(&md, r, report.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "### Since last week\n\nAgainst the plan of 2025-11-22 03:00 UTC.\n\n- Savings on offer: $97,800.31 a month, up $21,252.98 from $76,547.33.\n") {
		t.Errorf("the Markdown report lacks research's comparison:\n%s", md.String())
	}
	text, html = emailParts(t, MustSampleReport(t, fixtureNow), "research", "")
	if !strings.Contains(text, "SINCE LAST WEEK: no plan of a week earlier is stored") || !strings.Contains(html, "No plan of a week earlier is stored") || strings.Contains(text, "Savings on offer") {
		t.Errorf("without an earlier plan the email does not say so:\n%s", text)
	}
}
