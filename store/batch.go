package store

import (
	"cmp"
	"context"
	"crypto/md5"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// LoadResult says what one CompleteBatch call wrote.
type LoadResult struct {
	PayloadsWritten int  // raw payloads inserted by this call
	OffersWritten   int  // offers inserted by this call
	Repaired        int  // rollup row groups and offers_latest rows this call had to write again
	RunWritten      bool // the run-log row was written by this call
}

// Skipped reports whether the whole batch was already stored (a replay of a loaded batch).
func (r LoadResult) Skipped() bool {
	return r.PayloadsWritten == 0 && r.OffersWritten == 0 && r.Repaired == 0 && !r.RunWritten
}

// Load steps, in order: CompleteBatch calls Options.OnLoadStep with each once it is done (whether it
// had anything to write or not), so a fault-injection test can stop the process after any of them.
const (
	StepChecked  = "checked"  // the run-log row was looked up: the batch is not stored whole
	StepPayloads = "payloads" // every raw payload of the batch is stored
	StepOffers   = "offers"   // every offer of the batch is stored
	StepRollups  = "rollups"  // offers_daily and offers_daily_sums hold every offer of the batch
	StepLatest   = "latest"   // offers_latest holds the batch's offers (or newer ones)
	StepRun      = "run"      // the run-log row is stored: the batch is complete
)

// LoadSteps lists the load steps in the order CompleteBatch passes them.
func LoadSteps() []string {
	return []string{StepChecked, StepPayloads, StepOffers, StepRollups, StepLatest, StepRun}
}

// LoadBatch stores one provider's batch of one run (CompleteBatch) and reports whether the whole
// batch was stored already: it is the pipeline's Sink (pipeline.Sink), whose kinds of failure its
// errors wrap (schema.ErrUnavailable, schema.ErrRejected).
func (s *Store) LoadBatch(ctx context.Context, b schema.Batch) (skipped bool, err error) {
	res, err := s.CompleteBatch(ctx, b)
	return res.Skipped(), err
}

// CompleteBatch stores one provider's batch of one run so that, however many times it is called and
// wherever an earlier call was cut off (the process killed, the server killed, the connection
// lost), each row ends up stored exactly once:
//
//  0. A write of the batch that the server still runs for a load whose process died (the
//     client gone after sending its rows, the server still writing them and the views' parts) is
//     waited for or stopped first (endStrays): what follows must see what is stored, not what is
//     being stored.
//  1. The run-log row (scrape_runs) is written last, so when it exists the batch is complete and
//     nothing is written.
//  2. Raw payloads and offers are compared row by row with what is stored of the run and
//     provider within the batch's own time range, and only the missing rows are inserted: an
//     insert that reached some parts (monthly partitions, shards) and not others is completed,
//     not repeated.
//  3. The rollups are checked against the stored offers of the batch and what they lack is
//     written (rollups.go): ClickHouse writes an insert's part of offers before the parts of the
//     materialized views, so a crash in between leaves offers without their rollup. Then the
//     final rows of the completed days the batch reached, and of the days that ended since the
//     last load, are written (final.go).
//  4. The run-log row.
//
// The comparisons use the batch's own timestamps, so a batch must be loaded again with the
// timestamps it was first loaded with: the pipeline keeps it in its spool (a write-ahead log)
// until this returns nil. Two processes loading one batch at the same moment could both write it;
// the pipeline's run lock prevents that. Errors wrap schema.ErrUnavailable (only when the first
// query failed, so the call wrote nothing) or schema.ErrRejected where one applies.
func (s *Store) CompleteBatch(ctx context.Context, b schema.Batch) (LoadResult, error) {
	var res LoadResult
	runID, provider := b.Run.RunID, b.Run.Provider
	if runID == "" || provider == "" {
		return res, fmt.Errorf("loading a batch: %w: the run id and provider are required", schema.ErrRejected)
	}
	// What the batch holds in memory is checked before anything is written; its parts (a spooled
	// batch's, which the pipeline wrote) as each is read.
	if err := checkOffers(runID, provider, b.Offers); err != nil {
		return res, err
	}
	if err := checkPayloads(runID, provider, b.Payloads); err != nil {
		return res, err
	}
	if err := s.endStrays(ctx, runID, provider); err != nil {
		return res, unavailable(err)
	}
	done, err := s.hasRunRow(ctx, runID, provider)
	if err != nil {
		return res, err
	}
	if done {
		return res, nil // the whole batch is stored
	}
	s.step(StepChecked)
	// The batch is read a part at a time (a spooled batch from its file), and written in chunks
	// of about one insert block, each compared with what is stored.
	storedPayloads, storedOffers := newStoredRows[payloadKey](), newStoredRows[offerRowKey]()
	var chunk []schema.RawPayload
	held := 0
	flushPayloads := func() error {
		n, err := s.completePayloads(ctx, runID, provider, chunk, true, storedPayloads)
		res.PayloadsWritten += n
		chunk, held = chunk[:0], 0
		return err
	}
	err = b.EachPayloads(func(part []schema.RawPayload) error {
		if err := checkPayloads(runID, provider, part); err != nil {
			return err
		}
		for _, p := range part {
			if held > 0 && held+len(p.Body) > insertBlockBytes {
				if err := flushPayloads(); err != nil {
					return err
				}
			}
			chunk, held = append(chunk, p), held+len(p.Body)
		}
		return nil
	})
	if err == nil {
		err = flushPayloads()
	}
	if err != nil {
		return res, err
	}
	s.step(StepPayloads)
	// The offers missing go in inserts of one block each (offerInsert says why), added part by
	// part: one for a batch of up to shareOffers offers, else one per share of the buckets of
	// row groups, each read from the start (a spooled batch skips the other shares' lines).
	shares, err := s.offerShares(b)
	if err != nil {
		return res, err
	}
	var rows span
	for _, share := range shares {
		ins := s.newOfferInsert("offers", runID)
		err = b.EachOffers(share, func(part []schema.Offer) error {
			if err := checkOffers(runID, provider, part); err != nil {
				return err
			}
			rows.add(len(part), func(i int) time.Time { return part[i].ObservedAt })
			n, err := s.completeOffers(ctx, runID, provider, part, storedOffers, ins)
			res.OffersWritten += n
			return err
		})
		if err == nil {
			err = ins.send()
		}
		ins.close()
		if err != nil {
			return res, err
		}
	}
	s.step(StepOffers)
	n, err := s.completeRollups(ctx, runID, provider, rows)
	res.Repaired += n
	if err != nil {
		return res, err
	}
	s.step(StepRollups)
	n, err = s.completeLatest(ctx, runID, provider, rows)
	res.Repaired += n
	if err != nil {
		return res, err
	}
	s.step(StepLatest)
	if err := s.RecordRun(ctx, b.Run); err != nil {
		return res, err
	}
	res.RunWritten = true
	s.step(StepRun)
	return res, nil
}

// offerShares splits the offers of a batch of more than shareOffers into shares of about that
// many, whole buckets each (packShares). Such a batch is read once whole first, counting its
// offers by bucket: one that does not read (a line that does not decode, an offer of another
// run) fails before any of its offers is stored, not after the shares before the bad line.
func (s *Store) offerShares(b schema.Batch) ([]schema.Share, error) {
	per := or(s.shareOffers, shareOffers)
	if int(b.Run.OffersLoaded) <= per {
		return []schema.Share{{}}, nil
	}
	var counts [schema.Buckets]int
	err := b.EachOffers(schema.Share{}, func(part []schema.Offer) error {
		if err := checkOffers(b.Run.RunID, b.Run.Provider, part); err != nil {
			return err
		}
		for i := range part {
			counts[part[i].Bucket()]++
		}
		return nil
	})
	return packShares(counts, per), err
}

// packShares puts the buckets that hold offers into as few shares of at most per offers as it
// finds, largest bucket first, each into the first share it fits (a bucket larger than per is a
// share of its own: a row group is never split).
func packShares(counts [schema.Buckets]int, per int) []schema.Share {
	order := make([]int, 0, schema.Buckets)
	for b, n := range counts {
		if n > 0 {
			order = append(order, b)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(counts[b], counts[a]) })
	var shares []schema.Share
	var sizes []int
	for _, b := range order {
		i := slices.IndexFunc(sizes, func(size int) bool { return size+counts[b] <= per })
		if i < 0 {
			shares, sizes, i = append(shares, schema.Share{}), append(sizes, 0), len(shares)
		}
		shares[i].Buckets |= 1 << b
		sizes[i] += counts[b]
	}
	if len(shares) == 0 {
		return []schema.Share{{}}
	}
	return shares
}

// checkOffers refuses offers of another run or provider than the batch's run-log row:
// CompleteBatch would compare them with the wrong stored rows.
func checkOffers(runID, provider string, offers []schema.Offer) error {
	for i, o := range offers {
		if o.RunID != runID || o.Provider != provider {
			return fmt.Errorf("loading batch %s/%s: %w: offer %d belongs to %s/%s", runID, provider, schema.ErrRejected, i+1, o.RunID, o.Provider)
		}
	}
	return nil
}

// checkPayloads refuses payloads of another run or provider than the batch's run-log row.
func checkPayloads(runID, provider string, payloads []schema.RawPayload) error {
	for i, p := range payloads {
		if p.RunID != runID || p.Provider != provider {
			return fmt.Errorf("loading batch %s/%s: %w: payload %d belongs to %s/%s", runID, provider, schema.ErrRejected, i+1, p.RunID, p.Provider)
		}
	}
	return nil
}

func (s *Store) step(name string) {
	if s.onLoadStep != nil {
		s.onLoadStep(name)
	}
}

// endStrays stops every write of one batch (by its query id, loadQueryID) that the server still
// runs, and waits until it has (KILL QUERY … SYNC), or, for a write the server cannot stop while
// it stores its rows, until it ends. An insert stopped half-way leaves what a crash does: the
// checks that follow complete it. In cluster mode it acts on the node gpucost is connected to,
// where its inserts ran unless that node failed over; not ON CLUSTER, which waits for every host
// and would hold every load while one replica is down.
// provider "" means every provider of the run (an import).
func (s *Store) endStrays(ctx context.Context, runID, provider string) error {
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	pattern := "gpucost-load/" + like.Replace(runID) + "/"
	if provider != "" {
		pattern += like.Replace(provider) + "/"
	}
	err := s.conn.Exec(s.ctx(ctx), "KILL QUERY WHERE query_id LIKE ? SYNC", pattern+"%")
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) || ex.Code != codeCannotKill {
		if err != nil {
			return fmt.Errorf("stopping writes of run %s/%s still running at %s: %w", runID, provider, s.addr, err)
		}
		return nil
	}
	// The server cannot stop a write that is storing its rows ("unkillable stages"): wait for it.
	for {
		var n uint64
		if err := s.conn.QueryRow(s.ctx(ctx), "SELECT count() FROM system.processes WHERE query_id LIKE ?", pattern+"%").Scan(&n); err != nil {
			return fmt.Errorf("waiting for writes of run %s/%s still running at %s: %w", runID, provider, s.addr, err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for writes of run %s/%s still running at %s: %w", runID, provider, s.addr, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Store) hasRunRow(ctx context.Context, runID, provider string) (bool, error) {
	var n uint64
	err := s.conn.QueryRow(s.ctx(ctx), `SELECT count() FROM `+s.table("scrape_runs")+` WHERE run_id = ? AND provider = ?`, runID, provider).Scan(&n)
	if err != nil {
		return false, s.queryError(fmt.Sprintf("checking what is stored of run %s/%s", runID, provider), err)
	}
	return n > 0, nil
}

// unavailable marks err with schema.ErrUnavailable when it says the server cannot be reached or
// cannot take rows at all.
func unavailable(err error) error {
	if err == nil || !Unreachable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", schema.ErrUnavailable, err)
}

// Unreachable reports whether err is a failure to reach the server (refused, reset, timed out,
// no connection free in time, the pool closed, TLS failing) or a refusal that no query can get
// past: authentication, or the database or a table missing. Any other error is the server's answer to one query, or a
// fault on gpucost's side (a value it cannot read).
func Unreachable(err error) bool {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		switch ex.Code {
		case codeUnknownDatabase, codeUnknownTable, codeWrongPassword, codeUnknownUser, codeAuthenticationFailed, codeRequiredPassword:
			return true
		}
		return false
	}
	var ne net.Error
	var cert *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, clickhouse.ErrAcquireConnTimeout) || errors.Is(err, clickhouse.ErrConnectionClosed) ||
		errors.As(err, &cert) || errors.As(err, &record) || errors.Is(err, context.DeadlineExceeded)
}

// Busy reports whether err is the driver's pool having had no connection free in time: the
// server may be fine, gpucost asked too much of it at once.
func Busy(err error) bool { return errors.Is(err, clickhouse.ErrAcquireConnTimeout) }

// Refused reports whether err is the server's answer to a query (an exception it returned): the
// server was reached and is up, but did not run the query.
func Refused(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex)
}

