package config

import (
	"strings"
	"testing"
)

func TestReportConfigCheck(t *testing.T) {
	base, err := Load("", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if err := base.Report.check(); err != nil {
		t.Fatalf("the embedded defaults fail: %v", err)
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"starttls typo", map[string]string{"GPUCOST_REPORT_SMTP_STARTTLS": "yes"}, "report.smtp.starttls"},
		{"from with a header", map[string]string{"GPUCOST_REPORT_SMTP_FROM": "a@example.com\r\nBcc: b@example.com"}, "report.smtp.from"},
		{"two senders", map[string]string{"GPUCOST_REPORT_SMTP_FROM": "a@example.com, b@example.com"}, "report.smtp.from"},
		{"port", map[string]string{"GPUCOST_REPORT_SMTP_PORT": "70000"}, "report.smtp.port"},
		{"history", map[string]string{"GPUCOST_REPORT_HISTORY_WEEKS": "0"}, "report.history_weeks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A bad report section stops the configuration from loading, for every command.
			_, err := Load("", func(k string) string { return tt.env[k] })
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
