package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteFitted: a table is narrowed by its steps in order and only as far as its width
// needs; a column shortened before a later step dropped another gets its room back; a column
// with nothing to say goes without a word; prices line up on their points.
func TestWriteFitted(t *testing.T) {
	columns := func() []fitColumn {
		return []fitColumn{
			{head: "NAME", cells: []string{"a-rather-long-name", "short"}},
			{head: "NOTE", cells: []string{"droppable text", "more"}},
			{head: "EMPTY", cells: []string{"-", ""}},
			{head: "$", cells: []string{"$1.5", "$12.125"}, right: true, point: true},
		}
	}
	steps := []fitStep{shrink("NAME", 8), drop("NOTE"), shrink("NAME", 6)}
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
		dropped, err := writeFitted(&b, columns(), tt.width, steps)
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
			if tt.width >= 15 && len([]rune(l)) > tt.width {
				t.Errorf("%s: %q is wider than %d", tt.name, l, tt.width)
			}
		}
	}
}
