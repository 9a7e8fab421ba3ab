package report_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/tooltest"
)

// The HTML report and the HTML email are opened in headless Chromium (Debian's chromium
// package), which takes a screenshot and dumps the DOM after the page loaded. The page is shown
// in an iframe as wide as the screen the test means (Chromium's window is never narrower than
// 500 px; an iframe of 390 px is a 390 px viewport, media queries included), and a probe
// script of the host page records what the browser laid out there: images decoded, SVG charts
// with a size, tables, workload blocks, tables wider than the viewport, how wide the page is
// against the viewport (scrolling), whether every figure marked class="money" is fully
// visible (on one line, inside the viewport and every box that clips it), and whether a
// workload's two sides sit side by side or stacked.
//
// Without chromium the tests skip, unless GPUCOST_INTEGRATION=1 (make test, CI), where a
// missing browser is a failure. GPUCOST_ARTIFACTS=DIR keeps the screenshots there (as the dashboard's tests do), one
// PNG per test and width, named after the test.

const hostPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>body{margin:0;background:#fff}iframe{display:block;border:0}</style></head>
<body>
<iframe id="view" width="%d" height="%d" srcdoc="%s"></iframe>
<pre id="dom" hidden></pre>
<script>
window.addEventListener('load', function () {
  var w = document.getElementById('view').contentWindow, d = w.document;
  var imgs = d.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  var svgs = d.querySelectorAll('svg'), shown = 0;
  for (var j = 0; j < svgs.length; j++) { var r = svgs[j].getBoundingClientRect(); if (r.width > 300 && r.height > 100) shown++; }
  var tables = d.querySelectorAll('table'), wide = 0;
  for (var k = 0; k < tables.length; k++) if (tables[k].getBoundingClientRect().right > d.documentElement.clientWidth) wide++;
  var money = d.querySelectorAll('.money'), seen = 0, cut = [];
  for (var m = 0; m < money.length; m++) {
    var e = money[m], mr = e.getBoundingClientRect(), vis = mr.width > 0 && e.getClientRects().length === 1 &&
      mr.left >= 0 && mr.right <= w.innerWidth;
    for (var a = e.parentElement; vis && a; a = a.parentElement) {
      var st = w.getComputedStyle(a);
      if (st.overflowX !== 'visible' || st.overflowY !== 'visible') {
        var ar = a.getBoundingClientRect();
        vis = mr.left >= ar.left - 0.5 && mr.right <= ar.right + 0.5;
      }
    }
    if (vis) seen++; else cut.push(e.textContent.replace(/\s+/g, '_'));
  }
  var sides = d.querySelectorAll('table.workload td.side'), layout = '-';
  if (sides.length >= 2) layout = sides[1].getBoundingClientRect().top >= sides[0].getBoundingClientRect().bottom - 1 ? 'stacked' : 'side-by-side';
  document.body.setAttribute('data-probe', 'images=' + ok + '/' + imgs.length + ' svgs=' + shown + '/' + svgs.length +
    ' tables=' + tables.length + ' workloads=' + d.querySelectorAll('table.workload').length + ' wide=' + wide +
    ' scroll=' + d.documentElement.scrollWidth + '/' + w.innerWidth +
    ' money=' + seen + '/' + money.length + ' cut=' + (cut.join(',') || '-') + ' sides=' + layout);
  document.getElementById('dom').textContent = d.documentElement.outerHTML;
});
</script>
</body></html>`

// minWindowWidth is the narrowest window headless Chromium lays out.
const minWindowWidth = 500

type browserView struct {
	dom   string // the page's DOM after load
	shot  image.Image
	probe map[string]string
}

// openInChromium shows page (HTML whose relative links resolve in dir) in a viewport of width
// × height CSS pixels and returns its DOM after load, the probe's findings and the screenshot.
func openInChromium(t *testing.T, dir, page string, width, height int) browserView {
	t.Helper()
	bin := tooltest.Find(t, "chromium", "chromium", "chromium-browser")
	host := filepath.Join(dir, "host.html")
	if err := os.WriteFile(host, []byte(fmt.Sprintf(hostPage, width, height, html.EscapeString(page))), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "screenshot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--dump-dom", fmt.Sprintf("--window-size=%d,%d", max(width, minWindowWidth), height),
		"file://"+host)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String(), 2000))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v\n%s", err, tail(stderr.String(), 2000))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// The window is at least minWindowWidth wide: keep the iframe's part.
	if sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	}); ok && img.Bounds().Dx() > width {
		img = sub.SubImage(image.Rect(0, 0, width, img.Bounds().Dy()))
	}
	v := browserView{shot: img, probe: map[string]string{}}
	m := regexp.MustCompile(`data-probe="([^"]*)"`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("the probe did not run (no data-probe in the DOM):\n%s", tail(stdout.String(), 500))
	}
	for _, kv := range strings.Fields(m[1]) {
		k, val, _ := strings.Cut(kv, "=")
		v.probe[k] = val
	}
	if d := regexp.MustCompile(`(?s)<pre id="dom" hidden="">(.*?)</pre>`).FindStringSubmatch(stdout.String()); d != nil {
		v.dom = html.UnescapeString(d[1])
	}
	if keep := os.Getenv("GPUCOST_ARTIFACTS"); keep != "" {
		name := filepath.Join(keep, fmt.Sprintf("%s-%dpx.png", strings.ReplaceAll(t.Name(), "/", "_"), width))
		out, err := os.Create(name)
		if err == nil {
			err = png.Encode(out, img)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			t.Errorf("keeping the screenshot: %v", err)
		}
		t.Logf("screenshot kept as %s", name)
	}
	return v
}

