package scrapers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Helpers shared by the provider files: GPU resolution, prices read exactly and priced once,
// units, and the text and table cells of the HTML sources.

// applyGPU resolves raw (with the reported per-GPU VRAM, 0 = none) and fills the offer's GPU
// fields and data-quality flags. It returns the match for interconnect decisions.
func applyGPU(o *schema.Offer, provider, raw string, vramGB float64, alt ...string) gpus.Match {
	return setGPU(o, raw, vramGB, resolveGPU(provider, raw, vramGB, alt...))
}

// resolveGPU resolves raw, then each of alt in turn while the name stays unknown (up to the
// first "").
func resolveGPU(provider, raw string, vramGB float64, alt ...string) gpus.Match {
	m := gpus.Resolve(provider, raw, vramGB)
	for _, a := range alt {
		if m.Known || a == "" {
			break
		}
		m = gpus.Resolve(provider, a, vramGB)
	}
	return m
}

// setGPU fills the offer's GPU fields and data-quality flags from m, the match of raw with the
// reported per-GPU VRAM vramGB, and returns m.
func setGPU(o *schema.Offer, raw string, vramGB float64, m gpus.Match) gpus.Match {
	o.GPUNameRaw = raw
	if !m.Known {
		o.GPUModel = ""
		o.VRAMGB = round(m.VRAMGB, 2)
		o.AddFlag(schema.FlagUnknownGPU)
		if m.Snapped { // to the market's label (gpus.VRAMLabel): 49152 MiB is 48 GB, not 51.54
			o.AddFlag(schema.FlagVRAMSnapped)
		}
		return m
	}
	o.GPUModel = m.Model.Name
	o.VRAMGB = m.VRAMGB
	if m.Snapped {
		o.AddFlag(schema.FlagVRAMSnapped)
	}
	if vramGB <= 0 {
		o.AddFlag(schema.FlagVRAMMissing)
	}
	return m
}

// intraFromForm is the intra-node class the form factor in the source's GPU name stands for,
// when the source says nothing better. A product whose fabric comes with it (the catalog's
// BoardFabric: SXM modules on their NVLink board, OAM modules, NVL cards sold with their
// bridges) has that fabric; other PCIe and GeForce cards talk over PCIe as far as anyone can
// tell (a cloud offer does not say whether bridges are fitted); anything else, such as Grace
// superchips, whose fabric is an external NVLink Switch System, is unknown.
func intraFromForm(m gpus.Match) schema.IntraNode {
	switch {
	case !m.Known:
		return schema.IntraUnknown
	case m.Model.BoardFabric:
		return m.Model.BoardIntraNode()
	case m.Model.FormFactor == gpus.PCIe || m.Model.FormFactor == gpus.Consumer:
		return schema.IntraPCIe
	}
	return schema.IntraUnknown
}

// priced returns o as an offer of price type pt at the exact whole-offer price the provider
// quotes: both prices rounded once from it (schema.Offer.SetPrice), the only rounding a price
// gets on its way to the store.
func priced(o schema.Offer, pt schema.PriceType, exact decimal.Decimal) schema.Offer {
	o.PriceType = pt
	o.SetPrice(exact)
	o.DQFlags = append(make([]schema.DQFlag, 0, len(o.DQFlags)), o.DQFlags...) // own copy, [] not null
	return o
}

// pricedPerGPU returns o as an offer of price type pt at the exact per-GPU price the provider
// quotes (OCI's GPU-hour parts): both prices rounded once from it (schema.Offer.SetPricePerGPU).
// Set GPUCount first.
func pricedPerGPU(o schema.Offer, pt schema.PriceType, exact decimal.Decimal) schema.Offer {
	o.PriceType = pt
	o.SetPricePerGPU(exact)
	o.DQFlags = append(make([]schema.DQFlag, 0, len(o.DQFlags)), o.DQFlags...) // own copy, [] not null
	return o
}

// exactNumber is a price given as a JSON number, read as the decimal its text says: never
// through float64, so neither binary noise nor float arithmetic comes before its one rounding.
// Anything but a number (a string, a boolean, a number out of boundedNumber's bounds) is a
// decoding error of its row; null leaves a *exactNumber nil.
type exactNumber struct{ decimal.Decimal }

