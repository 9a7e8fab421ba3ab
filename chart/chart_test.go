package chart

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

func TestTimeTicksLabelAFewPointsAtEveryRange(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		span   time.Duration
		layout string
	}{
		{"six hours", 6 * time.Hour, "Jan 02 15:04"},
		{"two days", 48 * time.Hour, "Jan 02 15:04"},
		{"a month", 30 * 24 * time.Hour, "Jan 02"},
		{"two years", 730 * 24 * time.Hour, "Jan 2006"},
		{"twenty years", 20 * 365 * 24 * time.Hour, "Jan 2006"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var labels []string
			for _, tk := range (timeTicks{}).Ticks(float64(start.Unix()), float64(start.Add(tc.span).Unix())) {
				if tk.Label != "" {
					labels = append(labels, tk.Label)
				}
			}
			if len(labels) < 2 || len(labels) > 12 {
				t.Fatalf("%d labels, want 2 to 12: %v", len(labels), labels)
			}
			if _, err := time.Parse(tc.layout, labels[0]); err != nil {
				t.Errorf("label %q is not written as %q", labels[0], tc.layout)
			}
		})
	}
}

func TestFromHistoryOneSeriesPerProviderAndPriceType(t *testing.T) {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	q := schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: day, To: day.AddDate(0, 0, 3), Interval: schema.Day}
	points := []schema.HistoryPoint{
		{Bucket: day.AddDate(0, 0, 1), Provider: "vastai", PriceType: schema.Spot, Min: decimal.RequireFromString("1.10")},
		{Bucket: day, Provider: "vastai", PriceType: schema.Spot, Min: decimal.RequireFromString("1.20")},
		{Bucket: day, Provider: "lambda", PriceType: schema.OnDemand, Min: decimal.RequireFromString("2.99")},
	}
	c := FromHistory("title", q, points)
	if len(c.Series) != 2 || c.Series[0].Name != "lambda on_demand" || c.Series[1].Name != "vastai spot" {
		t.Fatalf("series %+v", c.Series)
	}
	if s := c.Series[1]; !s.Dashed || len(s.Points) != 2 || !s.Points[0].At.Equal(day) || s.Points[0].USD != 1.20 {
		t.Errorf("vastai spot = %+v, want two points in time order, dashed", s)
	}
	if c.Series[0].Dashed {
		t.Error("on-demand is drawn dashed")
	}
	if empty := FromHistory("title", q, nil); !strings.HasSuffix(empty.Title, "(no observations)") {
		t.Errorf("an empty chart is titled %q", empty.Title)
	}
}

func TestWritersEscapeScrapedText(t *testing.T) {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	c := Chart{ID: "x", Title: `<script>alert(1)</script>`, Label: `"><img src=x onerror=alert(1)>`, From: day, To: day.AddDate(0, 0, 7),
		Series: []Series{{Name: `evil</text><script>`, Points: []Point{{At: day, USD: 1}, {At: day.AddDate(0, 0, 1), USD: 2}}}}}
	svg, err := InlineSVG(c, "chart")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<img") {
		t.Errorf("the inline SVG carries markup from its text:\n%s", svg)
	}
	if !strings.HasPrefix(svg, `<svg class="chart" role="img" aria-label="&#34;&gt;&lt;img`) {
		t.Errorf("the inline SVG starts %.120q", svg)
	}
	var b bytes.Buffer
	if err := WritePNG(&b, c); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Dx(); got != PixelWidth*3/2 {
		t.Errorf("PNG is %d px wide, want %d (1.5 pixels per CSS pixel)", got, PixelWidth*3/2)
	}
}
