package config

import (
	"strings"
	"testing"
)

func TestReportConfigCheck(t *testing.T) {
	base, err := Load("", stateOnly(t))
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
		{"dashboard not a web address", map[string]string{"GPUCOST_REPORT_DASHBOARD_URL": "javascript:alert(1)"}, "report.dashboard_url"},
		{"dashboard relative", map[string]string{"GPUCOST_REPORT_DASHBOARD_URL": "/dashboard"}, "report.dashboard_url"},
		{"dashboard with a password", map[string]string{"GPUCOST_REPORT_DASHBOARD_URL": "https://admin:s3cret@gpucost.example.com/"}, "report.dashboard_url: holds a user or password"},
	}
	good, err := Load("", func(k string) string {
		return map[string]string{"GPUCOST_REPORT_DASHBOARD_URL": "https://gpucost.example.com/"}[k]
	})
	if err != nil || good.Report.DashboardURL != "https://gpucost.example.com/" {
		t.Fatalf("a dashboard address: %v, %q", err, good.Report.DashboardURL)
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

// stateOnly is an environment that names only gpucost's state folder, the test's own, so that
// the defaults load whoever runs the tests (root or not, with $HOME or without).
func stateOnly(t *testing.T) func(string) string {
	state := t.TempDir()
	return func(k string) string {
		if k == "STATE_DIRECTORY" {
			return state
		}
		return ""
	}
}
