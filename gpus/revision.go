package gpus

import (
	"fmt"
	"hash/fnv"
	"sync"
)

// resolverRevision counts the changes of Resolve's rules in code (resolve.go), which the data
// Revision hashes does not show: bump it with any change that resolves a name differently.
const resolverRevision = 1

// Revision identifies the catalog and the resolver as they are: a hash of every model, every
// family spelling and noise word Resolve uses, and resolverRevision. Offer rows record it in
// their parser version (scrapers.ParserVersion), so the rows a later catalog would resolve
// differently can be found and re-derived (gpucost reparse).
func Revision() string {
	revisionOnce.Do(func() {
		h := fnv.New32a()
		// fmt prints maps in key order, so the hash is the same run to run.
		fmt.Fprintf(h, "%d %#v %#v %#v", resolverRevision, models, familyKeys, noise)
		revision = fmt.Sprintf("%08x", h.Sum32())
	})
	return revision
}

// WithRevision appends the catalog's Revision to a parser's name, as offer rows record the two:
// "vastai/2026-12-01 gpus/1a2b3c4d".
func WithRevision(parser string) string { return parser + " gpus/" + Revision() }

var (
	revisionOnce sync.Once
	revision     string
)
