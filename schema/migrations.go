package schema

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// migrationFiles holds the ClickHouse DDL, one file per version: NNNN_name.sql.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations is the embedded migrations folder, rooted so that files are at its top level.
var Migrations fs.FS = mustSub(migrationFiles, "migrations")

// Migration is one versioned DDL file.
//
// ClickHouse has no multi-statement transactions, so every statement must be idempotent
// (CREATE … IF NOT EXISTS, ALTER … IF NOT EXISTS): a migration interrupted half-way is
// completed by running it again.
type Migration struct {
	Version    int      // from the file name prefix, e.g. 1 for 0001_offers.sql
	Name       string   // the file name
	Statements []string // the statements in order, without trailing semicolons or comment lines
	Checksum   string   // sha256 of the file, to detect a migration edited after it was applied
}

// LoadMigrations reads NNNN_name.sql files from fsys, in version order. It fails on a file
// whose name has no version, on two files with one version, and on an empty file.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("listing migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, name := range names {
		prefix, _, ok := strings.Cut(path.Base(name), "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive version number and an underscore, like 0001_offers.sql", name)
		}
		if other, dup := seen[version]; dup {
			return nil, fmt.Errorf("migrations %s and %s have the same version %d", other, name, version)
		}
		seen[version] = name
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("reading migration %s: %w", name, err)
		}
		stmts := SplitStatements(string(body))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migration %s has no statements", name)
		}
		sum := sha256.Sum256(body)
		out = append(out, Migration{Version: version, Name: name, Statements: stmts, Checksum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// SplitStatements cuts a SQL script into statements at semicolons that end a line, dropping
// blank lines and lines that hold only a -- comment. Semicolons inside a line (in a string
// literal, say) do not split.
func SplitStatements(src string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		if strings.HasSuffix(trimmed, ";") {
			cur.WriteString(strings.TrimSuffix(strings.TrimRight(line, " \t\r"), ";"))
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return out
}

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // the directory is embedded at build time; this cannot fail at run time
	}
	return sub
}
