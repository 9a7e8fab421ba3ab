package store

import (
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
