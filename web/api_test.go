package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

// refusingStore fails the test on any query: bad requests must be answered before the store.
type refusingStore struct{ t *testing.T }

func (s refusingStore) LatestOffers(context.Context, schema.OfferFilter) ([]schema.Offer, error) {
	s.t.Error("a bad request reached the store (LatestOffers)")
	return nil, errors.New("refused")
}

func (s refusingStore) LatestPerGPU(context.Context, schema.OfferFilter) ([]market.GPU, error) {
	s.t.Error("a bad request reached the store (LatestPerGPU)")
	return nil, errors.New("refused")
}

func (s refusingStore) History(context.Context, schema.HistoryQuery) ([]schema.HistoryPoint, error) {
	s.t.Error("a bad request reached the store (History)")
	return nil, errors.New("refused")
}

func (s refusingStore) Changes(context.Context, schema.ChangesQuery) ([]schema.PriceChange, error) {
	s.t.Error("a bad request reached the store (Changes)")
	return nil, errors.New("refused")
}

func (s refusingStore) LatestPlan(context.Context) ([]schema.PlanRow, error) {
	s.t.Error("a bad request reached the store (LatestPlan)")
	return nil, errors.New("refused")
}

// testAnalytics is the API and the dashboard on the stores st returns, with serve's default
// gate and a dashboard rebuilt on every request; the gate's liveness check opens the store.
func testAnalytics(st func(context.Context) (Reader, error)) http.Handler {
	gate := newStoreGate(5, 10*time.Second, func(ctx context.Context) error { _, err := st(ctx); return err }, storeErrors)
	mux := http.NewServeMux()
	newAnalytics(st, gate, time.Nanosecond, time.Now, slog.New(slog.DiscardHandler)).mount(mux)
	return mux
}

