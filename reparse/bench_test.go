package reparse_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/reparse"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/store/storetest"
)

// BenchmarkReparse re-derives a month of stored Vast.ai runs with today's parser: 50 runs of
// 10,100 asks, just over 1M offers (an on-demand and, mostly, a spot offer each). It reports the
// offers re-derived per second (the goal is at least 100k/s on the 2-core test machine). Each
// run's payload is a search answer of the asks of testdata/vastai_market.json, repeated under
// ids of their own at prices that move from run to run, stored by a scrape through the pipeline.
func BenchmarkReparse(b *testing.B) {
	const runs, asks = 50, 10_100
	st := openStore(b)
	base := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	market := newMarket(b, asks)
	stored := 0
	for k := range runs {
		run := schema.Run{ID: fmt.Sprintf("bench-%02d", k), ObservedAt: base.Add(time.Duration(k) * time.Hour)}
		src := storedPage{body: market.answer(k)}
		cfg := validation
		cfg.SpoolDir = b.TempDir()
		r, err := pipeline.New(cfg, []pipeline.Source{src}, st.Store, st.Store, pipeline.Options{RunID: run.ID, Now: func() time.Time { return run.ObservedAt }})
		if err != nil {
			b.Fatal(err)
		}
		rep, err := r.Run(context.Background())
		if err != nil || rep.Providers[0].Status != schema.RunOK {
			b.Fatalf("storing run %d: %v %+v", k, err, rep.Providers)
		}
		stored += rep.Providers[0].Loaded
	}
	if stored < 1_000_000 {
		b.Fatalf("%d offers stored; the benchmark wants at least 1M", stored)
	}
	// A re-derivation meets history stored long before it, at rest: the month just written is
	// left to finish its background merges first, or they would be timed with it.
	settle(b, st.dsn)
	opts := reparse.Options{From: base, To: base.Add(runs * time.Hour), Providers: []string{scrapers.VastName}, Validation: validation}
	var offers int
	var took time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		rep, err := reparse.Run(context.Background(), st.Store, opts)
		took += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		if p := rep.Providers[0]; p.Runs != runs || p.After != stored {
			b.Fatalf("re-derived %d runs, %d offers; want %d, %d", p.Runs, p.After, runs, stored)
		}
		offers += stored
	}
	b.ReportMetric(float64(offers)/took.Seconds(), "offers/s")
	b.ReportMetric(float64(stored), "offers-stored")
}

// storedPage is a Vast.ai source whose fetch read one search answer.
type storedPage struct{ body []byte }

func (s storedPage) Name() string { return scrapers.VastName }

func (s storedPage) Fetch(_ context.Context, run schema.Run) (schema.Extract, error) {
	offers, problems, err := scrapers.ParseVast(s.body, run, scrapers.DefaultVastURL)
	return schema.Extract{
		Offers:   offers,
		Problems: problems,
		Payloads: []schema.RawPayload{{URL: scrapers.DefaultVastURL, Status: 200, FetchedAt: run.ObservedAt, Body: s.body}},
	}, err
}

// market is the asks of the recorded marketplace, repeated under ids of their own.
type market struct {
	rows []map[string]any
	n    int
}

func newMarket(tb testing.TB, asks int) market {
	tb.Helper()
	data, err := os.ReadFile("../scrapers/testdata/vastai_market.json")
	if err != nil {
		tb.Fatal(err)
	}
	var recorded struct {
		Offers []map[string]any `json:"offers"`
	}
	if err := json.Unmarshal(data, &recorded); err != nil {
		tb.Fatal(err)
	}
	return market{rows: recorded.Offers, n: asks}
}

// answer is the search answer of run k: every ask, its price moved by up to ±10% from run to run.
func (m market) answer(k int) []byte {
	var body bytes.Buffer
	body.WriteString(`{"offers": [`)
	for i := range m.n {
		row := make(map[string]any, len(m.rows[0]))
		for key, v := range m.rows[i%len(m.rows)] {
			row[key] = v
		}
		id := 80_000_000 + i
		row["id"], row["ask_contract_id"] = id, id
		move := 0.9 + float64((i*7919+k*104729)%200)/1000
		for _, key := range []string{"dph_total", "dph_base", "min_bid", "discounted_dph_total"} {
			if v, ok := row[key].(float64); ok {
				row[key] = v * move
			}
		}
		delete(row, "search") // dph_total prices the ask
		enc, _ := json.Marshal(row)
		if i > 0 {
			body.WriteString(", ")
		}
		body.Write(enc)
	}
	body.WriteString("]}")
	return body.Bytes()
}

// settle waits until the server runs no merge of the test database (at most two minutes).
func settle(b *testing.B, dsn string) {
	conn := storetest.Conn(b, dsn)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var merges uint64
		if err := conn.QueryRow(context.Background(), "SELECT count() FROM system.merges WHERE database = currentDatabase()").Scan(&merges); err != nil {
			b.Fatal(err)
		}
		if merges == 0 {
			return
		}
	}
	b.Log("merges still running after two minutes: timing with them")
}