// payloadKey is a raw payload's identity within one run and provider: where it came from and
// what it said. Its fetch time is not part of it: an import stores its file again under a new
// fetch time.
type payloadKey struct {
	url    string
	status uint16
	md5    string // hex MD5 of the body, as ClickHouse's lower(hex(MD5(body)))
}

func keyOfPayload(p schema.RawPayload) payloadKey {
	sum := md5.Sum(p.Body)
	return payloadKey{p.URL, p.Status, hex.EncodeToString(sum[:])}
}

// completePayloads inserts the payloads of one run and provider that are not stored yet, each
// payload counted as often as it occurs. bounded limits the lookup to the payloads' own fetch
// times (a scrape batch: the times are part of the batch); otherwise every stored payload of the
// run and provider is looked at (an import). stored counts what was stored before the load
// began, across its calls.
func (s *Store) completePayloads(ctx context.Context, runID, provider string, payloads []schema.RawPayload, bounded bool, stored *storedRows[payloadKey]) (int, error) {
	if len(payloads) == 0 {
		return 0, nil
	}
	from, to := time.Unix(0, 0).UTC(), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) // within DateTime on every server
	if bounded {
		from, to = timeRange(len(payloads), func(i int) time.Time { return payloads[i].FetchedAt })
	}
	what := fmt.Sprintf("reading the stored payloads of run %s/%s", runID, provider)
	for _, r := range stored.unread(from, to) {
		rows, err := s.conn.Query(s.ctx(ctx), `SELECT url, status, lower(hex(MD5(body))) AS h, count() FROM `+s.table("raw_payloads")+`
			WHERE provider = ? AND run_id = ? AND fetched_at >= ? AND fetched_at < ? GROUP BY url, status, h`, provider, runID, r.from, r.to)
		if err != nil {
			return 0, s.queryError(what, err)
		}
		for rows.Next() {
			var k payloadKey
			var n uint64
			if err := rows.Scan(&k.url, &k.status, &k.md5, &n); err != nil {
				rows.Close()
				return 0, fmt.Errorf("%s: %w", what, err)
			}
			stored.count[k] += n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, s.queryError(what, err)
		}
	}
	missing := unstored(stored, payloads, keyOfPayload)
	if err := s.InsertPayloads(ctx, missing); err != nil {
		return 0, err
	}
	return len(missing), nil
}

