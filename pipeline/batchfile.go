package pipeline

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"

	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
)

// A spooled batch's file is lines of JSON, written as the source reads (batchWriter) so that no
// run holds its whole batch:
//
//	{"payload":{…,"body_bytes":N}}   one per raw payload, followed by its body: N bytes as
//	<the body>                       fetched, then a newline
//	{"bucket":B,"offers":[…]}        offers kept, of one bucket of row groups (schema.Offer.
//	…                                Bucket), at most partOffers per line
//	{"run":{…}}                      the run-log row, last: a file that has it is whole
//
// A body is kept as it came, not as JSON text (base64, escaped): encoding a market's bodies and
// decoding them back was half the CPU of a scrape. The file is written under a temporary name
// and renamed once its run line is durable, so a batch file in the spool always ends with it.
// The offers are written by bucket, a line per bucket once partOffers of them are held, so
// that a load taking a share of the buckets (schema.Share) skips the other lines undecoded.
// Files of two earlier layouts are read too: offers as {"offers":[…]} in the order kept and
// payloads as JSON lines, {"payloads":[…]} with each body in base64; and before those a single
// line holding all three, {"run":…,"offers":[…],"payloads":[…]}. The offers of a failed run are
// not loaded (its payloads and run-log row are).
//
// The JSON is encoded and decoded with segmentio/encoding, which reads and writes what
// encoding/json does (the same methods of time.Time and decimal.Decimal) at three times the
// speed: decoding the offers back was the other big part of a scrape's CPU.

// partOffers is the most offers one line of a batch file holds: a part read back is at most this
// many offers in memory.
const partOffers = 10_000

// batchLine is one line of a batch file (but a payload's, payloadHead): any of its three parts.
type batchLine struct {
	Run      *schema.ScrapeRun   `json:"run,omitempty"`
	Bucket   *int                `json:"bucket,omitempty"` // of all its offers; nil in the earlier layouts
	Offers   []schema.Offer      `json:"offers,omitempty"`
	Payloads []schema.RawPayload `json:"payloads,omitempty"` // the earlier layouts'
}

// payloadHead is the line before a raw payload's body: the payload without it (its Body field,
// never set, hides the payload's), and its length.
type payloadHead struct {
	Payload struct {
		schema.RawPayload
		Body      []byte `json:"body,omitempty"`
		BodyBytes int    `json:"body_bytes"`
	} `json:"payload"`
}

// Line prefixes of a batch file, as batchWriter writes them; a reader decodes only the parts it
// reads.
var (
	runPrefix      = []byte(`{"run":`)
	bucketPrefix   = []byte(`{"bucket":`)
	offersPrefix   = []byte(`{"offers":`) // the earlier layouts'
	offersField    = []byte(`,"offers":`)
	payloadPrefix  = []byte(`{"payload":`)
	payloadsPrefix = []byte(`{"payloads":`) // the earlier layouts'
)

// partKind is what a reader of a batch file reads of it.
type partKind int

const (
	everyPart partKind = iota
	runPart
	offersPart
	payloadsPart
)

// kind is the part a line starting with head holds (everyPart: a line of none of them).
func kind(head []byte) partKind {
	switch {
	case bytes.HasPrefix(head, runPrefix):
		return runPart
	case bytes.HasPrefix(head, bucketPrefix), bytes.HasPrefix(head, offersPrefix):
		return offersPart
	case bytes.HasPrefix(head, payloadPrefix), bytes.HasPrefix(head, payloadsPrefix):
		return payloadsPart
	}
	return everyPart
}

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
	parsed   int    // offers the source produced
	kept     int    // offers that passed validation
	parser   string // the source's parser version, stamped on its offers

	sp       *spool
	buckets  [schema.Buckets][]schema.Offer // offers kept and not yet written, by bucket
	bucketed int                            // how many
	f        *os.File                       // the batch's temporary file; nil without one
	w        *bufio.Writer
	written  int64 // bytes of whole lines in f
	err      error // why the batch is held in memory: the spool write that failed
	lost     error // why part of it could not be read back from the file when writing failed
	mem      schema.Batch
}

func newBatchWriter(sp *spool, run schema.Run, provider string, v *validator, red *redact.Redactor) *batchWriter {
	w := &batchWriter{run: run, provider: provider, v: v, red: red, rejected: map[string]int{}, flagged: map[string]int{}, sp: sp}
	if sp == nil {
		return w
	}
	f, err := os.CreateTemp(sp.dir, tmpPrefix+fileName(run.ID, provider))
	if err != nil {
		w.err = fmt.Errorf("spooling %s: %w", provider, err)
		return w
	}
	w.f, w.w = f, bufio.NewWriterSize(f, 1<<20)
	return w
}

