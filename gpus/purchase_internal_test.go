package gpus

import (
	"slices"
	"testing"
)

// TestPurchaseTable: every row prices a catalog model (a misspelt name would never be found),
// with a range, a condition, a source, a date and grades a reader can act on.
func TestPurchaseTable(t *testing.T) {
	grades := []Grade{Confirmed, OneSource, Derived, Recalled, Disputed, Assumed}
	for name, p := range purchaseTable() {
		if _, ok := byName[name]; !ok {
			t.Errorf("%s: not a canonical catalog name", name)
		}
		if !p.LowUSD.IsPositive() || p.HighUSD.LessThan(p.LowUSD) {
			t.Errorf("%s: range $%s–%s", name, p.LowUSD, p.HighUSD)
		}
		if p.Condition != New && p.Condition != Used {
			t.Errorf("%s: condition %q", name, p.Condition)
		}
		if p.Source == "" || p.Seen == "" || !slices.Contains(grades, p.Grade) || !slices.Contains(grades, p.ResidualGrade) {
			t.Errorf("%s: source %q, seen %q, grade %q, residual grade %q", name, p.Source, p.Seen, p.Grade, p.ResidualGrade)
		}
		if p.Residual < 0 || p.Residual >= 1 {
			t.Errorf("%s: residual %g, want 0 up to but not 1", name, p.Residual)
		}
	}
}
