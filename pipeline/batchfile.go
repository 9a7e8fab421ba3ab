package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
)

// A spooled batch's file is JSON lines, written as the source reads (batchWriter) so that no
// run holds its whole batch:
//
//	{"payloads":[…]}      one line per raw payload
//	{"offers":[…]}        the offers kept from a page, at most partOffers per line
//	…
//	{"run":{…}}           the run-log row, last: a file that has it is whole
//
// The file is written under a temporary name and renamed once its run line is durable, so a
// batch file in the spool always ends with it. Batches spooled by gpucost before this layout
// are one line holding all three, {"run":…,"offers":[…],"payloads":[…]}; both are read. The
// offers of a failed run are not loaded (its payloads and run-log row are).

// partOffers is the most offers one line of a batch file holds: a part read back is at most this
// many offers in memory.
const partOffers = 10_000

// batchLine is one line of a batch file: any of its three parts.
type batchLine struct {
	Run      *schema.ScrapeRun   `json:"run,omitempty"`
	Offers   []schema.Offer      `json:"offers,omitempty"`
	Payloads []schema.RawPayload `json:"payloads,omitempty"`
}

// Line prefixes of a batch file, as batchWriter writes them; a reader looks only at the lines of
// the part it reads.
var (
	runPrefix      = []byte(`{"run":`)
	offersPrefix   = []byte(`{"offers":`)
	payloadsPrefix = []byte(`{"payloads":`)
)

// batchWriter takes one source's pages as it reads them (schema.Run.Emit): it stamps and
// redacts the payloads, validates and redacts the offers, and writes both to the batch's file in
// the spool. Without a spool (a dry run), or once writing failed (the spool's disk full or gone),
// it holds them in memory instead, as the batch a run without a spooled copy loads.
type batchWriter struct {
	run      schema.Run
	provider string
	v        *validator
	red      *redact.Redactor
	rejected map[string]int
	flagged  map[string]int
	parsed   int // offers the source produced
	kept     int // offers that passed validation

	sp      *spool
	f       *os.File // the batch's temporary file; nil without one
	w       *bufio.Writer
	written int64 // bytes of whole lines in f
	err     error // why the batch is held in memory: the spool write that failed
	lost    error // why part of it could not be read back from the file when writing failed
	mem     schema.Batch
}

func newBatchWriter(sp *spool, run schema.Run, provider string, v *validator, red *redact.Redactor) *batchWriter {
	w := &batchWriter{run: run, provider: provider, v: v, red: red, rejected: map[string]int{}, flagged: map[string]int{}, sp: sp}
	if sp == nil {
		return w
	}
	f, err := os.CreateTemp(sp.dir, tmpPrefix+safe(run.ID)+"."+safe(provider)+".json")
	if err != nil {
		w.err = fmt.Errorf("spooling %s: %w", provider, err)
		return w
	}
	w.f, w.w = f, bufio.NewWriterSize(f, 1<<20)
	return w
}

// page is the source's schema.Run.Emit.
func (w *batchWriter) page(p schema.Page) error {
	for i := range p.Payloads {
		pl := p.Payloads[i]
		pl.RunID, pl.Provider = w.run.ID, w.provider
		if pl.FetchedAt.IsZero() {
			pl.FetchedAt = w.run.ObservedAt
		}
		pl.URL, pl.Body = w.red.URL(pl.URL), w.red.Data(pl.Body)
		w.keep(batchLine{Payloads: []schema.RawPayload{pl}})
	}
	if len(p.Offers) == 0 {
		return nil
	}
	w.parsed += len(p.Offers)
	offers := w.v.apply(w.run, w.provider, p.Offers, w.rejected, w.flagged)
	redactOffers(w.red, offers)
	w.kept += len(offers)
	for start := 0; start < len(offers); start += partOffers {
		w.keep(batchLine{Offers: offers[start:min(start+partOffers, len(offers))]})
	}
	return nil
}

// keep writes one line to the file, or holds it in memory.
func (w *batchWriter) keep(line batchLine) {
	if w.f != nil && w.err == nil {
		err := writeLine(w.w, line)
		if err == nil {
			err = w.w.Flush()
		}
		if err == nil {
			n, _ := w.f.Seek(0, io.SeekCurrent)
			w.written = n
			return
		}
		w.fail(fmt.Errorf("spooling %s: %w", w.provider, err))
	}
	w.mem.Offers = append(w.mem.Offers, line.Offers...)
	w.mem.Payloads = append(w.mem.Payloads, line.Payloads...)
}

