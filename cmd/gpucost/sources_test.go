package main

import (
	"net/http"
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

// TestRunPodServerlessNeedsAKey: RunPod's snapshot part served at providers.runpod.url and
// catalog_url. Without a key the scrape reads GraphQL alone: 112 pod offers, no serverless one,
// ok. With a key it reads the catalog too: 21 serverless offers more, ok, the key nowhere. A
// catalog refusing the key leaves the run partial with the pod offers, saying why.
func TestRunPodServerlessNeedsAKey(t *testing.T) {
	refuse := false
	rp := providerServer(t, "runpod", func(w http.ResponseWriter, r *http.Request) bool {
		if refuse && r.URL.Path == "/v2/catalog/gpus" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"title": "Unauthorized", "status": 401}`))
			return true
		}
		return false
	})
	vars := map[string]string{"GPUCOST_PROVIDERS_RUNPOD_URL": rp.URL + "/graphql", "GPUCOST_PROVIDERS_RUNPOD_CATALOG_URL": rp.URL + "/v2/catalog/gpus"}
	scrape := func() (int, string) { return runCLIEnv(vars, "scrape", "--dry-run", "--providers", "runpod") }
	if code, out := scrape(); code != exitOK || !strings.Contains(out, "112 offers would be loaded") || strings.Contains(out, "serverless") {
		t.Fatalf("without a key: exit %d, want %d with the 112 pod offers and no serverless one:\n%s", code, exitOK, out)
	}
	vars["GPUCOST_RUNPOD_API_KEY"] = "rp-test-key"
	if code, out := scrape(); code != exitOK || !strings.Contains(out, "133 offers would be loaded") || !strings.Contains(out, "serverless") || strings.Contains(out, "rp-test-key") {
		t.Fatalf("with a key: exit %d, want %d with 133 offers, serverless among them, the key nowhere:\n%s", code, exitOK, out)
	}
	refuse = true
	if code, out := scrape(); code != exitPartial || !strings.Contains(out, "112 offers would be loaded") || !strings.Contains(out, "no serverless prices this run: querying the v2 catalog: the API refused the key") {
		t.Fatalf("a refused key: exit %d, want %d with the pod offers and the reason:\n%s", code, exitPartial, out)
	}
}
