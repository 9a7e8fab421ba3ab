package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

// runCommand runs one subcommand as gpucost does: its error printed on e.stderr, its exit code
// returned.
func runCommand(name string, ctx context.Context, e env, args []string) int {
	return run(ctx, e, append([]string{name}, args...))
}

// TestExitCodes pins the one mapping of outcomes to exit codes (docs/operations.md lists them),
// also for errors wrapped on their way up.
func TestExitCodes(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"success", nil, exitOK},
		{"a failure", errors.New("boom"), exitFailed},
		{"a bad flag", badUsage("--x: bad"), exitUsage},
		{"a bad selection", wrap(&selection.Error{Param: "gpu", Msg: "unknown GPU model"}), exitUsage},
		{"a bad workloads file", wrap(&optimizer.InputError{File: "w.yaml", Line: 3, Msg: "bad"}), exitUsage},
		{"another scrape runs", wrap(pipeline.ErrBusy), exitBusy},
		{"a partial scrape", pipeline.Report{Status: schema.RunPartial}.Err(), exitPartial},
		{"batches wait in the spool", pipeline.Report{Status: schema.RunOK, Waiting: 1}.Err(), exitPartial},
		{"batches in quarantine", pipeline.Report{Status: schema.RunPartial, Quarantined: 1}.Err(), exitQuarantined},
		{"a failed scrape", pipeline.Report{Status: schema.RunFailed, Quarantined: 1}.Err(), exitFailed},
		{"some teams not mailed", delivery.Err([]delivery.Result{{Status: delivery.StatusSent}, {Status: delivery.StatusFailed}}, nil), exitPartial},
		{"no team mailed", delivery.Err([]delivery.Result{{Status: delivery.StatusFailed}}, nil), exitFailed},
		{"every team mailed", delivery.Err([]delivery.Result{{Status: delivery.StatusSent}, {Status: delivery.StatusAlreadySent}}, nil), exitOK},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%s: exit code %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestScrapeSummaryAgreesWithTheExitCode: the first line of a scrape's summary names an outcome
// that goes with the exit code the run gets: a run that stored nothing new, or spooled its
// batches, does not say ok.
func TestScrapeSummaryAgreesWithTheExitCode(t *testing.T) {
	stored := pipeline.ProviderReport{Provider: "lambda", Status: schema.RunOK, Parsed: 17, Loaded: 17, Stored: 17}
	already := pipeline.ProviderReport{Provider: "lambda", Status: schema.RunOK, Parsed: 17, Loaded: 17, AlreadyStored: true}
	spooled := pipeline.ProviderReport{Provider: "lambda", Status: schema.RunOK, Parsed: 17, Loaded: 17, Spooled: true}
	failed := pipeline.ProviderReport{Provider: "runpod", Status: schema.RunFailed, Error: "runpod: HTTP 503"}
	for _, tc := range []struct {
		name    string
		rep     pipeline.Report
		outcome string
		code    int
		message string
	}{
		{"stored", pipeline.Report{Status: schema.RunOK, Providers: []pipeline.ProviderReport{stored}}, "ok", exitOK, "17 offers stored from 1 provider"},
		{"the same replay again", pipeline.Report{Status: schema.RunOK, Providers: []pipeline.ProviderReport{already}}, "already loaded", exitOK, "nothing new stored"},
		{"some stored, some already", pipeline.Report{Status: schema.RunOK, Providers: []pipeline.ProviderReport{stored, already}}, "ok", exitOK, "(the batches of 1 provider were stored already)"},
		{"ClickHouse down", pipeline.Report{Status: schema.RunOK, Waiting: 1, Providers: []pipeline.ProviderReport{spooled}}, "spooled", exitPartial, "1 batch waits in the spool; 0 offers stored"},
		{"a provider failed", pipeline.Report{Status: schema.RunPartial, Providers: []pipeline.ProviderReport{stored, failed}}, "partial", exitPartial, "1 of 2 providers failed"},
		{"quarantine", pipeline.Report{Status: schema.RunOK, Quarantined: 1, QuarantineDir: "/q", Providers: []pipeline.ProviderReport{stored}}, "quarantined", exitQuarantined, "1 batch in quarantine (/q)"},
		{"nothing worked", pipeline.Report{Status: schema.RunFailed, Providers: []pipeline.ProviderReport{failed}}, "failed", exitFailed, "no provider succeeded (of 1)"},
		{"a dry run", pipeline.Report{Status: schema.RunOK, DryRun: true, Providers: []pipeline.ProviderReport{{Provider: "lambda", Status: schema.RunOK, Parsed: 17, Loaded: 17}}}, "dry run", exitOK, "17 offers would be loaded"},
	} {
		s := tc.rep.Summary()
		if s.Outcome != tc.outcome || exitCode(tc.rep.Err()) != tc.code || !strings.Contains(s.Message, tc.message) {
			t.Errorf("%s: outcome %q (%s), exit %d; want %q, exit %d, a message with %q", tc.name, s.Outcome, s.Message, exitCode(tc.rep.Err()), tc.outcome, tc.code, tc.message)
		}
	}
}
