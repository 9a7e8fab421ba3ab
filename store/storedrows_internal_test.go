package store

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStoredRowsReadsEachSecondOnce: a load's lookups of what was stored before it cover each
// second once: a part within what was read reads nothing, one reaching past it reads only the
// rest.
func TestStoredRowsReadsEachSecondOnce(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 12, 1, 12, 0, s, 0, time.UTC) }
	st := newStoredRows[string]()
	steps := []struct {
		from, to int
		want     [][2]int
	}{
		{10, 11, [][2]int{{10, 11}}},
		{10, 11, nil},                        // the same second: read already
		{5, 20, [][2]int{{5, 10}, {11, 20}}}, // around it
		{0, 30, [][2]int{{0, 5}, {20, 30}}},
		{3, 25, nil},
	}
	for _, s := range steps {
		var got [][2]int
		for _, r := range st.unread(at(s.from), at(s.to)) {
			got = append(got, [2]int{r.from.Second(), r.to.Second()})
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("unread [%d, %d) (-want +got):\n%s", s.from, s.to, diff)
		}
	}
}
