package report

import (
	"io"

	"github.com/gpucost/gpucost/chart"
	"github.com/gpucost/gpucost/schema"
)

// ChartPixelWidth and ChartPixelHeight are the size a PNG chart is displayed at, in CSS
// pixels.
const (
	ChartPixelWidth  = chart.PixelWidth
	ChartPixelHeight = chart.PixelHeight
)

// WriteChartSVG draws c as an SVG document.
func WriteChartSVG(w io.Writer, c Chart) error { return chart.WriteSVG(w, c.drawing()) }

// WriteChartPNG draws c as a PNG image shown at ChartPixelWidth × ChartPixelHeight CSS pixels.
func WriteChartPNG(w io.Writer, c Chart) error { return chart.WritePNG(w, c.drawing()) }

// inlineSVG returns the chart as an <svg> element to place inside an HTML page.
func inlineSVG(c Chart) (string, error) { return chart.InlineSVG(c.drawing(), "") }

// drawing is the chart as package chart draws it: one line per provider and price type, on-demand
// solid and the others dashed.
func (c Chart) drawing() chart.Chart {
	d := chart.Chart{ID: c.ID, Title: c.GPUModel + ": cheapest $/GPU-hour per provider, daily", Label: c.GPUModel + " price history", From: c.From, To: c.To}
	for _, s := range c.Series {
		line := chart.Series{Name: s.Provider + " " + priceTypeLabel(string(s.PriceType)), Dashed: s.PriceType != schema.OnDemand}
		for _, pt := range s.Points {
			line.Points = append(line.Points, chart.Point{At: pt.Day, USD: pt.USDPerGPUHour.InexactFloat64()})
		}
		d.Series = append(d.Series, line)
	}
	return d
}
