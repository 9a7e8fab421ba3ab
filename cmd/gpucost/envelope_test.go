package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/web"
)

// TestEveryJSONIsAnEnvelope runs every command that prints data with --output json on one store
// that holds a market (four weeks of generated history, the recorded snapshot scraped by
// replay, a published price table imported) and reads each answer as a script would: one
// envelope, its six keys in their order, a gpucost schema that names the key its items are
// under, a count that is the number of items, truncated when a limit left items out, next null
// (the CLI does not page). Where the JSON API serves the same resource, the command answers the
// API's schema, its query has every key of the API's, and its items start with the API's keys:
// a script reads either. report keeps its own versioned document.
func TestEveryJSONIsAnEnvelope(t *testing.T) {
	fx := newAnFixture(t)
	ctx := context.Background()
	api := httptest.NewServer(web.New(web.Config{Open: func(context.Context) (web.Store, error) { return fx.Store, nil },
		QueryTimeout: time.Minute, MaxQueries: 2}))
	defer api.Close()

	tests := []struct {
		name      string
		args      []string
		schema    string
		count     int // -1: at least one
		truncated bool
		api       string // the path of the API's answer of the same resource; "" when it has none
	}{
		{"migrate", []string{"migrate"}, "gpucost.databases/v1", 1, false, ""},
		{"scrape", []string{"scrape", "--replay", snapshotDir}, "gpucost.runs/v1", 1, false, ""},
		{"import", []string{"import", "../../pricetable/testdata/good.csv"}, "gpucost.imports/v1", 1, false, ""},
		{"offers", []string{"offers", "--limit", "0"}, "gpucost.offers/v2", -1, false, "/api/v1/offers?limit=1000"},
		{"offers cut by --limit", []string{"offers", "--limit", "3"}, "gpucost.offers/v2", 3, true, "/api/v1/offers?limit=3"},
		{"offers grouped", []string{"offers", "--group-by", "gpu,provider", "--limit", "0"}, "gpucost.offer_groups/v1", -1, false, ""},
		{"offers grouped, cut by --limit", []string{"offers", "--group-by", "gpu", "--limit", "2"}, "gpucost.offer_groups/v1", 2, true, ""},
		{"history", []string{"history", "--gpu", "H100-SXM-80GB", "--interval", "hour", "--since", "2d"}, "gpucost.history/v2", -1, false,
			"/api/v1/history?gpu=H100-SXM-80GB&interval=hour&since=2d"},
		{"changes", []string{"changes", "--since", "60d", "--limit", "0"}, "gpucost.changes/v2", -1, false, "/api/v1/changes?since=60d"},
		{"changes cut by --limit", []string{"changes", "--since", "60d", "--limit", "2"}, "gpucost.changes/v2", 2, true, "/api/v1/changes?since=60d&limit=2"},
		{"gpus", []string{"gpus"}, "gpucost.gpus/v1", -1, false, "/api/v1/gpus"},
		{"gpus --value", []string{"gpus", "--value"}, "gpucost.value/v2", -1, false, "/api/v1/value"},
		// optimize stores the plan /api/v1/plans then serves.
		{"optimize", []string{"optimize"}, "gpucost.plans/v1", -1, false, "/api/v1/plans"},
		{"tco", []string{"tco"}, "gpucost.tco/v1", -1, false, ""},
		{"tco --gpu", []string{"tco", "--gpu", "H100-SXM-80GB", "--rent", "3.15"}, "gpucost.tco/v1", 1, false, ""},
		{"reparse", []string{"reparse", "--from", "1d", "--dry-run"}, "gpucost.rederivations/v1", 1, false, ""},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, stdout, stderr := fx.env()
			if code := runCommand(tt.args[0], ctx, e, append(tt.args[1:], "--output", "json")); code != exitOK {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			cli := readEnvelope(t, stdout.Bytes())
			seen[tt.args[0]] = true
			if cli.schema != tt.schema {
				t.Errorf("schema %s, want %s", cli.schema, tt.schema)
			}
			if (tt.count >= 0 && len(cli.items) != tt.count) || (tt.count < 0 && len(cli.items) == 0) {
				t.Errorf("%d items, want %d (-1: some)", len(cli.items), tt.count)
			}
			if cli.truncated != tt.truncated {
				t.Errorf("truncated %v, want %v", cli.truncated, tt.truncated)
			}
			if cli.next != "null" {
				t.Errorf("next is %s, want null: the CLI does not page", cli.next)
			}
			if tt.api == "" {
				return
			}
			resp, err := http.Get(api.URL + tt.api)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d (%v)\n%s", tt.api, resp.StatusCode, err, body)
			}
			served := readEnvelope(t, body)
			if served.schema != cli.schema || served.truncated != cli.truncated {
				t.Errorf("the API answers %s, truncated %v; the CLI %s, truncated %v", served.schema, served.truncated, cli.schema, cli.truncated)
			}
			for _, k := range served.queryKeys {
				if !slices.Contains(cli.queryKeys, k) {
					t.Errorf("the CLI's query %v lacks the API's %q", cli.queryKeys, k)
				}
			}
			if len(served.items) == 0 {
				t.Fatalf("the API answered no %s: nothing to compare", tt.api)
			}
			want, got := jsonKeys(t, served.items[0]), jsonKeys(t, cli.items[0])
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Errorf("the CLI's items have the keys\n%v\nwhich do not start with the API's\n%v", got, want)
			}
		})
	}

	// Every command that prints data as JSON was asked above (its --output names json).
	for _, c := range newRoot(env{}, scrapeHooks{}).Commands() {
		if f := c.Flag("output"); f != nil && jsonOutput.MatchString(f.Usage) && c.Name() != "report" && !seen[c.Name()] {
			t.Errorf("gpucost %s writes JSON, and no case above asks it", c.Name())
		}
	}

	// The weekly report is one document, not a list: its own versioned schema, the first key.
	e, stdout, stderr := fx.env()
	if code := runCommand("report", ctx, e, []string{"--output", "json"}); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	keys := jsonKeys(t, stdout.Bytes())
	var doc struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(keys) == 0 || keys[0] != "schema" || doc.Schema != report.SchemaVersion {
		t.Errorf("report: keys %v, schema %q (%v), want %s first", keys, doc.Schema, err, report.SchemaVersion)
	}
	if _, err := export.ParseSchema(doc.Schema); err != nil {
		t.Errorf("report: %v", err)
	}
}