// checkScreenshot asserts the screenshot has the window's size and is a page, not a blank or
// an error page: enough pixels differ from the background, in enough colours. It returns how
// many pixels are close to c.
func checkScreenshot(t *testing.T, img image.Image, width, height int, c color.RGBA) int {
	t.Helper()
	b := img.Bounds()
	if b.Dx() != width || b.Dy() != height {
		t.Errorf("screenshot is %d×%d, want %d×%d", b.Dx(), b.Dy(), width, height)
	}
	colors := map[color.RGBA]bool{}
	ink, near := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			px := color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}
			colors[px] = true
			if !(px.R > 240 && px.G > 240 && px.B > 240) {
				ink++
			}
			if absDiff(px.R, c.R)+absDiff(px.G, c.G)+absDiff(px.B, c.B) < 40 {
				near++
			}
		}
	}
	if frac := float64(ink) / float64(b.Dx()*b.Dy()); frac < 0.03 {
		t.Errorf("screenshot is nearly blank: %.1f%% of pixels are not background", 100*frac)
	}
	if len(colors) < 50 {
		t.Errorf("screenshot has %d colours, want a rendered page (text, tables, charts)", len(colors))
	}
	return near
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// chartRed is the first series colour of the charts (gonum/plot's plotutil.SoftColors[0]).
var chartRed = color.RGBA{241, 90, 96, 255}

// emailPage builds team's email from r, linking dashboard, and returns its HTML part ready for
// a browser: the inline PNG parts saved in the returned folder and the cid: references
// pointing at them, as a mail client shows them.
func emailPage(t *testing.T, r *report.Report, team, dashboard string) (page, dir string) {
	t.Helper()
	e := mustEmail(t, r, team, dashboard)
	dir = t.TempDir()
	page = e.HTML
	for cid, data := range e.Images {
		name := regexp.MustCompile(`[^a-z0-9-]`).ReplaceAllString(cid, "_") + ".png"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		page = strings.ReplaceAll(page, `src="cid:`+cid+`"`, `src="`+name+`"`)
	}
	if strings.Contains(page, "cid:") {
		t.Fatal("the HTML refers to an inline image the message does not carry")
	}
	return page, dir
}

// styleBlock is the email's one style block, which some mail clients drop.
var styleBlock = regexp.MustCompile(`(?s)<style>.*?</style>`)

