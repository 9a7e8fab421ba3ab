package main

import (
	"strings"
	"testing"
	"time"
)

// TestVastDeadlineFollowsItsPlan scrapes the shipped snapshot's Vast market (21 requests, 20
// pauses) with the delay scaled down from 6s to 50ms and a work allowance (source_timeout) of
// 400ms: the 1s of pauses Vast announces move its deadline out, so the run is ok where a fixed
// 400ms deadline would fail it; a cap (source_timeout_max) below the plan fails it, saying why.
// This is the wiring of the run's Pace (schema.Run, which Vast calls) to the pipeline's deadline, end to end.
func TestVastDeadlineFollowsItsPlan(t *testing.T) {
	vast := providerServer(t, "vastai", nil)
	tests := []struct {
		name     string
		max      string
		wantCode int
		wantOut  string
	}{
		{"under the cap", "10s", exitOK, "vastai    ok"},
		{"over the cap", "600ms", exitFailed, "capped at 600ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{
				"GPUCOST_PROVIDERS_VASTAI_URL":      vast.URL + "/api/v0/bundles/",
				"GPUCOST_PROVIDERS_VASTAI_DELAY":    "50ms",
				"GPUCOST_SCRAPE_SOURCE_TIMEOUT":     "400ms",
				"GPUCOST_SCRAPE_SOURCE_TIMEOUT_MAX": tt.max,
			}
			start := time.Now()
			code, out := runCLIEnv(vars, "scrape", "--dry-run", "--providers", "vastai")
			took := time.Since(start)
			if code != tt.wantCode || !strings.Contains(out, tt.wantOut) {
				t.Fatalf("exit %d, want %d with %q:\n%s", code, tt.wantCode, tt.wantOut, out)
			}
			if tt.wantCode == exitOK && took < 20*50*time.Millisecond {
				t.Errorf("the run took %v: fewer than the 20 pauses of the plan?", took)
			}
		})
	}
}

// TestTensorDockNeedsAKey: TensorDock publishes prices only to a token, so a scrape of it
// without a key stops at start with a usage error naming the variable; with one it runs (its
// snapshot part served, the token sent).
func TestTensorDockNeedsAKey(t *testing.T) {
	td := providerServer(t, "tensordock", nil)
	vars := map[string]string{"GPUCOST_PROVIDERS_TENSORDOCK_URL": td.URL + "/api/v2"}
	code, out := runCLIEnv(vars, "scrape", "--dry-run", "--providers", "tensordock")
	if code != exitUsage || !strings.Contains(out, "provider tensordock: no API key: set GPUCOST_TENSORDOCK_API_KEY (providers.tensordock.api_key_env) or providers.tensordock.api_key_file") {
		t.Fatalf("without a key: exit %d, want %d naming the variable:\n%s", code, exitUsage, out)
	}
	vars["GPUCOST_TENSORDOCK_API_KEY"] = "td-test-token"
	if code, out := runCLIEnv(vars, "scrape", "--dry-run", "--providers", "tensordock"); code != exitOK || !strings.Contains(out, "tensordock  ok") || strings.Contains(out, "td-test-token") {
		t.Fatalf("with a key: exit %d, want %d and tensordock ok, the key nowhere:\n%s", code, exitOK, out)
	}
}
