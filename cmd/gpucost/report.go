package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/smtpmail"
	"github.com/gpucost/gpucost/store"
)

const reportHelp = `Write the weekly savings report, or email it to every team.

The report plans the workloads file (optimize.workloads, or --workloads) on the latest offers in
the store, and adds the market this week (cheapest $/GPU-hour per provider now and a week ago,
the biggest moves, new cheapest offers), the caveats (spot placements, stale or failing
providers, workloads nothing fits) and a price-history chart per recommended GPU model.

--week names another week (the send log's key, the market's "now" and the charts' end); the
plan itself is always made on the latest offers in the store.

Without --email it writes --output (text, markdown, html, csv, json; a comma-separated list,
or all; --format is another name of it) to stdout, or into --out DIR/WEEK/: all.EXT for every team selected, TEAM.EXT for each
one, and the charts as charts/TEAM-CHART.svg and .png (linked from the Markdown).

With --email each team gets its own report from report.smtp (multipart text + HTML with the
charts as inline PNG images; STARTTLS and authentication as configured, the password from
report.smtp.password_env or password_file). A team's failure does not stop the others;
transient SMTP failures are retried. Each week is sent to a team once: sends are recorded in
ClickHouse (report_sends) and a rerun skips the teams already sent, unless --force.
--dry-run writes each message as an .eml file into --out (default report.out_dir) instead.

--quiet (with --email or --out) prints nothing when the command exits 0, and everything it
would have printed otherwise: the weekly cron line mails only when something went wrong.

Exit codes: 0 done (every team sent or already sent); 3 some teams failed; 1 every team
failed, or the report could not be made; 2 bad flags, config or workloads file.`

func reportCommand(e env) *cobra.Command {
	var (
		cf                                  configFlag
		workloads, teams, weekFlag, formats string
		out                                 string
		email, dryRun, force, quiet         bool
	)
	cmd := &cobra.Command{
		Use:   "report [flags]",
		Short: "write the weekly savings report, or email each team its own",
		Long:  reportHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (dryRun || force) && !email {
				return badUsage("--dry-run and --force go with --email")
			}
			if quiet && !email && out == "" {
				return badUsage("--quiet goes with --email or --out: without them the report is the output")
			}
			var week report.Week
			if weekFlag != "" {
				w, err := report.ParseWeek(weekFlag)
				if err != nil {
					return badUsage("--week: %v", err)
				}
				week = w
			}
			fmts, err := delivery.ParseFormats(formats)
			if err != nil {
				return badUsage("--output: %v", err)
			}
			if !email && out == "" && len(fmts) > 1 {
				return badUsage("--output: several formats need --out DIR")
			}
			return quietly(e, quiet, func(e env) error {
				cfg, err := cf.load(e)
				if err != nil {
					return err
				}
				useWorkloads(e, &cfg, "report", workloads)
				logger := newLogger(e.stderr, cfg.Log)
				job := delivery.Job{Week: week, Teams: selection.List(teams), Formats: fmts, Out: out, Mail: email, Force: force}
				var sender delivery.Sender
				if dryRun {
					job.EMLDir = out
					if job.EMLDir == "" {
						job.EMLDir = cfg.Report.OutDir
					}
				} else if email {
					if sender, err = smtpSender(cfg.Report.SMTP, e.getenv, logger); err != nil {
						return err
					}
				}
				opts, err := deliveryOptions(cfg, e, logger)
				if err != nil {
					return err
				}
				s, err := openStore(cmd.Context(), cfg.ClickHouse, store.Options{Logger: logger})
				if err != nil {
					return err
				}
				defer s.Close()
				return delivery.Run(cmd.Context(), s, s, sender, e.stdout, job, opts)
			})
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&workloads, "workloads", "", "workloads file (default optimize.workloads; none: the sample teams built in)")
	must(cmd.MarkFlagFilename("workloads", "yaml", "yml"))
	fl.StringVar(&teams, "team", "", "comma-separated teams (default all)")
	fl.StringVar(&weekFlag, "week", "", "the report week, as 2025-W48 or a date in it (default this week)")
	fl.StringVar(&formats, "output", "text", "text, markdown, html, csv, json: one, a comma-separated list, or all (--format is another name of it)")
	completeList(cmd, "output", "text", "markdown", "html", "csv", "json", "all")
	formatAlias(cmd)
	fl.StringVar(&out, "out", "", "write files into this folder instead of stdout (the .eml files of --dry-run too)")
	must(cmd.MarkFlagDirname("out"))
	fl.BoolVar(&email, "email", false, "email each team its report over SMTP (report.smtp)")
	fl.BoolVar(&dryRun, "dry-run", false, "with --email: write .eml files instead of sending; record nothing")
	fl.BoolVar(&force, "force", false, "with --email: send again to teams already sent this week's report")
	quietFlag(cmd, &quiet, "every team is sent its report (or the files are written)")
	return cmd
}

// sendWeekly is the weekly job of `gpucost serve` (delivery.Weekly) on the store and the SMTP
// server of cfg.
func sendWeekly(ctx context.Context, cfg config.Config, e env, logger *slog.Logger) (delivery.Outcome, error) {
	opts, err := deliveryOptions(cfg, e, logger)
	if err != nil {
		return delivery.Failed, err
	}
	s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: logger})
	if err != nil {
		return delivery.Failed, err
	}
	defer s.Close()
	sender, err := smtpSender(cfg.Report.SMTP, e.getenv, logger)
	if err != nil {
		return delivery.Failed, err
	}
	return delivery.Weekly(ctx, s, s, sender, opts)
}

// deliveryOptions are the report settings of cfg, with the reader of GPU utilization of its
// prometheus section.
func deliveryOptions(cfg config.Config, e env, logger *slog.Logger) (delivery.Options, error) {
	m, err := newMeasurer(cfg.Prometheus, e.getenv)
	if err != nil {
		return delivery.Options{}, err
	}
	return delivery.Options{Workloads: cfg.Optimize.Workloads, Planning: cfg.Optimize.Options, Measurer: m, HistoryWeeks: cfg.Report.HistoryWeeks,
		From: cfg.Report.SMTP.From, DashboardURL: cfg.Report.DashboardURL, Secrets: e.secrets, Logger: logger}, nil
}

// smtpSender is the SMTP client of report.smtp, its password read from the environment
// variable or the file the configuration names.
func smtpSender(c config.SMTPConfig, getenv func(string) string, logger *slog.Logger) (*smtpmail.Client, error) {
	password, err := c.Password(getenv)
	if err != nil {
		return nil, err
	}
	client, err := smtpmail.New(smtpmail.Config{Host: c.Host, Port: c.Port, Username: c.Username, Password: password,
		StartTLS: smtpmail.StartTLS(c.StartTLS), Timeout: c.Timeout.Std(), Retries: c.Retries, RetryWait: c.RetryWait.Std(), Logger: logger})
	if errors.Is(err, smtpmail.ErrNoPassword) {
		return nil, fmt.Errorf("report.smtp.username is set but no password was found (set $%s or report.smtp.password_file)", c.PasswordEnv)
	}
	return client, err
}