// page takes one page the source emitted (schema.Run.Emit) or kept in its Extract.
func (w *batchWriter) page(p schema.Page) {
	for i := range p.Payloads { // the page is the run's (schema.Run.Emit): stamped in place
		pl := &p.Payloads[i]
		pl.RunID, pl.Provider = w.run.ID, w.provider
		if pl.FetchedAt.IsZero() {
			pl.FetchedAt = w.run.ObservedAt
		}
	}
	redactPayloads(w.red, p.Payloads)
	for _, pl := range p.Payloads {
		w.keep(batchLine{Payloads: []schema.RawPayload{pl}})
	}
	if len(p.Offers) == 0 {
		return
	}
	w.parsed += len(p.Offers)
	offers := w.v.apply(w.run, w.provider, p.Offers, w.rejected, w.flagged)
	for i := range offers {
		offers[i].ParserVersion = w.parser
	}
	redactOffers(w.red, offers)
	w.kept += len(offers)
	if !w.spooling() {
		w.mem.Offers = append(w.mem.Offers, offers...)
		return
	}
	for i := range offers {
		b := offers[i].Bucket()
		w.buckets[b] = append(w.buckets[b], offers[i])
	}
	w.bucketed += len(offers)
	if w.bucketed >= partOffers {
		w.writeBuckets()
	}
}

// spooling says whether the batch is being written to its file.
func (w *batchWriter) spooling() bool { return w.f != nil }

// writeBuckets writes the offers held, a line per bucket (or more, at most partOffers each).
func (w *batchWriter) writeBuckets() {
	for b := range w.buckets {
		offers := w.buckets[b]
		w.buckets[b] = nil // before keep: a write that fails moves the held offers to memory
		for start := 0; start < len(offers); start += partOffers {
			w.keep(batchLine{Bucket: &b, Offers: offers[start:min(start+partOffers, len(offers))]})
		}
	}
	w.bucketed = 0
}

// keep writes one line to the file, or holds it in memory.
func (w *batchWriter) keep(line batchLine) {
	if w.spooling() {
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
		w.lost = eachPart(io.LimitReader(f, w.written), everyPart, schema.Share{}, func(_ int, l batchLine) error {
			w.mem.Offers = append(w.mem.Offers, l.Offers...)
			w.mem.Payloads = append(w.mem.Payloads, l.Payloads...)
			return nil
		})
		f.Close()
	}
	for b := range w.buckets {
		w.mem.Offers = append(w.mem.Offers, w.buckets[b]...)
		w.buckets[b] = nil
	}
	w.bucketed = 0
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
		name = fileName(run.RunID, run.Provider)
		if err := w.sp.taken(name); err != nil {
			w.discard()
			return schema.Batch{Run: w.redacted(run)}, name, err
		}
	}
	w.writeBuckets() // which may fail, and hold the batch in memory
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

// writeLine writes one part of a batch file, encoding one element at a time: encoding/json
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
		for _, p := range l.Payloads {
			if err := writePayload(w, p); err != nil {
				return err
			}
		}
		return nil
	default:
		w.Write(bucketPrefix)
		w.WriteString(strconv.Itoa(*l.Bucket))
		w.Write(offersField)
		w.WriteByte('[')
		for i := range l.Offers {
			if i > 0 {
				w.WriteByte(',')
			}
			e, err := json.Marshal(&l.Offers[i])
			if err != nil {
				return err
			}
			w.Write(e)
		}
		w.WriteByte(']')
	}
	_, err := w.WriteString("}\n")
	return err
}

// writePayload writes a payload's head line and its body.
func writePayload(w *bufio.Writer, p schema.RawPayload) error {
	var h payloadHead
	h.Payload.RawPayload, h.Payload.BodyBytes = p, len(p.Body)
	head, err := json.Marshal(h)
	if err != nil {
		return err
	}
	w.Write(head)
	w.WriteByte('\n')
	w.Write(p.Body)
	return w.WriteByte('\n')
}

// A partError says that a batch file holds what is not a part of one: a line that does not
// decode, a body cut short or longer than the file. An error reading the file is not one.
type partError struct{ err error }

