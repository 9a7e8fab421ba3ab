package main

import (
	"encoding/csv"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/pipeline"
)

// stdoutOf cuts runCLI's output down to what went to stdout.
func stdoutOf(out string) string {
	s, _, _ := strings.Cut(out, "\n--- stderr\n")
	return s
}

// summaryRows are the provider rows of a scrape summary's table: PROVIDER SCRAPE PARSED
// REJECTED STORED BATCH.
var summaryRows = regexp.MustCompile(`(?m)^(` + strings.Join(config.ProviderNames, "|") + `)\s+(ok|partial|failed)\s+(\d+)\s+(\d+)\s+(\d+)\s+(stored|already stored|spooled|quarantined|none|dry run)\b`)

// storedTotal sums the STORED column of a scrape summary: the offers the run stored.
func storedTotal(t *testing.T, out string) int {
	t.Helper()
	total := 0
	for _, m := range summaryRows.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[5])
		total += n
	}
	return total
}

// spooledTotal sums the valid offers (PARSED - REJECTED) of the batches a scrape summary says
// were spooled: what the next run loads.
func spooledTotal(t *testing.T, out string) int {
	t.Helper()
	total := 0
	for _, m := range summaryRows.FindAllStringSubmatch(out, -1) {
		if m[6] == "spooled" {
			parsed, _ := strconv.Atoi(m[3])
			rejected, _ := strconv.Atoi(m[4])
			total += parsed - rejected
		}
	}
	return total
}

// batches counts the providers of a scrape summary whose batch ended as batch says.
func batches(out, batch string) int {
	n := 0
	for _, m := range summaryRows.FindAllStringSubmatch(out, -1) {
		if m[6] == batch {
			n++
		}
	}
	return n
}

func TestScrapeGoodRun(t *testing.T) {
	x := newE2E(t, nil)
	code, out := x.run("scrape")
	if code != exitOK {
		t.Fatalf("scrape: exit %d, want 0\n%s", code, out)
	}
	loaded := storedTotal(t, out)
	if loaded < 300 {
		t.Fatalf("loaded %d offers, want the whole snapshot (hundreds)\n%s", loaded, out)
	}
	if got := x.count("offers", ""); got != loaded {
		t.Errorf("offers table holds %d rows, the run reported %d loaded", got, loaded)
	}
	if got := x.count("scrape_runs", "status = 'ok'"); got != defaultProviders(t) {
		t.Errorf("%d ok run-log rows, want %d", got, defaultProviders(t))
	}
	// One raw payload per response served: 21 Vast slices, RunPod, the Lambda page, CoreWeave,
	// the Verda page, OCI's price list and shapes, Vultr's two pages of plans and its metal
	// plans, and the Nebius, DigitalOcean and Hyperstack pages.
	if got := x.count("raw_payloads", ""); got != 33 {
		t.Errorf("%d raw payloads stored, want 33", got)
	}
	code, out = x.run("offers", "--gpu", "H100-SXM-80GB", "--output", "csv", "--limit", "0")
	if code != exitOK {
		t.Fatalf("offers: exit %d\n%s", code, out)
	}
	lines, err := csv.NewReader(strings.NewReader(stdoutOf(out))).ReadAll()
	if err != nil || len(lines) < 5 {
		t.Fatalf("offers for H100-SXM-80GB: %d lines (%v)\n%s", len(lines), err, out)
	}
	col := func(name string) int {
		i := slices.Index(lines[0], name)
		if i < 0 {
			t.Fatalf("offers CSV has no column %s: %v", name, lines[0])
		}
		return i
	}
	providerCol, modelCol, priceCol := col("provider"), col("gpu_model"), col("price_usd_per_gpu_hour")
	prev := -1.0
	providers := map[string]bool{}
	for _, f := range lines[1:] {
		p, err := strconv.ParseFloat(f[priceCol], 64)
		if err != nil || f[modelCol] != "H100-SXM-80GB" {
			t.Fatalf("bad row %q", f)
		}
		if p < prev {
			t.Errorf("offers not cheapest first: %v after %v", p, prev)
		}
		prev = p
		providers[f[providerCol]] = true
	}
	if len(providers) < 3 {
		t.Errorf("H100-SXM-80GB offered by %v, want several providers", providers)
	}
}

