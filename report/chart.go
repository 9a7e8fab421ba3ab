package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/gpucost/gpucost/schema"
)

// Chart sizes: 7.5 × 3.4 inches, drawn at 144 dpi for PNG (1080 × 490 pixels, shown at half
// that size in the email for sharp text on high-density screens).
const (
	chartWidth  = 7.5 * vg.Inch
	chartHeight = 3.4 * vg.Inch
	chartDPI    = 144
	legendWidth = 1.9 * vg.Inch
)

// ChartPixelWidth and ChartPixelHeight are the size a PNG chart is displayed at, in CSS
// pixels.
const (
	ChartPixelWidth  = 720
	ChartPixelHeight = 326
)

// WriteChartSVG draws c as an SVG document.
func WriteChartSVG(w io.Writer, c Chart) error {
	canvas := vgsvg.New(chartWidth, chartHeight)
	if err := drawChart(draw.New(canvas), c); err != nil {
		return err
	}
	if _, err := canvas.WriteTo(w); err != nil {
		return fmt.Errorf("writing chart %s as SVG: %w", c.ID, err)
	}
	return nil
}

// WriteChartPNG draws c as a PNG image of ChartPixelWidth × ChartPixelHeight CSS pixels at
// double density.
func WriteChartPNG(w io.Writer, c Chart) error {
	canvas := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(chartDPI), vgimg.UseBackgroundColor(color.White))
	if err := drawChart(draw.New(canvas), c); err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(w); err != nil {
		return fmt.Errorf("writing chart %s as PNG: %w", c.ID, err)
	}
	return nil
}

// inlineSVG returns the chart as an <svg> element to place inside an HTML page: the XML
// prolog is dropped.
func inlineSVG(c Chart) (string, error) {
	var b bytes.Buffer
	if err := WriteChartSVG(&b, c); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	// Scale with the page: keep the viewBox, let CSS set the width.
	s = strings.Replace(s, "<svg ", `<svg role="img" aria-label="`+htmlAttr(c.GPUModel)+` price history" `, 1)
	return s, nil
}

// drawChart draws the price lines on the left and the legend on the right of dc.
func drawChart(dc draw.Canvas, c Chart) error {
	// A white background, also for SVG (dark-mode mail clients show transparency as black).
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	p := plot.New()
	p.Title.Text = c.GPUModel + ": cheapest $/GPU-hour per provider, daily"
	p.Title.TextStyle.Font = sans(11)
	p.X.Tick.Marker = dayTicks{}
	p.X.Tick.Label.Font = sans(8)
	p.Y.Label.Text = "$/GPU-hour"
	p.Y.Label.TextStyle.Font = sans(9)
	p.Y.Tick.Marker = dollarTicks{}
	p.Y.Tick.Label.Font = sans(8)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	p.X.Min = float64(c.From.Unix())
	p.X.Max = float64(c.To.Unix())
	p.Y.Min = 0

	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font = sans(9)
	legend.Padding = vg.Points(3)
	maxY := 0.0
	for i, s := range c.Series {
		xys := make(plotter.XYs, len(s.Points))
		for j, pt := range s.Points {
			xys[j].X = float64(pt.Day.Unix())
			xys[j].Y = pt.USDPerGPUHour.InexactFloat64()
			maxY = max(maxY, xys[j].Y)
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("drawing chart %s, series %s %s: %w", c.ID, s.Provider, s.PriceType, err)
		}
		col := plotutil.Color(i)
		line.Color = col
		line.Width = vg.Points(1.5)
		if s.PriceType != schema.OnDemand {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		points.Color = col
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(1.6)
		p.Add(line, points)
		legend.Add(s.Provider+" "+priceTypeLabel(string(s.PriceType)), line, points)
	}
	p.Y.Max = maxY * 1.1
	if p.Y.Max == 0 {
		p.Y.Max = 1
	}
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legendArea := draw.Crop(dc, chartWidth-legendWidth+vg.Points(8), 0, 0, -vg.Points(24))
	legend.Draw(legendArea)
	return nil
}

// sans is the chart font: Liberation Sans (embedded in gonum/plot, so PNGs need no system
// fonts; SVG viewers fall back to their sans-serif).
func sans(points float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(points)}
}

// dayTicks labels a time axis in days ("Nov 03"), at most about eight labels.
type dayTicks struct{}

func (dayTicks) Ticks(lo, hi float64) []plot.Tick {
	const dayS = 24 * 3600
	days := int((hi - lo) / dayS)
	step := 7
	if days <= 14 {
		step = 2
	}
	if days > 70 {
		step = 14
	}
	var ticks []plot.Tick
	start := time.Unix(int64(lo), 0).UTC()
	for t := start; float64(t.Unix()) <= hi; t = t.AddDate(0, 0, 1) {
		v := float64(t.Unix())
		label := ""
		if int(t.Sub(start).Hours()/24)%step == 0 {
			label = t.Format("Jan 02")
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// dollarTicks labels a price axis in dollars.
type dollarTicks struct{}

func (dollarTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = "$" + trimFloat(ticks[i].Value)
		}
	}
	return ticks
}

func trimFloat(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// htmlAttr escapes text for an HTML attribute value.
func htmlAttr(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}