// offerRowKey is an offer row's identity within one run and provider.
type offerRowKey struct {
	offerID, priceType string
	observedAt         int64 // Unix seconds: the stored precision
}

func keyOfOffer(o schema.Offer) offerRowKey {
	return offerRowKey{o.OfferID, string(o.PriceType), o.ObservedAt.Unix()}
}

// completeOffers adds to ins the offers of one run and provider that are not stored yet (looked
// up within their own observation times), each counted as often as it occurs, and returns how
// many. stored counts what was stored before the load began, across its calls.
func (s *Store) completeOffers(ctx context.Context, runID, provider string, offers []schema.Offer, stored *storedRows[offerRowKey], ins *offerInsert) (int, error) {
	if len(offers) == 0 {
		return 0, nil
	}
	from, to := timeRange(len(offers), func(i int) time.Time { return offers[i].ObservedAt })
	what := fmt.Sprintf("reading the stored offers of run %s/%s", runID, provider)
	for _, r := range stored.unread(from, to) {
		rows, err := s.conn.Query(s.ctx(ctx), `SELECT offer_id, price_type, observed_at, count() FROM `+s.table("offers")+`
			WHERE run_id = ? AND provider = ? AND observed_at >= ? AND observed_at < ?
			GROUP BY offer_id, price_type, observed_at`, runID, provider, r.from, r.to)
		if err != nil {
			return 0, s.queryError(what, err)
		}
		for rows.Next() {
			var k offerRowKey
			var at time.Time
			var n uint64
			if err := rows.Scan(&k.offerID, &k.priceType, &at, &n); err != nil {
				rows.Close()
				return 0, fmt.Errorf("%s: %w", what, err)
			}
			k.observedAt = at.Unix()
			stored.count[k] += n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, s.queryError(what, err)
		}
	}
	missing := unstored(stored, offers, keyOfOffer)
	if err := ins.add(ctx, missing); err != nil {
		return 0, err
	}
	return len(missing), nil
}