// TestEmailInChromium opens the HTML part of a real report email as a mail client shows it,
// for the research team, whose figures are the largest of the sample (compared with the plan
// of a week earlier, fixtureLastWeek), at a desktop's width and a phone's: the page never scrolls sideways and every figure is whole, on one line and in
// view. On the phone each workload's two sides stack; in a client that drops the style block
// they stay side by side, and still fit. The charts are visible on the desktop.
func TestEmailInChromium(t *testing.T) {
	tooltest.Find(t, "chromium", "chromium", "chromium-browser")
	r := MustSampleReportSince(t, fixtureNow)
	one, _ := r.ForTeam("research")
	charts := len(one.Teams[0].Charts)
	page, dir := emailPage(t, r, "research", "https://gpucost.example.com/")
	if !styleBlock.MatchString(page) {
		t.Fatal("the email has no style block to drop")
	}
	for _, tc := range []struct {
		name          string
		page          string
		width, height int
		sides         string
	}{
		{"desktop", page, 1200, 2800, "side-by-side"},
		{"phone", page, 390, 3500, "stacked"},
		{"phone without the style block", styleBlock.ReplaceAllString(page, ""), 390, 3900, "side-by-side"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := openInChromium(t, dir, tc.page, tc.width, tc.height)
			want := map[string]string{
				"images":    fmt.Sprintf("%d/%d", charts, charts),
				"svgs":      "0/0",
				"tables":    "5", // the frame, the sheet, two workloads, the market
				"workloads": "2",
				"wide":      "0",
				"scroll":    fmt.Sprintf("%d/%d", tc.width, tc.width),
				// Per workload what it saves and each side's $/h and month, and the three totals.
				"money": "13/13",
				"cut":   "-",
				"sides": tc.sides,
			}
			for k, w := range want {
				if v.probe[k] != w {
					t.Errorf("probe %s = %q, want %q (probe %v)", k, v.probe[k], w, v.probe)
				}
			}
			for _, s := range []string{"pretrain-70b", "$97,702.74", "$376,447.33", "$278,744.59", "up $21,252.98 from $76,547.33", `class="market"`, `class="caveats"`, `href="https://gpucost.example.com/"`} {
				if !strings.Contains(v.dom, s) {
					t.Errorf("the DOM lacks %s", s)
				}
			}
			for _, s := range []string{`id="org"`, `id="providers"`, "chat-7b", "ticket-lora", "sdxl-images", "$116,519.72"} {
				if strings.Contains(v.dom, s) {
					t.Errorf("the research team's email shows %s, which is not the team's", s)
				}
			}
			near := checkScreenshot(t, v.shot, tc.width, tc.height, chartRed)
			if tc.width >= 1200 && near < 300 {
				t.Errorf("only %d pixels in the chart line colour: the charts are not visible in the screenshot", near)
			}
		})
	}
}

// TestPageInChromium opens the standalone HTML report with its inline SVG charts.
func TestPageInChromium(t *testing.T) {
	tooltest.Find(t, "chromium", "chromium", "chromium-browser")
	r := MustSampleReport(t, fixtureNow)
	one, _ := r.ForTeam("support")
	var b bytes.Buffer
	if err := report.WriteHTML(&b, one, report.HTMLOptions{Charts: report.ChartsInlineSVG}); err != nil {
		t.Fatal(err)
	}
	const width, height = 1200, 3200
	v := openInChromium(t, t.TempDir(), b.String(), width, height)
	charts := len(one.Teams[0].Charts)
	if charts == 0 {
		t.Fatal("the support team has no charts")
	}
	want := map[string]string{
		"images":    "0/0",
		"svgs":      fmt.Sprintf("%d/%d", charts, charts),
		"tables":    "5", // organisation, providers, two workloads, market
		"workloads": "2",
		"wide":      "0",
		"scroll":    fmt.Sprintf("%d/%d", width, width),
		"cut":       "-",
	}
	for k, w := range want {
		if v.probe[k] != w {
			t.Errorf("probe %s = %q, want %q (probe %v)", k, v.probe[k], w, v.probe)
		}
	}
	if !strings.Contains(v.dom, "<svg") || !strings.Contains(v.dom, "ticket-lora") {
		t.Error("the DOM lacks the charts or the workloads")
	}
	if near := checkScreenshot(t, v.shot, width, height, chartRed); near < 300 {
		t.Errorf("only %d pixels in the chart line colour: the SVG charts are not visible in the screenshot", near)
	}
}
