// Package money formats amounts of US dollars for people: one formatter for the terminal
// tables, the reports, the emails and the dashboard, so $1,014.70 is written the same way
// everywhere. Machine outputs (CSV, JSON, Parquet) write plain exact decimals instead (package
// export).
package money

import (
	"math"
	"strings"

	"github.com/shopspring/decimal"
)

// USD formats an amount in cents with thousands separators: $1,014.70, -$3.50.
func USD(d decimal.Decimal) string {
	sign := ""
	if d.IsNegative() {
		sign, d = "-", d.Neg()
	}
	return sign + "$" + Thousands(d.StringFixed(2))
}

// Whole formats an amount in whole dollars, for a round figure such as a purchase: $200,000.
func Whole(d decimal.Decimal) string {
	sign := ""
	if d.IsNegative() {
		sign, d = "-", d.Neg()
	}
	return sign + "$" + Thousands(d.Round(0).String())
}

// Unit formats the price of a unit of work: in cents from a dollar up ($2.09), else to three
// significant digits ($0.0652, $0.00022).
func Unit(d decimal.Decimal) string {
	if d.GreaterThanOrEqual(decimal.NewFromInt(1)) || !d.IsPositive() {
		return USD(d)
	}
	places := int32(2 - math.Floor(math.Log10(d.InexactFloat64())))
	return "$" + d.Round(places).String()
}

// Price formats a unit price (per hour, per GPU-hour) with two to four decimals: $0.20, $0.065,
// $1,126.40.
func Price(d decimal.Decimal) string {
	sign := ""
	if d.IsNegative() {
		sign, d = "-", d.Neg()
	}
	s := d.Round(4).StringFixed(4)
	s = strings.TrimRight(s, "0")
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return sign + "$" + Thousands(s)
}

// SignedPercent formats a change in percent to one decimal, with its sign and separators:
// +12.5%, -3.0%, +1,250.0%, 0.0%.
func SignedPercent(d decimal.Decimal) string {
	s := Thousands(d.Abs().StringFixed(1)) + "%"
	switch {
	case d.Round(1).IsPositive():
		return "+" + s
	case d.Round(1).IsNegative():
		return "-" + s
	}
	return s
}

// Thousands adds commas to the integer part of a decimal string.
func Thousands(s string) string {
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if len(intPart) <= 3 {
		return s
	}
	var b strings.Builder
	lead := len(intPart) % 3
	if lead > 0 {
		b.WriteString(intPart[:lead])
	}
	for i := lead; i < len(intPart); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(intPart[i : i+3])
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}