// storedRows counts the rows of one run and provider that were stored before a load began,
// read range by range as the load's parts arrive: each second once, before the load writes into
// it, so that the load's own inserts are never taken for rows stored earlier, and a batch of many
// parts observed in one second is looked up once.
type storedRows[K comparable] struct {
	count map[K]uint64
	read  []span // the ranges read so far
}

func newStoredRows[K comparable]() *storedRows[K] { return &storedRows[K]{count: map[K]uint64{}} }

// unstored returns the rows that stored does not count, each stored row matching one row of its
// key; with nothing stored (a first load, the usual case) all of them, not a copy.
func unstored[K comparable, T any](stored *storedRows[K], rows []T, key func(T) K) []T {
	if len(stored.count) == 0 {
		return rows
	}
	var missing []T
	for _, r := range rows {
		if k := key(r); stored.count[k] > 0 {
			stored.count[k]--
			continue
		}
		missing = append(missing, r)
	}
	return missing
}

// unread returns the parts of [from, to) not read yet, and marks them read.
func (st *storedRows[K]) unread(from, to time.Time) []span {
	todo := []span{{from: from, to: to, n: 1}}
	for _, r := range st.read {
		var left []span
		for _, t := range todo {
			if !r.to.After(t.from) || !t.to.After(r.from) { // no overlap
				left = append(left, t)
				continue
			}
			if t.from.Before(r.from) {
				left = append(left, span{from: t.from, to: r.from, n: 1})
			}
			if r.to.Before(t.to) {
				left = append(left, span{from: r.to, to: t.to, n: 1})
			}
		}
		todo = left
	}
	st.read = append(st.read, span{from: from, to: to, n: 1})
	return todo
}

