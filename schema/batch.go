package schema

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
)

// Batch is everything one provider produced in one run: its run-log row, the offers to load and
// the raw payloads they came from. It is the unit the pipeline loads, spools when ClickHouse is
// unreachable, and replays later; loading a batch twice must not double anything.
//
// A batch too large to hold at once comes with Parts: a scrape's batch is written to the spool as
// its source reads it, and loaded from there a part at a time. Read a batch's offers and payloads
// with EachOffers and EachPayloads, which cover both.
type Batch struct {
	Run      ScrapeRun    `json:"run"`
	Offers   []Offer      `json:"offers"`
	Payloads []RawPayload `json:"payloads"`
	// Parts, when set, holds more of the batch's offers and payloads, after Offers and Payloads.
	Parts Parts `json:"-"`
}

// Parts reads a batch's offers and payloads a part at a time, in order, from the start on every
// call. An error of fn ends the reading with it.
type Parts interface {
	EachOffers(share Share, fn func([]Offer) error) error
	EachPayloads(fn func([]RawPayload) error) error
}

// EachOffers calls fn with the batch's offers in share, a part at a time: Offers, then those of
// Parts. Empty parts are skipped.
func (b Batch) EachOffers(share Share, fn func([]Offer) error) error {
	if offers := share.Of(b.Offers); len(offers) > 0 {
		if err := fn(offers); err != nil {
			return err
		}
	}
	if b.Parts == nil {
		return nil
	}
	return b.Parts.EachOffers(share, func(part []Offer) error {
		if len(part) == 0 {
			return nil
		}
		return fn(part)
	})
}

// A batch's offers fall into Buckets buckets by their row group in the daily rollups (a day, GPU
// model and price type: Offer.Bucket), so that a load can write a large batch in several
// inserts, each holding whole row groups: the rollups' crash repair needs each row group of a
// load in one insert (store/rollups.go). A Share names buckets by bit: at most 64.
const Buckets = 64

// Bucket is the bucket of o's row group.
func (o *Offer) Bucket() int {
	h := fnv.New32a()
	var day [4]byte
	binary.LittleEndian.PutUint32(day[:], uint32(o.ObservedAt.UTC().Unix()/86400))
	h.Write(day[:])
	h.Write([]byte(o.GPUModel))
	h.Write([]byte{0})
	h.Write([]byte(o.PriceType))
	return int(h.Sum32() % Buckets)
}

// A Share is the offers of some of the buckets: bucket b is in it when bit b of Buckets is set.
// The zero Share is every offer.
type Share struct{ Buckets uint64 }

// Holds says whether the offers of bucket are in s.
func (s Share) Holds(bucket int) bool { return s.Buckets == 0 || s.Buckets&(1<<bucket) != 0 }

// Of returns the offers in s: offers itself when it holds them all, else a copy of those it
// holds.
func (s Share) Of(offers []Offer) []Offer {
	if s.Buckets == 0 {
		return offers
	}
	var in []Offer
	for i := range offers {
		if s.Holds(offers[i].Bucket()) {
			in = append(in, offers[i])
		}
	}
	return in
}

// EachPayloads calls fn with the batch's payloads, a part at a time: Payloads, then those of
// Parts. Empty parts are skipped.
func (b Batch) EachPayloads(fn func([]RawPayload) error) error {
	if len(b.Payloads) > 0 {
		if err := fn(b.Payloads); err != nil {
			return err
		}
	}
	if b.Parts == nil {
		return nil
	}
	return b.Parts.EachPayloads(func(part []RawPayload) error {
		if len(part) == 0 {
			return nil
		}
		return fn(part)
	})
}

// Kinds of a failed load, shared by the store that reports them and the pipeline that decides
// on them (retry later, count a failure, quarantine). A load error wraps at most one of them;
// one of neither kind is a failed attempt of this batch (the connection lost half-way, a server
// error, a timeout). Test with errors.Is.
var (
	// ErrUnavailable: the store could not be reached, or cannot take rows at all until an
	// operator acts (wrong password, database or table missing). The call wrote nothing and the
	// batch is not at fault: any other would fail the same way.
	ErrUnavailable = errors.New("the store is unavailable")
	// ErrRejected: the store will never store this batch as it is (rows of another run or
	// provider, a value it cannot encode): loading it again gives the same error.
	ErrRejected = errors.New("the store rejects the batch")
)
