package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
)

// TestGoldenSample renders the sample workloads' report in every format and compares each with
// testdata/sample.*. The report is made at the wall-clock time, which scrub removes: the
// golden files pin everything else. Rerun with -update after an intended change and review
// the diff.
func TestGoldenSample(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	r := MustSampleReport(t, now)
	for _, f := range report.Formats {
		t.Run(string(f), func(t *testing.T) {
			var b bytes.Buffer
			if err := r.Render(&b, f); err != nil {
				t.Fatal(err)
			}
			got := scrub(b.String(), now)
			if f == report.FormatHTML {
				got = stripSVG(got)
			}
			if strings.Contains(got, now.Format("2006-01-02T15:04")) || strings.Contains(got, now.Format("2006-01-02 15:04")) {
				t.Fatal("the report time survived the scrub")
			}
			golden(t, "sample."+f.Ext(), []byte(got))
		})
	}
	t.Run("markdown with chart links", func(t *testing.T) {
		one, ok := r.ForTeam("support")
		if !ok {
			t.Fatal("no team support")
		}
		var b bytes.Buffer
		if err := report.WriteMarkdown(&b, one, report.MarkdownOptions{ChartDir: "charts"}); err != nil {
			t.Fatal(err)
		}
		golden(t, "sample.support.md", []byte(scrub(b.String(), now)))
	})
	t.Run("chart svg", func(t *testing.T) {
		c := r.Teams[0].Charts[0]
		var b bytes.Buffer
		if err := report.WriteChartSVG(&b, c); err != nil {
			t.Fatal(err)
		}
		golden(t, "sample.chart.svg", b.Bytes())
	})
}

// TestJSONRoundTrip checks that the JSON format reads back into the same Report: the schema
// documented in SCHEMA.md is the struct's.
func TestJSONRoundTrip(t *testing.T) {
	r := MustSampleReport(t, fixtureNow)
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var back report.Report
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := report.WriteJSON(&again, &back); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	_ = report.WriteJSON(&first, r)
	if first.String() != again.String() {
		t.Error("the JSON report does not survive a round trip")
	}
	if back.Schema != report.SchemaVersion {
		t.Errorf("schema = %q, want %q", back.Schema, report.SchemaVersion)
	}
}

// TestGoldenSamplePlan renders the sample plan alone, as `gpucost optimize --output` does, and
// compares it with testdata/sample.plan.*; the plan's tables and CSV are the weekly report's,
// not a second rendering: each workloads table and the CSV rows appear in the full report.
func TestGoldenSamplePlan(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	offers := MustOffers(t)
	_, good := fixtureRuns()
	plan := MustSamplePlan(t, offers, good)
	full := MustSampleReport(t, now)
	rendered := map[report.Format]string{}
	for _, f := range []report.Format{report.FormatText, report.FormatMarkdown, report.FormatCSV} {
		var b bytes.Buffer
		if err := report.WritePlan(&b, plan, f); err != nil {
			t.Fatal(err)
		}
		rendered[f] = b.String()
		golden(t, "sample.plan."+f.Ext(), b.Bytes())
	}
	var md, csv bytes.Buffer
	if err := full.Render(&md, report.FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	if err := full.Render(&csv, report.FormatCSV); err != nil {
		t.Fatal(err)
	}
	for _, table := range strings.Split(rendered[report.FormatMarkdown], "### Workloads")[1:] {
		table = "### Workloads" + strings.Split(table, "\n## ")[0]
		if !strings.Contains(md.String(), strings.TrimRight(table, "\n")) {
			t.Errorf("the plan's workloads table is not the report's:\n%s", table)
		}
	}
	if rendered[report.FormatCSV] != csv.String() {
		t.Errorf("the plan's CSV differs from the report's:\n%s\nvs\n%s", rendered[report.FormatCSV], csv.String())
	}
	if strings.Contains(rendered[report.FormatText], "$376447") || !strings.Contains(rendered[report.FormatText], "    coreweave US-EAST-04 H100-SXM-80GB ×512 (64 nodes) on-demand   $376,447.33\n") ||
		!strings.Contains(rendered[report.FormatText], "ALL TEAMS: 9 workloads, 9 compared") {
		t.Errorf("the plan table:\n%s", rendered[report.FormatText])
	}
}

// TestTextFitsTheTerminal renders the plan table of `gpucost optimize` and the text report of
// the sample teams, and of a plan whose names are far too long, and checks every line fits a
// terminal of 100 columns (report.TerminalWidth): the tables cut what does not fit with an
// ellipsis, sentences wrap.
func TestTextFitsTheTerminal(t *testing.T) {
	offers := MustOffers(t)
	_, good := fixtureRuns()
	long := strings.Repeat("very-long-name-", 12)
	huge := MustSamplePlan(t, offers, good)
	for i := range huge.Teams {
		huge.Teams[i].Name = long + huge.Teams[i].Name
		for j := range huge.Teams[i].Workloads {
			w := &huge.Teams[i].Workloads[j]
			w.Name = long + w.Name
			if w.Current != nil {
				c := *w.Current
				c.Region = long
				w.Current = &c
			}
		}
	}
	for _, tc := range []struct {
		name string
		plan *optimizer.Plan
	}{
		{"sample", MustSamplePlan(t, offers, good)},
		{"long names", huge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var plan, text bytes.Buffer
			if err := report.WritePlan(&plan, tc.plan, report.FormatText); err != nil {
				t.Fatal(err)
			}
			r, err := report.Build(report.Input{Plan: tc.plan, Offers: offers}, report.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := report.WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			for what, out := range map[string]string{"plan table": plan.String(), "text report": text.String()} {
				for i, line := range strings.Split(out, "\n") {
					if n := utf8.RuneCountInString(line); n > report.TerminalWidth {
						t.Errorf("%s line %d is %d characters wide (at most %d): %q", what, i+1, n, report.TerminalWidth, line)
					}
				}
				if !strings.Contains(out, "$376,447.33") {
					t.Errorf("%s lacks pretrain-70b's $376,447.33 a month", what)
				}
			}
			if tc.name == "long names" && strings.Count(plan.String(), "…") < 2*9 {
				t.Errorf("the plan table does not cut the long names:\n%s", plan.String())
			}
		})
	}
}
