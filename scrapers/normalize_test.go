package scrapers

import (
	"regexp"
	"testing"

	"github.com/shopspring/decimal"
)

// boundedNumberRe is the definition boundedNumber implements.
var boundedNumberRe = regexp.MustCompile(`^-?(?:0|[1-9]\d{0,14})(?:\.\d{1,30})?(?:[eE][-+]?\d{1,2})?$`)

func FuzzBoundedNumber(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "00", "01", "1", "-1", "123456789012345", "1234567890123456", "0.5", "0.", ".5",
		"1.123456789012345678901234567890", "1.1234567890123456789012345678901", "1e5", "1E+05", "1e-99",
		"1e100", "1e", "1e+", "7.407407407407407e-05", "-", "", "null", `"1"`, "1 ", " 1", "1\n", "１",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := boundedNumber([]byte(s)), boundedNumberRe.MatchString(s); got != want {
			t.Fatalf("boundedNumber(%q) = %v, want %v", s, got, want)
		}
	})
}

// FuzzExactDecimal: a price is the decimal decimal.NewFromString reads, coefficient and
// exponent alike.
func FuzzExactDecimal(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "-0.0", "0.27537", "0.0029629629629629624", "7.407407407407407e-05", "1E+99", "-1e-99",
		"123456789012345.123", "999999999999999999", "9999999999999999999", "0.000000000000000000000000000001",
		"123456789012345.123456789012345678901234567890", "1.5e+00", "10", "100.000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := exactDecimal([]byte(s))
		if !boundedNumberRe.MatchString(s) {
			if err == nil {
				t.Fatalf("exactDecimal(%q) = %v, want an error", s, got)
			}
			return
		}
		want, wantErr := decimal.NewFromString(s)
		if err != nil || wantErr != nil {
			t.Fatalf("exactDecimal(%q): %v; decimal.NewFromString: %v", s, err, wantErr)
		}
		if got.Coefficient().Cmp(want.Coefficient()) != 0 || got.Exponent() != want.Exponent() {
			t.Fatalf("exactDecimal(%q) = %se%d, want %se%d", s, got.Coefficient(), got.Exponent(), want.Coefficient(), want.Exponent())
		}
	})
}
