package delivery

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/selection"
)

// Job is one `gpucost report`: the report of a week for some teams, written to a writer or into
// a folder, or mailed to each team.
type Job struct {
	Week    report.Week // zero: this week
	Teams   []string    // empty: every team of the workloads file
	Formats []report.Format
	// Out is the folder of the files (and of a dry run's .eml files); "" writes the first
	// format to the job's writer.
	Out string
	// Mail, when set, mails each team its report as Mail does: Force and a dry run (EMLDir)
	// as in Request.
	Mail   bool
	Force  bool
	EMLDir string
}

// Run does the job on the store's latest offers: it writes the report, or mails it and writes
// the results table, to w (with files, the list of files written). A team the workloads file
// does not have is a *selection.Error of the parameter team. The error of a mailing is Err's.
func Run(ctx context.Context, s Store, log SendLog, send Sender, w io.Writer, j Job, o Options) error {
	rep, err := Build(ctx, s, j.Week, o)
	if err != nil {
		return err
	}
	teams := j.Teams
	for _, name := range teams {
		if !slices.Contains(rep.TeamNames(), name) {
			return &selection.Error{Param: "team", Msg: fmt.Sprintf("no team %q in %s (teams: %s)", name, plans.Source(o.Workloads), strings.Join(rep.TeamNames(), ", "))}
		}
	}
	if len(teams) == 0 {
		teams = rep.TeamNames()
	}
	switch {
	case j.Mail:
		results, err := Mail(ctx, rep, log, send, Request{Teams: teams, Force: j.Force, EMLDir: j.EMLDir}, o)
		_ = WriteResults(w, rep.Week, results) // a terminal that cannot be written to has no one to tell
		return Err(results, err)
	case j.Out == "":
		return Narrow(rep, teams).Render(w, j.Formats[0])
	}
	files, err := WriteFiles(j.Out, rep, teams, j.Formats, o)
	for _, f := range files {
		fmt.Fprintln(w, f)
	}
	return err
}
