package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// Envelope is the one shape of gpucost's JSON answers that hold a list: the JSON API's, and
// the CLI's when it prints data as JSON. In JSON it is one object with six keys, always in
// this order:
//
//	{
//	  "schema": "gpucost.offers/v2",  // the resource and the version of its layout
//	  "query": {…},                   // the request as it was understood: defaults filled in,
//	                                  // names canonical, relative times resolved
//	  "count": 2,                     // items in this answer
//	  "truncated": true,              // more items matched than this answer holds
//	  "next": "…",                    // the cursor of the next page; null on the last page
//	  "offers": […]                   // the items, under the schema's resource name
//	}
//
// The items are keyed by the resource the schema names (gpucost.offers/v2 → "offers",
// gpucost.gpus/v1 → "gpus"), so one rule finds them in every answer. Their fields are the
// column vocabulary of this package (the JSON names of the schema types). A schema's version
// changes only when a field of the envelope, its query or its items is renamed, removed or
// changes meaning; a new field is not a new version.
type Envelope[T any] struct {
	Schema Schema
	// Query is the request as understood, a struct of the resource's parameters; nil is {}.
	Query     any
	Items     []T // nil is written as []
	Truncated bool
	Next      string // "" is the last page (null)
}

// Schema names a resource's JSON layout: gpucost.<Resource>/v<Version>.
type Schema struct {
	Resource string // lower case, e.g. offers; the items' key, so none of the envelope's own
	Version  int
}

// headKeys are the keys of an envelope before its items: no resource is named as one.
var headKeys = []string{"schema", "query", "count", "truncated", "next"}

// String returns the schema's name, e.g. gpucost.offers/v2.
func (s Schema) String() string { return "gpucost." + s.Resource + "/v" + strconv.Itoa(s.Version) }

var schemaName = regexp.MustCompile(`^gpucost\.([a-z][a-z_]*)/v([1-9][0-9]*)$`)

// ParseSchema reads a schema's name.
func ParseSchema(name string) (Schema, error) {
	m := schemaName.FindStringSubmatch(name)
	if m == nil {
		return Schema{}, fmt.Errorf("%q is not a gpucost schema name (gpucost.<resource>/v<n>)", name)
	}
	v, err := strconv.Atoi(m[2])
	if err != nil {
		return Schema{}, fmt.Errorf("%q: version: %w", name, err)
	}
	if slices.Contains(headKeys, m[1]) {
		return Schema{}, fmt.Errorf("%q names a resource after a key of the envelope", name)
	}
	return Schema{Resource: m[1], Version: v}, nil
}

// envelopeHead is the JSON of an Envelope before its items, in the order written.
type envelopeHead struct {
	Schema    string  `json:"schema"`
	Query     any     `json:"query"`
	Count     int     `json:"count"`
	Truncated bool    `json:"truncated"`
	Next      *string `json:"next"`
}

// MarshalJSON writes the envelope's six keys in their order, the items last under the
// schema's resource name.
func (e Envelope[T]) MarshalJSON() ([]byte, error) {
	if _, err := ParseSchema(e.Schema.String()); err != nil {
		return nil, fmt.Errorf("an envelope without a valid schema (%+v): %w", e.Schema, err)
	}
	head := envelopeHead{Schema: e.Schema.String(), Query: e.Query, Count: len(e.Items), Truncated: e.Truncated}
	if head.Query == nil {
		head.Query = struct{}{}
	}
	if e.Next != "" {
		head.Next = &e.Next
	}
	items := e.Items
	if items == nil {
		items = []T{}
	}
	h, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	it, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	key, err := json.Marshal(e.Schema.Resource)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(h[:len(h)-1]) // without its closing brace
	b.WriteByte(',')
	b.Write(key)
	b.WriteByte(':')
	b.Write(it)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an envelope written by MarshalJSON: the items from the key its schema
// names. Query is left as the raw JSON (a json.RawMessage). A count that is not the number of
// items is an error.
func (e *Envelope[T]) UnmarshalJSON(data []byte) error {
	var head struct {
		Schema    string          `json:"schema"`
		Query     json.RawMessage `json:"query"`
		Count     int             `json:"count"`
		Truncated bool            `json:"truncated"`
		Next      *string         `json:"next"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	s, err := ParseSchema(head.Schema)
	if err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	raw, ok := all[s.Resource]
	if !ok {
		return fmt.Errorf("a %s envelope without its %q items", head.Schema, s.Resource)
	}
	var items []T
	if err := json.Unmarshal(raw, &items); err != nil {
		return fmt.Errorf("the %q items: %w", s.Resource, err)
	}
	if len(items) != head.Count {
		return fmt.Errorf("a %s envelope counts %d items and holds %d", head.Schema, head.Count, len(items))
	}
	*e = Envelope[T]{Schema: s, Query: head.Query, Items: items, Truncated: head.Truncated}
	if head.Next != nil {
		e.Next = *head.Next
	}
	return nil
}