func (n *exactNumber) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	d, err := exactDecimal(b)
	if err != nil {
		return err
	}
	n.Decimal = d
	return nil
}

// exactDecimal returns the decimal the JSON number b says, or an error when b is no number
// within boundedNumber's bounds.
func exactDecimal(b []byte) (decimal.Decimal, error) {
	if !boundedNumber(b) {
		return decimal.Decimal{}, fmt.Errorf("price %s is not a JSON number within bounds (15 integer digits, 30 decimals, a two-digit exponent)", clip(string(b), 40))
	}
	if d, ok := smallDecimal(b); ok {
		return d, nil
	}
	d, err := decimal.NewFromString(string(b))
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("price %s: %w", clip(string(b), 40), err)
	}
	return d, nil
}

// smallDecimal returns what decimal.NewFromString returns for b, a number within boundedNumber's
// bounds whose digits but leading zeros are 18 at most, so that they fit an int64 (prices are);
// false for other numbers.
func smallDecimal(b []byte) (decimal.Decimal, bool) {
	var coef int64
	digits, exp, i := 0, 0, 0
	neg := b[0] == '-'
	if neg {
		i++
	}
	for point := false; i < len(b) && b[i] != 'e' && b[i] != 'E'; i++ {
		switch {
		case b[i] == '.':
			point = true
			continue
		case point:
			exp--
		}
		if coef == 0 && b[i] == '0' {
			continue
		}
		if digits++; digits > 18 {
			return decimal.Decimal{}, false
		}
		coef = coef*10 + int64(b[i]-'0')
	}
	if i < len(b) {
		e, err := strconv.Atoi(string(b[i+1:])) // a sign and two digits at most
		if err != nil {
			return decimal.Decimal{}, false
		}
		exp += e
	}
	if neg {
		coef = -coef
	}
	return decimal.New(coef, int32(exp)), true
}

// boundedNumber reports whether b is a JSON number of bounded size,
// -?(0|[1-9][0-9]{0,14})(\.[0-9]{1,30})?([eE][-+]?[0-9]{1,2})?: at most 15 integer digits, 30
// decimals and a two-digit exponent (Vast writes small prices as 7.407407407407407e-05;
// 1e999999 would make decimal arithmetic explode).
func boundedNumber(b []byte) bool {
	i := 0
	digits := func(most int) int { // how many digits b has from i on, up to most+1
		n := 0
		for i < len(b) && n <= most && '0' <= b[i] && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if n := digits(15); n < 1 || n > 15 {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if n := digits(30); n < 1 || n > 30 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			i++
		}
		if n := digits(2); n < 1 || n > 2 {
			return false
		}
	}
	return i == len(b)
}

// positive reports whether n is set and > 0.
func (n *exactNumber) positive() bool { return n != nil && n.IsPositive() }

// memo remembers the results of a function for up to memoSize keys. Within one response the
// same GPU names and places come back in thousands of rows; a hostile one's need not.
type memo[K comparable, V any] map[K]V

// memoSize bounds each memo and stringTable.
const memoSize = 4096

// get returns f(k), computed once for each key remembered.
func (m memo[K, V]) get(k K, f func(K) V) V {
	if v, ok := m[k]; ok {
		return v
	}
	v := f(k)
	if len(m) < memoSize {
		m[k] = v
	}
	return v
}

// stringTable hands out one string for all the equal texts of a response (up to memoSize of
// them), so repeated names cost one allocation.
type stringTable map[string]string

// intern returns b as a string, the one handed out before for the same text when there is one.
func (t stringTable) intern(b []byte) string {
	if s, ok := t[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(t) < memoSize {
		t[s] = s
	}
	return s
}

// round rounds f to n decimals.
func round(f float64, n int) float64 {
	p := math.Pow10(n)
	return math.Round(f*p) / p
}

func ptr[T any](v T) *T { return &v }

// deref returns *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// positive reports whether p holds a finite number > 0.
func positive(p *float64) bool {
	return p != nil && *p > 0 && !math.IsInf(*p, 0) && !math.IsNaN(*p)
}

// countryCode returns s as an ISO 3166-1 alpha-2 code if it looks like one.
func countryCode(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 2 {
		return ""
	}
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return ""
		}
	}
	return s
}

