package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/store"
)

// storeErrors sorts the store's errors as gpucost serve does.
var storeErrors = StoreErrors{Busy: store.Busy, Refused: store.Refused, Unreachable: store.Unreachable}

// testHandler is the whole HTTP side on st, with the settings of gpucost serve's default
// configuration (config/gpucost.yaml).
func testHandler(t *testing.T, st Store) http.Handler {
	t.Helper()
	return New(Config{
		Open:             func(context.Context) (Store, error) { return st, nil },
		Errors:           storeErrors,
		Registry:         prometheus.NewRegistry(),
		Providers:        config.ProviderNames,
		StaleAfter:       3 * time.Hour,
		QueryTimeout:     10 * time.Second,
		MaxQueries:       5,
		DashboardRefresh: time.Minute,
	})
}
