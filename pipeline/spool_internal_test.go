package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// The spool writes a batch payload by payload; the file must be the very JSON of the batch, so
// that a reader (and an operator with jq) sees a schema.Batch.
func TestSpooledFileIsTheBatchJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	b := schema.Batch{
		Run: schema.ScrapeRun{RunID: "run-1", Provider: "vastai", StartedAt: at, FinishedAt: at.Add(time.Minute), Status: schema.RunOK},
		Offers: []schema.Offer{
			{Provider: "vastai", OfferID: "1", GPUModel: "H100", GPUCount: 8, PriceUSDPerGPUHour: decimal.RequireFromString("2.125"), ObservedAt: at},
			{Provider: "vastai", OfferID: "2", GPUNameRaw: "RTX \"4090\" <b>", ObservedAt: at},
		},
		Payloads: []schema.RawPayload{
			{RunID: "run-1", Provider: "vastai", URL: "https://example/a", Status: 200, FetchedAt: at, Body: []byte(`{"offers":[]}`)},
			{RunID: "run-1", Provider: "vastai", URL: "https://example/b", Status: 503, FetchedAt: at, Body: bytes.Repeat([]byte{0, 0xff, '"'}, 1000)},
		},
	}
	failed := schema.Batch{Run: schema.ScrapeRun{RunID: "run-2", Provider: "lambda", Status: schema.RunFailed, Error: "lambda: 401"}}
	for _, b := range []schema.Batch{b, failed} { // a source that failed before any answer has no payloads
		want, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := openSpool(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		name, err := sp.put(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(sp.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("spooled file differs from the batch's JSON:\n got %.300s\nwant %.300s", got, want)
		}
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
