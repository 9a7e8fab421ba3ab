package selection

import (
	"errors"
	"strings"
	"testing"
	"time"
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