// fail holds the batch in memory from now on, with what the file has of it so far (its whole
// lines, read back by its name); what cannot be read back is recorded in lost.
func (w *batchWriter) fail(err error) {
	w.err = err
	if w.f == nil {
		return
	}
	w.f.Close()
	f, oerr := os.Open(w.f.Name())
	if oerr != nil {
		w.lost = oerr
	} else {
		w.lost = eachLine(io.LimitReader(f, w.written), nil, func(n int, line []byte) error {
			var l batchLine
			if err := json.Unmarshal(line, &l); err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			w.mem.Offers = append(w.mem.Offers, l.Offers...)
			w.mem.Payloads = append(w.mem.Payloads, l.Payloads...)
			return nil
		})
		f.Close()
	}
	w.discard()
}

// discard removes the temporary file.
func (w *batchWriter) discard() {
	if w.f != nil {
		w.f.Close()
		os.Remove(w.f.Name())
		w.f = nil
	}
}

// finish completes the batch with its run-log row. It returns the batch to load: the spooled
// file's (its name in the spool set) or the one held in memory, with the spool's error (nil on a
// dry run). A batch of the same run and provider already in the spool or its quarantine is not
// written again (errSpooledBefore, errQuarantinedBefore; see spool.taken's reasons). A batch
// whose spool write failed and that could not be read back whole fails: its offers are not
// loaded, and its run-log row says why.
func (w *batchWriter) finish(run schema.ScrapeRun) (b schema.Batch, name string, err error) {
	if w.sp != nil {
		name = safe(run.RunID) + "." + safe(run.Provider) + ".json"
		if err := w.sp.taken(name); err != nil {
			w.discard()
			return schema.Batch{Run: w.redacted(run)}, name, err
		}
	}
	if w.f == nil {
		return w.held(run), "", w.err
	}
	run = w.redacted(run)
	err = writeLine(w.w, batchLine{Run: &run})
	if err == nil {
		err = w.w.Flush()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if err == nil {
		err = w.f.Close()
	}
	if err == nil {
		err = os.Rename(w.f.Name(), filepath.Join(w.sp.dir, name))
		if err == nil {
			// The batch is in the spool: the folder's sync makes its name durable; should
			// it fail, a power cut might lose the name, which the run can do nothing about.
			_ = syncDir(w.sp.dir)
			w.f = nil
			return schema.Batch{Run: run, Parts: w.sp.parts(name, run, w.red)}, name, nil
		}
	}
	w.fail(fmt.Errorf("spooling %s: %w", name, err))
	return w.held(run), "", w.err
}

// held returns the batch held in memory, with its run-log row: without its offers when the
// run failed, or failed when the spool lost part of it.
func (w *batchWriter) held(run schema.ScrapeRun) schema.Batch {
	if w.lost != nil && run.Status != schema.RunFailed {
		run.Status, run.OffersLoaded = schema.RunFailed, 0
		run.Error = strings.TrimPrefix(run.Error+"; ", "; ") + fmt.Sprintf("%s: the spool failed (%v) and the batch could not be read back from it whole (%v); its offers are not loaded", w.provider, w.err, w.lost)
	}
	if run.Status == schema.RunFailed {
		w.mem.Offers = nil // a failed run's offers are not loaded
	}
	w.mem.Run = w.redacted(run)
	return w.mem
}

// redacted returns run with its error scrubbed.
func (w *batchWriter) redacted(run schema.ScrapeRun) schema.ScrapeRun {
	run.Error = w.red.String(run.Error)
	return run
}

// writeLine writes one line of a batch file, encoding one element at a time: encoding/json
// builds a value's whole encoding in memory before writing it.
func writeLine(w *bufio.Writer, l batchLine) error {
	switch {
	case l.Run != nil:
		run, err := json.Marshal(l.Run)
		if err != nil {
			return err
		}
		w.Write(runPrefix)
		w.Write(run)
	case l.Payloads != nil:
		w.Write(payloadsPrefix)
		if err := writeArray(w, l.Payloads); err != nil {
			return err
		}
	default:
		w.Write(offersPrefix)
		if err := writeArray(w, l.Offers); err != nil {
			return err
		}
	}
	_, err := w.WriteString("}\n")
	return err
}

func writeArray[T any](w *bufio.Writer, elems []T) error {
	w.WriteByte('[')
	for i := range elems {
		if i > 0 {
			w.WriteByte(',')
		}
		e, err := json.Marshal(&elems[i])
		if err != nil {
			return err
		}
		w.Write(e)
	}
	return w.WriteByte(']')
}

// eachLine calls fn with the number and the bytes (without the newline) of every line of r
// that starts with prefix (nil: every line but blank ones); the others are skipped unread, so
// that the offers of a batch are read without holding its payloads' lines, and the other way
// round.
func eachLine(r io.Reader, prefix []byte, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		if prefix != nil {
			head, _ := br.Peek(len(prefix))
			if len(head) == 0 {
				return nil // the end
			}
			if !bytes.Equal(head, prefix) {
				if err := skipLine(br); err != nil {
					return ignoreEOF(err)
				}
				continue
			}
		}
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(n, bytes.TrimSuffix(line, []byte("\n"))); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return ignoreEOF(err)
		}
	}
}

