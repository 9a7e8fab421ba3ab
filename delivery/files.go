package delivery

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/selection"
)

// ParseFormats parses a comma-separated list of report formats, or "all".
func ParseFormats(s string) ([]report.Format, error) {
	if strings.TrimSpace(s) == "all" {
		return report.Formats, nil
	}
	var out []report.Format
	for _, name := range selection.List(s) {
		f, err := report.ParseFormat(name)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no format given")
	}
	return out, nil
}

// Narrow returns the report of the named teams only (r itself when that is every team).
func Narrow(r *report.Report, teams []string) *report.Report {
	if len(teams) == len(r.Teams) {
		return r
	}
	c := *r
	c.Teams = nil
	for _, t := range r.Teams {
		if slices.Contains(teams, t.Name) {
			c.Teams = append(c.Teams, t)
		}
	}
	return &c
}

// WriteFiles writes the report of teams in each format as DIR/WEEK/all.EXT and
// DIR/WEEK/TEAM.EXT, and each team's charts as DIR/WEEK/charts/TEAM-CHART.svg and .png (the
// Markdown links them), scrubbed by o.Secrets. It returns the files written, also when it
// fails part way.
func WriteFiles(dir string, r *report.Report, teams []string, formats []report.Format, o Options) ([]string, error) {
	base := filepath.Join(dir, r.Week.ID)
	if err := os.MkdirAll(filepath.Join(base, "charts"), 0o755); err != nil {
		return nil, fmt.Errorf("creating the report folder: %w", err)
	}
	var files []string
	write := func(name string, render func(io.Writer) error) error {
		path := filepath.Join(base, name)
		var b bytes.Buffer
		if err := render(&b); err != nil {
			return err
		}
		if err := os.WriteFile(path, o.Secrets.Data(b.Bytes()), 0o644); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
		files = append(files, path)
		return nil
	}
	all := Narrow(r, teams)
	render := func(rep *report.Report, f report.Format) func(io.Writer) error {
		return func(w io.Writer) error {
			if f == report.FormatMarkdown {
				return report.WriteMarkdown(w, rep, report.MarkdownOptions{ChartDir: "charts"})
			}
			return rep.Render(w, f)
		}
	}
	for _, f := range formats {
		if err := write("all."+f.Ext(), render(all, f)); err != nil {
			return files, err
		}
		for _, t := range all.Teams {
			one, _ := r.ForTeam(t.Name)
			if err := write(report.FileStem(t.Name)+"."+f.Ext(), render(one, f)); err != nil {
				return files, err
			}
		}
	}
	for _, t := range all.Teams {
		for _, c := range t.Charts {
			if err := write(filepath.Join("charts", report.ChartFile(t.Name, c, "svg")), func(w io.Writer) error { return report.WriteChartSVG(w, c) }); err != nil {
				return files, err
			}
			if err := write(filepath.Join("charts", report.ChartFile(t.Name, c, "png")), func(w io.Writer) error { return report.WriteChartPNG(w, c) }); err != nil {
				return files, err
			}
		}
	}
	return files, nil
}
