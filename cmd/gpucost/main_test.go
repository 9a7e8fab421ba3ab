package main

import (
	"context"
	"errors"
	"fmt"
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
		{"--help", errHelpShown, exitOK},
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