func TestScrapeOneProviderDown(t *testing.T) {
	down := func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
		return true
	}
	x := newE2E(t, map[string]func(http.ResponseWriter, *http.Request) bool{"runpod": down})
	code, out := x.run("scrape")
	if code != exitPartial {
		t.Fatalf("scrape: exit %d, want %d (partial)\n%s", code, exitPartial, out)
	}
	if got := x.count("scrape_runs", "provider = 'runpod' AND status = 'failed' AND error LIKE '%HTTP 503%'"); got != 1 {
		t.Errorf("run log has %d failed runpod rows naming HTTP 503, want 1\n%s", got, out)
	}
	if got := x.count("scrape_runs", "status = 'ok'"); got != defaultProviders(t)-1 {
		t.Errorf("%d ok providers, want the other %d", got, defaultProviders(t)-1)
	}
	if got := x.count("offers", "provider = 'runpod'"); got != 0 {
		t.Errorf("%d runpod offers loaded from a failed provider", got)
	}
	if got := x.count("offers", ""); got != storedTotal(t, out) || got == 0 {
		t.Errorf("offers table holds %d rows, the run reported %d", got, storedTotal(t, out))
	}
}

func TestScrapeClickHouseDownDuringRunThenBack(t *testing.T) {
	var x *e2e
	var once sync.Once
	// ClickHouse goes away while the providers are being fetched: after the run started and
	// read its history, before it loads anything.
	cut := func(w http.ResponseWriter, r *http.Request) bool {
		once.Do(func() { x.proxy.setDown(true) })
		return false
	}
	x = newE2E(t, map[string]func(http.ResponseWriter, *http.Request) bool{"coreweave": cut})
	code, out := x.run("scrape")
	if code != exitPartial {
		t.Fatalf("scrape with ClickHouse down: exit %d, want %d\n%s", code, exitPartial, out)
	}
	firstLoaded := spooledTotal(t, out)
	if n := batches(stdoutOf(out), "spooled"); n != defaultProviders(t) || firstLoaded == 0 {
		t.Errorf("%d providers' batches spooled, want all %d:\n%s", n, defaultProviders(t), out)
	}
	// The summary agrees with the exit code: nothing was stored, the batches were spooled.
	if !regexp.MustCompile(`(?m)^run \S+: spooled: \d+ batch(es)? waits? in the spool; 0 offers stored$`).MatchString(out) || storedTotal(t, out) != 0 {
		t.Errorf("the summary of a run whose batches were all spooled does not say so:\n%s", out)
	}
	if got := x.count("offers", ""); got != 0 {
		t.Fatalf("%d offers reached ClickHouse while it was down", got)
	}

	x.proxy.setDown(false)
	code, out = x.run("scrape")
	if code != exitOK {
		t.Fatalf("scrape after ClickHouse came back: exit %d\n%s", code, out)
	}
	if n := strings.Count(out, "loaded spooled batch"); n != defaultProviders(t) {
		t.Errorf("loaded %d spooled batches, want %d\n%s", n, defaultProviders(t), out)
	}
	secondLoaded := storedTotal(t, out)
	if got, want := x.count("offers", ""), firstLoaded+secondLoaded; got != want {
		t.Errorf("offers table holds %d rows, want %d (both runs, each once)", got, want)
	}
	if got := x.count("scrape_runs", ""); got != 2*defaultProviders(t) {
		t.Errorf("%d run-log rows, want %d (%d providers × 2 runs)", got, 2*defaultProviders(t), defaultProviders(t))
	}
	// A third run finds an empty spool and loads only its own offers.
	code, out = x.run("scrape")
	if code != exitOK || strings.Contains(out, "spooled batch") {
		t.Fatalf("third scrape: exit %d\n%s", code, out)
	}
	if got, want := x.count("offers", ""), firstLoaded+secondLoaded+storedTotal(t, out); got != want {
		t.Errorf("offers table holds %d rows after three runs, want %d", got, want)
	}
}

