package store

import (
	"fmt"
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
