// Package chart draws gpucost's price charts: lines of $/GPU-hour over time, one per provider and
// price type, with the legend beside the lines (never over them), as SVG, PNG or an <svg>
// element to inline in a page. It is the one renderer of the weekly report's charts and
// `gpucost history --chart`'s (the dashboard draws its chart in the browser).
//
// Text in a chart (titles, provider names) may come from scraped data: the SVG writer escapes
// it, and InlineSVG escapes what it adds.
package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"sort"
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

// Chart sizes: 7.5 × 3.4 inches, drawn at 144 dpi for PNG (1080 × 490 pixels, shown at
// PixelWidth × PixelHeight in the email: 1.5 pixels per CSS pixel, for sharp text on
// high-density screens).
const (
	width       = 7.5 * vg.Inch
	height      = 3.4 * vg.Inch
	dpi         = 144
	legendWidth = 1.9 * vg.Inch
)

// PixelWidth and PixelHeight are the size a PNG chart is displayed at, in CSS pixels.
const (
	PixelWidth  = 720
	PixelHeight = 326
)

// Chart is one price chart.
type Chart struct {
	ID       string // names the chart in errors
	Title    string
	Label    string // what the chart shows, for screen readers (aria-label)
	From, To time.Time
	Series   []Series
}

// Series is one line: a provider's price type, say.
type Series struct {
	Name   string
	Dashed bool // commitments and spot are dashed, on-demand solid
	Points []Point
}

// Point is a price at a time: a picture, not a stored amount, so a float.
type Point struct {
	At  time.Time
	USD float64
}

// FromHistory charts price history: the cheapest $/GPU-hour (the bucket's min) of each provider
// and price type per bucket, one series each, in name order, over q's range.
func FromHistory(title string, q schema.HistoryQuery, points []schema.HistoryPoint) Chart {
	c := Chart{ID: q.Model(), Title: title, Label: q.Model() + " price history", From: q.Interval.Truncate(q.From), To: q.To}
	index := map[string]int{}
	for _, p := range points {
		name := p.Provider + " " + string(p.PriceType)
		i, ok := index[name]
		if !ok {
			i = len(c.Series)
			index[name] = i
			c.Series = append(c.Series, Series{Name: name, Dashed: p.PriceType != schema.OnDemand})
		}
		c.Series[i].Points = append(c.Series[i].Points, Point{At: p.Bucket, USD: p.Min.InexactFloat64()})
	}
	sort.Slice(c.Series, func(i, j int) bool { return c.Series[i].Name < c.Series[j].Name })
	for _, s := range c.Series {
		sort.Slice(s.Points, func(i, j int) bool { return s.Points[i].At.Before(s.Points[j].At) })
	}
	if len(c.Series) == 0 {
		c.Title += " (no observations)"
	}
	return c
}

// WriteSVG draws c as an SVG document.
func WriteSVG(w io.Writer, c Chart) error {
	canvas := vgsvg.New(width, height)
	if err := c.draw(draw.New(canvas)); err != nil {
		return err
	}
	if _, err := canvas.WriteTo(w); err != nil {
		return fmt.Errorf("writing chart %s as SVG: %w", c.ID, err)
	}
	return nil
}

// WritePNG draws c as a PNG image shown at PixelWidth × PixelHeight CSS pixels, drawn at 1.5×.
func WritePNG(w io.Writer, c Chart) error {
	canvas := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	if err := c.draw(draw.New(canvas)); err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(w); err != nil {
		return fmt.Errorf("writing chart %s as PNG: %w", c.ID, err)
	}
	return nil
}

// WriteFile draws c into path, a .png or .svg file.
func WriteFile(path string, c Chart) error {
	var b bytes.Buffer
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		err = WritePNG(&b, c)
	case ".svg":
		err = WriteSVG(&b, c)
	default:
		return fmt.Errorf("chart %s: the file name must end in .png or .svg", path)
	}
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	return nil
}

// InlineSVG returns the chart as an <svg> element to place inside an HTML page, with class (when
// not empty) for the page's style: the XML prolog is dropped, the viewBox kept, so CSS can set
// the width.
func InlineSVG(c Chart, class string) (string, error) {
	var b bytes.Buffer
	if err := WriteSVG(&b, c); err != nil {
		return "", err
	}
	s := b.String()
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	attrs := `role="img" aria-label="` + htmlAttr(c.Label) + `" `
	if class != "" {
		attrs = `class="` + htmlAttr(class) + `" ` + attrs
	}
	return strings.Replace(s, "<svg ", "<svg "+attrs, 1), nil
}

// draw draws the price lines on the left and the legend on the right of dc.
func (c Chart) draw(dc draw.Canvas) error {
	// A white background, also for SVG (dark-mode mail clients show transparency as black).
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	p := plot.New()
	p.Title.Text = c.Title
	p.Title.TextStyle.Font = sans(11)
	p.X.Tick.Marker = timeTicks{}
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
			xys[j].X = float64(pt.At.Unix())
			xys[j].Y = pt.USD
			maxY = max(maxY, xys[j].Y)
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return fmt.Errorf("drawing chart %s, series %s: %w", c.ID, s.Name, err)
		}
		col := plotutil.Color(i)
		line.Color = col
		line.Width = vg.Points(1.5)
		if s.Dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		points.Color = col
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(1.6)
		p.Add(line, points)
		legend.Add(s.Name, line, points)
	}
	p.Y.Max = maxY * 1.1
	if p.Y.Max == 0 {
		p.Y.Max = 1
	}
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legendArea := draw.Crop(dc, width-legendWidth+vg.Points(8), 0, 0, -vg.Points(24))
	legend.Draw(legendArea)
	return nil
}

// sans is the chart font: Liberation Sans (embedded in gonum/plot, so PNGs need no system
// fonts; SVG viewers fall back to their sans-serif).
func sans(points float64) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(points)}
}

// timeTicks labels a time axis: hours across up to three days ("Jan 02 15:00"), days up to 120
// days ("Jan 02", at most about eight labels), months beyond ("Jan 2006").
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	const dayS = 24 * 3600
	start := time.Unix(int64(lo), 0).UTC()
	days := int((hi - lo) / dayS)
	var ticks []plot.Tick
	switch {
	case days <= 3:
		step := max(1, int((hi-lo)/3600)/8)
		start = start.Truncate(time.Hour)
		for t := start; float64(t.Unix()) <= hi; t = t.Add(time.Hour) {
			label := ""
			if int(t.Sub(start).Hours())%step == 0 {
				label = t.Format("Jan 02 15:04")
			}
			ticks = append(ticks, plot.Tick{Value: float64(t.Unix()), Label: label})
		}
	case days <= 120:
		step := 7
		if days <= 14 {
			step = 2
		}
		if days > 70 {
			step = 14
		}
		for t := start; float64(t.Unix()) <= hi; t = t.AddDate(0, 0, 1) {
			label := ""
			if int(t.Sub(start).Hours()/24)%step == 0 {
				label = t.Format("Jan 02")
			}
			ticks = append(ticks, plot.Tick{Value: float64(t.Unix()), Label: label})
		}
	default:
		step := max(1, days/30/8)
		first := time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC)
		for i, t := 0, first; float64(t.Unix()) <= hi; i, t = i+1, t.AddDate(0, 1, 0) {
			if float64(t.Unix()) < lo {
				continue
			}
			label := ""
			if i%step == 0 {
				label = t.Format("Jan 2006")
			}
			ticks = append(ticks, plot.Tick{Value: float64(t.Unix()), Label: label})
		}
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
