package selection

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

func TestWhen(t *testing.T) {
	now := time.Date(2026, 5, 17, 10, 30, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    time.Time
		wantErr string
	}{
		{"now", now, ""},
		{"7d", now.AddDate(0, 0, -7), ""},
		{"2w", now.AddDate(0, 0, -14), ""},
		{"36h", now.Add(-36 * time.Hour), ""},
		{"90m", now.Add(-90 * time.Minute), ""},
		{"1h30m", now.Add(-90 * time.Minute), ""},
		{"2026-01-31", time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC), ""},
		{"2026-01-31 12:00", time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC), ""},
		{"2026-01-31T12:00:00+02:00", time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC), ""},
		{"", time.Time{}, "a time is required"},
		{"-5h", time.Time{}, "must be positive"},
		{"999999w", time.Time{}, "more than 100 years"},
		{"1900-01-01", time.Time{}, "out of range"},
		{"yesterday", time.Time{}, "cannot read"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := When(tt.in, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("When(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(tt.want) {
				t.Fatalf("When(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestRequestBounds checks the checks the CLI and the API share, each failing value named by
// its parameter, and the bounds where the two differ.
func TestRequestBounds(t *testing.T) {
	now := time.Date(2026, 5, 17, 10, 30, 0, 0, time.UTC)
	api := Bounds{MinLimit: 1, MaxLimit: 1000, MaxChangesRange: 92 * 24 * time.Hour, MinAge: time.Minute, MaxAgeCap: 366 * 24 * time.Hour}
	cli := Bounds{}
	for _, tc := range []struct {
		name  string
		check func() error
		param string // "" when the request is good
	}{
		{"a CLI age of 0 keeps all", func() error { _, err := Request{MaxAge: "0"}.Offers(now, cli); return err }, ""},
		{"an API age of 0 is refused", func() error { _, err := Request{MaxAge: "0s"}.Offers(now, api); return err }, "max_age"},
		{"a date is not an age", func() error { _, err := Request{MaxAge: "2026-01-01"}.Offers(now, cli); return err }, "max_age"},
		{"a negative age", func() error { _, err := Request{MaxAge: "-1h"}.Offers(now, cli); return err }, "max_age"},
		{"an age past the API's cap", func() error { _, err := Request{MaxAge: "400d"}.Offers(now, api); return err }, "max_age"},
		{"negative VRAM", func() error { _, err := Request{MinVRAM: "-5"}.Offers(now, cli); return err }, "min_vram"},
		{"a limit past the API's cap", func() error { _, err := Request{Limit: "1001"}.Offers(now, api); return err }, "limit"},
		{"a CLI limit of 0 is all", func() error { _, err := Request{Limit: "0"}.Offers(now, cli); return err }, ""},
		{"an unknown GPU", func() error { _, err := Request{GPU: "H1000"}.Offers(now, cli); return err }, "gpu"},
		{"a bad provider", func() error { _, err := Request{Provider: "Vast AI"}.Offers(now, cli); return err }, "provider"},
		{"history of two GPUs", func() error {
			_, err := Request{GPU: "H100-SXM-80GB,A100-SXM-80GB", Since: "7d", Until: "now", Interval: "day"}.History(now)
			return err
		}, "gpu"},
		{"a year of hours", func() error {
			_, err := Request{GPU: "H100-SXM-80GB", Since: "365d", Until: "now", Interval: "hour"}.History(now)
			return err
		}, "since"},
		{"an inverted range", func() error { _, err := Request{Since: "now", Until: "7d"}.Changes(now, cli); return err }, "until"},
		{"changes past the API's range", func() error { _, err := Request{Since: "100d", Until: "now"}.Changes(now, api); return err }, "since"},
		{"changes over a CLI's long range", func() error { _, err := Request{Since: "400d", Until: "now"}.Changes(now, cli); return err }, ""},
		{"value of a term", func() error { _, _, err := Request{PriceType: "term_3m", Precision: "fp8"}.Value(cli); return err }, ""},
		{"value of two price types", func() error {
			_, _, err := Request{PriceType: "on_demand,spot", Precision: "bf16"}.Value(cli)
			return err
		}, "price_type"},
		{"value at an unrated precision", func() error { _, _, err := Request{PriceType: "on_demand", Precision: "int4"}.Value(cli); return err }, "precision"},
		{"value with an API age of 0", func() error {
			_, _, err := Request{PriceType: "on_demand", Precision: "bf16", MaxAge: "0s"}.Value(api)
			return err
		}, "max_age"},
	} {
		err := tc.check()
		var se *Error
		switch {
		case tc.param == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.param != "" && (!errors.As(err, &se) || se.Param != tc.param):
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.param)
		}
	}
}

// TestValueRequest reads a value query: a commitment reads every reserved and term price and
// nothing else; the errors list what would do.
func TestValueRequest(t *testing.T) {
	f, q, err := Request{PriceType: " Commitment ", Precision: "FP4", MaxAge: "6h"}.Value(Bounds{})
	want := []schema.PriceType{schema.Reserved, schema.Term1W, schema.Term1M, schema.Term3M, schema.Term6M, schema.Term1Y, schema.Term3Y}
	if err != nil || q.Basis != market.Commitment || q.Precision != gpus.FP4 || f.MaxAge != 6*time.Hour || !slices.Equal(f.PriceTypes, want) {
		t.Errorf("commitment at fp4: %+v, %+v, %v", f, q, err)
	}
	if f, q, err := (Request{PriceType: "spot", Precision: "bf16"}).Value(Bounds{}); err != nil || q.Basis != market.Basis(schema.Spot) || !slices.Equal(f.PriceTypes, []schema.PriceType{schema.Spot}) {
		t.Errorf("spot: %+v, %+v, %v", f, q, err)
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{PriceType: "committed", Precision: "bf16"}, `unknown price type "committed" (want one of on_demand, spot, serverless, reserved, term_1w, term_1m, term_3m, term_6m, term_1y, term_3y, commitment)`},
		{Request{PriceType: "on_demand", Precision: "fp6"}, `unknown precision "fp6" (want one of fp32, tf32, fp16, bf16, fp8, int8, fp4)`},
	} {
		if _, _, err := tc.req.Value(Bounds{}); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %s", tc.req, err, tc.want)
		}
	}
}

// TestOffersFilters reads the filters and the order of `gpucost offers` into the store's
// filter, and names the flag of each bad value.
func TestOffersFilters(t *testing.T) {
	now := time.Date(2026, 5, 17, 10, 30, 0, 0, time.UTC)
	f, err := Request{GPUSpecs: []string{"H100-SXM:8"}, MaxPrice: "$2.50", Region: "US, eu-west-1", Country: "us,de", MinVCPUs: "16",
		MinRAM: "128", Sort: "VRAM"}.Offers(now, Bounds{})
	if err != nil {
		t.Fatal(err)
	}
	want := schema.OfferFilter{GPUs: []schema.GPUSpec{{Models: []string{"H100-SXM-80GB"}, MinCount: 8, MaxCount: 8}},
		MaxUSDPerGPUHour: decimal.RequireFromString("2.5"), Regions: []string{"us", "eu-west-1"}, Countries: []string{"US", "DE"},
		MinVCPUs: 16, MinRAMGB: 128, Sort: schema.SortVRAM}
	if diff := cmp.Diff(want, f, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("the filter (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		req  Request
		flag string
		want string
	}{
		{Request{MaxPrice: "0"}, "--max-price", `"0" is not a price in USD per GPU-hour, like 2.50`},
		{Request{MaxPrice: "-1"}, "--max-price", `"-1" is not a price in USD per GPU-hour, like 2.50`},
		{Request{MaxPrice: "1e3"}, "--max-price", `"1e3" is not a price in USD per GPU-hour, like 2.50`},
		{Request{MaxPrice: "cheap"}, "--max-price", `"cheap" is not a price in USD per GPU-hour, like 2.50`},
		{Request{Region: "us;drop"}, "--region", `invalid region "us;drop": regions are letters, digits, spaces, '.', '_' and '-', like us-east-1 or us`},
		{Request{Country: "USA"}, "--country", `"USA" is not an ISO 3166-1 alpha-2 country code, like US, DE or JP`},
		{Request{MinVCPUs: "many"}, "--min-vcpus", `"many" is not a number between 0 and 100000`},
		{Request{MinRAM: "-1"}, "--min-ram", `"-1" is not a number between 0 and 1e+06`},
		{Request{Sort: "cheapest"}, "--sort", `unknown order "cheapest" (want price, gpu, vram, provider)`},
		{Request{GPUSpecs: []string{"H100:0"}}, "--gpu", `"H100:0": 0 GPUs: a count starts at 1`},
	} {
		_, err := tc.req.Offers(now, Bounds{})
		var se *Error
		if !errors.As(err, &se) || se.Flag() != tc.flag || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %s: %s", tc.req, err, tc.flag, tc.want)
		}
	}
}

// TestGroupBy reads --group-by: the dimensions in the order given, each once.
func TestGroupBy(t *testing.T) {
	if got, err := GroupBy(" GPU, count "); err != nil || !slices.Equal(got, []market.Dimension{market.ByGPU, market.ByCount}) {
		t.Errorf("gpu,count: %v, %v", got, err)
	}
	if got, err := GroupBy(""); err != nil || got != nil {
		t.Errorf("none: %v, %v", got, err)
	}
	for in, want := range map[string]string{
		"gpu,region": `cannot group by "region" (want gpu, provider or count, e.g. gpu,provider)`,
		"gpu,gpu":    `"gpu" is named twice`,
	} {
		var se *Error
		if _, err := GroupBy(in); !errors.As(err, &se) || se.Flag() != "--group-by" || err.Error() != want {
			t.Errorf("GroupBy(%q): %v, want --group-by: %s", in, err, want)
		}
	}
}
