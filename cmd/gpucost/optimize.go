package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const optimizeHelp = `Plan every team's workloads on today's offers: for each workload, the cheapest provider, GPU,
count and price type that fits its memory, interconnect and interruption needs, priced per unit
of finished work, and the monthly savings against what it runs on now. The plan is printed and
stored in the plans table (one row per workload per run), so savings can be followed over time.

Offers are the newest observation of each offer, scraped or imported. A price holds until its
valid_until (an imported table may give one), else for optimize.options.max_offer_age_hours
(24 by default) after it was observed; older offers are left out, a provider with none that
holds is reported as excluded, and when age is why nothing fits the reason says so. Every
assumption of the plan is an option in optimize.options (gpucost config print shows them). A
workload nothing fits is reported with the reason, not an error.`

func runOptimize(ctx context.Context, e env, args []string) error {
	fs := newFlags("optimize", "[flags]", optimizeHelp)
	fs.withConfig()
	workloads := fs.String("workloads", "", "workloads file (default optimize.workloads)")
	output := fs.String("output", "table", "table, json, csv or markdown")
	noStore := fs.Bool("no-store", false, "print the plan without storing it")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	switch *output {
	case "table", "json", "csv", "markdown":
	default:
		return badUsage("--output %q: want table, json, csv or markdown", *output)
	}
	cfg, err := fs.config(e)
	if err != nil {
		return err
	}
	if *workloads != "" {
		cfg.Optimize.Workloads = *workloads
	}
	plan, err := optimizeOnce(ctx, cfg, newLogger(e), !*noStore)
	if err != nil {
		return err
	}
	return writePlan(e.stdout, plan, *output)
}

// optimizeOnce reads the workloads and today's offers, plans, and stores the plan when storePlan
// is set.
func optimizeOnce(ctx context.Context, cfg config.Config, logger *slog.Logger, storePlan bool) (*optimizer.Plan, error) {
	wl, err := plans.ReadWorkloads(cfg.Optimize.Workloads)
	if err != nil {
		return nil, err
	}
	s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Second)
	today, err := plans.Make(ctx, s, cfg.Optimize.Workloads, wl, cfg.Optimize.Options, now)
	if err != nil {
		return nil, err
	}
	if storePlan {
		if err := plans.Save(ctx, s, today.Plan, now); err != nil {
			return today.Plan, err
		}
	}
	return today.Plan, nil
}

func writePlan(w io.Writer, plan *optimizer.Plan, format string) error {
	switch format {
	case "json":
		return export.WriteJSON(w, plan)
	case "csv":
		return writePlanCSV(w, plan.Rows(""))
	case "markdown":
		return writePlanMarkdown(w, plan)
	}
	return writePlanTable(w, plan)
}

func money(d *decimal.Decimal) string {
	if d == nil {
		return "-"
	}
	return "$" + d.StringFixed(2)
}

func pct(d *decimal.Decimal) string {
	if d == nil {
		return "-"
	}
	return d.StringFixed(1) + "%"
}

func placement(provider, model string, count int, pt schema.PriceType) string {
	if provider == "" {
		return "-"
	}
	return fmt.Sprintf("%s %s×%d %s", provider, model, count, pt)
}

