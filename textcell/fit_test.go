package textcell_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/textcell"
)

// TestFit: a table is narrowed by its steps in order and only as far as its width needs; a
// column shortened before a later step left out another gets its room back; a column with
// nothing to say goes without a word; prices line up on their points.
func TestFit(t *testing.T) {
	columns := func() []textcell.Column {
		return []textcell.Column{
			{Head: "NAME", Cells: []string{"a-rather-long-name", "short"}},
			{Head: "NOTE", Cells: []string{"droppable text", "more"}},
			{Head: "EMPTY", Cells: []string{"-", ""}},
			{Head: "$", Cells: []string{"$1.5", "$12.125"}, Right: true, Point: true},
		}
	}
	steps := []textcell.Step{textcell.Shrink("NAME", 8), textcell.Drop("NOTE"), textcell.Shrink("NAME", 6)}
	for _, tt := range []struct {
		name    string
		width   int
		want    string
		dropped []string
	}{
		// 43 characters: no step is needed.
		{"wide enough", 60, "NAME                NOTE                  $\na-rather-long-name  droppable text   $1.5\nshort               more            $12.125\n", nil},
		// NAME shortened to 8 leaves 33 characters, so NOTE goes; NAME then gets its 18 back.
		{"room given back", 30, "NAME                      $\na-rather-long-name   $1.5\nshort               $12.125\n", []string{"NOTE"}},
		{"a narrow room given back", 22, "NAME                 $\na-rather-lon…   $1.5\nshort          $12.125\n", []string{"NOTE"}},
		{"as narrow as the steps go", 10, "NAME          $\na-rat…   $1.5\nshort   $12.125\n", []string{"NOTE"}},
		{"every column with width 0", 0, "NAME                NOTE            EMPTY        $\na-rather-long-name  droppable text  -       $1.5\nshort               more                   $12.125\n", nil},
	} {
		var b bytes.Buffer
		dropped, err := textcell.Fit(&b, columns(), tt.width, steps)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.dropped, dropped); diff != "" {
			t.Errorf("%s: dropped (-want +got):\n%s", tt.name, diff)
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if tt.width >= 15 && utf8.RuneCountInString(l) > tt.width {
				t.Errorf("%s: %q is wider than %d", tt.name, l, tt.width)
			}
		}
	}
}

// TestColumnAddCleans: a cell added to a column is cleaned of control characters and cut to
// the width asked and an ellipsis, as Clean cuts, before any fitting.
func TestColumnAddCleans(t *testing.T) {
	var c textcell.Column
	c.Add("vast\x1b[31mai", 40)
	c.Add("NVIDIA RTX PRO 6000 Blackwell Server Edition", 12)
	if diff := cmp.Diff([]string{"vast [31mai", "NVIDIA RTX P…"}, c.Cells); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