func TestScrapeSameReplayTwice(t *testing.T) {
	x := newE2E(t, nil)
	// The snapshot was recorded at the providers' real URLs: replay with the default endpoints.
	cfg := x.writeConfig("")
	code, out := runCLI("scrape", "--replay", snapshotDir, "--config", cfg)
	if code != exitOK {
		t.Fatalf("first replay: exit %d\n%s", code, out)
	}
	loaded := storedTotal(t, out)
	if !regexp.MustCompile(`(?m)^run \S+: ok: \d+ offers stored from \d+ providers?$`).MatchString(out) || loaded == 0 {
		t.Errorf("the first replay's summary does not say it stored the snapshot:\n%s", out)
	}
	code, out = runCLI("scrape", "--replay", snapshotDir, "--config", cfg)
	if code != exitOK {
		t.Fatalf("second replay: exit %d\n%s", code, out)
	}
	// The second says nothing new was stored, for the run and for each provider.
	if !regexp.MustCompile(`(?m)^run \S+: already loaded: .*nothing new stored$`).MatchString(out) ||
		batches(out, "already stored") != defaultProviders(t) || storedTotal(t, out) != 0 {
		t.Errorf("the second replay's summary does not say every batch was already stored:\n%s", out)
	}
	// The same in JSON and CSV.
	code, out = runCLI("scrape", "--replay", snapshotDir, "--config", cfg, "--output", "json")
	if code != exitOK {
		t.Fatalf("a third replay, JSON: exit %d\n%s", code, out)
	}
	s := oneItem[pipeline.Summary](t, []byte(stdoutOf(out)))
	if s.Outcome != pipeline.OutcomeAlreadyLoaded || s.Stored != 0 || len(s.Providers) != defaultProviders(t) {
		t.Errorf("a third replay, JSON: %+v\n%s", s, out)
	}
	for _, p := range s.Providers {
		if p.Batch != pipeline.BatchAlreadyStored || p.Stored != 0 || p.Valid == 0 {
			t.Errorf("a third replay, JSON: %+v, want its valid offers already stored", p)
		}
	}
	code, out = runCLI("scrape", "--replay", snapshotDir, "--config", cfg, "--output", "csv")
	rows, err := csv.NewReader(strings.NewReader(stdoutOf(out))).ReadAll()
	if code != exitOK || err != nil || len(rows) != defaultProviders(t)+1 || strings.Join(rows[0], ",") != "run_id,outcome,provider,status,batch,parsed,valid,rejected,stored,duration_seconds,error" {
		t.Fatalf("a fourth replay, CSV: exit %d, %d rows (%v)\n%s", code, len(rows), err, out)
	}
	for _, r := range rows[1:] {
		if r[1] != "already loaded" || r[4] != "already stored" || r[8] != "0" {
			t.Errorf("a fourth replay, CSV row %q", r)
		}
	}
	if got := x.count("offers", ""); got != loaded {
		t.Errorf("offers table holds %d rows after replaying the same snapshot four times, want %d", got, loaded)
	}
	if got := x.count("scrape_runs", ""); got != defaultProviders(t) {
		t.Errorf("%d run-log rows, want %d", got, defaultProviders(t))
	}
}

func TestScrapeRecordThenReplayParsesTheSame(t *testing.T) {
	x := newE2E(t, nil)
	dir := t.TempDir()
	code, live := x.run("scrape", "--record", dir, "--dry-run")
	if code != exitOK {
		t.Fatalf("recording run: exit %d\n%s", code, live)
	}
	// Stop the providers: the replay must not need them.
	for _, s := range x.servers {
		s.Close()
	}
	code, replayed := x.run("scrape", "--replay", dir, "--dry-run")
	if code != exitOK {
		t.Fatalf("replay: exit %d\n%s", code, replayed)
	}
	offersOf := func(out string) string { // the dry-run table, without the run summary and logs
		return out[strings.Index(out, "dry run:"):strings.Index(out, "\nrun ")]
	}
	if offersOf(live) != offersOf(replayed) || !strings.Contains(live, "offers would be loaded") {
		t.Errorf("replay parsed differently from the recorded run:\n--- live\n%s\n--- replay\n%s", offersOf(live), offersOf(replayed))
	}
	if got := x.count("offers", ""); got != 0 {
		t.Errorf("a dry run loaded %d offers", got)
	}
}

func TestScrapeTwoAtOnce(t *testing.T) {
	slow := func(w http.ResponseWriter, r *http.Request) bool {
		time.Sleep(1500 * time.Millisecond)
		return false
	}
	x := newE2E(t, map[string]func(http.ResponseWriter, *http.Request) bool{"runpod": slow})
	codes := make([]int, 2)
	outs := make([]string, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], outs[i] = x.run("scrape", "--providers", "runpod,lambda")
		}()
	}
	wg.Wait()
	ok, busy := 0, 0
	for i, c := range codes {
		switch c {
		case exitOK:
			ok++
		case exitBusy:
			busy++
			if !strings.Contains(outs[i], "another scrape run is in progress") || !strings.Contains(outs[i], "pid") {
				t.Errorf("busy run's message does not say who holds the lock:\n%s", outs[i])
			}
		}
	}
	if ok != 1 || busy != 1 {
		t.Fatalf("exit codes %v, want one 0 and one %d\n%s\n%s", codes, exitBusy, outs[0], outs[1])
	}
	if got := x.count("scrape_runs", ""); got != 2 {
		t.Errorf("%d run-log rows, want 2 (one run of two providers)", got)
	}
}

// defaultProviders is how many providers a scrape of the embedded configuration runs.
func defaultProviders(t *testing.T) int {
	t.Helper()
	cfg, err := config.Load("", isolated(t.TempDir(), nil))
	if err != nil {
		t.Fatal(err)
	}
	return len(cfg.Scrape.Providers)
}
