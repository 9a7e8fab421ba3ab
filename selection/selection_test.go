package selection

import (
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
