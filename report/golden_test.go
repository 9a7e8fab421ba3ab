package report_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

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
