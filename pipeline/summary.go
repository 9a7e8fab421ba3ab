package pipeline

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// WriteProgress writes one line for a provider that finished (with its error on a second line),
// for a terminal watching a run (Options.Progress); scraped text passes textcell.
func WriteProgress(w io.Writer, p ProviderReport) {
	line := fmt.Sprintf("%-10s %-8s %5d offers loaded", textcell.Clean(p.Provider, textcell.NameWidth), p.Status, p.Loaded)
	if n := sum(p.Rejected); n > 0 {
		line += fmt.Sprintf(", %d rejected", n)
	}
	if p.Spooled {
		line += ", spooled"
	}
	line += fmt.Sprintf("  (%s)", p.Duration.Round(1e7))
	if p.Error != "" {
		line += "\n           " + textcell.Clean(p.Error, textcell.TextWidth)
	}
	fmt.Fprintln(w, line)
}

// WriteSummary writes what a run did: a line per batch it loaded (or could not) from the spool,
// the run's status, and a table of its providers; scraped text passes textcell.
func WriteSummary(w io.Writer, rep Report) error {
	for _, r := range rep.Replayed {
		switch {
		case r.Quarantined:
			fmt.Fprintf(w, "spooled batch %s moved to quarantine: %s\n", r.File, textcell.Clean(r.Error, textcell.TextWidth))
		case r.Error != "":
			fmt.Fprintf(w, "spooled batch %s still not loadable: %s\n", r.File, textcell.Clean(r.Error, textcell.TextWidth))
		case r.Skipped:
			fmt.Fprintf(w, "spooled batch %s was already stored: skipped\n", r.File)
		default:
			fmt.Fprintf(w, "loaded spooled batch %s\n", r.File)
		}
	}
	fmt.Fprintf(w, "run %s: %s\n", rep.RunID, rep.Status)
	t := textcell.NewTable(w, 160)
	t.Row("PROVIDER", "STATUS", "PARSED", "LOADED", "REJECTED", "SPOOLED", "ERROR")
	for _, p := range rep.Providers {
		t.Row(p.Provider, string(p.Status), strconv.Itoa(p.Parsed), strconv.Itoa(p.Loaded), strconv.Itoa(sum(p.Rejected)), strconv.FormatBool(p.Spooled), p.Error)
	}
	return t.Flush()
}

// Offers are the offers of every batch of the run (what a dry run would have loaded), by GPU
// model and then cheapest first, ties by provider, offer id and price type: the same order
// whatever order the sources read their pages in.
func (r Report) Offers() []schema.Offer {
	var offers []schema.Offer
	for _, b := range r.Batches {
		offers = append(offers, b.Offers...)
	}
	sort.SliceStable(offers, func(i, j int) bool {
		a, b := &offers[i], &offers[j]
		if a.GPUModel != b.GPUModel {
			return a.GPUModel < b.GPUModel
		}
		if c := a.PriceUSDPerGPUHour.Cmp(b.PriceUSDPerGPUHour); c != 0 {
			return c < 0
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.OfferID != b.OfferID {
			return a.OfferID < b.OfferID
		}
		return a.PriceType < b.PriceType
	})
	return offers
}