func (e partError) Error() string { return e.err.Error() }
func (e partError) Unwrap() error { return e.err }

// isPartError says whether err is, or wraps, a partError.
func isPartError(err error) bool {
	var pe partError
	return errors.As(err, &pe)
}

// eachPart calls fn with the number and the content of every part of the batch file r of the
// kind want (everyPart: all of them), with only the offers in share; the others are skipped
// undecoded (a payload's body unread, passed over in the file when r is one), so that the offers
// of a batch are read without holding its payloads, the other way round, and a share of the
// offers without the others. Blank lines are not parts. An error of fn is returned as it is.
func eachPart(r io.Reader, want partKind, share schema.Share, fn func(n int, l batchLine) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	file, _ := r.(*os.File)
	size := inputSize(r)
	for n := 1; ; {
		head, err := br.Peek(len(payloadsPrefix))
		if len(head) == 0 {
			return ignoreEOF(err) // the end, or the file could not be read
		}
		if bytes.HasPrefix(head, payloadPrefix) {
			p, err := readPayload(br, file, size, want == everyPart || want == payloadsPart)
			if err != nil {
				return fmt.Errorf("part %d: %w", n, err)
			}
			if p != nil {
				if err := fn(n, batchLine{Payloads: []schema.RawPayload{*p}}); err != nil {
					return err
				}
			}
			n++
			continue
		}
		line, blank, err := nextLine(br, want, share)
		if err != nil && !errors.Is(err, io.EOF) {
			return err // the file could not be read: what was read of the line is no part
		}
		if len(line) > 0 {
			var l batchLine
			if derr := json.Unmarshal(line, &l); derr != nil {
				return fmt.Errorf("part %d: %w", n, partError{derr})
			}
			if l.Bucket == nil { // the earlier layouts: offers of every bucket
				l.Offers = share.Of(l.Offers)
			}
			if l.Bucket == nil || share.Holds(*l.Bucket) {
				if ferr := fn(n, l); ferr != nil {
					return ferr
				}
			}
		}
		if !blank {
			n++
		}
		if err != nil {
			return ignoreEOF(err)
		}
	}
}

// nextLine reads the next line of br when it is one of the kind want and, if of offers, of a
// bucket in share, or passes over it; blank says it held nothing.
func nextLine(br *bufio.Reader, want partKind, share schema.Share) (line []byte, blank bool, err error) {
	head, _ := br.Peek(len(payloadsPrefix))
	start, _, _ := bytes.Cut(head, []byte("\n"))
	blank = len(bytes.TrimSpace(start)) == 0
	if b := lineBucket(br); (want != everyPart && kind(head) != want) || (b >= 0 && !share.Holds(b)) || blank {
		return nil, blank, skipLine(br)
	}
	line, err = br.ReadBytes('\n')
	return line, blank, err
}

// inputSize is how many bytes r holds at most, when it says (a file, a limited reader): no body
// in it is longer; -1 when it does not say.
func inputSize(r io.Reader) int64 {
	switch r := r.(type) {
	case *os.File:
		if st, err := r.Stat(); err == nil {
			return st.Size()
		}
	case *io.LimitedReader:
		return r.N
	}
	return -1
}

// lineBucket is the bucket the next line of br, a line of offers, says it holds; -1 when it
// names none (a line of the earlier layouts, or not of offers), which every share takes.
func lineBucket(br *bufio.Reader) int {
	head, _ := br.Peek(len(bucketPrefix) + 4)
	digits, ok := bytes.CutPrefix(head, bucketPrefix)
	if !ok {
		return -1
	}
	if i := bytes.IndexByte(digits, ','); i > 0 {
		if b, err := strconv.Atoi(string(digits[:i])); err == nil && b >= 0 {
			return b
		}
	}
	return -1
}

// readPayload reads a payload's head line and its body, or only passes over the body unless
// read is set (and returns nil), seeking past it in file when br reads one. A head that claims
// more bytes than the input holds (size, when known) is refused before anything is allocated.
func readPayload(br *bufio.Reader, file *os.File, size int64, read bool) (*schema.RawPayload, error) {
	line, err := br.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("a payload's head line: %w", cut(err))
	}
	var h payloadHead
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("a payload's head line: %w", partError{err})
	}
	n := h.Payload.BodyBytes
	if n < 0 || (size >= 0 && int64(n) > size) {
		return nil, fmt.Errorf("the payload of %s: %w", h.Payload.URL, partError{fmt.Errorf("a body of %d bytes in a file of %d", n, size)})
	}
	var body []byte
	if read {
		body = make([]byte, n)
		_, err = io.ReadFull(br, body)
	} else {
		err = skip(br, file, n)
	}
	if err == nil {
		var end byte
		if end, err = br.ReadByte(); err == nil && end != '\n' {
			err = partError{fmt.Errorf("%q after it", end)}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the body of %d bytes of %s: %w", n, h.Payload.URL, cut(err))
	}
	if !read {
		return nil, nil
	}
	p := h.Payload.RawPayload
	p.Body = body
	return &p, nil
}

