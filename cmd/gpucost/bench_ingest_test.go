package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/store/storetest"
	"github.com/gpucost/gpucost/tooltest"
)

// BenchmarkIngestMarket is a whole `gpucost scrape` of a Vast.ai market of 100k and of 1M
// offers, end to end (fetch → parse → validate → spool → load), in a child process against a
// fake Vast that answers the source's real queries (slices by GPU name, both sort orders,
// GPU-count buckets, a page limit) from a generated market, paired in the same iteration with
// the raw limit: clickhouse-client inserting the very rows gpucost stored (offers and raw
// payload bodies, as TSV) into a fresh database of the same schema on the same server. It
// reports gpucost's offers/s, the client's rows/s, their ratio (goal ≥ 0.5), and the child's
// peak RSS (goal under 200 MB at 100k, and bounded as the market grows). Run it with `make
// bench`; bench/ingest-ratio.sh runs it several times and prints the median ratio. It needs
// the local ClickHouse, GPUCOST_INTEGRATION=1 and clickhouse-client (make bench installs it).
func BenchmarkIngestMarket(b *testing.B) {
	storetest.Enabled(b)
	client := tooltest.Find(b, "clickhouse-client", "clickhouse-client")
	bin := filepath.Join(b.TempDir(), "gpucost")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, offers := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("offers=%d", offers), func(b *testing.B) {
			market := newFakeVastMarket(b, offers/2) // every ask is an on-demand and a spot offer
			srv := httptest.NewServer(market)
			defer srv.Close()
			var gpucostRate, clientRate, peakMB float64
			for b.Loop() {
				got := ingestOnce(b, bin, client, srv.URL, market.pageLimit)
				if got.offers != offers {
					b.Fatalf("gpucost stored %d offers of a market of %d", got.offers, offers)
				}
				gpucostRate += float64(got.offers) / got.gpucost.Seconds()
				clientRate += float64(got.offers) / got.client.Seconds()
				peakMB += float64(got.peakRSS) / 1e6
			}
			n := float64(b.N)
			b.ReportMetric(gpucostRate/n, "offers/s")
			b.ReportMetric(clientRate/n, "client-rows/s")
			b.ReportMetric(gpucostRate/clientRate, "×client")
			b.ReportMetric(peakMB/n, "peak-RSS-MB")
		})
	}
}

// ingestResult is one paired iteration of BenchmarkIngestMarket.
type ingestResult struct {
	offers          int           // offers gpucost stored
	gpucost, client time.Duration // gpucost's whole scrape; the client's inserts of the same rows
	peakRSS         int64         // bytes, gpucost's
}

