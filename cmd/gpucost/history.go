package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const historyHelp = `Print the price history of one GPU model: per bucket (hour, day or week, UTC; weeks start on
Monday), per provider and price type, the min, average, median and max $/GPU-hour, the number of
observations and of distinct offers. Day and week buckets come from the daily rollups
(offers_daily, offers_daily_sums), hour buckets from the raw offers table. The average is the
mean rounded half up to 6 decimals; the median is a t-digest estimate.

--since and --until take a date (2026-01-31), a time (2026-01-31T12:00:00Z, UTC when no zone is
given), "now", or an age such as 90m, 36h, 7d or 2w (before now). The range is [since, until).

--chart FILE.png or FILE.svg also draws the cheapest $/GPU-hour of each provider and price type
per bucket.`

func runHistory(ctx context.Context, e env, args []string) int {
	fs := newFlags("history", "--gpu MODEL [flags]", historyHelp)
	fs.withConfig()
	gpu := fs.String("gpu", "", "canonical GPU model, e.g. H100-SXM-80GB (required)")
	provider := fs.String("provider", "", "comma-separated providers (default all)")
	priceType := fs.String("price-type", "", "comma-separated price types: on_demand, spot, reserved, term_1y, term_3y (default all)")
	since := fs.String("since", "30d", "start of the range: a date, a time, or an age like 7d")
	until := fs.String("until", "now", "end of the range (exclusive)")
	interval := fs.String("interval", "day", "bucket width: hour, day or week")
	output := fs.String("output", "table", "table, json or csv")
	chart := fs.String("chart", "", "also draw a chart to this .png or .svg file")
	if code := fs.parse(e, args); code >= 0 {
		return code
	}
	now := time.Now().UTC()
	q, err := historyQueryFromFlags(*gpu, *provider, *priceType, *since, *until, *interval, now)
	if err == nil {
		err = checkOutput(*output)
	}
	if err == nil && *chart != "" {
		err = checkChartPath(*chart)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost history: %v\n", err)
		return exitUsage
	}
	s, code := openStore(ctx, e, fs)
	if code >= 0 {
		return code
	}
	defer s.Close()
	points, err := s.History(ctx, q)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost history: %v\n", err)
		return exitFailed
	}
	if len(points) == 0 {
		fmt.Fprintf(e.stderr, "gpucost history: no observations of %s between %s and %s\n", q.Model(), q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
	}
	if err := writeHistory(e.stdout, *output, q.Interval, points); err != nil {
		fmt.Fprintf(e.stderr, "gpucost history: writing the output: %v\n", err)
		return exitFailed
	}
	if *chart != "" {
		if err := writeHistoryChart(*chart, q, points); err != nil {
			fmt.Fprintf(e.stderr, "gpucost history: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(e.stderr, "gpucost history: chart written to %s\n", *chart)
	}
	return exitOK
}

// historyQueryFromFlags validates the history flags (or API parameters) into a query.
func historyQueryFromFlags(gpu, providers, priceTypes, since, until, interval string, now time.Time) (schema.HistoryQuery, error) {
	var q schema.HistoryQuery
	model, err := lookupGPU(gpu)
	if err != nil {
		return q, err
	}
	q.GPUModels = []string{model}
	if q.Providers, err = parseProviders(providers); err != nil {
		return q, err
	}
	if q.PriceTypes, err = parsePriceTypes(priceTypes); err != nil {
		return q, err
	}
	if q.Interval, err = schema.ParseInterval(interval); err != nil {
		return q, err
	}
	if q.From, q.To, err = parseRange(since, until, now); err != nil {
		return q, err
	}
	if max := maxHistoryRange(q.Interval); q.To.Sub(q.From) > max {
		return q, fmt.Errorf("the range %s to %s is longer than the %d days %s buckets allow: narrow it or use a wider interval",
			q.From.Format(time.RFC3339), q.To.Format(time.RFC3339), int(max.Hours()/24), q.Interval)
	}
	return q, nil
}

// maxHistoryRange bounds a history request so its result stays small: at most ~1,100 buckets.
func maxHistoryRange(i schema.Interval) time.Duration {
	switch i {
	case schema.Hour:
		return 46 * 24 * time.Hour // a month and a half of hours
	case schema.Week:
		return 20 * 366 * 24 * time.Hour
	default:
		return 3 * 366 * 24 * time.Hour
	}
}

// lookupGPU returns the canonical name of a catalog GPU model, or an error naming the unknown
// one and the catalog names that resemble it.
func lookupGPU(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", fmt.Errorf("a GPU model is required, e.g. H100-SXM-80GB")
	}
	if m, ok := gpus.Lookup(name); ok {
		return m.Name, nil
	}
	shown := strconv.Quote(name)
	if len(name) > 64 {
		shown = strconv.Quote(name[:64]) + "…"
	}
	msg := fmt.Sprintf("unknown GPU model %s", shown)
	if like := similarGPUs(name); len(like) > 0 {
		msg += " (did you mean " + strings.Join(like, ", ") + "?)"
	} else {
		msg += " (canonical catalog names look like H100-SXM-80GB or RTX-4090-24GB)"
	}
	return "", fmt.Errorf("%s", msg)
}

// parseGPUs splits a comma-separated list of GPU models and looks each up in the catalog.
func parseGPUs(list string) ([]string, error) {
	var out []string
	for _, g := range splitList(list) {
		model, err := lookupGPU(g)
		if err != nil {
			return nil, err
		}
		out = append(out, model)
	}
	return out, nil
}

func similarGPUs(name string) []string {
	key := strings.ToUpper(strings.NewReplacer(" ", "", "-", "", "_", "").Replace(name))
	if len(key) < 2 || len(key) > 64 {
		return nil
	}
	var out []string
	for _, m := range gpus.Models() {
		flat := strings.ReplaceAll(m.Name, "-", "")
		if strings.Contains(flat, key) || strings.Contains(key, strings.ToUpper(strings.ReplaceAll(m.Family, " ", ""))) {
			out = append(out, m.Name)
		}
		if len(out) == 5 {
			break
		}
	}
	return out
}

// providerName is what a provider (or an import source) may be called.
var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// parseProviders splits a comma-separated provider list and checks each name's spelling: a
// name that could not be a provider is an error, not an empty result.
func parseProviders(list string) ([]string, error) {
	var out []string
	for _, p := range splitList(list) {
		if !providerName.MatchString(p) {
			return nil, fmt.Errorf("invalid provider %s: provider names are lower-case letters, digits, '.', '_' and '-'", quoteShort(p))
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePriceTypes(list string) ([]schema.PriceType, error) {
	var out []schema.PriceType
	for _, p := range splitList(list) {
		pt, err := schema.ParsePriceType(p)
		if err != nil {
			return nil, fmt.Errorf("unknown price type %s (want one of %v)", quoteShort(p), schema.PriceTypes)
		}
		out = append(out, pt)
	}
	return out, nil
}

// quoteShort quotes s for an error message, cut to 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + "…"
	}
	return strconv.Quote(s)
}

// parseRange reads since and until (see parseWhen) and checks that the range is not inverted.
func parseRange(since, until string, now time.Time) (from, to time.Time, err error) {
	if from, err = parseWhen(since, now); err != nil {
		return from, to, fmt.Errorf("since: %w", err)
	}
	if to, err = parseWhen(until, now); err != nil {
		return from, to, fmt.Errorf("until: %w", err)
	}
	if !to.After(from) {
		return from, to, fmt.Errorf("the range is empty or inverted: since %s is not before until %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return from, to, nil
}

var ageRE = regexp.MustCompile(`^(\d{1,6})([mhdw])$`)

// maxAge is the furthest back an age may reach.
const maxAge = 100 * 366 * 24 * time.Hour

// parseWhen reads a point in time, in UTC: "now", an age before now (90m, 36h, 7d, 2w, or any
// Go duration), a date (2026-01-31), or a time (RFC 3339, or 2026-01-31 12:00[:00] in UTC).
func parseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	now = now.UTC()
	if s == "" {
		return time.Time{}, fmt.Errorf("a time is required (a date like 2026-01-31, a time, now, or an age like 7d)")
	}
	if s == "now" {
		return now, nil
	}
	if m := ageRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		if int64(n) > int64(maxAge/unit) {
			return time.Time{}, fmt.Errorf("the age %s reaches back more than 100 years", s)
		}
		return now.Add(-time.Duration(n) * unit), nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 || d > maxAge {
			return time.Time{}, fmt.Errorf("the age %s must be positive and under 100 years", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 2000 || t.Year() > 2200 {
				return time.Time{}, fmt.Errorf("%s is out of range (years 2000 to 2200)", quoteShort(s))
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %s as a time: want a date like 2026-01-31, a time like 2026-01-31T12:00:00Z, now, or an age like 7d", quoteShort(s))
}

func checkOutput(output string) error {
	switch output {
	case "table", "json", "csv":
		return nil
	}
	return fmt.Errorf("--output %s: want table, json or csv", quoteShort(output))
}

func checkChartPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return nil
	}
	return fmt.Errorf("--chart %s: the file name must end in .png or .svg", quoteShort(path))
}

// openStore opens the store of the config; code is -1 on success, else the exit code (the
// error has been printed).
func openStore(ctx context.Context, e env, fs *flags) (s *store.Store, code int) {
	cfg, code := fs.config(e)
	if code >= 0 {
		return nil, code
	}
	s, err := storeFromConfig(ctx, cfg.ClickHouse, newLogger(e))
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost %s: %v\n", fs.Name(), err)
		return nil, exitFailed
	}
	return s, -1
}

var historyHeader = []string{"bucket", "provider", "gpu_model", "price_type", "min_usd_per_gpu_hour", "avg_usd_per_gpu_hour",
	"median_usd_per_gpu_hour", "max_usd_per_gpu_hour", "observations", "offers"}

// bucketLabel formats a bucket start for tables: a date for day and week buckets.
func bucketLabel(t time.Time, i schema.Interval) string {
	if i == schema.Hour {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return t.UTC().Format("2006-01-02")
}

func writeHistory(w io.Writer, output string, interval schema.Interval, points []schema.HistoryPoint) error {
	switch output {
	case "json":
		if points == nil {
			points = []schema.HistoryPoint{}
		}
		return writeIndentedJSON(w, points)
	case "csv":
		cw := textcell.NewCSVWriter(w)
		if err := cw.Write(historyHeader); err != nil {
			return err
		}
		for _, p := range points {
			if err := cw.Write([]string{p.Bucket.UTC().Format(time.RFC3339), p.Provider, p.GPUModel, string(p.PriceType),
				p.Min.StringFixed(schema.PriceDecimals), p.Avg.StringFixed(schema.PriceDecimals), p.Median.StringFixed(schema.PriceDecimals), p.Max.StringFixed(schema.PriceDecimals),
				strconv.FormatUint(p.Observations, 10), strconv.FormatUint(p.Offers, 10)}); err != nil {
				return err
			}
		}
		return cw.Flush()
	default:
		t := textcell.NewTable(w, textcell.NameWidth)
		t.Row("BUCKET", "PROVIDER", "PRICE TYPE", "MIN $/GPU-H", "AVG", "MEDIAN", "MAX", "OBS", "OFFERS", "")
		for _, p := range points {
			t.Row(bucketLabel(p.Bucket, interval), p.Provider, string(p.PriceType),
				p.Min.StringFixed(4), p.Avg.StringFixed(4), p.Median.StringFixed(4), p.Max.StringFixed(4),
				strconv.FormatUint(p.Observations, 10), strconv.FormatUint(p.Offers, 10), "")
		}
		return t.Flush()
	}
}
