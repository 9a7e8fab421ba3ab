package money

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestFormats(t *testing.T) {
	d := decimal.RequireFromString
	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{"cents", USD(d("1014.7")), "$1,014.70"},
		{"millions", USD(d("879323.98")), "$879,323.98"},
		{"negative", USD(d("-3.5")), "-$3.50"},
		{"rounded", USD(d("0.005")), "$0.01"},
		{"whole dollars", Whole(d("199999.6")), "$200,000"},
		{"whole and small", Whole(d("800")), "$800"},
		{"small price", Price(d("0.065")), "$0.065"},
		{"price keeps two decimals", Price(d("0.2")), "$0.20"},
		{"price to four", Price(d("1.23456")), "$1.2346"},
		{"large price", Price(d("1126.4")), "$1,126.40"},
		{"unit above a dollar", Unit(d("2.094")), "$2.09"},
		{"unit in three digits", Unit(d("0.065249")), "$0.0652"},
		{"tiny unit", Unit(d("0.000221")), "$0.000221"},
		{"thousands without decimals", Thousands("1234567"), "1,234,567"},
		{"short", Thousands("730"), "730"},
		{"a rise", SignedPercent(d("12.5")), "+12.5%"},
		{"a fall", SignedPercent(d("-3")), "-3.0%"},
		{"a rise of thousands", SignedPercent(d("1250")), "+1,250.0%"},
		{"a fall of hundreds keeps its sign beside the figure", SignedPercent(d("-123.44")), "-123.4%"},
		{"no change worth a decimal", SignedPercent(d("-0.04")), "0.0%"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