func TestAPIBadInput(t *testing.T) {
	h := testAnalytics(func(context.Context) (Reader, error) { return refusingStore{t}, nil })
	long := strings.Repeat("A", 300)
	tests := []struct {
		name      string
		target    string
		wantErr   string
		wantParam string
	}{
		{"unknown GPU", "/api/v1/history?gpu=H1000", `unknown GPU model "H1000"`, "gpu"},
		{"no GPU", "/api/v1/history", "a GPU model is required", "gpu"},
		{"unknown GPU in offers", "/api/v1/offers?gpu=H100-SXM-80GB,B9000", `unknown GPU model "B9000"`, "gpu"},
		{"unknown GPU in changes", "/api/v1/changes?gpu=quantum", `unknown GPU model "quantum"`, "gpu"},
		{"SQL in the GPU", "/api/v1/history?gpu=" + url.QueryEscape("H100-SXM-80GB'; DROP TABLE offers; --"), `unknown GPU model "H100-SXM-80GB'; DROP TABLE offers; --"`, "gpu"},
		{"SQL in a provider", "/api/v1/offers?provider=" + url.QueryEscape("vastai' OR 1=1 --"), `invalid provider "vastai' OR 1=1 --"`, "provider"},
		{"SQL in a price type", "/api/v1/changes?price_type=" + url.QueryEscape("spot) OR (1=1"), `unknown price type "spot) OR (1=1"`, "price_type"},
		{"SQL in a limit", "/api/v1/offers?limit=" + url.QueryEscape("10; DROP TABLE offers"), `"10; DROP TABLE offers" is not a whole number between 1 and 1000`, "limit"},
		{"SQL in a date", "/api/v1/changes?since=" + url.QueryEscape("now() - INTERVAL 1 DAY"), `since: cannot read "now() - INTERVAL 1 DAY"`, "since"},
		{"SQL as a parameter name", "/api/v1/offers?" + url.QueryEscape("1=1; DROP TABLE offers") + "=x", `unknown parameter`, "1=1; DROP TABLE offers"},
		{"inverted dates", "/api/v1/history?gpu=H100-SXM-80GB&since=2026-02-01&until=2026-01-01", "the range is empty or inverted: since 2026-02-01T00:00:00Z is not before until 2026-01-01T00:00:00Z", "until"},
		{"inverted dates in changes", "/api/v1/changes?since=1d&until=2d", "empty or inverted", "until"},
		{"a year of hours", "/api/v1/history?gpu=H100-SXM-80GB&interval=hour&since=365d", "longer than the 46 days hour buckets allow", "since"},
		{"decades of days", "/api/v1/history?gpu=H100-SXM-80GB&since=2000-01-01&until=2026-01-01", "longer than the 1098 days day buckets allow", "since"},
		{"a year of changes", "/api/v1/changes?since=365d", "longer than 92 days", "since"},
		{"an age beyond 100 years", "/api/v1/changes?since=99999w", "more than 100 years", "since"},
		{"a huge limit", "/api/v1/changes?limit=1000000", "between 1 and 1000", "limit"},
		{"a zero limit", "/api/v1/offers?limit=0", "between 1 and 1000", "limit"},
		{"NaN percent", "/api/v1/changes?min_pct=NaN", `"NaN" is not a number between 0 and 1e+06`, "min_pct"},
		{"negative VRAM", "/api/v1/offers?min_vram=-80", "is not a number between 0 and 10000", "min_vram"},
		{"bad max age", "/api/v1/offers?max_age=5000d", "is not an age between 1m and 366d", "max_age"},
		{"zero max age", "/api/v1/offers?max_age=0s", "is not an age between", "max_age"},
		{"bad interval", "/api/v1/history?gpu=H100-SXM-80GB&interval=month", `"month": want hour, day or week`, "interval"},
		{"unknown parameter", "/api/v1/history?gpu=H100-SXM-80GB&format=csv", "unknown parameter (this endpoint takes gpu, provider, price_type, since, until, interval)", "format"},
		{"a parameter twice", "/api/v1/offers?gpu=H100-SXM-80GB&gpu=A100-SXM-80GB", "given more than once", "gpu"},
		{"a long value", "/api/v1/offers?gpu=" + long, "longer than 256 bytes", "gpu"},
		{"a long query", "/api/v1/offers?" + strings.Repeat("gpu=H100&", 300), "the query string is longer than 2048 bytes", ""},
		{"a malformed query", "/api/v1/offers?gpu=%zz", "the query string is malformed", ""},
		{"value at an unrated precision", "/api/v1/value?precision=int4", `unknown precision "int4" (want one of fp32, tf32, fp16, bf16, fp8, int8, fp4)`, "precision"},
		{"value of two price types", "/api/v1/value?price_type=on_demand,spot", `unknown price type "on_demand,spot"`, "price_type"},
		{"SQL in a value's price type", "/api/v1/value?price_type=" + url.QueryEscape("spot' OR 1=1 --"), `unknown price type "spot' OR 1=1 --"`, "price_type"},
		{"value of one GPU", "/api/v1/value?gpu=H100-SXM-80GB", "unknown parameter (this endpoint takes price_type, precision, max_age)", "gpu"},
		{"value with a zero max age", "/api/v1/value?max_age=0s", "is not an age between", "max_age"},
		{"a cursor that is not base64", "/api/v1/offers?cursor=" + url.QueryEscape("not a cursor!"), "not a cursor of this endpoint", "cursor"},
		{"a cursor that is not JSON", "/api/v1/changes?cursor=" + base64.RawURLEncoding.EncodeToString([]byte("SELECT 1")), "not a cursor of this endpoint", "cursor"},
		{"a cursor with a filter", "/api/v1/offers?gpu=H100-SXM-80GB&cursor=" + offersCursor, "a request with a cursor takes only limit", "gpu"},
		{"a cursor with a bad limit", "/api/v1/offers?limit=5000&cursor=" + offersCursor, "between 1 and 1000", "limit"},
		{"an offers cursor for changes", "/api/v1/changes?cursor=" + offersCursor, "the cursor's position is not a price change's", "cursor"},
		{"a cursor with SQL in its query", "/api/v1/offers?cursor=" + encodeCursor(url.Values{"provider": {"x' OR 1=1 --"}}, offerPosition{Price: "1", PriceType: "spot"}),
			`invalid provider "x' OR 1=1 --"`, "provider"},
		{"a cursor with an unknown parameter", "/api/v1/offers?cursor=" + encodeCursor(url.Values{"format": {"csv"}}, offerPosition{Price: "1", PriceType: "spot"}),
			"unknown parameter in the cursor", "cursor"},
		{"a cursor with a negative price", "/api/v1/offers?cursor=" + encodeCursor(url.Values{}, offerPosition{Price: "-1", PriceType: "spot"}), "not an offer's", "cursor"},
		{"a long cursor", "/api/v1/offers?cursor=" + strings.Repeat("A", apiMaxCursorBytes*2), "the query string is longer than 2048 bytes", ""},
		{"a team with a control character", "/api/v1/plans?team=" + url.QueryEscape("ml\x1b[31m"), "control character", "team"},
		{"the catalog with a parameter", "/api/v1/gpus?gpu=H100", "unknown parameter (this endpoint takes )", "gpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
			if rec.Code != http.StatusBadRequest {
				t.Errorf("status %d, want 400; body %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			var body apiError
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body is not JSON: %v: %s", err, rec.Body)
			}
			if !strings.Contains(body.Error, tt.wantErr) {
				t.Errorf("error %q does not contain %q", body.Error, tt.wantErr)
			}
			if body.Parameter != tt.wantParam {
				t.Errorf("parameter %q, want %q", body.Parameter, tt.wantParam)
			}
		})
	}
	// Every other status is a JSON error too.
	for _, tt := range []struct {
		method, target string
		status         int
		wantErr, allow string
	}{
		{http.MethodPost, "/api/v1/offers", http.StatusMethodNotAllowed, "POST is not allowed on /api/v1/offers: it answers GET and HEAD", "GET, HEAD"},
		{http.MethodDelete, "/api/v1/plans", http.StatusMethodNotAllowed, "DELETE is not allowed", "GET, HEAD"},
		{http.MethodPut, "/", http.StatusMethodNotAllowed, "PUT is not allowed on /", "GET, HEAD"},
		{http.MethodGet, "/api/v1/offer", http.StatusNotFound, `no such path: "/api/v1/offer" (the API's paths are listed in /api/v1/openapi.json)`, ""},
		{http.MethodGet, "/api/v2/offers", http.StatusNotFound, "no such path", ""},
		{http.MethodGet, "/favicon.ico", http.StatusNotFound, "no such path", ""},
		{http.MethodGet, "/static/", http.StatusNotFound, `no such path: "/static/"`, ""},
		{http.MethodGet, "/static/nothing.js", http.StatusNotFound, "no such path", ""},
		{http.MethodGet, "/" + url.PathEscape("<script>alert(1)</script>"), http.StatusNotFound, `no such path: "/<script>alert(1)</script>"`, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.target, nil))
		var body apiError
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != tt.status || body.Status != tt.status ||
			!strings.Contains(body.Error, tt.wantErr) || rec.Header().Get("Allow") != tt.allow || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %s %q (Allow %q), want %d with %q in JSON (Allow %q)", tt.method, tt.target, rec.Code,
				rec.Header().Get("Content-Type"), rec.Body, rec.Header().Get("Allow"), tt.status, tt.wantErr, tt.allow)
		}
	}
}

