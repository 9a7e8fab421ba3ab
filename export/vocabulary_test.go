package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

// TestOneVocabulary checks that every writer names each fact alike: for offers, history,
// changes and value figures, the CSV header, the keys of each item of the JSON envelope (which
// the CLI and the JSON API both write, the items under the schema's resource), the keys of each
// line of NDJSON and the Parquet columns are the same names in the same order; and that they
// are the columns docs/analysts.md lists for the files, the offers table's and the
// price_changes view's.
func TestOneVocabulary(t *testing.T) {
	at := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	offers := sampleOffers()
	points := []schema.HistoryPoint{{Bucket: at, Provider: "lambda", GPUModel: "H100-SXM-80GB", PriceType: schema.OnDemand,
		Min: decimal.New(249, -2), Avg: decimal.New(274, -2), Median: decimal.New(299, -2), Max: decimal.New(299, -2), Observations: 2, Offers: 1}}
	changes := []schema.PriceChange{{ChangedAt: at, PreviousAt: at.Add(-time.Hour), Provider: "lambda", GPUModel: "H100-SXM-80GB", GPUCount: 8,
		PriceType: schema.OnDemand, OfferID: "gpu_8x_h100_sxm5", Tier: schema.TierSecure, Region: "us-east-1",
		OldPrice: decimal.New(299, -2), NewPrice: decimal.New(249, -2), ChangeUSD: decimal.New(-50, -2), ChangePct: decimal.New(-1672, -2), RunID: "run-2"}}
	values := market.Values(market.PerGPU(offers), market.ValueQuery{Basis: market.Basis(schema.OnDemand), Precision: gpus.BF16})
	doc := filesDoc(t)
	offersAs := func(f Format) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			_, err := writeOffers(t, f, "", offers).WriteTo(b)
			return err
		}
	}
	writeHistory := func(f Format) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error { return HistoryFile(b, f, "", points) }
	}

	tests := []struct {
		name     string
		csv      func(*bytes.Buffer) error
		envelope any // an Envelope of the items
		resource string
		parquet  func(*bytes.Buffer) error // nil: no Parquet file
		ndjson   func(*bytes.Buffer) error // nil: no NDJSON file
		docTable []string                  // the stored names, in their order where the doc gives one
		ordered  bool
	}{
		{"offers", offersAs(CSV), Envelope[schema.Offer]{Schema: OffersSchema, Items: offers}, "offers",
			offersAs(Parquet), offersAs(NDJSON), offersTableDoc(t), true},
		{"history", writeHistory(CSV), Envelope[schema.HistoryPoint]{Schema: HistorySchema, Items: points}, "history",
			writeHistory(Parquet), writeHistory(NDJSON), nil, true},
		{"changes", func(b *bytes.Buffer) error { return Changes(b, CSV, changes) }, Envelope[schema.PriceChange]{Schema: ChangesSchema, Items: changes}, "changes",
			nil, nil, priceChangesDoc(t), false},
		{"value", func(b *bytes.Buffer) error { return Values(b, CSV, gpus.BF16, values) }, Envelope[market.Value]{Schema: ValueSchema, Items: values}, "value",
			nil, nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.csv(&b); err != nil {
				t.Fatal(err)
			}
			header, err := csv.NewReader(&b).Read()
			if err != nil {
				t.Fatal(err)
			}
			env, err := json.Marshal(tt.envelope)
			if err != nil {
				t.Fatal(err)
			}
			var served map[string]json.RawMessage
			var items []json.RawMessage
			if err := json.Unmarshal(env, &served); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(served[tt.resource], &items); err != nil || len(items) == 0 {
				t.Fatalf("the envelope's %q items: %v\n%s", tt.resource, err, env)
			}
			// Every item has every key, null ones included.
			for _, item := range items {
				if diff := cmp.Diff(header, objectKeys(t, item)); diff != "" {
					t.Errorf("CSV header and the keys of an item of the JSON differ (-csv +json):\n%s", diff)
				}
			}
			if tt.ndjson != nil {
				b.Reset()
				if err := tt.ndjson(&b); err != nil {
					t.Fatal(err)
				}
				for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
					if diff := cmp.Diff(header, objectKeys(t, json.RawMessage(line))); diff != "" {
						t.Errorf("CSV header and the keys of a line of NDJSON differ (-csv +ndjson):\n%s", diff)
					}
				}
			}
			if tt.parquet != nil {
				b.Reset()
				if err := tt.parquet(&b); err != nil {
					t.Fatal(err)
				}
				pf, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, f := range pf.Schema().Fields() {
					names = append(names, f.Name())
				}
				if diff := cmp.Diff(header, names); diff != "" {
					t.Errorf("CSV header and Parquet columns differ (-csv +parquet):\n%s", diff)
				}
			}
			if diff := cmp.Diff(doc[tt.name], header); diff != "" {
				t.Errorf("docs/analysts.md's columns of %s and the CSV header differ (-doc +csv):\n%s", tt.name, diff)
			}
			if tt.docTable != nil {
				stored, got := tt.docTable, header
				if !tt.ordered {
					stored, got = sorted(stored), sorted(got)
				}
				if diff := cmp.Diff(stored, got); diff != "" {
					t.Errorf("the stored columns (docs/analysts.md) and the CSV header differ (-stored +csv):\n%s", diff)
				}
			}
		})
	}
}