// jsonOutput finds json among the values an --output flag's help names (ndjson is not json).
var jsonOutput = regexp.MustCompile(`\bjson\b`)

// envelope is what a script reads of a JSON envelope.
type envelope struct {
	schema    string
	queryKeys []string
	truncated bool
	next      string // JSON: null, or the cursor as a string
	items     []json.RawMessage
}

// readEnvelope reads out as one envelope, failing t unless it is one: the keys schema, query,
// count, truncated, next and the items, in that order; a schema gpucost.<resource>/v<n> whose
// resource is the items' key; an object for the query; as many items as the count says.
func readEnvelope(t *testing.T, out []byte) envelope {
	t.Helper()
	var head struct {
		Schema    string          `json:"schema"`
		Query     json.RawMessage `json:"query"`
		Count     *int            `json:"count"`
		Truncated *bool           `json:"truncated"`
		Next      json.RawMessage `json:"next"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&head); err != nil || dec.More() {
		t.Fatalf("not one JSON object (%v):\n%.2000s", err, out)
	}
	s, err := export.ParseSchema(head.Schema)
	if err != nil {
		t.Fatalf("%v:\n%.2000s", err, out)
	}
	if keys := jsonKeys(t, out); !slices.Equal(keys, []string{"schema", "query", "count", "truncated", "next", s.Resource}) {
		t.Errorf("the keys %v, want schema, query, count, truncated, next and %s", keys, s.Resource)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(out, &all); err != nil {
		t.Fatal(err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(all[s.Resource], &items); err != nil || items == nil {
		t.Errorf("the items under %q are not a list (%v): %.200s", s.Resource, err, all[s.Resource])
	}
	if head.Count == nil || *head.Count != len(items) {
		t.Errorf("count %v for %d items", head.Count, len(items))
	}
	if head.Truncated == nil {
		t.Error("no truncated")
	}
	e := envelope{schema: head.Schema, queryKeys: jsonKeys(t, head.Query), items: items, next: string(head.Next)}
	if head.Truncated != nil {
		e.truncated = *head.Truncated
	}
	return e
}

// jsonKeys returns the keys of a JSON object, in their order.
func jsonKeys(t *testing.T, obj []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %.200s", obj)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// itemsOf reads the items of the JSON envelope a command printed.
func itemsOf[T any](t *testing.T, out []byte) []T {
	t.Helper()
	var page export.Envelope[T]
	if err := json.Unmarshal(out, &page); err != nil {
		t.Fatalf("reading the JSON envelope: %v\n%.2000s", err, out)
	}
	return page.Items
}

// oneItem reads the one item of the JSON envelope a command printed about what it did.
func oneItem[T any](t *testing.T, out []byte) T {
	t.Helper()
	items := itemsOf[T](t, out)
	if len(items) != 1 {
		t.Fatalf("%d items, want the one record of what the command did\n%.2000s", len(items), out)
	}
	return items[0]
}
