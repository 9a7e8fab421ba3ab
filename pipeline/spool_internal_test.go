package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// A batch written page by page reads back as the same batch: its run line, its payloads (bodies
// kept as they came, whatever bytes they hold: lines that look like parts of the file, no
// newline at the end) and offers part by part in the order written (offers past partOffers split
// into parts); a failed run's offers are not read; and batches spooled in the two earlier layouts
// (payloads as JSON lines; before that one line, the JSON of a schema.Batch) read as they were.
func TestSpooledBatchReadsBack(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	run := schema.Run{ID: "run-1", ObservedAt: at}
	offers := make([]schema.Offer, partOffers+3)
	for i := range offers {
		offers[i] = schema.Offer{OfferID: fmt.Sprint(i), GPUModel: "H100-SXM-80GB", GPUCount: 8, VRAMGB: 80, PriceType: schema.OnDemand,
			PriceUSDPerGPUHour: decimal.New(int64(2_000_000+i), -6), PriceUSDPerHour: decimal.New(int64(8*(2_000_000+i)), -6)}
	}
	offers[1].GPUNameRaw = "RTX \"4090\" <b>"
	payloads := []schema.RawPayload{
		{URL: "https://example/a", Status: 200, FetchedAt: at, Body: []byte(`{"offers":[]}`)},
		{URL: "https://example/b", Status: 503, FetchedAt: at, Body: bytes.Repeat([]byte{0, 0xff, '"'}, 1000)},
		{URL: "https://example/c", Status: 200, FetchedAt: at, Body: []byte("<p>\n{\"run\":{\"run_id\":\"forged\"}}\n{\"payload\":{\"body_bytes\":99}}\n\n")},
		{URL: "https://example/d", Status: 204, FetchedAt: at, Body: []byte{}},
	}
	for _, status := range []schema.RunStatus{schema.RunOK, schema.RunFailed} {
		sp, err := openSpool(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		w := newBatchWriter(sp, run, "vastai", &validator{maxPrice: decimal.NewFromInt(200)}, nil)
		for _, p := range []schema.Page{{Payloads: payloads[:1]}, {Offers: slices.Clone(offers[:2])}, {Payloads: payloads[1:], Offers: slices.Clone(offers[2:])}} {
			w.page(p)
		}
		row := schema.ScrapeRun{RunID: "run-1", Provider: "vastai", StartedAt: at, FinishedAt: at.Add(time.Minute), Status: status, OffersLoaded: uint32(len(offers))}
		_, name, err := w.finish(row)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sp.get(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		var gotOffers []schema.Offer
		var gotPayloads []schema.RawPayload
		var parts []int
		if err := got.EachOffers(schema.Share{}, func(os []schema.Offer) error {
			parts = append(parts, len(os))
			gotOffers = append(gotOffers, os...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := got.EachPayloads(func(ps []schema.RawPayload) error { gotPayloads = append(gotPayloads, ps...); return nil }); err != nil {
			t.Fatal(err)
		}
		wantOffers, wantParts := offers, []int{partOffers, 3} // one bucket: held until partOffers, then written
		if status == schema.RunFailed {
			wantOffers, wantParts = nil, nil
		}
		if diff := cmp.Diff(row, got.Run); diff != "" {
			t.Errorf("%s: run (-want +got):\n%s", status, diff)
		}
		if diff := cmp.Diff(wantParts, parts); diff != "" {
			t.Errorf("%s: parts (-want +got):\n%s", status, diff)
		}
		if len(gotOffers) != len(wantOffers) {
			t.Fatalf("%s: %d offers read back, want %d", status, len(gotOffers), len(wantOffers))
		}
		for i, o := range gotOffers {
			if o.OfferID != wantOffers[i].OfferID || !o.PriceUSDPerGPUHour.Equal(wantOffers[i].PriceUSDPerGPUHour) || o.RunID != "run-1" || o.Provider != "vastai" || o.GPUNameRaw != wantOffers[i].GPUNameRaw {
				t.Fatalf("%s: offer %d read back as %+v", status, i, o)
			}
		}
		for i := range payloads {
			want := payloads[i]
			want.RunID, want.Provider = "run-1", "vastai"
			if i >= len(gotPayloads) || !cmp.Equal(want, gotPayloads[i]) {
				t.Errorf("%s: payload %d read back differs", status, i)
			}
		}
	}

	// The layout before: payloads as JSON lines, their bodies in base64.
	sp, err := openSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	enc := json.NewEncoder(&lines)
	before := slices.Clone(payloads[:2])
	for i := range before {
		before[i].RunID, before[i].Provider = "run-1", "vastai"
	}
	beforeRun := schema.ScrapeRun{RunID: "run-1", Provider: "vastai", StartedAt: at, FinishedAt: at, Status: schema.RunOK, OffersLoaded: 2}
	for _, l := range []batchLine{{Payloads: before[:1]}, {Offers: offers[:2]}, {Payloads: before[1:]}, {Run: &beforeRun}} {
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(sp.dir, "run-1.vastai.json"), lines.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := sp.get("run-1.vastai.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var gotPayloads []schema.RawPayload
	if err := got.EachPayloads(func(ps []schema.RawPayload) error { gotPayloads = append(gotPayloads, ps...); return nil }); err != nil {
		t.Fatal(err)
	}
	var gotOffers int
	if err := got.EachOffers(schema.Share{}, func(os []schema.Offer) error { gotOffers += len(os); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, gotPayloads); diff != "" || gotOffers != 2 || got.Run.OffersLoaded != 2 {
		t.Errorf("a batch of the layout before: %d offers, run %+v, payloads (-want +got):\n%s", gotOffers, got.Run, diff)
	}

	// The first layout: one line, the JSON of the batch.
	old := schema.Batch{
		Run:      schema.ScrapeRun{RunID: "run-0", Provider: "lambda", StartedAt: at, FinishedAt: at, Status: schema.RunOK},
		Offers:   []schema.Offer{{RunID: "run-0", Provider: "lambda", OfferID: "gpu_1x_h100", PriceUSDPerGPUHour: decimal.RequireFromString("2.49"), ObservedAt: at}},
		Payloads: []schema.RawPayload{{RunID: "run-0", Provider: "lambda", URL: "https://example/c", Status: 200, FetchedAt: at, Body: []byte("<html>")}},
	}
	sp, err = openSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sp.dir, "run-0.lambda.json"), append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = sp.get("run-0.lambda.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(old, got, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("a batch of the first layout (-want +got):\n%s", diff)
	}
}

// A batch file left half-written by a killed run is removed by the next run that takes the lock.
func TestLockRemovesHalfWrittenBatches(t *testing.T) {
	sp, err := openSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(sp.dir, tmpPrefix+"run-1.vastai.json123456")
	if err := os.WriteFile(half, []byte(`{"run":{"run_id":"run-1"`), 0o600); err != nil {
		t.Fatal(err)
	}
	unlock, err := sp.lock(context.Background(), time.Second, "run-2", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := os.Stat(half); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the half-written batch is still there (%v)", err)
	}
}

// A run that finds the lock taken names its holder, also when the holder has taken the lock
// but not yet written its line.
func TestBusyRunNamesAHolderThatHasJustTakenTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), lockFile)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = os.WriteFile(path, []byte("run r1, pid 42, started 2026-12-01T12:00:00Z\n"), 0o600)
	}()
	if got := lockHolder(path); got != "run r1, pid 42, started 2026-12-01T12:00:00Z" {
		t.Errorf("lockHolder = %q", got)
	}
}

// A spool write that fails half-way (a full disk) does not lose the pages written before it:
// the writer reads them back and holds the batch in memory from then on, and finish returns it
// whole with the spool's error, for the run to load without a spooled copy.
func TestBatchWriterFallsBackToMemory(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sp, err := openSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := newBatchWriter(sp, schema.Run{ID: "run-1", ObservedAt: at}, "vastai", &validator{maxPrice: decimal.NewFromInt(200)}, nil)
	page := func(id string) schema.Page {
		return schema.Page{
			Payloads: []schema.RawPayload{{URL: "https://example/" + id, Status: 200, Body: []byte(id)}},
			Offers: []schema.Offer{{OfferID: id, GPUModel: "H100-SXM-80GB", GPUCount: 1, VRAMGB: 80, PriceType: schema.OnDemand,
				PriceUSDPerGPUHour: decimal.RequireFromString("2.5"), PriceUSDPerHour: decimal.RequireFromString("2.5")}},
		}
	}
	w.page(page("a"))
	w.fail(errors.New("no space left on device"))
	w.page(page("b"))
	b, name, err := w.finish(schema.ScrapeRun{RunID: "run-1", Provider: "vastai", Status: schema.RunOK})
	if err == nil || name != "" {
		t.Fatalf("finish: %q, %v; want no spool file and the spool's error", name, err)
	}
	if len(b.Offers) != 2 || b.Offers[0].OfferID != "a" || b.Offers[1].OfferID != "b" || len(b.Payloads) != 2 || string(b.Payloads[0].Body) != "a" {
		t.Errorf("the batch held in memory: %d offers, %d payloads; want both pages", len(b.Offers), len(b.Payloads))
	}
	if tmps, _ := filepath.Glob(filepath.Join(sp.dir, tmpPrefix+"*")); len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// A batch whose spool write failed and whose file cannot be read back whole is not loaded as
// if it were whole: its run fails, and says why.
func TestBatchWriterFailsWhatItCannotReadBack(t *testing.T) {
	sp, err := openSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := newBatchWriter(sp, schema.Run{ID: "run-1", ObservedAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}, "vastai", &validator{maxPrice: decimal.NewFromInt(200)}, nil)
	o := schema.Offer{OfferID: "a", GPUModel: "H100-SXM-80GB", GPUCount: 1, VRAMGB: 80, PriceType: schema.OnDemand,
		PriceUSDPerGPUHour: decimal.RequireFromString("2.5"), PriceUSDPerHour: decimal.RequireFromString("2.5")}
	w.page(schema.Page{Offers: []schema.Offer{o}})
	w.writeBuckets()                                             // as once partOffers are held
	if _, err := w.f.WriteAt([]byte("garbage"), 0); err != nil { // the disk returned other bytes
		t.Fatal(err)
	}
	w.fail(errors.New("input/output error"))
	b, _, err := w.finish(schema.ScrapeRun{RunID: "run-1", Provider: "vastai", Status: schema.RunOK, OffersLoaded: 1})
	if err == nil || b.Run.Status != schema.RunFailed || b.Run.OffersLoaded != 0 || len(b.Offers) != 0 || !strings.Contains(b.Run.Error, "could not be read back") {
		t.Errorf("finish: %+v, %v; want a failed run without offers that says why", b.Run, err)
	}
}

// A batch file cut inside a payload's body (a disk that lost its tail, a hand edit) is a batch
// that will not load as it is: reading its payloads fails with schema.ErrRejected and names the
// part, and a head that claims more bytes than the file has allocates no more than it holds.
func TestCutPayloadBodyIsRejected(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sp, err := openSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := newBatchWriter(sp, schema.Run{ID: "run-1", ObservedAt: at}, "vastai", &validator{maxPrice: decimal.NewFromInt(200)}, nil)
	body := bytes.Repeat([]byte("0123456789"), 1000)
	w.page(schema.Page{Payloads: []schema.RawPayload{{URL: "https://example/a", Status: 200, Body: body}, {URL: "https://example/b", Status: 200, Body: body}}})
	_, name, err := w.finish(schema.ScrapeRun{RunID: "run-1", Provider: "vastai", StartedAt: at, FinishedAt: at, Status: schema.RunOK})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sp.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	second := bytes.LastIndex(data, []byte(`{"payload":`))
	for _, tc := range []struct{ name, file string }{
		{"cut inside the body", string(data[:second+300])},
		{"a head claiming a terabyte", string(data[:second]) + strings.Replace(string(data[second:]), `"body_bytes":10000`, `"body_bytes":1000000000000`, 1)},
	} {
		if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
			t.Fatal(err)
		}
		parts := fileParts{path: path}
		read := 0
		err := parts.EachPayloads(func(ps []schema.RawPayload) error { read += len(ps); return nil })
		if !errors.Is(err, schema.ErrRejected) || !strings.Contains(err.Error(), "part 2") || !strings.Contains(err.Error(), "https://example/b") {
			t.Errorf("%s: reading the payloads: %v; want a rejected batch naming part 2 and its URL", tc.name, err)
		}
		if read != 1 {
			t.Errorf("%s: %d payloads read before the cut one, want 1", tc.name, read)
		}
	}
}

// A spooled batch read in shares gives each offer in exactly one share, every offer of a row
// group (day, GPU model, price type) in the same, and all of them across the shares; a share
// passes over the lines of the others without decoding them (a corrupt line of another share's
// bucket does not stop it), and the offers of a file of the earlier layout are shared the same.
func TestSpooledBatchReadsInShares(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var offers []schema.Offer
	for i := range 3 * partOffers / 2 {
		pt := schema.OnDemand
		if i%2 == 1 {
			pt = schema.Spot
		}
		offers = append(offers, schema.Offer{OfferID: fmt.Sprint(i), GPUModel: fmt.Sprintf("MODEL-%d", i%37), GPUCount: 1, VRAMGB: 80, PriceType: pt,
			PriceUSDPerGPUHour: decimal.New(int64(1_000_000+i), -6), PriceUSDPerHour: decimal.New(int64(1_000_000+i), -6)})
	}
	sp, err := openSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := newBatchWriter(sp, schema.Run{ID: "run-1", ObservedAt: at}, "vastai", &validator{maxPrice: decimal.NewFromInt(200)}, nil)
	for start := 0; start < len(offers); start += 1000 {
		w.page(schema.Page{Offers: slices.Clone(offers[start:min(start+1000, len(offers))])})
	}
	_, name, err := w.finish(schema.ScrapeRun{RunID: "run-1", Provider: "vastai", StartedAt: at, FinishedAt: at, Status: schema.RunOK, OffersLoaded: uint32(len(offers))})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sp.dir, name)
	type group struct{ model, pt string }
	// share is the i-th of n shares of the buckets, by remainder.
	share := func(i, n int) schema.Share {
		var s schema.Share
		for b := i; b < schema.Buckets; b += n {
			s.Buckets |= 1 << b
		}
		return s
	}
	readShares := func(t *testing.T, path string, n int) {
		t.Helper()
		shareOf, groupShare := map[string]int{}, map[group]int{}
		for i := range n {
			err := fileParts{path: path}.EachOffers(share(i, n), func(part []schema.Offer) error {
				for _, o := range part {
					if s, ok := shareOf[o.OfferID]; ok {
						t.Errorf("%d shares: offer %s in shares %d and %d", n, o.OfferID, s, i)
					}
					shareOf[o.OfferID] = i
					g := group{o.GPUModel, string(o.PriceType)}
					if s, ok := groupShare[g]; ok && s != i {
						t.Errorf("%d shares: row group %v in shares %d and %d", n, g, s, i)
					}
					groupShare[g] = i
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%d shares: share %d: %v", n, i, err)
			}
		}
		if len(shareOf) != len(offers) {
			t.Errorf("%d shares: %d offers read, want %d", n, len(shareOf), len(offers))
		}
		if n > 1 && len(slices.Compact(slices.Sorted(maps.Values(groupShare)))) < 2 {
			t.Errorf("%d shares: every row group in one share", n)
		}
	}
	for _, n := range []int{1, 3, 7} {
		readShares(t, path, n)
	}

	// A line of a bucket that share 0 of 7 does not take, broken after its head.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	broken := -1
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if b := lineBucket(bufio.NewReader(bytes.NewReader(line))); broken < 0 && b >= 0 && !share(0, 7).Holds(b) {
			line, broken = append(line[:len(`{"bucket":`)+len(fmt.Sprint(b))+len(`,"offers":[`)], "garbage\n"...), i
		}
		lines = append(lines, line)
	}
	if broken < 0 {
		t.Fatal("no line of another share's bucket")
	}
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (fileParts{path: path}).EachOffers(share(0, 7), func([]schema.Offer) error { return nil }); err != nil {
		t.Errorf("share 0 of 7 read the broken line of another share: %v", err)
	}
	if err := (fileParts{path: path}).EachOffers(schema.Share{}, func([]schema.Offer) error { return nil }); !errors.Is(err, schema.ErrRejected) {
		t.Errorf("reading every share past a broken line: %v, want a rejected batch", err)
	}

	// The earlier layout: the offers in lines of their own, in the order kept.
	var old bytes.Buffer
	enc := json.NewEncoder(&old)
	for start := 0; start < len(offers); start += partOffers {
		part := slices.Clone(offers[start:min(start+partOffers, len(offers))])
		for i := range part {
			part[i].RunID, part[i].Provider, part[i].ObservedAt = "run-1", "vastai", at
		}
		if err := enc.Encode(batchLine{Offers: part}); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Encode(batchLine{Run: &schema.ScrapeRun{RunID: "run-1", Provider: "vastai", Status: schema.RunOK}}); err != nil {
		t.Fatal(err)
	}
	oldPath := filepath.Join(t.TempDir(), "run-1.vastai.json")
	if err := os.WriteFile(oldPath, old.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	readShares(t, oldPath, 3)
}

// A batch file that cannot be read (here a folder in its place: every read fails) is not a
// batch the store rejects: the error says so, and the batch is not quarantined for it.
func TestUnreadableBatchIsNotRejected(t *testing.T) {
	dir := t.TempDir()
	err := fileParts{path: dir}.EachPayloads(func([]schema.RawPayload) error { return nil })
	if err == nil || errors.Is(err, schema.ErrRejected) || errors.Is(err, errNotABatch) {
		t.Errorf("reading a batch file that cannot be read: %v; want an error that is not a rejection", err)
	}
	if _, _, err := readBatch(dir); err == nil || errors.Is(err, errNotABatch) {
		t.Errorf("reading its run line: %v; want an error, not errNotABatch", err)
	}
	// A read that fails inside a line: what was read of it is not a part that does not decode.
	eio := errors.New("input/output error")
	r := io.MultiReader(strings.NewReader(`{"bucket":3,"offers":[{"offer_id":`), iotest.ErrReader(eio))
	if err := eachPart(r, everyPart, schema.Share{}, func(int, batchLine) error { return nil }); !errors.Is(err, eio) || isPartError(err) {
		t.Errorf("a read failing inside a line: %v; want the read's error, not a part's", err)
	}
}
