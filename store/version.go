package store

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
)

// serverVersion is the ClickHouse server's version. It is the one place where differences
// between the servers gpucost supports are decided.
type serverVersion struct {
	Major, Minor, Patch int
	// Revision is the native protocol revision the server speaks (0 when not known).
	Revision uint64
}

// minVersion is the oldest server gpucost supports: Debian 12's clickhouse-server package.
var minVersion = serverVersion{Major: 18, Minor: 16}

func parseServerVersion(s string) (serverVersion, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) < 2 {
		return serverVersion{}, fmt.Errorf("cannot read the server version %q", s)
	}
	var v serverVersion
	var err error
	if v.Major, err = strconv.Atoi(parts[0]); err != nil {
		return serverVersion{}, fmt.Errorf("cannot read the server version %q", s)
	}
	if v.Minor, err = strconv.Atoi(parts[1]); err != nil {
		return serverVersion{}, fmt.Errorf("cannot read the server version %q", s)
	}
	if len(parts) > 2 {
		v.Patch, _ = strconv.Atoi(parts[2])
	}
	return v, nil
}

func (v serverVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

func (v serverVersion) less(w serverVersion) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// supported returns an error when the server is older than gpucost supports.
func (v serverVersion) supported() error {
	if v.less(minVersion) {
		return fmt.Errorf("server version %s is too old: gpucost needs ClickHouse %d.%d or newer", v, minVersion.Major, minVersion.Minor)
	}
	return nil
}

// settings returns the query settings this server needs for gpucost's DDL and queries, on a
// single server or, with cluster, through the Distributed tables of cluster mode.
//
// LowCardinality was experimental before 19.x: 18.16 creates such columns only with
// allow_experimental_low_cardinality_type=1, and current servers reject that setting as unknown.
//
// In cluster mode, inserts wait until a replica of every shard holds the rows
// (insert_distributed_sync), so a failure is reported instead of queued; and reads and writes go
// to the same replica of each shard, the first healthy one (load_balancing = in_order), so a
// read sees what the store just wrote (the run-id check, offers right after a scrape). With the
// default (random), a read can reach the other replica before it has fetched the new part.
func (v serverVersion) settings(cluster bool) clickhouse.Settings {
	set := clickhouse.Settings{}
	if v.Major < 19 {
		set["allow_experimental_low_cardinality_type"] = 1
	}
	if cluster {
		set["insert_distributed_sync"] = 1
		if v.takesTextSettings() {
			set["load_balancing"] = "in_order"
		}
	}
	if len(set) == 0 {
		return nil
	}
	return set
}

// takesTextSettings says whether the driver can send this server a setting whose value is text.
// Before protocol revision 54429 (ClickHouse 19.x and older) it sends numbers only, so
// load_balancing must come from the user's settings profile: Open checks it there.
func (v serverVersion) takesTextSettings() bool {
	return v.Revision >= proto.DBMS_MIN_REVISION_WITH_SETTINGS_SERIALIZED_AS_STRINGS
}

// ddl is one DDL statement as the migrator runs it on this server.
type ddl struct {
	sql string
	// columnExistsIsApplied says that an error "column already exists" (columnExists) means the
	// statement was applied before: the ADD COLUMN of a server without IF NOT EXISTS.
	columnExistsIsApplied bool
	// table and column are what such an ADD COLUMN adds: the migrator adds it only when this
	// server does not have it yet (execAll).
	table, column string
}

// reAddColumnIfNotExists is the clause current servers take and ClickHouse 18.16 does not.
var reAddColumnIfNotExists = regexp.MustCompile(`(?i)\bADD\s+COLUMN\s+IF\s+NOT\s+EXISTS\b`)

// reAddedColumn reads the table and the column of ALTER TABLE [db.]table … ADD COLUMN IF NOT
// EXISTS column, in the migrations' form or its cluster form (quoted names, ON CLUSTER).
var reAddedColumn = regexp.MustCompile("(?is)^\\s*ALTER\\s+TABLE\\s+(?:`?\\w+`?\\.)?`?(\\w+)`?\\s.*?\\bADD\\s+COLUMN\\s+IF\\s+NOT\\s+EXISTS\\s+`?(\\w+)`?")

// ddl returns a migration statement (or its cluster form) as this server takes it.
//
// ALTER TABLE … ADD COLUMN IF NOT EXISTS is a syntax error on 18.16: there the statement runs
// without the clause, only when the table lacks the column (a migration completed after a
// failure half-way has it already), and its error when the column is there all the same (two
// migrators at once) counts as applied, so such a statement should add one column and do
// nothing else. Sending it anyway would not do: on a cluster of 18.16 servers, an ALTER … ON
// CLUSTER of a replicated table that fails on one replica can stop the distributed DDL of the
// other ("Node exists … /executed"), which then runs no more ON CLUSTER statements until it
// restarts. The clause is used from ClickHouse 20.1 on; the versions between are not tested
// here, so they take the form that works on every version.
func (v serverVersion) ddl(stmt string) ddl {
	if v.takesAddColumnIfNotExists() || !reAddColumnIfNotExists.MatchString(stmt) {
		return ddl{sql: stmt}
	}
	d := ddl{sql: reAddColumnIfNotExists.ReplaceAllString(stmt, "ADD COLUMN"), columnExistsIsApplied: true}
	if m := reAddedColumn.FindStringSubmatch(stmt); m != nil && len(reAddColumnIfNotExists.FindAllString(stmt, -1)) == 1 {
		d.table, d.column = m[1], m[2] // one column: looked for first; several are sent as they are
	}
	return d
}

func (v serverVersion) takesAddColumnIfNotExists() bool {
	return !v.less(serverVersion{Major: 20, Minor: 1})
}

// altersDistributedOnCluster says whether the server runs ALTER … ON CLUSTER of a table that is
// not replicated (a Distributed table) on a cluster whose shards are (internal_replication).
// 18.16 refuses it with code 371 ("Table offers isn't replicated, but shard #2 is replicated
// according to its cluster definition"), so cluster mode creates such a table again instead
// (cluster.go). Later servers run it on every node; the versions before 20.1 are not tested
// here, so they take the way that works on 18.16.
func (v serverVersion) altersDistributedOnCluster() bool {
	return !v.less(serverVersion{Major: 20, Minor: 1})
}

// columnExists reports whether err is the server's refusal to add a column it already has:
// code 44 on 18.x ("Cannot add column x: column with this name already exists"), 15
// (DUPLICATE_COLUMN) on later versions. Code 44 (ILLEGAL_COLUMN) also means other faults of a
// column, and the exception has nothing more specific than its text, so for it the text decides.
func columnExists(err error) bool {
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) {
		return false
	}
	return ex.Code == codeDuplicateColumn || ex.Code == codeIllegalColumn && strings.Contains(ex.Message, "already exists")
}