// sortOffers orders offers by offer id and price type (stable), so runs compare cleanly.
func sortOffers(os []schema.Offer) {
	slices.SortStableFunc(os, func(a, b schema.Offer) int {
		if c := strings.Compare(a.OfferID, b.OfferID); c != 0 {
			return c
		}
		return strings.Compare(string(a.PriceType), string(b.PriceType))
	})
}

// tibToGB converts TiB to decimal GB (gpus.GiB does the same for GiB).
const tibToGB = 1 << 40 / 1e9 // 1099.511627776

// normalizeSpace trims s and collapses runs of white space (non-breaking spaces included) to one
// space.
func normalizeSpace(s string) string {
	return strings.Join(strings.Fields(s), " ") // Fields splits on unicode.IsSpace, U+00A0 included
}

// clip shortens untrusted text quoted in an error to n runes, leaving it otherwise as it is.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// clipLine puts untrusted text quoted in an error on one line (normalizeSpace) and shortens it to
// at most n bytes (unlike clip, which counts runes), never splitting a character.
func clipLine(s string, n int) string {
	s = normalizeSpace(s)
	if len(s) > n {
		// A cut inside a multi-byte character leaves invalid UTF-8: drop the broken tail.
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// notOffered are the cell texts providers use for "no price": empty, N/A, dashes, Contact sales.
var notOffered = map[string]bool{
	"": true, "N/A": true, "NA": true, "-": true, "—": true, "–": true, "CONTACT SALES": true,
}

// maxPrice bounds a parsed price: no GPU node costs a million dollars an hour, and unbounded
// digits from a broken page should not reach storage.
var maxPrice = decimal.NewFromInt(1_000_000)

var (
	usdRe    = regexp.MustCompile(`^\$?\s*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?$`)
	numberRe = regexp.MustCompile(`^(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?$`)
	sizeRe   = regexp.MustCompile(`(?i)^(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(GB|GiB|TB|TiB)\b`)
)

// parseUSD parses a price cell like "$68.80" or "$1,234.56" (thousands separators allowed).
// offered is false, with no error, for the not-offered encodings (empty, "N/A", "—",
// "Contact sales"). A zero or malformed price is an error.
func parseUSD(s string) (d decimal.Decimal, offered bool, err error) {
	s = normalizeSpace(s)
	if notOffered[strings.ToUpper(s)] {
		return decimal.Zero, false, nil
	}
	m := usdRe.FindStringSubmatch(s)
	if m == nil {
		return decimal.Zero, false, fmt.Errorf("price %q is not a dollar amount", clip(s, 40))
	}
	d, err = decimal.NewFromString(strings.ReplaceAll(m[1], ",", "") + m[2])
	if err != nil {
		return decimal.Zero, false, fmt.Errorf("price %q: %w", clip(s, 40), err)
	}
	if !d.IsPositive() {
		return decimal.Zero, false, fmt.Errorf("price %q is not positive", clip(s, 40))
	}
	if d.GreaterThanOrEqual(maxPrice) {
		return decimal.Zero, false, fmt.Errorf("price %q is implausibly high", clip(s, 40))
	}
	return d, true, nil
}

// parseNumber parses a plain number cell, thousands separators allowed ("2,048", "61.44").
func parseNumber(s string) (float64, error) {
	s = normalizeSpace(s)
	m := numberRe.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a number", clip(s, 40))
	}
	return strconv.ParseFloat(strings.ReplaceAll(m[1], ",", "")+m[2], 64)
}

// parseSize parses "180 GB", "2900 GiB", "22 TiB SSD" into decimal GB. GB and TB are taken as
// decimal, GiB and TiB as binary. An empty or not-offered cell is (0, false, nil).
func parseSize(s string) (gb float64, ok bool, err error) {
	s = normalizeSpace(s)
	if notOffered[strings.ToUpper(s)] {
		return 0, false, nil
	}
	m := sizeRe.FindStringSubmatch(s)
	if m == nil {
		return 0, false, fmt.Errorf("%q is not a size like \"80 GB\"", clip(s, 40))
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", "")+m[2], 64)
	if err != nil {
		return 0, false, err
	}
	switch strings.ToUpper(m[3]) {
	case "GIB":
		v *= gpus.GiB
	case "TB":
		v *= 1000
	case "TIB":
		v *= tibToGB
	}
	return v, true, nil
}

// optNumber is parseNumber times scale (1, or a unit conversion such as gpus.GiB) as a pointer
// rounded to two decimals; nil when empty or malformed.
func optNumber(s string, scale float64) *float64 {
	v, err := parseNumber(s)
	if err != nil {
		return nil
	}
	return ptr(round(v*scale, 2))
}

// optSize is parseSize as a pointer rounded to two decimals; nil when empty or malformed.
func optSize(s string) *float64 {
	v, ok, err := parseSize(s)
	if err != nil || !ok {
		return nil
	}
	return ptr(round(v, 2))
}

// jsonNumber reads an optional JSON number exactly (exactDecimal: its digits, no float);
// present is false for an absent or null field.
func jsonNumber(raw json.RawMessage) (d decimal.Decimal, present bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return d, false, nil
	}
	d, err = exactDecimal(raw)
	if err != nil {
		return d, true, fmt.Errorf("%s is not a number", clip(string(raw), 40))
	}
	return d, true, nil
}

// jsonNumberOrString reads an optional number given as a JSON number or as a string holding
// one ("3.95"), as the decimal its text says (exactDecimal). present is false for an absent or
// null value and an empty string.
func jsonNumberOrString(raw json.RawMessage) (d decimal.Decimal, present bool, err error) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return decimal.Zero, false, nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return decimal.Zero, true, fmt.Errorf("%s is not a number", clip(string(b), 40))
		}
		if s = strings.TrimSpace(s); s == "" {
			return decimal.Zero, false, nil
		}
		b = []byte(s)
	}
	d, err = exactDecimal(b)
	if err != nil {
		return decimal.Zero, true, fmt.Errorf("%q is not a number", clip(string(b), 40))
	}
	return d, true, nil
}

