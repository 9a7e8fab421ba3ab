package textcell_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/textcell"
)

// TestFitTable: a table narrower than its width is laid out whole, figures to the right; a
// wider one gives up the characters of the columns it may cut, in their order and no further
// than their minimum, each cut cell ending in an ellipsis; hostile text is cleaned.
func TestFitTable(t *testing.T) {
	rows := [][]string{
		{"PROVIDER", "GPU", "PRICE", "OFFER"},
		{"runpod", "RTX-PRO-6000-MAX-Q-96GB", "$1,234.50", "NVIDIA RTX PRO 6000 Blackwell Server Edition:community"},
		{"lambda", "H100-SXM-80GB", "$2.49", "gpu_8x_h100_sxm5"},
		{"vast\x1b[31mai", "A100-SXM-80GB", "$0.065", "54420292"},
	}
	write := func(width int, cut func(*textcell.FitTable)) []string {
		t.Helper()
		var b bytes.Buffer
		ft := textcell.NewFitTable(&b, width)
		ft.Right(2)
		cut(ft)
		for _, r := range rows {
			ft.Row(r...)
		}
		if err := ft.Flush(); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	}
	cutOffer := func(ft *textcell.FitTable) { ft.Cut(3, 12); ft.Cut(1, 13) }

	whole := write(0, cutOffer)
	want := []string{
		"PROVIDER     GPU                          PRICE  OFFER",
		"runpod       RTX-PRO-6000-MAX-Q-96GB  $1,234.50  NVIDIA RTX PRO 6000 Blackwell Server Edition:community",
		"lambda       H100-SXM-80GB                $2.49  gpu_8x_h100_sxm5",
		"vast [31mai  A100-SXM-80GB               $0.065  54420292",
	}
	if diff := cmp.Diff(want, whole); diff != "" {
		t.Errorf("without a bound (-want +got):\n%s", diff)
	}
	if got := write(120, cutOffer); !cmp.Equal(got, whole) {
		t.Errorf("a table narrower than its width is not laid out whole:\n%s", strings.Join(got, "\n"))
	}

	// 60 columns: the offer gives up what it can (54 characters down to 12), then the GPU the
	// one character still over.
	fit := write(60, cutOffer)
	want = []string{
		"PROVIDER     GPU                         PRICE  OFFER",
		"runpod       RTX-PRO-6000-MAX-Q-96…  $1,234.50  NVIDIA RTX…",
		"lambda       H100-SXM-80GB               $2.49  gpu_8x_h100…",
		"vast [31mai  A100-SXM-80GB              $0.065  54420292",
	}
	if diff := cmp.Diff(want, fit); diff != "" {
		t.Errorf("at 60 columns (-want +got):\n%s", diff)
	}
	for _, l := range fit {
		if n := utf8.RuneCountInString(l); n > 60 {
			t.Errorf("a line of %d characters: %q", n, l)
		}
	}

	// Nothing left to cut: each cut column stops at its minimum (the GPU at 13, the width of
	// H100-SXM-80GB), and the lines stay as wide as that makes them.
	want = []string{
		"PROVIDER     GPU                PRICE  OFFER",
		"runpod       RTX-PRO-6000…  $1,234.50  NVIDIA RTX…",
		"lambda       H100-SXM-80GB      $2.49  gpu_8x_h100…",
		"vast [31mai  A100-SXM-80GB     $0.065  54420292",
	}
	if diff := cmp.Diff(want, write(20, cutOffer)); diff != "" {
		t.Errorf("below the minimums (-want +got):\n%s", diff)
	}
}