// objectKeys returns the keys of a JSON object, in order.
func objectKeys(t *testing.T, obj json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", obj)
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

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

var codeName = regexp.MustCompile("`(\\w+)`")

// analystsDoc returns the part of docs/analysts.md after the heading that starts with heading,
// up to the next heading of the same or a higher level.
func analystsDoc(t *testing.T, heading string) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/analysts.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n"+heading)
	if !ok {
		t.Fatalf("docs/analysts.md has no section %q", heading)
	}
	level := heading[:strings.IndexByte(heading, ' ')+1]
	section, _, _ = strings.Cut(section, "\n"+level)
	if level == "### " {
		section, _, _ = strings.Cut(section, "\n## ")
	}
	return section
}

// tableCells returns the cells of the Markdown table rows of a section.
func tableCells(section string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "|---") {
			continue
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	return rows
}

// filesDoc returns the columns docs/analysts.md lists for each kind of file: "offers",
// "groups", "history", "changes" and "value".
func filesDoc(t *testing.T) map[string][]string {
	t.Helper()
	kinds := map[string]string{"offers and observations": "offers", "groups of offers": "groups", "history": "history", "price changes": "changes",
		"value per dollar": "value"}
	out := map[string][]string{}
	for _, row := range tableCells(analystsDoc(t, "## CSV, JSON, NDJSON and Parquet: one set of names")) {
		if kind, ok := kinds[row[0]]; ok && len(row) == 3 {
			for _, m := range codeName.FindAllStringSubmatch(row[2], -1) {
				out[kind] = append(out[kind], m[1])
			}
		}
	}
	if len(out) != len(kinds) {
		t.Fatalf("docs/analysts.md lists the columns of %d kinds of file, want %d", len(out), len(kinds))
	}
	return out
}

// offersTableDoc returns the columns of the offers table, in order, as docs/analysts.md
// describes them (store/analysts_doc_test.go holds that description to the table ClickHouse
// has).
func offersTableDoc(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, row := range tableCells(analystsDoc(t, "### `offers` — ")) {
		if m := codeName.FindStringSubmatch(row[0]); m != nil && strings.HasPrefix(row[0], "`") {
			names = append(names, m[1])
		}
	}
	return names
}

// priceChangesDoc returns the columns of the price_changes view as docs/analysts.md describes
// them, several to a row.
func priceChangesDoc(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, row := range tableCells(analystsDoc(t, "### `price_changes` — ")) {
		if strings.HasPrefix(row[0], "`") {
			for _, m := range codeName.FindAllStringSubmatch(row[0], -1) {
				names = append(names, m[1])
			}
		}
	}
	return names
}