// writePlanTable writes the plan as a terminal table; names and reasons pass textcell.
func writePlanTable(w io.Writer, plan *optimizer.Plan) error {
	rows := plan.Rows("")
	tb := textcell.NewTable(w, textcell.NameWidth)
	tb.Row("TEAM", "WORKLOAD", "NOW", "$/MONTH", "RECOMMENDED", "$/MONTH", "SAVES", "%")
	for _, r := range rows {
		rec := placement(r.RecProvider, r.RecGPUModel, r.RecGPUCount, r.RecPriceType)
		if r.Status != "ok" {
			rec = "nothing fits: " + textcell.Clean(r.Reason, 60)
		}
		tb.Row(textcell.Clean(r.Team, 40), textcell.Clean(r.Workload, 40),
			placement(r.CurrentProvider, r.CurrentGPUModel, r.CurrentGPUCount, r.CurrentPriceType), money(r.CurrentUSDPerMonth),
			rec, money(r.RecUSDPerMonth), money(r.SavingsUSDPerMonth), pct(r.SavingsPercent))
	}
	if err := tb.Flush(); err != nil {
		return err
	}
	t := plan.Totals
	fmt.Fprintf(w, "\norganisation: %d workloads, now %s/month, recommended %s/month, saves %s/month (%s)\n",
		t.Workloads, money(&t.CurrentUSDPerMonth), money(&t.RecommendedUSDPerMonth), money(&t.SavingsUSDPerMonth), pct(t.SavingsPercent))
	for _, x := range plan.ExcludedProviders {
		if _, err := fmt.Fprintf(w, "excluded provider %s: %s\n", textcell.Clean(x.Provider, textcell.NameWidth), textcell.Clean(x.Reason, textcell.TextWidth)); err != nil {
			return err
		}
	}
	return nil
}

// writePlanMarkdown writes the plan as a Markdown table; cells are cleaned and escaped by
// textcell, so no text adds a cell or a line or runs as HTML.
func writePlanMarkdown(w io.Writer, plan *optimizer.Plan) error {
	esc := func(s string) string { return textcell.Markdown(textcell.Clean(s, textcell.TextWidth)) }
	fmt.Fprintln(w, "| Team | Workload | Now | $/month | Recommended | $/month | Saves | % |")
	fmt.Fprintln(w, "|---|---|---|--:|---|--:|--:|--:|")
	for _, r := range plan.Rows("") {
		rec := placement(r.RecProvider, r.RecGPUModel, r.RecGPUCount, r.RecPriceType)
		if r.Status != "ok" {
			rec = "nothing fits: " + r.Reason
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", esc(r.Team), esc(r.Workload),
			esc(placement(r.CurrentProvider, r.CurrentGPUModel, r.CurrentGPUCount, r.CurrentPriceType)), money(r.CurrentUSDPerMonth),
			esc(rec), money(r.RecUSDPerMonth), money(r.SavingsUSDPerMonth), pct(r.SavingsPercent))
	}
	t := plan.Totals
	_, err := fmt.Fprintf(w, "\n**Organisation:** %d workloads, now %s/month, recommended %s/month, saves %s/month (%s).\n",
		t.Workloads, money(&t.CurrentUSDPerMonth), money(&t.RecommendedUSDPerMonth), money(&t.SavingsUSDPerMonth), pct(t.SavingsPercent))
	return err
}

func writePlanCSV(w io.Writer, rows []schema.PlanRow) error {
	cw := textcell.NewCSVWriter(w)
	err := cw.Write([]string{"team", "workload", "kind", "status", "reason", "current_provider", "current_gpu_model", "current_gpu_count",
		"current_price_type", "current_usd_per_month", "recommended_provider", "recommended_region", "recommended_gpu_model",
		"recommended_gpu_count", "recommended_price_type", "recommended_usd_per_hour", "recommended_usd_per_month",
		"savings_usd_per_month", "savings_percent"})
	num := func(d *decimal.Decimal) string {
		if d == nil {
			return ""
		}
		return d.String()
	}
	for _, r := range rows {
		if err != nil {
			return err
		}
		err = cw.Write([]string{r.Team, r.Workload, r.Kind, r.Status, r.Reason, r.CurrentProvider, r.CurrentGPUModel, strconv.Itoa(r.CurrentGPUCount),
			string(r.CurrentPriceType), num(r.CurrentUSDPerMonth), r.RecProvider, r.RecRegion, r.RecGPUModel,
			strconv.Itoa(r.RecGPUCount), string(r.RecPriceType), num(r.RecUSDPerHour), num(r.RecUSDPerMonth),
			num(r.SavingsUSDPerMonth), num(r.SavingsPercent)})
	}
	if err != nil {
		return err
	}
	return cw.Flush()
}
