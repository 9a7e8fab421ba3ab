package export

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnvelope: the six keys in their order, the items under the schema's resource, an empty
// list as [] and the last page's next as null; what is written reads back.
func TestEnvelope(t *testing.T) {
	type item struct {
		GPUModel string `json:"gpu_model"`
	}
	type query struct {
		Limit int `json:"limit"`
	}
	page := Envelope[item]{Schema: Schema{"offers", 2}, Query: query{Limit: 2}, Items: []item{{"H100-SXM-80GB"}, {"A100-SXM-80GB"}}, Truncated: true, Next: "abc"}
	var b bytes.Buffer
	if err := WriteJSON(&b, page); err != nil {
		t.Fatal(err)
	}
	want := `{
  "schema": "gpucost.offers/v2",
  "query": {
    "limit": 2
  },
  "count": 2,
  "truncated": true,
  "next": "abc",
  "offers": [
    {
      "gpu_model": "H100-SXM-80GB"
    },
    {
      "gpu_model": "A100-SXM-80GB"
    }
  ]
}
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("a page (-want +got):\n%s", diff)
	}
	var back Envelope[item]
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	back.Query = page.Query
	if diff := cmp.Diff(page, back); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}

	last, err := json.Marshal(Envelope[item]{Schema: Schema{"gpus", 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(last); got != `{"schema":"gpucost.gpus/v1","query":{},"count":0,"truncated":false,"next":null,"gpus":[]}` {
		t.Errorf("an empty last page: %s", got)
	}

	if _, err := json.Marshal(Envelope[item]{}); err == nil {
		t.Error("an envelope without a schema was written")
	}
	// Items under "count" would hide the count: no resource is named as a key of the envelope.
	if _, err := json.Marshal(Envelope[item]{Schema: Schema{"count", 1}}); err == nil {
		t.Error("an envelope of a resource named count was written")
	}
	for name, doc := range map[string]string{
		"a count that lies": `{"schema":"gpucost.gpus/v1","query":{},"count":3,"truncated":false,"next":null,"gpus":[]}`,
		"items elsewhere":   `{"schema":"gpucost.gpus/v1","query":{},"count":0,"truncated":false,"next":null,"items":[]}`,
		"no schema":         `{"query":{},"count":0,"gpus":[]}`,
		"a foreign schema":  `{"schema":"acme.gpus/v1","gpus":[]}`,
	} {
		if err := json.Unmarshal([]byte(doc), &back); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
	for _, name := range []string{"gpucost.offers/v0", "gpucost.Offers/v1", "gpucost.offers/2", "gpucost.offers/v2 "} {
		if _, err := ParseSchema(name); err == nil || !strings.Contains(err.Error(), "not a gpucost schema name") {
			t.Errorf("ParseSchema(%q): %v", name, err)
		}
	}
	if _, err := ParseSchema("gpucost.next/v1"); err == nil {
		t.Error("ParseSchema read a resource named next")
	}
}

// TestSchemas: every schema gpucost writes has a name that reads back as itself, and no two
// share a resource, so the items' key tells every answer's kind.
func TestSchemas(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Schemas {
		back, err := ParseSchema(s.String())
		if err != nil || back != s {
			t.Errorf("%v reads back as %v (%v)", s, back, err)
		}
		if seen[s.Resource] {
			t.Errorf("two schemas of the resource %s", s.Resource)
		}
		seen[s.Resource] = true
	}
}
