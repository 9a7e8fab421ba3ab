package pipeline

import (
	"fmt"
	"strings"

	"github.com/gpucost/gpucost/schema"
)

// Incomplete is the error of a run that did not end well: not every provider ok, or batches
// left waiting in the spool or in its quarantine. gpucost scrape maps it to its exit code
// (cmd/gpucost/main.go): a failed run fails, a quarantine says so, anything else is partial.
type Incomplete struct {
	Status        schema.RunStatus
	Waiting       int    // batches in the spool for the next run (the store did not take them)
	Quarantined   int    // batches in quarantine, which no run loads until an operator moves them back
	QuarantineDir string //
}

// Err returns nil when every provider was ok and nothing waits in the spool or its quarantine;
// else an *Incomplete.
func (r Report) Err() error {
	if r.Status == schema.RunOK && r.Waiting == 0 && r.Quarantined == 0 {
		return nil
	}
	return &Incomplete{Status: r.Status, Waiting: r.Waiting, Quarantined: r.Quarantined, QuarantineDir: r.QuarantineDir}
}

// Unwrap lists what the operator should know, one error each: the batches that wait, the
// batches in quarantine. The providers' own failures are in the run's summary.
func (e *Incomplete) Unwrap() []error {
	var why []error
	if e.Waiting > 0 {
		why = append(why, fmt.Errorf("%d batches wait in the spool for the next run (ClickHouse did not take them)", e.Waiting))
	}
	if e.Quarantined > 0 {
		why = append(why, fmt.Errorf("%d batches are in quarantine in %s: they will not load until moved back into the spool folder; their .failures files say why (docs/operations.md)",
			e.Quarantined, e.QuarantineDir))
	}
	return why
}

func (e *Incomplete) Error() string {
	var lines []string
	for _, err := range e.Unwrap() {
		lines = append(lines, err.Error())
	}
	return strings.Join(lines, "\n")
}
