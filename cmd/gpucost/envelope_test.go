package main

import (
	"encoding/json"
	"testing"

	"github.com/gpucost/gpucost/export"
)

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
