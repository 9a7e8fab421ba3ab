package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/go-cmp/cmp"
)

func TestServerVersion(t *testing.T) {
	tests := []struct {
		in         string
		wantErr    string // from parsing or the support check
		wantLCFlag bool   // needs allow_experimental_low_cardinality_type
	}{
		{in: "18.16.1", wantLCFlag: true},
		{in: "18.16.1.1", wantLCFlag: true},
		{in: "26.7.3.1", wantLCFlag: false},
		{in: "19.1.6", wantLCFlag: false},
		{in: "18.14.19", wantErr: "server version 18.14.19 is too old: gpucost needs ClickHouse 18.16 or newer"},
		{in: "1.1.54394", wantErr: "too old"},
		{in: "banana", wantErr: `cannot read the server version "banana"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := parseServerVersion(tt.in)
			if err == nil {
				err = v.supported()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, lc := v.settings(false)["allow_experimental_low_cardinality_type"]
			if lc != tt.wantLCFlag {
				t.Errorf("LowCardinality setting = %v, want %v", lc, tt.wantLCFlag)
			}
		})
	}
}

func TestClusterSettings(t *testing.T) {
	old := serverVersion{Major: 18, Minor: 16, Patch: 1, Revision: 54413}
	current := serverVersion{Major: 25, Minor: 8, Revision: 54479}
	tests := []struct {
		name    string
		v       serverVersion
		cluster bool
		want    clickhouse.Settings
	}{
		{"18.16 single server", old, false, clickhouse.Settings{"allow_experimental_low_cardinality_type": 1}},
		// load_balancing comes from the user's profile there, checked by Open.
		{"18.16 cluster", old, true, clickhouse.Settings{"allow_experimental_low_cardinality_type": 1, "insert_distributed_sync": 1}},
		{"current single server", current, false, nil},
		{"current cluster", current, true, clickhouse.Settings{"insert_distributed_sync": 1, "load_balancing": "in_order"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.v.settings(tt.cluster)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDDLPerServerVersion(t *testing.T) {
	old := serverVersion{Major: 18, Minor: 16, Patch: 1}
	middle := serverVersion{Major: 19, Minor: 17}
	current := serverVersion{Major: 26, Minor: 7, Patch: 2}
	const add = "ALTER TABLE offers ADD COLUMN IF NOT EXISTS valid_until Nullable(DateTime('UTC')) AFTER observed_at"
	tests := []struct {
		name string
		v    serverVersion
		stmt string
		want ddl
	}{
		{"18.16: ADD COLUMN without the clause, an existing column is applied", old, add,
			ddl{"ALTER TABLE offers ADD COLUMN valid_until Nullable(DateTime('UTC')) AFTER observed_at", true, "offers", "valid_until"}},
		{"18.16: the cluster form, looked for by its table and column", old,
			"ALTER TABLE `db`.`offers_latest_local` ON CLUSTER `c` ADD COLUMN IF NOT EXISTS valid_until Nullable(DateTime('UTC')) AFTER observed_at",
			ddl{"ALTER TABLE `db`.`offers_latest_local` ON CLUSTER `c` ADD COLUMN valid_until Nullable(DateTime('UTC')) AFTER observed_at", true, "offers_latest_local", "valid_until"}},
		{"18.16: every ADD COLUMN of the statement, any spacing and case", old,
			"ALTER TABLE `db`.`offers_local` ON CLUSTER `c` ADD COLUMN IF NOT EXISTS a UInt8, add  column\nif not exists b String",
			ddl{"ALTER TABLE `db`.`offers_local` ON CLUSTER `c` ADD COLUMN a UInt8, ADD COLUMN b String", true, "", ""}},
		{"18.16: CREATE TABLE IF NOT EXISTS is kept", old, "CREATE TABLE IF NOT EXISTS t (x UInt8) ENGINE = Memory",
			ddl{"CREATE TABLE IF NOT EXISTS t (x UInt8) ENGINE = Memory", false, "", ""}},
		{"18.16: a column named like the clause is not the clause", old, "ALTER TABLE t MODIFY COLUMN add_column_if UInt8",
			ddl{"ALTER TABLE t MODIFY COLUMN add_column_if UInt8", false, "", ""}},
		{"19.x, not tested here: the form every version takes", middle, add,
			ddl{"ALTER TABLE offers ADD COLUMN valid_until Nullable(DateTime('UTC')) AFTER observed_at", true, "offers", "valid_until"}},
		{"current: the statement as written", current, add, ddl{add, false, "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.v.ddl(tt.stmt)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(ddl{})); diff != "" {
				t.Errorf("ddl (-want +got):\n%s", diff)
			}
		})
	}
}

func TestColumnExists(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"18.16", &clickhouse.Exception{Code: 44, Message: "Cannot add column valid_until: column with this name already exists"}, true},
		{"18.16 through ON CLUSTER, wrapped", fmt.Errorf("applying: %w", &clickhouse.Exception{Code: 44,
			Message: "There was an error on 127.0.0.1:19102: Code: 44, e.displayText() = DB::Exception: Cannot add column valid_until: column with this name already exists"}), true},
		{"current", &clickhouse.Exception{Code: 15, Message: "Cannot add column `valid_until`: column with this name already exists. (DUPLICATE_COLUMN)"}, true},
		{"another fault of a column", &clickhouse.Exception{Code: 44, Message: "Cannot convert NULL value to non-Nullable type"}, false},
		{"a syntax error", &clickhouse.Exception{Code: 62, Message: "Syntax error: failed at position 38"}, false},
		{"not from the server", errors.New("column with this name already exists"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := columnExists(tt.err); got != tt.want {
				t.Errorf("columnExists(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestAltersDistributedOnCluster(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want bool
	}{{"18.16.1", false}, {"19.17.4", false}, {"20.1.2", true}, {"26.7.2.1", true}} {
		v, err := parseServerVersion(tt.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.altersDistributedOnCluster(); got != tt.want {
			t.Errorf("%s: altersDistributedOnCluster = %v, want %v", tt.v, got, tt.want)
		}
	}
}
