package report_test

import (
	"bytes"
	"context"
	"fmt"
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
	"github.com/gpucost/gpucost/report/smtptest"
	"github.com/gpucost/gpucost/tooltest"
)

// The HTML report and the HTML email are opened in headless Chromium (Debian's chromium
// package), which takes a screenshot and dumps the DOM after the page loaded. A probe script,
// added to the test's copy of the page, records what the browser laid out: images decoded,
// SVG charts with a size, tables, workload rows, and tables wider than the window.
//
// Without chromium the tests skip, unless GPUCOST_INTEGRATION=1 (make test, CI), where a
// missing browser is a failure. GPUCOST_KEEP_SCREENSHOTS=DIR keeps the screenshots there.

const probeScript = `<script>
window.addEventListener('load', function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  var svgs = document.querySelectorAll('svg'), shown = 0;
  for (var j = 0; j < svgs.length; j++) { var r = svgs[j].getBoundingClientRect(); if (r.width > 300 && r.height > 100) shown++; }
  var tables = document.querySelectorAll('table'), wide = 0;
  for (var k = 0; k < tables.length; k++) if (tables[k].getBoundingClientRect().right > document.documentElement.clientWidth) wide++;
  document.body.setAttribute('data-probe', 'images=' + ok + '/' + imgs.length + ' svgs=' + shown + '/' + svgs.length +
    ' tables=' + tables.length + ' workloads=' + document.querySelectorAll('tr.workload').length + ' wide=' + wide);
});
</script>`

type browserView struct {
	dom   string
	shot  image.Image
	probe map[string]string
}

// openInChromium loads page (a file in dir) at width × height and returns the DOM after load
// and the screenshot.
func openInChromium(t *testing.T, dir, page string, width, height int) browserView {
	t.Helper()
	bin := tooltest.Find(t, "chromium", "chromium", "chromium-browser")
	shot := filepath.Join(dir, "screenshot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--dump-dom", fmt.Sprintf("--window-size=%d,%d", width, height),
		"file://"+filepath.Join(dir, page))
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
	v := browserView{dom: stdout.String(), shot: img, probe: map[string]string{}}
	m := regexp.MustCompile(`data-probe="([^"]*)"`).FindStringSubmatch(v.dom)
	if m == nil {
		t.Fatalf("the probe did not run (no data-probe in the DOM):\n%s", tail(v.dom, 500))
	}
	for _, kv := range strings.Fields(m[1]) {
		k, val, _ := strings.Cut(kv, "=")
		v.probe[k] = val
	}
	if keep := os.Getenv("GPUCOST_KEEP_SCREENSHOTS"); keep != "" {
		b, _ := os.ReadFile(shot)
		name := filepath.Join(keep, strings.ReplaceAll(t.Name(), "/", "_")+".png")
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Errorf("keeping the screenshot: %v", err)
		}
		t.Logf("screenshot kept as %s", name)
	}
	return v
}

// withProbe adds the probe script before </body>.
func withProbe(html string) string {
	return strings.Replace(html, "</body>", probeScript+"\n</body>", 1)
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

// TestEmailInChromium opens the HTML part of a real report email the way a mail client does:
// the inline PNG parts are saved and the cid: references point at them.
func TestEmailInChromium(t *testing.T) {
	tooltest.Find(t, "chromium", "chromium", "chromium-browser")
	r := MustSampleReport(t, fixtureNow)
	m, err := r.Email("search", report.EmailOptions{From: "gpucost <gpucost@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if _, err := m.WriteTo(&raw); err != nil {
		t.Fatal(err)
	}
	e := smtptest.ParseMail(t, raw.Bytes())
	dir := t.TempDir()
	html := e.HTML
	for cid, data := range e.Images {
		name := regexp.MustCompile(`[^a-z0-9-]`).ReplaceAllString(cid, "_") + ".png"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		html = strings.ReplaceAll(html, `src="cid:`+cid+`"`, `src="`+name+`"`)
	}
	if strings.Contains(html, "cid:") {
		t.Fatal("the HTML refers to an inline image the message does not carry")
	}
	if err := os.WriteFile(filepath.Join(dir, "email.html"), []byte(withProbe(html)), 0o644); err != nil {
		t.Fatal(err)
	}
	const width, height = 1200, 3200
	v := openInChromium(t, dir, "email.html", width, height)
	charts := len(r.Teams[0].Charts)
	want := map[string]string{
		"images":    fmt.Sprintf("%d/%d", charts, charts),
		"svgs":      "0/0",
		"tables":    "4", // organisation, providers, workloads, market
		"workloads": "3",
		"wide":      "0",
	}
	for k, w := range want {
		if v.probe[k] != w {
			t.Errorf("probe %s = %q, want %q (probe %v)", k, v.probe[k], w, v.probe)
		}
	}
	for _, s := range []string{`id="org"`, `class="workloads"`, `class="market"`, `class="caveats"`, "chat-7b", "$17,326.68"} {
		if !strings.Contains(v.dom, s) {
			t.Errorf("the DOM lacks %s", s)
		}
	}
	if near := checkScreenshot(t, v.shot, width, height, chartRed); near < 300 {
		t.Errorf("only %d pixels in the chart line colour: the charts are not visible in the screenshot", near)
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
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte(withProbe(b.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	const width, height = 1200, 3200
	v := openInChromium(t, dir, "report.html", width, height)
	charts := len(one.Teams[0].Charts)
	if charts == 0 {
		t.Fatal("the support team has no charts")
	}
	want := map[string]string{
		"images":    "0/0",
		"svgs":      fmt.Sprintf("%d/%d", charts, charts),
		"tables":    "4",
		"workloads": "2",
		"wide":      "0",
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
