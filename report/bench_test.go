package report_test

import (
	"io"
	"testing"

	"github.com/gpucost/gpucost/report"
)

// The report is built and rendered once a week per team, so these only guard against a
// renderer becoming absurdly slow; the PNG charts dominate an email.

func BenchmarkBuild(b *testing.B) {
	offers := MustOffers(b)
	last, good := fixtureRuns()
	in := report.Input{Plan: MustSamplePlan(b, offers, good), Now: fixtureNow, Offers: offers, History: fixtureHistory(offers), Runs: last, GoodRuns: good}
	b.ResetTimer()
	for b.Loop() {
		if _, err := report.Build(in, report.DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRender(b *testing.B) {
	r := MustSampleReport(b, fixtureNow)
	for _, f := range report.Formats {
		b.Run(string(f), func(b *testing.B) {
			for b.Loop() {
				if err := r.Render(io.Discard, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkChart(b *testing.B) {
	c := MustSampleReport(b, fixtureNow).Teams[0].Charts[0]
	b.Run("svg", func(b *testing.B) {
		for b.Loop() {
			if err := report.WriteChartSVG(io.Discard, c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("png", func(b *testing.B) {
		for b.Loop() {
			if err := report.WriteChartPNG(io.Discard, c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEmail(b *testing.B) {
	r := MustSampleReport(b, fixtureNow)
	for b.Loop() {
		m, err := r.Email("search", report.EmailOptions{From: "gpucost@example.com"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
