package schema_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
)

func TestLoadMigrationsEmbedded(t *testing.T) {
	ms, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no embedded migrations")
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %s has version %d, want %d (versions must be consecutive)", m.Name, m.Version, i+1)
		}
		for j, s := range m.Statements {
			if view, ok := strings.CutPrefix(s, "DROP TABLE IF EXISTS "); ok {
				// A view is dropped only to be created again: a view with the columns its SELECT *
				// has now, a materialized view with a new SELECT (it holds no rows; its table does).
				next := ""
				if j+1 < len(m.Statements) {
					next = m.Statements[j+1]
				}
				if !strings.HasPrefix(next, "CREATE VIEW IF NOT EXISTS "+view+" AS") && !strings.HasPrefix(next, "CREATE MATERIALIZED VIEW IF NOT EXISTS "+view+" TO ") {
					t.Errorf("migration %s: %s is not followed by CREATE [MATERIALIZED] VIEW IF NOT EXISTS %s (migrations drop no data)", m.Name, s, view)
				}
				continue
			}
			if !strings.Contains(s, "IF NOT EXISTS") {
				t.Errorf("migration %s: statement is not idempotent (no IF NOT EXISTS): %.60s", m.Name, s)
			}
		}
	}
}

func TestLoadMigrationsBad(t *testing.T) {
	tests := []struct {
		name    string
		files   fstest.MapFS
		wantErr string
	}{
		{"no version", fstest.MapFS{"offers.sql": {Data: []byte("SELECT 1;")}}, "offers.sql: name must start with a positive version"},
		{"duplicate version", fstest.MapFS{"0001_a.sql": {Data: []byte("SELECT 1;")}, "0001_b.sql": {Data: []byte("SELECT 2;")}}, "have the same version 1"},
		{"empty", fstest.MapFS{"0001_a.sql": {Data: []byte("-- nothing\n")}}, "0001_a.sql has no statements"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schema.LoadMigrations(tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestSplitStatements(t *testing.T) {
	src := "-- a comment\nCREATE TABLE a\n(\n  x String DEFAULT ';'\n);\n\nCREATE VIEW b AS SELECT 1;\n-- trailing\n"
	got := schema.SplitStatements(src)
	want := []string{"CREATE TABLE a\n(\n  x String DEFAULT ';'\n)", "CREATE VIEW b AS SELECT 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SplitStatements (-want +got):\n%s", diff)
	}
}
