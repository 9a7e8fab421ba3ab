package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gpucost/gpucost/schema"
)

// chartPalette is a colour-blind-safe palette (Okabe–Ito), one colour per series.
var chartPalette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

// historySeries is one line of a history chart: the cheapest $/GPU-hour of one provider and
// price type per bucket.
type historySeries struct {
	name   string
	points plotter.XYs
}

// seriesOf groups history points into one series per provider and price type, in name order.
// Prices are plotted as float64: a chart is a picture, not a stored amount.
func seriesOf(points []schema.HistoryPoint) []historySeries {
	byName := map[string]*historySeries{}
	for _, p := range points {
		name := p.Provider + " " + string(p.PriceType)
		s := byName[name]
		if s == nil {
			s = &historySeries{name: name}
			byName[name] = s
		}
		s.points = append(s.points, plotter.XY{X: float64(p.Bucket.Unix()), Y: p.Min.InexactFloat64()})
	}
	out := make([]historySeries, 0, len(byName))
	for _, s := range byName {
		sort.Slice(s.points, func(i, j int) bool { return s.points[i].X < s.points[j].X })
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// historyPlot draws the cheapest $/GPU-hour per bucket of each provider and price type.
func historyPlot(title string, q schema.HistoryQuery, points []schema.HistoryPoint) (*plot.Plot, error) {
	p := plot.New()
	sans := func(s *font.Font) { s.Typeface, s.Variant = "Liberation", "Sans" }
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		sans(f)
	}
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Y.Label.Text = "cheapest $/GPU-hour"
	format := "Jan 2"
	if q.Interval == schema.Hour {
		format = "Jan 2 15:04"
	}
	if q.To.Sub(q.From) > 300*24*time.Hour {
		format = "Jan 2006"
	}
	p.X.Tick.Marker = plot.TimeTicks{Format: format, Time: func(t float64) time.Time { return time.Unix(int64(t), 0).UTC() }}
	p.X.Min, p.X.Max = float64(q.Interval.Truncate(q.From).Unix()), float64(q.To.Unix())
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	series := seriesOf(points)
	maxY := 0.0
	for i, s := range series {
		line, scatter, err := plotter.NewLinePoints(s.points)
		if err != nil {
			return nil, fmt.Errorf("drawing %s: %w", s.name, err)
		}
		c := chartPalette[i%len(chartPalette)]
		line.Color, line.Width = c, vg.Points(1.5)
		scatter.Color, scatter.Shape, scatter.Radius = c, draw.CircleGlyph{}, vg.Points(2)
		p.Add(line, scatter)
		p.Legend.Add(s.name, line, scatter)
		for _, pt := range s.points {
			maxY = max(maxY, pt.Y)
		}
	}
	if len(series) == 0 {
		p.Title.Text += " (no observations)"
	}
	// Head room above the highest line for the legend, one row per series.
	p.Y.Max = max(1, maxY*(1.1+0.07*float64(len(series))))
	p.Y.Tick.Marker = plot.TickerFunc(dollarTicks)
	return p, nil
}

// dollarTicks labels about five round prices between min and max.
func dollarTicks(min, max float64) []plot.Tick {
	span := max - min
	if span <= 0 {
		return []plot.Tick{{Value: min, Label: fmt.Sprintf("$%.2f", min)}}
	}
	step := 0.01
	for _, s := range []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100} {
		step = s
		if span/s <= 6 {
			break
		}
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step/1e6; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("$%.2f", v)})
	}
	return ticks
}

// writeHistoryChart draws the history to path, a .png or .svg file.
func writeHistoryChart(path string, q schema.HistoryQuery, points []schema.HistoryPoint) error {
	p, err := historyPlot(fmt.Sprintf("%s: cheapest $/GPU-hour per %s", q.Model(), q.Interval), q, points)
	if err != nil {
		return err
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	wt, err := p.WriterTo(8*vg.Inch, 4.5*vg.Inch, format)
	if err != nil {
		return fmt.Errorf("drawing the chart: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return fmt.Errorf("drawing the chart: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	return nil
}

var svgOpen = regexp.MustCompile(`(?s)^.*?<svg width="[^"]*" height="[^"]*"`)

// historySVG draws the history as an <svg> element for inlining in an HTML page: no XML prolog,
// and sized by the page (its viewBox keeps the aspect).
func historySVG(title string, q schema.HistoryQuery, points []schema.HistoryPoint) (string, error) {
	p, err := historyPlot(title, q, points)
	if err != nil {
		return "", err
	}
	wt, err := p.WriterTo(7*vg.Inch, 3.2*vg.Inch, "svg")
	if err != nil {
		return "", fmt.Errorf("drawing the chart: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("drawing the chart: %w", err)
	}
	out := buf.String()
	if !svgOpen.MatchString(out) {
		return "", fmt.Errorf("drawing the chart: unexpected SVG header")
	}
	return svgOpen.ReplaceAllLiteralString(out, `<svg class="chart" role="img"`), nil
}