// ingestOnce scrapes the fake market into a fresh database with gpucost, then inserts what it
// stored into another fresh database with clickhouse-client.
func ingestOnce(b *testing.B, bin, client, vastURL string, pageLimit int) ingestResult {
	b.Helper()
	dsn := storetest.DSN(b)
	if code, out := runCLI("migrate", "--dsn", dsn); code != 0 {
		b.Fatalf("migrate: %s", out)
	}
	cmd := exec.Command(bin, "scrape", "--providers", "vastai")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(),
		"GPUCOST_CLICKHOUSE_DSN=" + dsn,
		"GPUCOST_SCRAPE_SPOOL_DIR=" + b.TempDir(),
		"GPUCOST_SCRAPE_SOURCE_TIMEOUT=20m", "GPUCOST_SCRAPE_SOURCE_TIMEOUT_MAX=20m", "GPUCOST_SCRAPE_LOAD_TIMEOUT=20m",
		"GPUCOST_HTTP_MAX_BODY_BYTES=" + strconv.Itoa(256<<20),
		"GPUCOST_HTTP_MAX_SOURCE_BYTES=" + strconv.Itoa(16<<30),
		"GPUCOST_HTTP_MAX_SOURCE_OFFERS=" + strconv.Itoa(4_000_000),
		"GPUCOST_PROVIDERS_VASTAI_URL=" + vastURL,
		"GPUCOST_PROVIDERS_VASTAI_DELAY=1ms",
		"GPUCOST_PROVIDERS_VASTAI_PAGE_LIMIT=" + strconv.Itoa(pageLimit),
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	peak, err := runPeakRSS(cmd)
	res := ingestResult{gpucost: time.Since(t0), peakRSS: peak}
	if err != nil {
		b.Fatalf("gpucost scrape: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	n, err := countRows(dsn, "offers", "")
	if err != nil {
		b.Fatal(err)
	}
	res.offers = n

	// The same rows, as TSV files, into a fresh database of the same schema.
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		b.Fatal(err)
	}
	peer := storetest.DSN(b)
	if code, out := runCLI("migrate", "--dsn", peer); code != 0 {
		b.Fatalf("migrate: %s", out)
	}
	peerOpts, err := clickhouse.ParseDSN(peer)
	if err != nil {
		b.Fatal(err)
	}
	host, port, _ := strings.Cut(opts.Addr[0], ":")
	run := func(query string, stdin, stdout *os.File) {
		c := exec.Command(client, "--host", host, "--port", port, "--query", query)
		c.Stdin, c.Stdout = stdin, stdout
		var errOut bytes.Buffer
		c.Stderr = &errOut
		if err := c.Run(); err != nil {
			b.Fatalf("clickhouse-client %q: %v\n%s", query, err, errOut.Bytes())
		}
	}
	dir := b.TempDir()
	var files []*os.File
	for _, table := range []string{"raw_payloads", "offers"} {
		f, err := os.Create(filepath.Join(dir, table+".tsv"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		run("SELECT * FROM "+opts.Auth.Database+"."+table+" FORMAT TabSeparated", nil, f)
		files = append(files, f)
	}
	t0 = time.Now()
	for i, table := range []string{"raw_payloads", "offers"} {
		if _, err := files[i].Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		run("INSERT INTO "+peerOpts.Auth.Database+"."+table+" FORMAT TabSeparated", files[i], nil)
	}
	res.client = time.Since(t0)
	return res
}

// fakeVastMarket is a Vast.ai offers search over a generated market: it answers the source's
// queries (gpu_name eq or notin, num_gpus eq or a range, the dph_total order, limit) as Vast
// does, with rows shaped like the recorded ones of scrapers/testdata/vastai_market.json (every
// field of a real row), each ask with its own id, GPU count and price. The page limit is the one
// the source must ask for: Vast's plan of slices, sort orders and GPU-count buckets then reads
// the whole market with pages of at most that many asks.
type fakeVastMarket struct {
	asks      []fakeAsk
	pageLimit int
}

type fakeAsk struct {
	name    string
	numGPUs int
	price   float64 // dph_total
	row     []byte  // its JSON
}

func newFakeVastMarket(tb testing.TB, asks int) *fakeVastMarket {
	tb.Helper()
	data, err := os.ReadFile("../../scrapers/testdata/vastai_market.json")
	if err != nil {
		tb.Fatal(err)
	}
	var recorded struct {
		Offers []map[string]any `json:"offers"`
	}
	if err := json.Unmarshal(data, &recorded); err != nil {
		tb.Fatal(err)
	}
	// Templates by GPU name: the source's slices, then every other name in the recording.
	byName := map[string][]map[string]any{}
	for _, o := range recorded.Offers {
		name, _ := o["gpu_name"].(string)
		if name == "" || o["min_bid"] == nil || o["dph_total"] == nil {
			continue
		}
		byName[name] = append(byName[name], o)
	}
	names := slices.Clone(scrapers.DefaultVastGPUNames)
	for name := range byName {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names[len(scrapers.DefaultVastGPUNames):])
	vram := map[string]float64{"L4": 23034, "A10": 23028} // names the recording lacks
	counts := []int{1, 2, 4, 8}
	m := &fakeVastMarket{asks: make([]fakeAsk, asks)}
	perName := map[string]int{}
	for i := range m.asks {
		name := names[i%len(names)]
		tpl := byName[name]
		if len(tpl) == 0 {
			tpl = byName["RTX A6000"]
		}
		o := tpl[(i/len(names))%len(tpl)]
		n := counts[(i/len(names))%len(counts)]
		perGPU := o["dph_total"].(float64) / o["num_gpus"].(float64) * (0.8 + float64((i*7919)%400)/1000)
		bid := o["min_bid"].(float64) / o["num_gpus"].(float64) * (0.8 + float64((i*104729)%400)/1000)
		id := 70_000_000 + i
		row := make(map[string]any, len(o))
		for k, v := range o {
			row[k] = v
		}
		row["id"], row["ask_contract_id"], row["bundle_id"] = id, id, 300_000_000+i
		row["machine_id"], row["host_id"] = 200_000+i/4, 300_000+i/16
		row["gpu_name"], row["num_gpus"] = name, n
		if v, ok := vram[name]; ok {
			row["gpu_ram"], row["gpu_total_ram"] = v, v
		}
		row["dph_total"], row["dph_base"], row["min_bid"] = perGPU*float64(n), perGPU*float64(n)*0.99, bid*float64(n)
		row["discounted_dph_total"] = perGPU * float64(n)
		row["search"] = map[string]any{"totalHour": perGPU * float64(n), "gpuCostPerHour": perGPU * float64(n) * 0.99}
		enc, err := json.Marshal(row)
		if err != nil {
			tb.Fatal(err)
		}
		m.asks[i] = fakeAsk{name: name, numGPUs: n, price: perGPU * float64(n), row: enc}
		perName[name]++
	}
	// A page holds a quarter of the largest slice (a GPU name of the source's list, or all the
	// others): each of its GPU-count buckets (a quarter each) fits in one page, so the source
	// reads every ask.
	other := 0
	for name, n := range perName {
		if slices.Contains(scrapers.DefaultVastGPUNames, name) {
			m.pageLimit = max(m.pageLimit, n/4+64)
		} else {
			other += n
		}
	}
	m.pageLimit = max(m.pageLimit, other/4+64)
	slices.SortFunc(m.asks, func(a, b fakeAsk) int {
		if a.price != b.price {
			if a.price < b.price {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.row, b.row)
	})
	return m
}

// ServeHTTP answers one search: the matching asks in the order asked for, at most limit.
func (m *fakeVastMarket) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var q struct {
		GPUName struct {
			Eq    *string  `json:"eq"`
			NotIn []string `json:"notin"`
		} `json:"gpu_name"`
		NumGPUs *struct {
			Eq  *int `json:"eq"`
			Gte *int `json:"gte"`
			Lte *int `json:"lte"`
		} `json:"num_gpus"`
		Order [][]string `json:"order"`
		Limit int        `json:"limit"`
	}
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	match := func(a *fakeAsk) bool {
		switch {
		case q.GPUName.Eq != nil && a.name != *q.GPUName.Eq:
			return false
		case q.GPUName.Eq == nil && slices.Contains(q.GPUName.NotIn, a.name):
			return false
		case q.NumGPUs == nil:
			return true
		case q.NumGPUs.Eq != nil:
			return a.numGPUs == *q.NumGPUs.Eq
		}
		return (q.NumGPUs.Gte == nil || a.numGPUs >= *q.NumGPUs.Gte) && (q.NumGPUs.Lte == nil || a.numGPUs <= *q.NumGPUs.Lte)
	}
	desc := len(q.Order) > 0 && len(q.Order[0]) > 1 && q.Order[0][1] == "desc"
	var body bytes.Buffer
	body.WriteString(`{"offers": [`)
	rows := 0
	for k := range m.asks {
		i := k
		if desc {
			i = len(m.asks) - 1 - k
		}
		if rows == q.Limit {
			break
		}
		if a := &m.asks[i]; match(a) {
			if rows > 0 {
				body.WriteString(", ")
			}
			body.Write(a.row)
			rows++
		}
	}
	body.WriteString("]}")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	_, _ = w.Write(body.Bytes())
}