// skipLine reads past the next newline without keeping what it reads.
func skipLine(br *bufio.Reader) error {
	for {
		if _, err := br.ReadSlice('\n'); !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// readBatch reads a batch file's run line, and the offers and payloads of a file in the former
// one-line layout, and reports whether the file has parts (lines of the present layout). It reads
// the file once, decoding only the run line.
func readBatch(path string) (schema.Batch, bool, error) {
	var b schema.Batch
	f, err := os.Open(path)
	if err != nil {
		return b, false, err
	}
	defer f.Close()
	var run *schema.ScrapeRun
	parts := false
	err = eachLine(f, runPrefix, func(n int, line []byte) error {
		parts = n > 1 // the run line is the last: every line before it is a part
		var l batchLine
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("%w: %w", errNotABatch, err)
		}
		run, b.Offers, b.Payloads = l.Run, l.Offers, l.Payloads
		return nil
	})
	if err != nil {
		return b, false, err
	}
	if run == nil {
		return b, false, fmt.Errorf("%w: no run line", errNotABatch)
	}
	b.Run = *run
	return b, parts, nil
}

// fileParts reads the parts of a batch file (schema.Parts), each scrubbed by red as it is read:
// a batch spooled by an older gpucost or under other secrets, or a credential a source sent
// (and so taught the redactor) after an earlier page held it.
type fileParts struct {
	path       string
	skipOffers bool // a failed run's
	red        *redact.Redactor
}

func (p fileParts) EachOffers(fn func([]schema.Offer) error) error {
	if p.skipOffers {
		return nil
	}
	return p.each(offersPrefix, func(l batchLine) error {
		redactOffers(p.red, l.Offers)
		return fn(l.Offers)
	})
}

func (p fileParts) EachPayloads(fn func([]schema.RawPayload) error) error {
	return p.each(payloadsPrefix, func(l batchLine) error {
		redactPayloads(p.red, l.Payloads)
		return fn(l.Payloads)
	})
}

// each decodes the lines that start with prefix. A line that does not decode makes the batch
// one the store will never load as it is (schema.ErrRejected).
func (p fileParts) each(prefix []byte, fn func(batchLine) error) error {
	f, err := os.Open(p.path)
	if err != nil {
		return err
	}
	defer f.Close()
	return eachLine(f, prefix, func(n int, line []byte) error {
		var l batchLine
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("reading spooled batch %s, line %d: %w: %w: %w", p.path, n, schema.ErrRejected, errNotABatch, err)
		}
		return fn(l)
	})
}

// redactPayloads scrubs secrets from payloads: their URLs as messages, their bodies as data.
func redactPayloads(red *redact.Redactor, payloads []schema.RawPayload) {
	for i := range payloads {
		p := &payloads[i]
		p.URL, p.Body = red.URL(p.URL), red.Data(p.Body)
	}
}

// redactOffers scrubs secrets from the offers' text: their source URLs as messages, the rest as
// data. A source's offers share a few URLs: each is redacted once.
func redactOffers(red *redact.Redactor, offers []schema.Offer) {
	urls := map[string]string{}
	for i := range offers {
		o := &offers[i]
		u, ok := urls[o.SourceURL]
		if !ok {
			u = red.URL(o.SourceURL)
			urls[o.SourceURL] = u
		}
		o.SourceURL, o.OfferID, o.Region, o.GPUNameRaw = u, red.DataString(o.OfferID), red.DataString(o.Region), red.DataString(o.GPUNameRaw)
	}
}