// span is the time range of a batch's offers, [from, to) to the second, grown part by part,
// and the days its offers were observed on (Unix days: days since 1970-01-01 UTC); empty
// (n == 0) it matches nothing.
type span struct {
	from, to time.Time
	n        int
	days     map[int64]bool
}

// add grows the span by n times.
func (s *span) add(n int, at func(int) time.Time) {
	if n == 0 {
		return
	}
	if s.days == nil {
		s.days = map[int64]bool{}
	}
	for i := range n {
		t := at(i).UTC().Truncate(time.Second)
		if s.n == 0 || t.Before(s.from) {
			s.from = t
		}
		if s.n == 0 || !t.Before(s.to) {
			s.to = t.Add(time.Second)
		}
		s.days[t.Unix()/86400] = true // the times are after 1970: no negative remainder
		s.n++
	}
}

// timeRange returns the earliest and latest of n times, to the second; for n == 0 an empty
// range that matches nothing.
func timeRange(n int, at func(int) time.Time) (from, to time.Time) {
	if n == 0 {
		return time.Unix(1, 0).UTC(), time.Unix(0, 0).UTC()
	}
	from, to = at(0), at(0)
	for i := 1; i < n; i++ {
		if t := at(i); t.Before(from) {
			from = t
		} else if t.After(to) {
			to = t
		}
	}
	return from.UTC().Truncate(time.Second), to.UTC().Truncate(time.Second).Add(time.Second)
}

// LatestPrices returns the newest known $/GPU-hour of every offer of one provider, so the
// pipeline can flag a price that jumped since the last observation.
func (s *Store) LatestPrices(ctx context.Context, provider string) (map[schema.Key]decimal.Decimal, error) {
	return s.prices(ctx, "reading the latest prices of "+provider, provider, s.latestPricesQuery(), provider)
}

// prices runs query, which selects offer id, price type and a price of one provider's offers,
// and returns the prices by offer key.
func (s *Store) prices(ctx context.Context, what, provider, query string, args ...any) (map[schema.Key]decimal.Decimal, error) {
	rows, err := s.conn.Query(s.ctx(ctx), query, args...)
	if err != nil {
		return nil, s.queryError(what, err)
	}
	defer rows.Close()
	out := map[schema.Key]decimal.Decimal{}
	for rows.Next() {
		var id, pt string
		var price decimal.Decimal
		if err := rows.Scan(&id, &pt, &price); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out[schema.Key{Provider: provider, OfferID: id, PriceType: schema.PriceType(pt)}] = price
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(what, err)
	}
	return out, nil
}

func (s *Store) latestPricesQuery() string {
	return `SELECT offer_id, price_type, argMax(price_usd_per_gpu_hour, observed_at)
		FROM ` + s.table("offers_latest") + `
		WHERE provider = ?
		GROUP BY offer_id, price_type`
}
