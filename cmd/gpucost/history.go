package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/chart"
	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

const historyHelp = `Print the price history of one GPU model: per bucket (hour, day or week, UTC; weeks start on
Monday), per provider and price type, the min, average, median and max $/GPU-hour, the number of
observations and of distinct offers. Day and week buckets come from the daily rollups
(offers_daily, offers_daily_sums), hour buckets from the raw offers table. The average is the
mean rounded half up to 6 decimals; the median is a t-digest estimate.

--since and --until take a date (2026-01-31), a time (2026-01-31T12:00:00Z, UTC when no zone is
given), "now", or an age such as 90m, 36h, 7d or 2w (before now). The range is [since, until).

The table fits 100 columns, a row per bucket, provider and price type:
  DAY (HOUR, WEEK)     the bucket's start, UTC
  MIN, AVG, MEDIAN, MAX  the price per GPU-hour over the bucket's observations, in dollars
  OBS                  observations in the bucket
  OFFERS               distinct offers among them
--output csv and json hold the same rows with exact prices (6 decimals) and the GPU model;
json is the envelope of /api/v1/history (gpucost.history/v2), its query the range as
understood. gpucost export history writes them as CSV, Parquet or NDJSON files.

--chart FILE.png or FILE.svg also draws the cheapest $/GPU-hour of each provider and price type
per bucket, beside the table (or the CSV or JSON).`

func historyCommand(e env) *cobra.Command {
	var (
		cf                configFlag
		req               selection.Request
		output, chartPath string
		outputCheck       func() error
	)
	cmd := &cobra.Command{
		Use:   "history --gpu MODEL [flags]",
		Short: "price history of one GPU model per hour, day or week, by provider (table, JSON, CSV, chart)",
		Long:  historyHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			q, err := req.History(time.Now())
			if err != nil {
				return err
			}
			if err := outputCheck(); err != nil {
				return err
			}
			if chartPath != "" {
				if err := checkChartPath(chartPath); err != nil {
					return err
				}
			}
			s, err := cf.openStore(ctx, e)
			if err != nil {
				return err
			}
			defer s.Close()
			points, err := s.History(ctx, q)
			if err != nil {
				return err
			}
			if len(points) == 0 {
				fmt.Fprintf(e.stderr, "gpucost history: no observations of %s between %s and %s\n", q.Model(), q.From.Format(time.RFC3339), q.To.Format(time.RFC3339))
			}
			if output == "json" {
				err = export.WriteJSON(e.stdout, export.Envelope[schema.HistoryPoint]{Schema: export.HistorySchema, Query: export.NewHistoryQuery(q), Items: points})
			} else {
				err = export.History(e.stdout, export.Format(output), q.Interval, points)
			}
			if err != nil {
				return fmt.Errorf("writing the output: %w", err)
			}
			if chartPath != "" {
				title := fmt.Sprintf("%s: cheapest $/GPU-hour per %s", q.Model(), q.Interval)
				if err := chart.WriteFile(chartPath, chart.FromHistory(title, q, points)); err != nil {
					return err
				}
				fmt.Fprintf(e.stderr, "gpucost history: chart written to %s\n", chartPath)
			}
			return nil
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&req.GPU, "gpu", "", "canonical GPU model, e.g. H100-SXM-80GB (required)")
	fl.StringVar(&req.Provider, "provider", "", "comma-separated providers (default all)")
	fl.StringVar(&req.PriceType, "price-type", "", "comma-separated price types, e.g. on_demand,spot (default all)")
	fl.StringVar(&req.Since, "since", "30d", "start of the range: a date, a time, or an age like 7d")
	fl.StringVar(&req.Until, "until", "now", "end of the range (exclusive)")
	fl.StringVar(&req.Interval, "interval", "day", "bucket width: hour, day or week")
	completeFlag(cmd, "interval", "hour", "day", "week")
	outputCheck = outputFlag(cmd, &output, "table", "json", "csv")
	fl.StringVar(&chartPath, "chart", "", "also draw a chart to this .png or .svg file")
	must(cmd.MarkFlagFilename("chart", "png", "svg"))
	completeSelection(cmd)
	return cmd
}

func checkChartPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return nil
	}
	return badUsage("--chart %s: the file name must end in .png or .svg", selection.Quote(path))
}
