//go:build measure

package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/textcell"
)

// TestMeasureScrapeMemory runs `gpucost scrape` in a child process against five fake providers
// that answer every request with a hostile body exactly at the body limit, and reports the
// child's peak RSS per scenario and run: its VmHWM in /proc/<pid>/status, read every 2ms while
// it runs (getrusage's ru_maxrss would count the test process's own pages, which the child
// shares until it execs). It fails when a dry run (the scrape itself: fetch, parse, validate)
// passes targetRSS; the spool scenario adds the writing of the batches to the spool folder and
// is reported, not held to it. It is a measurement, built only with the tag measure (make
// bench-memory).
//
// GPUCOST_BENCH_BODY_BYTES sets the body limit (default: http.max_body_bytes of the shipped
// configuration), GPUCOST_BENCH_RUNS the runs per scenario (default 3), GPUCOST_BENCH_CHILD_ENV
// more variables for the child (e.g. GODEBUG=gctrace=1; its stderr is then logged). The child
// gets the shipped defaults otherwise (http.max_source_bytes included), a clean environment (no
// GOGC or GOMEMLIMIT), and 1ms delays.
//
// Scenarios, every answer of every source at the limit:
//   - padded: valid answers padded to the limit where the parser must read past the padding
//     (a JSON member it skips, runs of 4 kB paragraphs in the pages); Vast's pages are full, so
//     it asks again and again until its byte budget stops it.
//   - rows: as many offers as fit: Vast pages of minimal rows, RunPod minimal GPU types, page
//     tables of rows up to the token bound, Verda's JSON-LD Offer nodes up to the bound of one
//     token (its script), the rest of the body text.
//   - tokens: pages of empty elements; JSON of many tiny rows.
//   - spool: padded, with ClickHouse unreachable (not a dry run: the batches are spooled).
func TestMeasureScrapeMemory(t *testing.T) {
	const targetRSS = 300e6 // bytes
	limit := int64(0)
	if v := os.Getenv("GPUCOST_BENCH_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("GPUCOST_BENCH_BODY_BYTES: %v", err)
		}
		limit = n
	} else {
		cfg, err := config.Load("", isolated(t.TempDir(), nil))
		if err != nil {
			t.Fatal(err)
		}
		limit = cfg.HTTP.MaxBodyBytes
	}
	runs := 3
	if v := os.Getenv("GPUCOST_BENCH_RUNS"); v != "" {
		runs, _ = strconv.Atoi(v)
	}
	bin := filepath.Join(t.TempDir(), "gpucost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	fmt.Printf("peak RSS of gpucost scrape, every body %d bytes (%.0f MiB)\n| scenario | runs (MB) | exit | outcome |\n|---|---|---|---|\n", limit, float64(limit)/(1<<20))
	for _, sc := range []struct {
		name   string
		bodies func(t *testing.T, size int) hostile
		dryRun bool
	}{
		{"padded", paddedBodies, true},
		{"rows", rowBodies, true},
		{"tokens", tokenBodies, true},
		{"spool", paddedBodies, false},
	} {
		srv := httptest.NewServer(sc.bodies(t, int(limit)))
		var rss []string
		var code int
		var outcome string
		for range runs {
			var peak int64
			code, peak, outcome = runMeasured(t, bin, srv.URL, limit, sc.dryRun)
			rss = append(rss, fmt.Sprintf("%.0f", float64(peak)/1e6))
			if peak > targetRSS && sc.dryRun {
				t.Errorf("%s: peak RSS %.0f MB, over the %.0f MB target", sc.name, float64(peak)/1e6, targetRSS/1e6)
			}
		}
		srv.Close()
		fmt.Printf("| %s | %s | %d | %s |\n", sc.name, strings.Join(rss, ", "), code, outcome)
	}
}