// jsonPrice reads an optional price given as a JSON number or a string holding one
// (jsonNumberOrString): ok is false when it is absent, null, empty or zero (not offered); a
// negative, implausibly high or malformed price is an error.
func jsonPrice(raw json.RawMessage) (d decimal.Decimal, ok bool, err error) {
	d, present, err := jsonNumberOrString(raw)
	switch {
	case err != nil:
		return decimal.Zero, false, err
	case !present || d.IsZero():
		return decimal.Zero, false, nil
	case d.IsNegative():
		return decimal.Zero, false, fmt.Errorf("%s is negative", d)
	case d.GreaterThanOrEqual(maxPrice):
		return decimal.Zero, false, fmt.Errorf("%s is implausibly high", d)
	}
	return d, true, nil
}

// specFigure is an optional host figure (vCPUs, RAM, disk) times scale, rounded to two
// decimals; nil when absent or not positive: specs are informative, not worth dropping an
// offer for.
func specFigure(v *float64, scale float64) *float64 {
	if v == nil || *v <= 0 {
		return nil
	}
	return ptr(round(*v*scale, 2))
}

// decodeProblem says which field of a record did not decode, without Go's type names.
func decodeProblem(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	want := map[reflect.Kind]string{reflect.Struct: "an object", reflect.Map: "an object", reflect.Slice: "an array",
		reflect.String: "a string", reflect.Bool: "a boolean"}[te.Type.Kind()]
	if want == "" {
		want = "a " + te.Type.Kind().String()
	}
	if te.Field == "" {
		return fmt.Errorf("%s where %s was expected", jsonValueName(te.Value), want)
	}
	return fmt.Errorf("%s: %s where %s was expected", te.Field, jsonValueName(te.Value), want)
}

// jsonValueName is "a string", "an array", ... for encoding/json's UnmarshalTypeError.Value.
func jsonValueName(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "":
		return "a value"
	}
	return "a " + v
}