// offersCursor is a well-formed offers cursor, of the market's cheapest H100s.
var offersCursor = encodeCursor(url.Values{"gpu": {"H100-SXM-80GB"}, "limit": {"10"}},
	offerPosition{Price: "1.95", Provider: "vastai", OfferID: "ask-102", PriceType: "on_demand"})

func TestAPIStoreDownIs503WithoutDetails(t *testing.T) {
	h := testAnalytics(func(context.Context) (Reader, error) {
		return nil, errors.New("connecting to ClickHouse at 10.1.2.3:9000: secret detail")
	})
	for _, target := range []string{"/api/v1/offers", "/api/v1/history?gpu=H100-SXM-80GB", "/api/v1/changes", "/api/v1/value", "/api/v1/plans", "/"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s: status %d, want 503", target, rec.Code)
		}
		if strings.Contains(rec.Body.String(), "secret detail") || strings.Contains(rec.Body.String(), "10.1.2.3") {
			t.Errorf("%s: the response shows the store's error: %s", target, rec.Body)
		}
	}
}

// TestAPIMatchesHandComputation serves the API through gpucost serve's own handler, on the
// generated history.
func TestAPIMatchesHandComputation(t *testing.T) {
	fx := storetest.NewHistory(t)
	ts := httptest.NewServer(testHandler(t, fx.Store))
	defer ts.Close()
	decEq := cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })

	t.Run("history", func(t *testing.T) {
		for _, iv := range []schema.Interval{schema.Day, schema.Week} {
			q := url.Values{"gpu": {"h100-sxm-80gb"}, "interval": {string(iv)}, "since": {fx.Start.Format(time.RFC3339)}, "until": {fx.End.Format(time.RFC3339)}, "provider": {"vastai,runpod"}}
			got := getEnvelope[schema.HistoryPoint](t, ts, "/api/v1/history?"+q.Encode())
			echo := queryOf[export.HistoryQuery](t, got.Query)
			wantEcho := export.HistoryQuery{GPU: "H100-SXM-80GB", Provider: []string{"vastai", "runpod"}, PriceType: []schema.PriceType{}, Since: fx.Start, Until: fx.End, Interval: iv}
			if diff := cmp.Diff(wantEcho, echo); diff != "" || got.Schema.String() != "gpucost.history/v2" || got.Truncated || got.Next != "" {
				t.Errorf("%s: %s, truncated %v, next %q, the query as understood (-want +got):\n%s", iv, got.Schema, got.Truncated, got.Next, diff)
			}
			storetest.HistoryMatches(t, fx.HandHistory("H100-SXM-80GB", []string{"vastai", "runpod"}, iv, fx.Start, fx.End), got.Items)
		}
	})
	t.Run("changes", func(t *testing.T) {
		got := getEnvelope[schema.PriceChange](t, ts, "/api/v1/changes?since=60d&gpu=A100-SXM-80GB,RTX-4090-24GB&limit=1000")
		var want []schema.PriceChange
		for _, m := range fx.Moves {
			if m.GPUModel != "H100-SXM-80GB" {
				want = append(want, m)
			}
		}
		storetest.SortNewestFirst(want)
		if diff := cmp.Diff(want, got.Items, decEq); diff != "" {
			t.Errorf("changes (-generated +api):\n%s", diff)
		}
		if got.Truncated || got.Next != "" || got.Schema.String() != "gpucost.changes/v2" {
			t.Errorf("%s: truncated %v, next %q, want the whole list", got.Schema, got.Truncated, got.Next)
		}
		limited := getEnvelope[schema.PriceChange](t, ts, "/api/v1/changes?since=60d&limit=3")
		if len(limited.Items) != 3 || !limited.Truncated || limited.Next == "" {
			t.Errorf("limit 3: %d changes, truncated %v, next %q", len(limited.Items), limited.Truncated, limited.Next)
		}
	})
	t.Run("offers", func(t *testing.T) {
		// The newest observation of each generated offer, cheapest first.
		latest := map[schema.Key]schema.Offer{}
		for _, o := range fx.Offers {
			if l, ok := latest[o.Key()]; !ok || o.ObservedAt.After(l.ObservedAt) {
				latest[o.Key()] = o
			}
		}
		var want []string
		for _, o := range latest {
			if o.GPUModel == "H100-SXM-80GB" {
				want = append(want, o.PriceUSDPerGPUHour.StringFixed(2)+" "+o.Provider+" "+o.OfferID+" "+string(o.PriceType))
			}
		}
		sort.Strings(want) // prices have the same width here, so this is cheapest first with the store's ties
		got := getEnvelope[schema.Offer](t, ts, "/api/v1/offers?gpu=H100-SXM-80GB&max_age=1d")
		var gotKeys []string
		for _, o := range got.Items {
			gotKeys = append(gotKeys, o.PriceUSDPerGPUHour.StringFixed(2)+" "+o.Provider+" "+o.OfferID+" "+string(o.PriceType))
		}
		if diff := cmp.Diff(want, gotKeys); diff != "" {
			t.Errorf("offers (-generated +api):\n%s", diff)
		}
		two := getEnvelope[schema.Offer](t, ts, "/api/v1/offers?limit=2")
		echo := queryOf[export.OffersQuery](t, two.Query)
		wantEcho := export.OffersQuery{GPU: []string{}, Provider: []string{}, PriceType: []schema.PriceType{}, MaxAge: "6h", Limit: 2}
		if diff := cmp.Diff(wantEcho, echo); diff != "" || len(two.Items) != 2 || !two.Truncated || two.Next == "" {
			t.Errorf("limit 2: %d offers, truncated %v, next %q, the query as understood (-want +got):\n%s", len(two.Items), two.Truncated, two.Next, diff)
		}
	})
	t.Run("value", func(t *testing.T) {
		// The generated market now (its last step, 111): H100 on demand at vastai's $1.95 (8×),
		// RTX 4090 at $0.35, A100 at lambda's $1.29 after its cut; the H100's spot price is
		// runpod's $1.75. Each over the catalog's dense BF16 rate: 989, 165.2 and 312 TFLOPS.
		got := getEnvelope[market.Value](t, ts, "/api/v1/value?max_age=1d")
		var ranked []string
		for _, v := range got.Items {
			ranked = append(ranked, fmt.Sprintf("%s %s %s %s %v", v.GPUModel, v.Provider, v.PriceUSDPerGPUHour.StringFixed(2), v.USDPerTFLOPHour, v.FP8))
		}
		want := []string{
			"H100-SXM-80GB vastai 1.95 0.00197169 0.00098535", // 1.95 / 989; 1.95 / 1979
			"RTX-4090-24GB vastai 0.35 0.00211864 0.00106061", // 0.35 / 165.2; 0.35 / 330
			"A100-SXM-80GB lambda 1.29 0.00413462 <nil>",      // 1.29 / 312; no FP8
		}
		if diff := cmp.Diff(want, ranked); diff != "" || queryOf[export.ValueQuery](t, got.Query) != (export.ValueQuery{PriceType: "on_demand", Precision: "bf16", MaxAge: "1d"}) {
			t.Errorf("value as asked by %s (-hand +api):\n%s", got.Query, diff)
		}
		spot := getEnvelope[market.Value](t, ts, "/api/v1/value?price_type=spot&precision=fp4&max_age=1d")
		if len(spot.Items) != 1 || spot.Items[0].OfferID != "NVIDIA H100 80GB HBM3/secure" || spot.Items[0].RunsAt != "fp16" || spot.Items[0].USDPerTFLOPHour.String() != "0.00176946" {
			t.Errorf("spot at fp4: %+v, want the H100 at runpod's 1.75 / 989 TFLOPS FP16 (no FP4 on Hopper)", spot)
		}
		none := getEnvelope[market.Value](t, ts, "/api/v1/value?price_type=commitment&max_age=1d")
		if len(none.Items) != 0 || queryOf[export.ValueQuery](t, none.Query) != (export.ValueQuery{PriceType: "commitment", Precision: "bf16", MaxAge: "1d"}) {
			t.Errorf("no commitments in the market: %+v", none)
		}
	})
}

// queryOf reads the query of an envelope read back (a json.RawMessage) as a T.
func queryOf[T any](t *testing.T, query any) T {
	t.Helper()
	var q T
	raw, ok := query.(json.RawMessage)
	if !ok {
		t.Fatalf("the query %v is not raw JSON", query)
	}
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatalf("the query %s: %v", raw, err)
	}
	return q
}
