package store

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// serverVersion is the ClickHouse server's version. It is the one place where differences
// between the servers gpucost supports are decided.
type serverVersion struct {
	Major, Minor, Patch int
}

// minVersion is the oldest server gpucost supports: Debian 12's clickhouse-server package.
var minVersion = serverVersion{18, 16, 0}

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

// settings returns the query settings this server needs for gpucost's DDL and queries.
//
// LowCardinality was experimental before 19.x: 18.16 creates such columns only with
// allow_experimental_low_cardinality_type=1, and current servers reject that setting as unknown.
func (v serverVersion) settings() clickhouse.Settings {
	if v.Major < 19 {
		return clickhouse.Settings{"allow_experimental_low_cardinality_type": 1}
	}
	return nil
}
