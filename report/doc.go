// Package report turns a plan into the savings report each team reads: one model (Report),
// built by Build from the optimizer's plan, the price history, the scrape run log and the plan
// stored a week earlier, rendered as terminal text (TerminalWidth columns), Markdown, HTML, CSV
// or JSON, with $/GPU-hour charts (SVG for pages, PNG for email) and a ready-to-send email
// message per team (Email), which holds that team's figures only.
//
// The package does no I/O beyond writing to the io.Writer it is given: the caller (package
// delivery) reads the plan's inputs, the history and the run log from the store as the plain
// input types here (schema.HistoryPoint, schema.ScrapeRun, schema.Offer), and decides where the
// output goes and whether an email is sent.
//
// # What a team's report holds
//
//   - Workloads: per workload, today's placement (provider, GPU × count, $/h, hours, $/month)
//     against the recommended one (provider, GPU × count, price type, $/h, $/month), the
//     savings in dollars and percent, and one line saying why.
//   - Totals per team and for the whole organisation, over the workloads where both sides are
//     priced (so the savings compare like with like).
//   - The market this week for the GPU models the team runs or is advised to run: the cheapest
//     $/GPU-hour per provider and price type now and a week ago, the biggest moves, and new
//     cheapest offers (another provider took the lead, or the leader cut its price well below
//     last week's low).
//   - Since last week: the team's savings and spend against the plan stored a week earlier,
//     and the workloads new, gone or recommended elsewhere since (SinceLastWeek).
//   - Caveats that change decisions: spot placements, stale or failing providers that concern
//     the team (they run or are recommended its workloads, or list its GPU models), workloads
//     nothing fits, current placements that could not be priced, and the optimizer's own
//     caveats.
//   - A chart per recommended GPU model: the daily cheapest $/GPU-hour of each provider and
//     price type over the last weeks (Options.HistoryWeeks).
//
// # Widths
//
// The terminal text and the plan table of `gpucost optimize` fit TerminalWidth (100) columns:
// a workload takes three lines (its name and saving, today's placement, → the recommended
// one), money is right-aligned with thousands separators, a name too long for its column is
// cut with an ellipsis and sentences wrap. The email's text part fits EmailTextWidth (78): a
// block of "label: value" lines per workload, a table only where it fits. The email's HTML
// lays a workload out as a block of two sides (today, recommended) that needs no horizontal
// scrolling at any width; a style block, where the mail client keeps it, stacks the sides on
// a phone.
//
// # Untrusted text
//
// Provider names, regions, offer ids, GPU names and run errors come from scraped pages and
// APIs. Build strips control characters from them and caps their length (textcell.Clean, the
// rule every terminal table of gpucost follows); the HTML renderer escapes them with
// html/template; Markdown escapes HTML and table syntax; CSV writes every cell through
// textcell.CSV, so none is run as a spreadsheet formula; the email's subject and addresses are built
// so that no text can add a header. The JSON output is described in SCHEMA.md, and its field
// names are stable within a schema version (Report.Schema).
package report
