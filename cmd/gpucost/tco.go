package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
)

const tcoHelp = `Weigh owning GPUs against renting them: what buying them costs, a month of owning them
(depreciation, power, cooling, colocation, operations, network and storage) beside a month of
renting, what an hour of one GPU's work costs each way, and when the purchase has paid for
itself. Owning pays when the purchase is paid back within the write-off period and a month
costs less owned than rented. docs/economics.md §2 and §3 give every formula.

Without --gpu: plan every team's workloads as gpucost optimize --no-store does (nothing is
stored) and, for each workload whose recommended GPU has a purchase price in the catalog
(gpucost gpus --output json), weigh buying the recommended GPUs against the recommended rental
as it is billed. Each GPU works the workload's hours at its utilization (a job the hours of its
runs); an instance that stays up while idle is paid every hour, so owning saves all of it.
Below the table, each workload owning does not pay for says why.

With --gpu: a calculator for one GPU model, counted as the buying guides count it. The GPUs are
busy --hours-per-month × --utilization hours a month, rented by the hour for those hours only,
at --rent dollars per GPU-hour (default: today's cheapest on-demand offer of the model in the
store), or bought at --purchase dollars per GPU (default: the catalog's price). The guides'
H100, bought for $25,000 and rented at $3.15 an hour, busy 60% of the month:

  gpucost tco --gpu H100-SXM-80GB --rent 3.15 --utilization 60%

breaks even after 25,000 ÷ 3.15 = 7,937 busy hours, 18.1 months, when running costs are left out
as the guides do (electricity and operations 0); with the default running costs after 8,217
hours, 18.8 months.

Running costs, the write-off period, the point of a purchase range and the residual value are
optimize.options.ownership (gpucost config print shows them; GPUCOST_OPTIMIZE_OPTIONS_OWNERSHIP_*
overrides each). --output table, json or csv: csv a row per workload (the calculator's one row
has no team or workload); json the same rows in an envelope (gpucost.tco/v1) whose query is the
workloads file planned, or the calculator's GPU, count, utilization, hours, rent and purchase
as understood (rent_usd_per_gpu_hour today's price when --rent is not given; a null
purchase_usd_per_gpu is the catalog's).`

// calculatorFlags are the flags of the calculator: given without --gpu they are an error.
var calculatorFlags = []string{"count", "utilization", "hours-per-month", "rent", "purchase"}

func tcoCommand(e env) *cobra.Command {
	var (
		cf                                configFlag
		workloads, gpu, utilization, rent string
		purchase, output                  string
		count                             int
		hours                             float64
		outputCheck                       func() error
	)
	cmd := &cobra.Command{
		Use:   "tco [--workloads FILE] | --gpu MODEL [--count N] [--utilization 60%] [--hours-per-month H] [--rent USD] [--purchase USD]",
		Short: "rent or buy: each workload's rental against owning its GPUs, or one GPU's break-even",
		Long:  tcoHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := outputCheck(); err != nil {
				return err
			}
			format := tcoFormats[output]
			if gpu == "" {
				for _, name := range calculatorFlags {
					if cmd.Flags().Changed(name) {
						return badUsage("--%s is a flag of the calculator: give --gpu too", name)
					}
				}
			} else if workloads != "" {
				return badUsage("--workloads plans the workloads, --gpu weighs one GPU model: give one of them")
			}
			cfg, err := cf.load(e)
			if err != nil {
				return err
			}
			logger := newLogger(e.stderr, cfg.Log)
			if gpu == "" {
				useWorkloads(e, &cfg, "tco", workloads)
				plan, err := optimizeOnce(ctx, cfg, e, logger, false)
				if err != nil {
					return err
				}
				if output == "json" {
					return writeTCO(e, tcoWorkloads{Workloads: plans.Source(cfg.Optimize.Workloads)}, report.OwnershipRows(plan))
				}
				return report.WriteOwnership(e.stdout, plan, format)
			}

			opts := cfg.Optimize.Options
			calc, err := readCalculator(gpu, count, utilization, hours, purchase, opts)
			if err != nil {
				return err
			}
			perGPUHour, basis, err := rentOf(ctx, cfg.ClickHouse, logger, calc.model, rent, opts)
			if err != nil {
				return err
			}
			q := optimizer.RentedByTheHour(calc.model, calc.count, calc.hours, calc.utilization, perGPUHour, calc.purchase)
			if basis != "" {
				q.RentBasis += ": " + basis
			}
			c, err := opts.Own(q)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeTCO(e, tcoCalculator{GPU: calc.model, Count: calc.count, Utilization: calc.utilization, HoursPerMonth: calc.hours,
					RentUSDPerGPUHour: perGPUHour, PurchaseUSDPerGPU: calc.purchase}, []report.OwnershipRow{{Ownership: c}})
			}
			return report.WriteOwnershipCase(e.stdout, c, format)
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&workloads, "workloads", "", "workloads file (default optimize.workloads)")
	must(cmd.MarkFlagFilename("workloads", "yaml", "yml"))
	fl.StringVar(&gpu, "gpu", "", "calculator: a catalog GPU model, e.g. H100-SXM-80GB")
	fl.IntVar(&count, "count", 1, "calculator: how many GPUs")
	fl.StringVar(&utilization, "utilization", "100%", "calculator: the share of the hours the GPUs are busy (0.6 or 60%)")
	fl.Float64Var(&hours, "hours-per-month", 0, "calculator: hours a month the GPUs are wanted (default optimize.options.hours_per_month)")
	fl.StringVar(&rent, "rent", "", "calculator: USD per GPU-hour rented (default today's cheapest on-demand offer in the store)")
	fl.StringVar(&purchase, "purchase", "", "calculator: USD per GPU bought (default the catalog's price)")
	outputCheck = outputFlag(cmd, &output, "table", "json", "csv")
	completeSelection(cmd)
	return cmd
}

