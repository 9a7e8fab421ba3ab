package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

// openAPIDoc is the OpenAPI document read as JSON, with what the checks found of it.
type openAPIDoc struct {
	doc  map[string]any
	seen map[string]bool // "Schema.property" (or "path.property") met in a real answer
	all  map[string]bool // every documented property of an object, by the same names
}

// resolve follows a schema's $ref, and returns it with the name of what it is.
func (d *openAPIDoc) resolve(s map[string]any, name string) (map[string]any, string) {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, name
		}
		var node any = d.doc
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			node = node.(map[string]any)[part]
		}
		s, name = node.(map[string]any), ref[strings.LastIndex(ref, "/")+1:]
	}
}

// kinds are the JSON types v has, as OpenAPI names them.
func kinds(v any) []string {
	switch x := v.(type) {
	case nil:
		return []string{"null"}
	case bool:
		return []string{"boolean"}
	case float64:
		if x == math.Trunc(x) {
			return []string{"number", "integer"}
		}
		return []string{"number"}
	case string:
		return []string{"string"}
	case []any:
		return []string{"array"}
	case map[string]any:
		return []string{"object"}
	}
	return nil
}

// check reports every way v, found at at, differs from the schema s named name: a type, an
// enum or const, a pattern, a missing required field, or a field the schema does not document.
func (d *openAPIDoc) check(t *testing.T, s map[string]any, name string, v any, at string) {
	t.Helper()
	s, name = d.resolve(s, name)
	if typ, ok := s["type"]; ok {
		var allowed []string
		switch x := typ.(type) {
		case string:
			allowed = []string{x}
		case []any:
			for _, a := range x {
				allowed = append(allowed, a.(string))
			}
		}
		if !slices.ContainsFunc(kinds(v), func(k string) bool { return slices.Contains(allowed, k) }) {
			t.Errorf("%s: %v is %v, documented as %v", at, v, kinds(v), allowed)
			return
		}
	}
	if c, ok := s["const"]; ok && v != c {
		t.Errorf("%s: %v, documented as the constant %v", at, v, c)
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, v) {
		t.Errorf("%s: %v is not one of the documented %v", at, v, e)
	}
	if p, ok := s["pattern"].(string); ok {
		if str, isString := v.(string); isString && !regexp.MustCompile(p).MatchString(str) {
			t.Errorf("%s: %q does not match the documented pattern %s", at, str, p)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for key := range props {
			d.all[name+"."+key] = true
		}
		for _, r := range asList(s["required"]) {
			if _, ok := x[r]; !ok {
				t.Errorf("%s: the required field %s is missing", at, r)
			}
		}
		if props == nil && s["additionalProperties"] != false {
			return // a free object (the document itself)
		}
		for key, val := range x {
			ps, ok := props[key].(map[string]any)
			if !ok {
				t.Errorf("%s.%s: a field of the answer that %s does not document", at, key, name)
				continue
			}
			d.seen[name+"."+key] = true
			d.check(t, ps, name+"."+key, val, at+"."+key)
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range x {
				d.check(t, items, name+"[]", item, fmt.Sprintf("%s[%d]", at, i))
			}
		}
	}
}

func asList(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

// TestOpenAPIDescribesTheAPI holds the OpenAPI document to the handlers, on the generated
// history with commitments, a plan and the catalog: every route of the API is documented and
// every documented path answers; every documented parameter is accepted, with the document's
// example, and is every parameter the endpoint takes; every field of every real answer (a
// second page too, and the errors) is documented with its type, and every documented field
// shows up in some answer.
func TestOpenAPIDescribesTheAPI(t *testing.T) {
	fx := storetest.NewHistory(t)
	ctx := context.Background()
	if err := fx.Store.InsertOffers(ctx, "commitments", commitmentOffers(fx)); err != nil {
		t.Fatal(err)
	}
	d := func(v string) *decimal.Decimal { x := decimal.RequireFromString(v); return &x }
	at := time.Now().UTC().Truncate(time.Second)
	plan := []schema.PlanRow{
		{RunID: "n1", GeneratedAt: at, Team: "research", Workload: "llama-70b", Kind: "inference", Status: "ok", Reason: "cheapest fit",
			CurrentProvider: "lambda", CurrentGPUModel: "H100-SXM-80GB", CurrentGPUCount: 8, CurrentPriceType: schema.OnDemand, CurrentPriceSource: "market",
			CurrentUSDPerHour: d("23.92"), CurrentUSDPerMonth: d("17461.6"), RecProvider: "vastai", RecRegion: "US-TX-3", RecOfferID: "ask-102",
			RecGPUModel: "H100-SXM-80GB", RecGPUCount: 8, RecNodes: 1, RecPriceType: schema.OnDemand, RecPrecision: "bf16", RecUSDPerHour: d("15.6"),
			RecHoursPerMonth: d("730"), RecUSDPerMonth: d("11388"), SavingsUSDPerMonth: d("6073.6"), SavingsPercent: d("34.78"), Alternatives: 4, RejectedModels: 2},
		{RunID: "n1", GeneratedAt: at, Team: "research", Workload: "giant", Kind: "custom", Status: "no_fit", Reason: "nothing has 4 TB in one node"},
	}
	if err := fx.Store.InsertPlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(testHandler(t, fx.Store))
	defer ts.Close()
	fetch := func(path string) (int, any) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("GET %s: %d, not JSON: %v: %s", path, resp.StatusCode, err, body)
		}
		return resp.StatusCode, v
	}

	code, raw := fetch("/api/v1/openapi.json")
	doc := &openAPIDoc{doc: raw.(map[string]any), seen: map[string]bool{}, all: map[string]bool{}}
	if code != http.StatusOK || doc.doc["openapi"] != "3.1.0" {
		t.Fatalf("the document: %d, openapi %v", code, doc.doc["openapi"])
	}
	paths := doc.doc["paths"].(map[string]any)
	var documented []string
	for p := range paths {
		documented = append(documented, p)
	}
	sort.Strings(documented)
	routes := slices.Sorted(maps.Keys((&analytics{}).apiRoutes()))
	if !slices.Equal(documented, routes) {
		t.Errorf("documented paths %v, routes %v", documented, routes)
	}
	components := doc.doc["components"].(map[string]any)
	errorSchema := components["schemas"].(map[string]any)["Error"].(map[string]any)
	takes := regexp.MustCompile(`this endpoint takes ([a-z_, ]*)\)`)
	for _, p := range documented {
		op := paths[p].(map[string]any)["get"].(map[string]any)
		responses := op["responses"].(map[string]any)
		ok := responses["200"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		q := url.Values{}
		var names []string
		for _, param := range asParams(doc, op["parameters"]) {
			names = append(names, param["name"].(string))
			if ex, has := param["example"]; has {
				q.Set(param["name"].(string), fmt.Sprint(ex))
			}
		}
		path := p
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		code, body := fetch(path)
		if code != http.StatusOK {
			t.Errorf("GET %s with every documented example: %d %v", path, code, body)
			continue
		}
		doc.check(t, ok, p, body, "GET "+path)
		// The parameters the endpoint takes, as its 400 for an unknown one lists them.
		code, bad := fetch(p + "?no_such_parameter=1")
		doc.check(t, errorSchema, "Error", bad, "GET "+p+"?no_such_parameter=1")
		if m := takes.FindStringSubmatch(fmt.Sprint(bad.(map[string]any)["error"])); code != http.StatusBadRequest || m == nil || m[1] != strings.Join(names, ", ") {
			t.Errorf("%s: documented parameters %v, the endpoint's 400 says %d %v", p, names, code, bad)
		}
		// A second page, read through the cursor of the first.
		if slices.Contains(names, "cursor") {
			_, first := fetch(p + "?limit=1")
			next, _ := first.(map[string]any)["next"].(string)
			code, second := fetch(p + "?cursor=" + url.QueryEscape(next))
			if next == "" || code != http.StatusOK {
				t.Errorf("%s: a second page: %q, %d %v", p, next, code, second)
			} else {
				doc.check(t, ok, p, second, "GET "+p+" (second page)")
			}
		}
	}
	for _, path := range []string{"/api/v1/nothing", "/nothing"} {
		code, body := fetch(path)
		if code != http.StatusNotFound {
			t.Errorf("GET %s: %d", path, code)
		}
		doc.check(t, errorSchema, "Error", body, "GET "+path)
	}
	var missing []string
	for name := range doc.all {
		if !doc.seen[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("documented fields that no answer had: %v", missing)
	}
	if len(doc.seen) < 150 {
		t.Errorf("only %d documented fields were checked", len(doc.seen))
	}
}

// asParams resolves an operation's parameters.
func asParams(d *openAPIDoc, v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, p := range list {
		param, _ := d.resolve(p.(map[string]any), "")
		out = append(out, param)
	}
	return out
}
