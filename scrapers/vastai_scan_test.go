package scrapers

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
)

// The one-pass scan of a Vast answer must give what encoding/json's decoding gives, for every
// body: these tests hold vastParse.scan to vastParse.decode.

var scanRun = schema.Run{ID: "run-scan", ObservedAt: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)}

// vastScanCases are bodies at the edges of what the scan takes and of what encoding/json does
// with them.
var vastScanCases = map[string]string{
	"one row":                  `{"offers": [{"id": 7, "num_gpus": 1, "gpu_name": "RTX 3090", "gpu_ram": 24576, "dph_total": 0.2, "min_bid": 0.1}]}`,
	"other members":            `{"success": true, "offers": [{"id": 7, "num_gpus": 2, "gpu_name": "A40", "dph_total": 0.2}], "x": [{"a": [1, {"b": null}]}, -0.5e+3, "\u00e9\n"]}`,
	"white space everywhere":   " \t\n\r{ \"offers\" : [ { \"id\" : 7 , \"num_gpus\" : 1 , \"dph_total\" : 1e-2 } ] } \n",
	"empty":                    `{"offers": []}`,
	"no offers":                `{"success": false}`,
	"offers null":              `{"offers": null}`,
	"offers twice":             `{"offers": [{"id": 1, "num_gpus": 1, "dph_total": 1}], "offers": [{"id": 2, "num_gpus": 1, "dph_total": 1}]}`,
	"offers then null":         `{"offers": [{"id": 1, "num_gpus": 1, "dph_total": 1}], "offers": null}`,
	"offers in capitals":       `{"OFFERS": [{"id": 1, "num_gpus": 1, "dph_total": 1}]}`,
	"offers escaped":           `{"off\u0065rs": [{"id": 1, "num_gpus": 1, "dph_total": 1}]}`,
	"offers an object":         `{"offers": {"id": 1}}`,
	"offers a string":          `{"offers": "none"}`,
	"rows of other kinds":      `{"offers": [null, {}, [], "x", 1, true, {"id": 3, "num_gpus": 1, "dph_total": 1}]}`,
	"id as a string":           `{"offers": [{"id": "5", "num_gpus": 1, "dph_total": 1}, {"id": "x5", "num_gpus": 1, "dph_total": 1}]}`,
	"id twice, then null":      `{"offers": [{"id": 5, "id": null, "num_gpus": 1, "dph_total": 1}]}`,
	"id fractional":            `{"offers": [{"id": 5.5, "num_gpus": 1, "dph_total": 1}, {"id": -3, "num_gpus": 1, "dph_total": 1}]}`,
	"null after a value":       `{"offers": [{"id": 5, "num_gpus": 1, "num_gpus": null, "dph_total": 1}]}`,
	"key in capitals":          `{"offers": [{"id": 5, "NUM_GPUS": 2, "dph_total": 1}, {"id": 6, "Num_Gpus": 1, "dph_total": 1, "Bw_NVLink": 3}]}`,
	"key escaped":              `{"offers": [{"id": 5, "num_\u0067pus": 2, "dph_total": 1}]}`,
	"key with a kelvin sign":   `{"offers": [{"id": 5, "num_gpus": 8, "dph_total": 1, "gpu_name": "Tesla V100", "bw_nvlin\u212a": 100}]}`,
	"key not ASCII":            "{\"offers\": [{\"id\": 5, \"num_gpus\": 8, \"dph_total\": 1, \"bw_nvlin\u212a\": 100}]}",
	"unknown keys in capitals": `{"offers": [{"id": 5, "num_gpus": 1, "dph_total": 1, "Other": 1, "search": {"diskHour": 1, "TOTALHOUR": 2}}]}`,
	"types of fields":          `{"offers": [{"id": 5, "num_gpus": "two", "dph_total": 1}, {"id": 6, "num_gpus": 1, "dph_total": "1"}, {"id": 7, "num_gpus": 1, "gpu_name": 5, "dph_total": 1}, {"id": 8, "num_gpus": 1, "dph_total": 1, "search": 1}, {"id": 9, "num_gpus": true, "dph_total": 1}, {"id": 10, "num_gpus": {}, "dph_total": []}]}`,
	"numbers out of range":     `{"offers": [{"id": 5, "num_gpus": 1e400, "dph_total": 1}, {"id": 6, "num_gpus": 1, "dph_total": 1e999999}, {"id": 7, "num_gpus": 1, "dph_total": 1234567890123456}, {"id": 8, "num_gpus": 1, "dph_total": 0.1234567890123456789012345678901}, {"id": 9, "num_gpus": 1, "dph_total": 1e-400, "cpu_ram": 1e-400}]}`,
	"prices at the bounds":     `{"offers": [{"id": 5, "num_gpus": 1, "dph_total": 123456789012345.123456789012345678901234567890, "min_bid": 1E+99, "storage_total_cost": -0.0}]}`,
	"search twice":             `{"offers": [{"id": 5, "num_gpus": 1, "search": {"totalHour": 2}, "search": {"diskHour": 1}}, {"id": 6, "num_gpus": 1, "search": {"totalHour": 2}, "search": null, "dph_base": 1}]}`,
	"strings escaped":          `{"offers": [{"id": 5, "num_gpus": 1, "dph_total": 1, "gpu_name": "H100\u0020SXM", "geolocation": "Qu\u00e9bec, CA", "verification": "verifie\u0064"}]}`,
	"strings not ASCII":        "{\"offers\": [{\"id\": 5, \"num_gpus\": 1, \"dph_total\": 1, \"gpu_name\": \"RTX 4090 \xff\", \"geolocation\": \"Qu\xc3\xa9bec, CA\"}]}",
	"surrogates":               `{"offers": [{"id": 5, "num_gpus": 1, "dph_total": 1, "gpu_name": "\ud83d\ude00 \ud83d", "geolocation": "\udc00, US"}]}`,
	"truncated":                `{"offers": [{"id": 1, "num_gpus": 1, "gpu_name": "RTX 30`,
	"cut after a row":          `{"offers": [{"id": 7, "num_gpus": 1, "dph_total": 0.2},`,
	"trailing comma":           `{"offers": [{"id": 7, "num_gpus": 1, "dph_total": 0.2},]}`,
	"trailing data":            `{"offers": []} {"offers": []}`,
	"trailing garbage":         `{"offers": []}x`,
	"leading zero":             `{"offers": [{"id": 07, "num_gpus": 1, "dph_total": 0.2}]}`,
	"bad number":               `{"offers": [{"id": 7, "num_gpus": 1., "dph_total": 0.2}]}`,
	"bad escape":               `{"offers": [{"id": 7, "num_gpus": 1, "dph_total": 0.2, "x": "\q"}]}`,
	"control character":        "{\"offers\": [{\"id\": 7, \"num_gpus\": 1, \"dph_total\": 0.2, \"x\": \"a\tb\"}]}",
	"bad literal":              `{"offers": [{"id": 7, "num_gpus": 1, "dph_total": 0.2, "x": nul}]}`,
	"missing colon":            `{"offers" [{"id": 7}]}`,
	"not an object":            `[1, 2]`,
	"null":                     `null`,
	"nothing":                  ``,
	"spaces":                   "  \n",
	"HTML":                     `<html><body>502 Bad Gateway</body></html>`,
	"deep":                     `{"offers": [{"id": 7, "num_gpus": 1, "dph_total": 0.2, "x": ` + strings.Repeat("[", 1500) + strings.Repeat("]", 1500) + `}]}`,
	"too deep":                 `{"offers": [{"id": 7, "num_gpus": 1, "dph_total": 0.2, "x": ` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}]}`,
	"geolocations":             `{"offers": [{"id": 1, "num_gpus": 1, "dph_total": 1, "geolocation": ", US"}, {"id": 2, "num_gpus": 1, "dph_total": 1, "geolocation": "Czechia, CZ, EU"}, {"id": 3, "num_gpus": 1, "dph_total": 1, "geolocation": "US"}, {"id": 4, "num_gpus": 1, "dph_total": 1, "geolocation": ",,,"}, {"id": 5, "num_gpus": 1, "dph_total": 1, "geolocation": null}]}`,
}

// checkScanSameAsDecode fails when the scan takes body and gives another page than decode; it
// returns whether the scan took it (else parseVast gives decode's page and error).
func checkScanSameAsDecode(t *testing.T, body []byte, maxRows int) bool {
	t.Helper()
	p := newVastParse(scanRun, "https://example.test/", maxRows, len(body))
	if !p.scan(body) {
		return false
	}
	want, wantErr := newVastParse(scanRun, "https://example.test/", maxRows, len(body)).decode(body)
	if diff := cmp.Diff(renderVastPage(t, want, wantErr), renderVastPage(t, p.result(), nil)); diff != "" {
		t.Fatalf("the scan differs from decode (-decode +scan):\n%s", diff)
	}
	return true
}

// scanTakes are the cases the scan reads itself: one whole JSON object, within the scan's
// depth, whose "offers", spelled so and once, is an array. Rows of another shape within such an
// answer are decoded alone; every other body goes to decode.
var scanTakes = map[string]bool{
	"empty": true, "geolocations": true, "id as a string": true, "id fractional": true, "id twice, then null": true,
	"key escaped": true, "key in capitals": true, "key not ASCII": true, "key with a kelvin sign": true,
	"null after a value": true, "numbers out of range": true, "one row": true, "other members": true,
	"prices at the bounds": true, "rows of other kinds": true, "search twice": true, "strings escaped": true,
	"strings not ASCII": true, "surrogates": true, "types of fields": true, "unknown keys in capitals": true,
	"white space everywhere": true,
}

// renderVastPage prints a page and error for comparison.
func renderVastPage(t *testing.T, p vastPage, err error) string {
	t.Helper()
	r := struct {
		Offers          []schema.Offer
		OfferAsks, Rows []string
		Problems        []string
		Err             string
	}{Offers: p.offers, OfferAsks: p.offerAsks, Rows: p.rows}
	for _, e := range p.problems {
		r.Problems = append(r.Problems, e.Error())
	}
	if err != nil {
		r.Err = err.Error()
	}
	b, mErr := json.MarshalIndent(r, "", " ")
	if mErr != nil {
		t.Fatalf("marshalling the page: %v", mErr)
	}
	return string(b)
}

func TestVastScanSameAsDecode(t *testing.T) {
	for name, body := range vastScanCases {
		t.Run(name, func(t *testing.T) {
			if took := checkScanSameAsDecode(t, []byte(body), MaxOffers); took != scanTakes[name] {
				t.Errorf("the scan took the body: %v, want %v", took, scanTakes[name])
			}
			checkScanSameAsDecode(t, []byte(body), 2)
		})
	}
	for _, file := range []string{"vastai_offers.json", "vastai_market.json"} {
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile("testdata/" + file)
			if err != nil {
				t.Fatal(err)
			}
			checkScanSameAsDecode(t, body, MaxOffers) // TestVastScanTakesAnswers: it does
			checkScanSameAsDecode(t, body, 64)
		})
	}
}

// TestVastScanTakesAnswers: the scan, not encoding/json, reads whole answers (else it would be
// the same, and slow).
func TestVastScanTakesAnswers(t *testing.T) {
	for _, file := range []string{"vastai_offers.json", "vastai_market.json"} {
		body, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if !newVastParse(scanRun, "", MaxOffers, len(body)).scan(body) {
			t.Errorf("%s: the scan leaves the answer to encoding/json", file)
		}
	}
}

func FuzzVastScanSameAsDecode(f *testing.F) {
	for _, body := range vastScanCases {
		f.Add([]byte(body), uint8(0))
	}
	for _, file := range []string{"vastai_offers.json", "vastai_market.json"} {
		body, err := os.ReadFile("testdata/" + file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, uint8(5))
	}
	f.Fuzz(func(t *testing.T, body []byte, rows uint8) {
		maxRows := MaxOffers
		if rows > 0 {
			maxRows = int(rows)
		}
		checkScanSameAsDecode(t, body, maxRows)
	})
}

// FuzzJSONScanner: the scanner takes a document exactly when encoding/json does (but for
// nesting deeper than maxScanDepth, which it leaves to encoding/json).
func FuzzJSONScanner(f *testing.F) {
	for _, body := range vastScanCases {
		f.Add([]byte(body))
	}
	for _, s := range []string{`0`, `-0.0e-0`, `1E+2`, `"\u12Ab"`, `"\u12G4"`, `[1,2,]`, `{"a":1,}`, `{,}`, `[,1]`, `{"a" 1}`, `{1: 2}`, `truex`, `"\/\b\f\n\r\t\"\\"`, "\"\x7f\x80\"", `--1`, `1.e1`, `.5`, `+1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s := &jsonScanner{data: body}
		s.skip()
		took := !s.failed && s.atEnd()
		deep := strings.Count(string(body), "[")+strings.Count(string(body), "{") > maxScanDepth
		if valid := json.Valid(body); took != valid && !(valid && deep) {
			t.Fatalf("scanner takes %q: %v, encoding/json: %v", body, took, valid)
		}
	})
}