// runMeasured runs one scrape and returns its exit code, peak RSS in bytes and each provider's
// status and error, in short.
func runMeasured(t *testing.T, bin, base string, limit int64, dryRun bool) (int, int64, string) {
	t.Helper()
	args := []string{"scrape"}
	if dryRun {
		args = append(args, "--dry-run")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"GPUCOST_HTTP_MAX_BODY_BYTES=" + strconv.FormatInt(limit, 10),
		"GPUCOST_HTTP_RETRY_WAIT_MIN=1ms", "GPUCOST_HTTP_RETRY_WAIT_MAX=5ms",
		"GPUCOST_SCRAPE_SPOOL_DIR=" + t.TempDir(),
		"GPUCOST_CLICKHOUSE_DSN=clickhouse://default@127.0.0.1:1/gpucost?dial_timeout=200ms",
		"GPUCOST_PROVIDERS_VASTAI_URL=" + base + "/vastai", "GPUCOST_PROVIDERS_VASTAI_DELAY=1ms",
		"GPUCOST_PROVIDERS_RUNPOD_URL=" + base + "/runpod",
		"GPUCOST_PROVIDERS_LAMBDA_PAGE_URL=" + base + "/lambda", "GPUCOST_PROVIDERS_LAMBDA_DELAY=1ms",
		"GPUCOST_PROVIDERS_LAMBDA_API_KEY_ENV=GPUCOST_BENCH_NO_SUCH_KEY",
		"GPUCOST_PROVIDERS_COREWEAVE_URL=" + base + "/coreweave", "GPUCOST_PROVIDERS_COREWEAVE_DELAY=1ms",
		"GPUCOST_PROVIDERS_VERDA_PAGE_URL=" + base + "/verda", "GPUCOST_PROVIDERS_VERDA_DELAY=1ms",
		"GPUCOST_PROVIDERS_VERDA_API_KEY_ENV=GPUCOST_BENCH_NO_SUCH_KEY", "GPUCOST_PROVIDERS_VERDA_CLIENT_ID_ENV=GPUCOST_BENCH_NO_SUCH_ID",
		// The providers the hostile servers answer for; OCI is not measured here yet.
		"GPUCOST_SCRAPE_PROVIDERS=vastai,runpod,lambda,coreweave,verda",
	}
	if extra := os.Getenv("GPUCOST_BENCH_CHILD_ENV"); extra != "" {
		cmd.Env = append(cmd.Env, strings.Fields(extra)...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if os.Getenv("GPUCOST_BENCH_CHILD_ENV") != "" {
		defer func() { t.Logf("child stderr:\n%s", stderr.Bytes()) }()
	}
	hwm, err := runPeakRSS(cmd)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	// The summary table: PROVIDER SCRAPE PARSED REJECTED STORED BATCH ERROR.
	var outcome []string
	summary := stdout.String()
	if i := strings.LastIndex(summary, "PROVIDER"); i >= 0 {
		for _, line := range strings.Split(summary[i:], "\n")[1:] {
			m := summaryRows.FindStringSubmatchIndex(line)
			if m == nil {
				continue
			}
			o := line[m[2]:m[3]] + " " + line[m[4]:m[5]] + " " + line[m[6]:m[7]] + "/" + line[m[10]:m[11]] // parsed/stored
			if rest := strings.TrimSpace(line[m[1]:]); rest != "" {
				o += " (" + textcell.Clean(rest, 90) + ")"
			}
			outcome = append(outcome, o)
		}
	} else {
		outcome = append(outcome, textcell.Clean(stderr.String(), 200))
	}
	return code, hwm, strings.Join(outcome, "; ")
}

// hostile answers /vastai, /runpod, /lambda, /coreweave and /verda with its bodies, Vast's,
// Lambda's and Verda's chunked (no Content-Length), RunPod's and CoreWeave's with one.
type hostile map[string][]byte

func (h hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.Trim(r.URL.Path, "/")
	body, ok := h[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	ct := "application/json"
	if name == "lambda" || name == "coreweave" || name == "verda" {
		ct = "text/html; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	if name == "runpod" || name == "coreweave" {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	} else {
		w.(http.Flusher).Flush()
	}
	_, _ = w.Write(body)
}

func testdata(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join("../../scrapers/testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fill returns head + repeats of unit (each given its number) + tail, at most size bytes, padded
// with pad to exactly size.
func fill(size int, head, tail string, unit func(i int) string, max int, pad byte) []byte {
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(head)
	for i := 0; i < max; i++ {
		u := unit(i)
		if b.Len()+len(u)+len(tail) > size {
			break
		}
		b.WriteString(u)
	}
	for b.Len()+len(tail) < size {
		b.WriteByte(pad)
	}
	b.WriteString(tail)
	return b.Bytes()
}

const vastRow = `{"id": %d, "num_gpus": 1, "gpu_name": "RTX 4090", "gpu_ram": 24564, "dph_total": 0.35, "min_bid": 0.2, "storage_total_cost": 0.01, "verification": "verified", "geolocation": "California, US", "cpu_cores": 32, "cpu_cores_effective": 8, "cpu_ram": 64000, "disk_space": 100, "reliability": 0.99, "bw_nvlink": 0}`

// pageWith inserts s before the page's </body>.
func pageWith(t *testing.T, page, s string) string {
	i := strings.LastIndex(page, "</body>")
	if i < 0 {
		t.Fatal("no </body>")
	}
	return page[:i] + s + page[i:]
}

// paragraphs pads a page to size with 4 kB paragraphs before </body>.
func paragraphs(t *testing.T, page string, size int) []byte {
	i := strings.LastIndex(page, "</body>")
	p := "<p>" + strings.Repeat("x", 4096) + "</p>\n"
	return fill(size, page[:i], page[i:], func(int) string { return p }, size, '\n')
}

func paddedBodies(t *testing.T, size int) hostile {
	var rows []string
	for i := range 64 {
		rows = append(rows, fmt.Sprintf(vastRow, 1000+i))
	}
	vastHead := `{"offers": [` + strings.Join(rows, ", ") + `], "padding": "`
	runpod := testdata(t, "runpod_gputypes.json")
	return hostile{
		"vastai":    fill(size, vastHead, `"}`, func(int) string { return "" }, 0, 'x'),
		"runpod":    fill(size, `{"padding": "`, `", `+strings.TrimPrefix(strings.TrimSpace(runpod), "{"), func(int) string { return "" }, 0, 'x'),
		"lambda":    paragraphs(t, testdata(t, "lambda_pricing.html"), size),
		"coreweave": paragraphs(t, testdata(t, "coreweave_pricing.html"), size),
		"verda":     paragraphs(t, testdata(t, "verda_pricing.html"), size),
	}
}

func rowBodies(t *testing.T, size int) hostile {
	lambda := testdata(t, "lambda_pricing.html")
	// Rows of the first instances tab, up to 80% of the page token bound, so that the
	// paragraphs after them keep the page under it.
	at := strings.Index(lambda, "Instances pricing")
	at += strings.Index(lambda[at:], "<tbody>") + len("<tbody>")
	lrow := `<tr data-plan="NVIDIA H100 SXM5 v%d"><td data-label="GPU"><span>NVIDIA H100 SXM5</span></td><td data-label="VRAM/GPU">80 GB</td><td data-label="vCPUs">26</td><td data-label="RAM">225 GiB</td><td data-label="STORAGE">2.75 TiB SSD</td><td data-label="PRICE/GPU/HR*">$3.29</td></tr>` + "\n"
	var lr strings.Builder
	for i := range rowsFor(fmt.Sprintf(lrow, 0), size) {
		fmt.Fprintf(&lr, lrow, i)
	}
	lambda = lambda[:at] + lr.String() + lambda[at:]

	// Copies of the first priced GPU row, before it.
	cw := testdata(t, "coreweave_pricing.html")
	first := strings.Index(cw, `<div role="listitem"`)
	next := first + 1 + strings.Index(cw[first+1:], `<div role="listitem"`)
	for !strings.Contains(cw[first:next], `<span class="item-value">$`) {
		first, next = next, next+1+strings.Index(cw[next+1:], `<div role="listitem"`)
	}
	row := cw[first:next]
	product := regexp.MustCompile(`data-product="[^"]*"`)
	var cr strings.Builder
	for i := range rowsFor(row, size) {
		cr.WriteString(product.ReplaceAllString(row, fmt.Sprintf(`data-product="hostile-%d"`, i)))
	}
	cw = cw[:first] + cr.String() + cw[first:]

	// Offer nodes at the start of the JSON-LD @graph, up to 90% of the bound of one token (the
	// script is one) and half the body.
	verda := testdata(t, "verda_pricing.html")
	at = strings.Index(verda, `"@graph":[`) + len(`"@graph":[`)
	vrow := `{"@type":"Offer","name":"1x H100 SXM5 80GB v%d on-demand","description":"Hourly on-demand instance price","price":3.25,"priceCurrency":"USD",` +
		`"priceSpecification":{"@type":"UnitPriceSpecification","price":3.25,"priceCurrency":"USD","unitText":"hour"}},`
	var vr strings.Builder
	for i := 0; vr.Len() < min(4<<20*9/10, size/2)-len(vrow)-8; i++ {
		fmt.Fprintf(&vr, vrow, i)
	}
	verda = verda[:at] + vr.String() + verda[at:]

	return hostile{
		"vastai": fill(size, `{"offers": [`, `{}]}`, func(i int) string {
			return fmt.Sprintf(vastRow, i) + ", "
		}, size, ' '),
		"runpod": fill(size, `{"data": {"gpuTypes": [`, `{"id": "last"}]}}`, func(i int) string {
			return fmt.Sprintf(`{"id": "GPU %d", "memoryInGb": 24, "securePrice": 1.5, "communityPrice": 1.2, "secureSpotPrice": 0.9, "communitySpotPrice": 0.7}, `, i)
		}, size, ' '),
		"lambda":    paragraphs(t, lambda, size),
		"coreweave": paragraphs(t, cw, size),
		"verda":     paragraphs(t, verda, size),
	}
}

// rowsFor returns how many copies of row fit in 80% of the page token bound, and in half of
// a body of size bytes.
func rowsFor(row string, size int) int {
	z := html.NewTokenizer(strings.NewReader(row))
	n := 0
	for z.Next() != html.ErrorToken {
		n++
	}
	return min(240_000/n, size/2/len(row))
}

func tokenBodies(t *testing.T, size int) hostile {
	tiny := func(page string) []byte {
		i := strings.LastIndex(page, "</body>")
		return fill(size, page[:i], page[i:], func(int) string { return "<i></i>" }, size, ' ')
	}
	return hostile{
		"vastai":    fill(size, `{"offers": [`, `{}]}`, func(int) string { return "{}, " }, size, ' '),
		"runpod":    fill(size, `{"data": {"gpuTypes": [`, `{}]}}`, func(int) string { return "{}, " }, size, ' '),
		"lambda":    tiny(testdata(t, "lambda_pricing.html")),
		"coreweave": tiny(testdata(t, "coreweave_pricing.html")),
		"verda":     tiny(testdata(t, "verda_pricing.html")),
	}
}
