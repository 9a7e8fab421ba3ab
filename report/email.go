package report

import (
	"bytes"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/gpucost/gpucost/textcell"
)

// EmailOptions say how a team's report email is addressed.
type EmailOptions struct {
	// From is the sender, an RFC 5322 address ("gpucost <gpucost@example.com>"). Required.
	From string
	// Date is the Date header; zero means the report's GeneratedAt.
	Date time.Time
	// DashboardURL, when set, is linked from the email (report.dashboard_url): an absolute
	// http or https URL.
	DashboardURL string
}

// Email builds the report email of the team named team, which holds that team's figures only
// (no other team's, no organisation totals, no provider table: a provider's problem appears as
// a caveat where it concerns the team): the headline, since last week, a link to the
// dashboard, a block per workload, the advice, the market for its GPUs, the caveats and the
// charts. It is multipart/alternative: a text part wrapped to EmailTextWidth and an HTML part
// that needs no horizontal scrolling at any width, referring to the charts, which travel as
// inline PNG parts (multipart/related, Content-ID CID(chart)). The message is written with
// WriteTo (an .eml file) or sent with a go-mail Client.
//
// Headers carry no raw data text: the recipients must parse as email addresses (a team whose
// address does not is an error), and the subject is built from cleaned text and encoded by the
// mail library, so no name can add a header line.
func (r *Report) Email(team string, opts EmailOptions) (*gomail.Msg, error) {
	one, ok := r.ForTeam(team)
	if !ok {
		return nil, fmt.Errorf("building the email of team %q: no such team in the report", textcell.Clean(team, textcell.NameWidth))
	}
	t := one.Teams[0]
	from, err := mail.ParseAddress(opts.From)
	if err != nil {
		return nil, fmt.Errorf("building the email of team %s: sender %q: %w", t.Name, textcell.Clean(opts.From, textcell.NameWidth), err)
	}
	to, err := Recipients(t.Email)
	if err != nil {
		return nil, fmt.Errorf("building the email of team %s: %w", t.Name, err)
	}
	var text, html bytes.Buffer
	if err := writeEmailText(&text, one, t, opts.DashboardURL); err != nil {
		return nil, err
	}
	if err := writeEmailHTML(&html, one, t, opts.DashboardURL); err != nil {
		return nil, err
	}
	m := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	m.FromMailAddress(from)
	m.ToMailAddress(to...)
	m.Subject(Subject(one, t))
	date := opts.Date
	if date.IsZero() {
		date = r.GeneratedAt
	}
	m.SetDateWithValue(date)
	m.SetMessageID()
	m.SetUserAgent("gpucost")
	// RFC 3834: an automatic message; Outlook: do not answer it with out-of-office replies.
	m.SetGenHeader("Auto-Submitted", "auto-generated")
	m.SetGenHeader("X-Auto-Response-Suppress", "All")
	m.SetGenHeader("X-Gpucost-Week", r.Week.ID)
	m.SetBodyString(gomail.TypeTextPlain, text.String())
	m.AddAlternativeString(gomail.TypeTextHTML, html.String())
	for _, c := range t.Charts {
		var png bytes.Buffer
		if err := WriteChartPNG(&png, c); err != nil {
			return nil, fmt.Errorf("building the email of team %s: %w", t.Name, err)
		}
		if err := m.EmbedReader(c.ID+".png", &png, gomail.WithFileContentID("<"+CID(c)+">"),
			gomail.WithFileContentType("image/png"), gomail.WithFileDescription(c.GPUModel+" price history")); err != nil {
			return nil, fmt.Errorf("building the email of team %s: embedding chart %s: %w", t.Name, c.ID, err)
		}
	}
	return m, nil
}

// Subject is the subject line of a team's report email.
func Subject(r *Report, t Team) string {
	s := fmt.Sprintf("gpucost week %s: %s", r.Week.ID, textcell.Clean(t.Name, textcell.NameWidth))
	if tt := t.Totals; tt.Compared > 0 && tt.SavingsUSDPerMonth.IsPositive() {
		s += fmt.Sprintf(", save %s a month (%s)", usd(tt.SavingsUSDPerMonth), pct(tt.SavingsPercent))
	}
	return textcell.Clean(s, 200)
}

// Recipients parses a team's email field: one address or a comma-separated list. Every
// address must be a plain RFC 5322 address; anything else (a newline, a header, a display name
// with unbalanced quotes) is an error rather than a guess.
func Recipients(field string) ([]*mail.Address, error) {
	if strings.TrimSpace(field) == "" {
		return nil, errors.New("the team has no email address")
	}
	if strings.ContainsAny(field, "\r\n") {
		return nil, fmt.Errorf("email address %q contains a line break", textcell.Clean(field, textcell.NameWidth))
	}
	list, err := mail.ParseAddressList(field)
	if err != nil {
		return nil, fmt.Errorf("email address %q: %w", textcell.Clean(field, textcell.NameWidth), err)
	}
	return list, nil
}
