package reparse

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucost/gpucost/textcell"
)

// Incomplete is the error of a re-derivation that left runs as they were stored (Kept says
// why). gpucost reparse exits partial on it.
type Incomplete struct{ Kept int }

func (e *Incomplete) Error() string {
	return fmt.Sprintf("%d runs keep their stored offers: today's parsers do not re-derive them whole (the report says why)", e.Kept)
}

// Err returns nil when every run was re-derived, else an *Incomplete.
func (r Report) Err() error {
	kept := 0
	for _, p := range r.Providers {
		kept += len(p.Kept)
	}
	if kept == 0 {
		return nil
	}
	return &Incomplete{Kept: kept}
}

// Write writes the report as a table: a line per provider (on a dry run with what would change),
// then the example changes and the runs kept; scraped text passes textcell.
func (r Report) Write(w io.Writer) error {
	verb := "re-derived"
	if r.DryRun {
		verb = "would re-derive (dry run: nothing written)"
	}
	months := "no month"
	if len(r.Months) > 0 {
		months = strings.Join(r.Months, ", ")
	}
	fmt.Fprintf(w, "%s %s\n", verb, months)
	t := textcell.NewTable(w, textcell.NameWidth)
	head := []string{"PROVIDER", "RUNS", "OFFERS BEFORE", "AFTER", "KEPT"}
	if r.DryRun {
		head = append(head, "ADDED", "REMOVED", "REPRICED", "CHANGED")
	}
	t.Row(head...)
	for _, p := range r.Providers {
		row := []string{p.Provider, strconv.Itoa(p.Runs), strconv.Itoa(p.Before), strconv.Itoa(p.After), strconv.Itoa(len(p.Kept))}
		if r.DryRun {
			row = append(row, strconv.Itoa(p.Added), strconv.Itoa(p.Removed), strconv.Itoa(p.Repriced), strconv.Itoa(p.Changed))
		}
		t.Row(row...)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, p := range r.Providers {
		for _, c := range p.Examples {
			fmt.Fprintf(w, "%s run %s offer %s (%s):\n  before: %s\n  after:  %s\n", textcell.Clean(p.Provider, textcell.NameWidth),
				textcell.Clean(c.RunID, textcell.NameWidth), textcell.Clean(c.OfferID, textcell.NameWidth), c.PriceType,
				textcell.Clean(cmp.Or(c.Before, "(none)"), textcell.TextWidth), textcell.Clean(cmp.Or(c.After, "(none)"), textcell.TextWidth))
		}
		for _, k := range p.Kept {
			fmt.Fprintf(w, "%s run %s keeps its stored offers: %s\n", textcell.Clean(p.Provider, textcell.NameWidth),
				textcell.Clean(k.RunID, textcell.NameWidth), textcell.Clean(k.Why, textcell.TextWidth))
		}
	}
	return nil
}