// skip passes over the next n bytes of br: those it holds, then the rest in file by seeking,
// when br reads one.
func skip(br *bufio.Reader, file *os.File, n int) error {
	held := br.Buffered()
	if file == nil || n <= held {
		_, err := br.Discard(n)
		return err
	}
	br.Discard(held)
	at, err := file.Seek(int64(n-held), io.SeekCurrent)
	if err != nil {
		return err
	}
	if st, err := file.Stat(); err == nil && at > st.Size() {
		return io.ErrUnexpectedEOF // the file ends inside the body
	}
	br.Reset(file)
	return nil
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

// cut says that a part ended before its length, the file cut short (a partError); other errors
// of reading it are returned as they are.
func cut(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return partError{io.ErrUnexpectedEOF}
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
	err = eachPart(f, runPart, schema.Share{}, func(n int, l batchLine) error {
		parts = n > 1 // the run line is the last: every part before it is one
		run, b.Offers, b.Payloads = l.Run, l.Offers, l.Payloads
		return nil
	})
	if isPartError(err) {
		return b, false, fmt.Errorf("%w: %w", errNotABatch, err)
	}
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

func (p fileParts) EachOffers(share schema.Share, fn func([]schema.Offer) error) error {
	if p.skipOffers {
		return nil
	}
	return p.each(offersPart, share, true, func(l *batchLine) { redactOffers(p.red, l.Offers) }, func(l batchLine) error { return fn(l.Offers) })
}

// EachPayloads reads no payload ahead: a page of a large market is tens of MB, held a second
// time by the insert it goes to, and the payloads' load gained nothing from it.
func (p fileParts) EachPayloads(fn func([]schema.RawPayload) error) error {
	return p.each(payloadsPart, schema.Share{}, false, func(l *batchLine) { redactPayloads(p.red, l.Payloads) }, func(l batchLine) error { return fn(l.Payloads) })
}

// errStopped ends a read of parts that nobody takes any more.
var errStopped = errors.New("stopped")

// each reads the parts of the kind want, each made ready (scrubbed) by ready, and passes them to
// fn. With ahead set, a goroutine reads and readies the next part while fn takes one: decoding
// the offers back and inserting them took as long as each other. A part that does not read makes
// the batch one the store will never load as it is (schema.ErrRejected).
func (p fileParts) each(want partKind, share schema.Share, ahead bool, ready func(*batchLine), fn func(batchLine) error) error {
	f, err := os.Open(p.path)
	if err != nil {
		return err
	}
	defer f.Close()
	var readErr, fnErr error
	if !ahead {
		readErr = eachPart(f, want, share, func(_ int, l batchLine) error {
			ready(&l)
			fnErr = fn(l)
			return fnErr
		})
	} else {
		parts, stop := make(chan batchLine), make(chan struct{}) // one part ahead: the one sent
		go func() {
			defer close(parts)
			readErr = eachPart(f, want, share, func(_ int, l batchLine) error {
				ready(&l)
				select {
				case parts <- l:
					return nil
				case <-stop:
					return errStopped
				}
			})
		}()
		stopped := false
		stopReading := func() { // and wait until the reader has: readErr is set then
			if !stopped {
				stopped = true
				close(stop)
				for range parts {
				}
			}
		}
		defer stopReading() // fn panicking too
		for l := range parts {
			if fnErr = fn(l); fnErr != nil {
				break
			}
		}
		stopReading()
	}
	switch {
	case fnErr != nil:
		return fnErr
	case isPartError(readErr):
		return fmt.Errorf("reading spooled batch %s: %w: %w: %w", p.path, schema.ErrRejected, errNotABatch, readErr)
	case readErr != nil:
		return fmt.Errorf("reading spooled batch %s: %w", p.path, readErr)
	}
	return nil
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
