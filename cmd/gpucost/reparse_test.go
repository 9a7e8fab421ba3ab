package main

import (
	"strings"
	"testing"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/scrapers"
)

// TestReparseCommand: over a replayed snapshot, a dry run reports every provider re-derived with
// nothing to change and writes nothing; a re-derivation keeps the offers as they are (today's
// parsers stored them); bad flags are usage errors.
func TestReparseCommand(t *testing.T) {
	x := newE2E(t, nil)
	if code, out := x.run("migrate", "--dsn", x.dsn); code != exitOK {
		t.Fatalf("migrate: exit %d\n%s", code, out)
	}
	cfg := x.writeConfig("") // the providers as the demo runs them
	if code, out := runCLI("scrape", "--replay", snapshotDir, "--config", cfg); code != exitOK {
		t.Fatalf("scrape: exit %d\n%s", code, out)
	}
	offers := x.count("offers", "")
	// The scrape stamped every offer with its parser.
	// (18.16's LIKE takes no column in its pattern: the shape by a constant regexp, the provider
	// by the part before the slash.)
	if got := x.count("offers", `NOT match(parser_version, '^[a-z]+/20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] gpus/[0-9a-f]{8}$')
		OR splitByChar('/', parser_version)[1] != CAST(provider AS String)`); got != 0 {
		t.Errorf("%d offers stored without their parser's version", got)
	}
	for _, args := range [][]string{
		{"reparse", "--from", "2000-01-01", "--dry-run"},
		{"reparse", "--from", "2000-01-01"},
	} {
		code, out := runCLI(append(args, "--config", cfg)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		for _, p := range []string{"coreweave", "lambda", "oci", "runpod", "vastai"} {
			if !strings.Contains(out, "\n"+p+" ") {
				t.Errorf("%v: no line for %s\n%s", args, p, out)
			}
		}
		if args[len(args)-1] == "--dry-run" && (!strings.Contains(out, "CHANGED") || strings.Contains(out, "before:")) {
			t.Errorf("%v: want the comparison's columns and no change for offers today's parsers stored\n%s", args, out)
		}
		if got := x.count("offers", ""); got != offers {
			t.Errorf("%v: %d offers stored, want %d", args, got, offers)
		}
	}
	for _, args := range [][]string{
		{"reparse"},                    // no --from
		{"reparse", "--from", "later"}, // not a time
		{"reparse", "--from", "2026-01-01", "--to", "2025-01-01"},
		{"reparse", "--from", "2026-01-01", "--providers", "nosuch"},
	} {
		if code, out := runCLI(append(args, "--config", cfg)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exitUsage, out)
		}
	}
}

// TestEveryProviderCanBeReparsed: every provider gpucost scrapes has a parser of its stored
// payloads and a parser date, so a new source cannot be added without them.
func TestEveryProviderCanBeReparsed(t *testing.T) {
	for _, name := range config.ProviderNames {
		if _, err := scrapers.NewStored(name, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if v := scrapers.ParserVersion(name); !strings.HasPrefix(v, name+"/") {
			t.Errorf("%s: parser version %q has no parser date (scrapers/version.go)", name, v)
		}
	}
}