// tcoWorkloads is what gpucost tco --output json echoes of a plan's rent-or-buy: the workloads
// planned.
type tcoWorkloads struct {
	Workloads string `json:"workloads"` // the file, or plans.SampleName
}

// tcoCalculator is what gpucost tco --gpu --output json echoes of the calculator's question.
type tcoCalculator struct {
	GPU               string           `json:"gpu"`
	Count             int              `json:"count"`
	Utilization       float64          `json:"utilization"` // a share: 0.6 for 60%
	HoursPerMonth     float64          `json:"hours_per_month"`
	RentUSDPerGPUHour decimal.Decimal  `json:"rent_usd_per_gpu_hour"` // --rent, or today's cheapest on-demand price
	PurchaseUSDPerGPU *decimal.Decimal `json:"purchase_usd_per_gpu"`  // --purchase; null: the catalog's price
}

// writeTCO writes rent-or-buy rows as JSON: an envelope of export.TCOSchema echoing query.
func writeTCO(e env, query any, rows []report.OwnershipRow) error {
	return export.WriteJSON(e.stdout, export.Envelope[report.OwnershipRow]{Schema: export.TCOSchema, Query: query, Items: rows})
}

// calculator is the calculator's question as its flags (but --rent) give it.
type calculator struct {
	model              string
	count              int
	hours, utilization float64
	purchase           *decimal.Decimal // nil: the catalog's price
}

// readCalculator checks the calculator's flags but --rent.
func readCalculator(gpu string, count int, utilization string, hours float64, purchase string, opts optimizer.Options) (calculator, error) {
	c := calculator{count: count, hours: hours}
	var err error
	if c.model, err = selection.GPU(gpu); err != nil {
		return c, badUsage("--gpu: %v", err)
	}
	if count < 1 || count > 100_000 {
		return c, badUsage("--count %d: want 1 to 100000 GPUs", count)
	}
	if c.utilization, err = optimizer.ParseUtilization(utilization); err != nil {
		return c, badUsage("--utilization: %v", err)
	}
	if c.hours == 0 {
		c.hours = opts.HoursPerMonth
	}
	if !(c.hours > 0 && c.hours <= 744) {
		return c, badUsage("--hours-per-month %v: want more than 0 and at most 744 (a month of 31 days)", hours)
	}
	if purchase != "" {
		p, err := positiveUSD("purchase", purchase, "dollars per GPU, e.g. 25000")
		if err != nil {
			return c, err
		}
		c.purchase = &p
	} else if _, ok := gpus.PurchaseOf(c.model); !ok {
		return c, badUsage("--gpu %s: the catalog has no purchase price for it: give --purchase", c.model)
	}
	return c, nil
}

// rentOf is the rent of one GPU-hour: --rent when given, else today's cheapest on-demand offer
// of model in the store, with where it comes from.
func rentOf(ctx context.Context, c config.ClickHouseConfig, logger *slog.Logger, model, given string, opts optimizer.Options) (decimal.Decimal, string, error) {
	if given != "" {
		d, err := positiveUSD("rent", given, "dollars per GPU-hour, e.g. 3.15")
		return d, "", err
	}
	s, err := openStore(ctx, c, store.Options{Logger: logger})
	if err != nil {
		return decimal.Zero, "", err
	}
	defer s.Close()
	holds := time.Duration(opts.MaxOfferAgeHours * float64(time.Hour))
	offers, err := s.LatestOffers(ctx, schema.OfferFilter{MaxAge: holds, Limit: 1,
		Selection: schema.Selection{GPUModels: []string{model}, PriceTypes: []schema.PriceType{schema.OnDemand}}})
	if err != nil {
		return decimal.Zero, "", err
	}
	if len(offers) == 0 {
		return decimal.Zero, "", fmt.Errorf("no on-demand offer of %s in the store holds today (optimize.options.max_offer_age_hours %v): give --rent", model, opts.MaxOfferAgeHours)
	}
	o := offers[0]
	return o.PriceUSDPerGPUHour, fmt.Sprintf("today's cheapest on-demand offer, %s %s at %s a GPU-hour, observed %s",
		o.Provider, strings.TrimSpace(o.OfferID), money.Price(o.PriceUSDPerGPUHour), o.ObservedAt.UTC().Format("2006-01-02 15:04 UTC")), nil
}

// positiveUSD reads a flag's dollar amount: a positive decimal.
func positiveUSD(flag, s, want string) (decimal.Decimal, error) {
	d, err := decimal.NewFromString(strings.TrimPrefix(strings.TrimSpace(s), "$"))
	if err != nil || !d.IsPositive() {
		return decimal.Zero, badUsage("--%s %s: want %s", flag, selection.Quote(s), want)
	}
	return d, nil
}

// tcoFormats maps --output to the report's formats; json is an envelope of the rows.
var tcoFormats = map[string]report.Format{"table": report.FormatText, "csv": report.FormatCSV}
