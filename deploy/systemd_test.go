package deploy_test

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/gpucost/gpucost/tooltest"
)

// The systemd units: deploy/systemd. Parsed and checked in Go everywhere; verified with
// systemd-analyze where it is installed (required with GPUCOST_INTEGRATION=1).

const systemdDir = "systemd"

// timers are the scheduled units and how often each must fire.
var timers = map[string]time.Duration{
	"gpucost-scrape":   time.Hour,
	"gpucost-optimize": 24 * time.Hour,
	"gpucost-report":   7 * 24 * time.Hour,
}

// services are every service unit and the gpucost arguments it runs.
var services = map[string][]string{
	"gpucost-migrate":  {"migrate"},
	"gpucost-scrape":   {"scrape"},
	"gpucost-optimize": {"optimize"},
	"gpucost-report":   {"report", "--email"},
	"gpucost-serve":    {"serve"},
}

const (
	unitBinary    = "/usr/local/bin/gpucost"
	unitConfig    = "/etc/gpucost/gpucost.yaml"
	unitEnvFile   = "/etc/gpucost/env"
	unitStateDir  = "/var/lib/gpucost"
	unitStateName = "gpucost"
	unitUser      = "gpucost"
)

// unit is a parsed unit file: each section's settings in order (a key may repeat).
type unit struct {
	file     string
	sections map[string][][2]string
}

// get returns the values of key in section.
func (u unit) get(section, key string) []string {
	var vs []string
	for _, kv := range u.sections[section] {
		if kv[0] == key {
			vs = append(vs, kv[1])
		}
	}
	return vs
}

// one returns the last value of key in section ("" when unset), as systemd applies it.
func (u unit) one(section, key string) string {
	vs := u.get(section, key)
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// words returns every space-separated word of every value of key (Wants=, After=...).
func (u unit) words(section, key string) []string {
	var ws []string
	for _, v := range u.get(section, key) {
		ws = append(ws, strings.Fields(v)...)
	}
	return ws
}

// unitSections are the sections each unit type may have, and unitKeys every directive these
// units may use: an unknown one is a typo that systemd would only warn about and ignore.
var (
	unitSections = map[string][]string{
		".service": {"Unit", "Service", "Install"},
		".timer":   {"Unit", "Timer", "Install"},
	}
	unitKeys = map[string][]string{
		"Unit": {"Description", "Documentation", "Wants", "Requires", "Requisite", "BindsTo", "PartOf",
			"After", "Before", "Conflicts", "OnFailure", "OnSuccess", "StartLimitIntervalSec",
			"StartLimitBurst", "ConditionPathExists", "AssertPathExists"},
		"Install": {"WantedBy", "RequiredBy", "Also", "Alias"},
		"Timer": {"OnCalendar", "OnActiveSec", "OnBootSec", "OnStartupSec", "OnUnitActiveSec",
			"OnUnitInactiveSec", "Persistent", "RandomizedDelaySec", "FixedRandomDelay", "AccuracySec",
			"Unit", "WakeSystem", "RemainAfterElapse"},
		"Service": {"Type", "RemainAfterExit", "User", "Group", "DynamicUser", "SupplementaryGroups",
			"EnvironmentFile", "Environment", "ExecStart", "ExecStartPre", "ExecStartPost", "ExecStop",
			"ExecReload", "WorkingDirectory", "Restart", "RestartSec", "RestartPreventExitStatus",
			"SuccessExitStatus", "TimeoutStartSec", "TimeoutStopSec", "TimeoutSec", "RuntimeMaxSec",
			"KillMode", "KillSignal", "StateDirectory", "StateDirectoryMode", "CacheDirectory",
			"LogsDirectory", "RuntimeDirectory", "ConfigurationDirectory", "LoadCredential",
			"SetCredential", "MemoryMax", "MemoryHigh", "CPUQuota", "TasksMax", "Nice", "IOSchedulingClass",
			"UMask", "NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices",
			"PrivateUsers", "PrivateNetwork", "ProtectKernelTunables", "ProtectKernelModules",
			"ProtectKernelLogs", "ProtectControlGroups", "ProtectClock", "ProtectHostname", "ProtectProc",
			"ProcSubset", "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime",
			"RestrictSUIDSGID", "LockPersonality", "MemoryDenyWriteExecute", "RemoveIPC",
			"CapabilityBoundingSet", "AmbientCapabilities", "SystemCallArchitectures", "SystemCallFilter",
			"SystemCallErrorNumber", "DevicePolicy", "DeviceAllow", "ReadWritePaths", "ReadOnlyPaths",
			"InaccessiblePaths", "IPAddressDeny", "IPAddressAllow", "StandardOutput", "StandardError",
			"SyslogIdentifier"},
	}
)

var reUnitKey = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)\s*=\s*(.*)$`)

// parseUnit reads a unit file the way systemd does (comments, sections, Key=Value, trailing
// backslash continuations) and rejects anything it would warn about or ignore.
func parseUnit(path string) (unit, error) {
	f, err := os.Open(path)
	if err != nil {
		return unit{}, err
	}
	defer f.Close()
	u := unit{file: filepath.Base(path), sections: map[string][][2]string{}}
	allowed := unitSections[filepath.Ext(path)]
	if allowed == nil {
		return u, fmt.Errorf("%s: unknown unit type", path)
	}
	section := ""
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		for strings.HasSuffix(line, `\`) && sc.Scan() {
			n++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(sc.Text())
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = strings.TrimSuffix(strings.TrimPrefix(line, "["), "]")
			if !strings.HasSuffix(line, "]") || !slices.Contains(allowed, section) {
				return u, fmt.Errorf("%s:%d: section %s is not one of %v", path, n, line, allowed)
			}
			if _, dup := u.sections[section]; dup {
				return u, fmt.Errorf("%s:%d: section [%s] appears twice", path, n, section)
			}
			u.sections[section] = nil
		default:
			m := reUnitKey.FindStringSubmatch(line)
			if m == nil {
				return u, fmt.Errorf("%s:%d: not Key=Value: %q", path, n, line)
			}
			if section == "" {
				return u, fmt.Errorf("%s:%d: %s outside a section", path, n, m[1])
			}
			if !slices.Contains(unitKeys[section], m[1]) {
				return u, fmt.Errorf("%s:%d: %s= is not a directive of [%s] (a typo? systemd would ignore it)", path, n, m[1], section)
			}
			u.sections[section] = append(u.sections[section], [2]string{m[1], m[2]})
		}
	}
	return u, sc.Err()
}

// loadUnits parses every unit file in deploy/systemd.
func loadUnits(t *testing.T) map[string]unit {
	t.Helper()
	units := map[string]unit{}
	for _, pattern := range []string{"*.service", "*.timer"} {
		files, _ := filepath.Glob(filepath.Join(systemdDir, pattern))
		for _, f := range files {
			u, err := parseUnit(f)
			if err != nil {
				t.Fatal(err)
			}
			units[filepath.Base(f)] = u
		}
	}
	return units
}

// TestSystemdUnits checks the units in Go: the set of units, the timers' settings, the
// services' user, secrets, config, state folder, hardening and gpucost subcommands.
func TestSystemdUnits(t *testing.T) {
	units := loadUnits(t)
	var want []string
	for name := range services {
		want = append(want, name+".service")
	}
	for name := range timers {
		want = append(want, name+".timer")
	}
	slices.Sort(want)
	if got := sortedKeys(units); !slices.Equal(got, want) {
		t.Fatalf("deploy/systemd has units %v, want %v", got, want)
	}

	for name := range timers {
		u := units[name+".timer"]
		what := u.file
		if u.one("Timer", "OnCalendar") == "" {
			t.Errorf("%s: no OnCalendar=", what)
		} else if !strings.HasSuffix(u.one("Timer", "OnCalendar"), " UTC") {
			t.Errorf("%s: OnCalendar=%s: say UTC, as gpucost's schedules are", what, u.one("Timer", "OnCalendar"))
		}
		if u.one("Timer", "Persistent") != "true" && u.one("Timer", "Persistent") != "yes" {
			t.Errorf("%s: Persistent=true missing: a run missed while the machine was off would be skipped", what)
		}
		if u.one("Timer", "RandomizedDelaySec") == "" {
			t.Errorf("%s: no RandomizedDelaySec=", what)
		}
		if unitName := u.one("Timer", "Unit"); unitName != "" && unitName != name+".service" {
			t.Errorf("%s: Unit=%s, want %s.service", what, unitName, name)
		}
		if !slices.Contains(u.words("Install", "WantedBy"), "timers.target") {
			t.Errorf("%s: WantedBy=timers.target missing: enabling it would not start it at boot", what)
		}
		if s := units[name+".service"]; s.one("Service", "Type") != "oneshot" {
			t.Errorf("%s: Type=%s, want oneshot for a timer's job", s.file, s.one("Service", "Type"))
		}
	}

	absCfg, _ := filepath.Abs(filepath.Join(systemdDir, "gpucost.yaml"))
	cfg := configPrint(t, "deploy/systemd/gpucost.yaml", "GPUCOST_CONFIG="+absCfg)
	if !under(cfg.Scrape.SpoolDir, unitStateDir) {
		t.Errorf("gpucost.yaml: scrape.spool_dir %q is not under %s, the only folder the units may write (StateDirectory=%s)", cfg.Scrape.SpoolDir, unitStateDir, unitStateName)
	}
	if cfg.Report.OutDir != "" && !under(cfg.Report.OutDir, unitStateDir) && !under(cfg.Report.OutDir, "/tmp") {
		t.Errorf("gpucost.yaml: report.out_dir %q is read-only under ProtectSystem=strict", cfg.Report.OutDir)
	}

	for name, args := range services {
		u := units[name+".service"]
		what := u.file
		exec := strings.Fields(u.one("Service", "ExecStart"))
		if len(exec) == 0 || exec[0] != unitBinary {
			t.Errorf("%s: ExecStart=%s, want %s ...", what, u.one("Service", "ExecStart"), unitBinary)
		} else {
			if !slices.Equal(exec[1:], args) {
				t.Errorf("%s: runs gpucost %v, want %v", what, exec[1:], args)
			}
			checkSubcommand(t, what, exec[1:])
		}
		want := map[string]string{
			"User": unitUser, "Group": unitUser, "EnvironmentFile": unitEnvFile,
			"StateDirectory": unitStateName, "NoNewPrivileges": "yes", "ProtectSystem": "strict",
			"ProtectHome": "yes", "PrivateTmp": "yes", "CapabilityBoundingSet": "",
		}
		if name == "gpucost-migrate" {
			delete(want, "StateDirectory") // it writes nothing
		}
		for key, want := range want {
			if vs := u.get("Service", key); len(vs) == 0 || vs[len(vs)-1] != want {
				t.Errorf("%s: want %s=%s, have %q", what, key, want, vs)
			}
		}
		if name != "gpucost-migrate" {
			if !slices.Contains(u.get("Service", "Environment"), "GPUCOST_CONFIG="+unitConfig) {
				t.Errorf("%s: Environment=GPUCOST_CONFIG=%s missing: it would run on the built-in defaults", what, unitConfig)
			}
			for _, key := range []string{"Wants", "After"} {
				if !slices.Contains(u.words("Unit", key), "gpucost-migrate.service") {
					t.Errorf("%s: %s=gpucost-migrate.service missing: the schema may be older than the binary", what, key)
				}
			}
			if slices.Contains(u.words("Unit", "Requires"), "gpucost-migrate.service") {
				t.Errorf("%s: Requires=gpucost-migrate.service: with ClickHouse down the scrape would not run and spool", what)
			}
		}
	}
	migrate := units["gpucost-migrate.service"]
	if migrate.one("Service", "Type") != "oneshot" || migrate.one("Service", "RemainAfterExit") != "yes" {
		t.Errorf("%s: want Type=oneshot and RemainAfterExit=yes, so the units that pull it in run it once per boot", migrate.file)
	}
	serve := units["gpucost-serve.service"]
	if serve.one("Service", "Restart") != "on-failure" && serve.one("Service", "Restart") != "always" {
		t.Errorf("%s: Restart=on-failure missing", serve.file)
	}
	for name := range timers {
		if !slices.Contains(serve.words("Unit", "Conflicts"), name+".timer") {
			t.Errorf("%s: Conflicts=%s.timer missing: serve schedules the same runs itself", serve.file, name)
		}
	}
	checkEnvExample(t, cfg)
	checkSysusers(t)
}

// checkEnvExample checks that env.example sets every secret the configuration reads.
func checkEnvExample(t *testing.T, cfg effectiveConfig) {
	data, err := os.ReadFile(filepath.Join(systemdDir, "env.example"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`).MatchString(k) || !regexp.MustCompile(`^'[^']*'$`).MatchString(v) {
			t.Errorf("env.example:%d: want KEY='value' (single quotes: systemd and sh then read it alike), have %q", i+1, line)
		}
		keys[k] = true
	}
	want := append([]string{"GPUCOST_CLICKHOUSE_DSN"}, cfg.secretEnvNames("serve")...)
	for _, k := range want {
		if !keys[k] {
			t.Errorf("env.example does not set %s, which gpucost reads", k)
		}
	}
}

// checkSysusers checks that the sysusers.d entry creates the units' user.
func checkSysusers(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(systemdDir, "gpucost.sysusers.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "u" && f[1] == unitUser {
			return
		}
	}
	t.Errorf("gpucost.sysusers.conf creates no user %s", unitUser)
}

// unitRoot lays out a filesystem root for systemd-analyze: the system's own units (so
// dependencies such as sysinit.target resolve), ours in /etc/systemd/system and a gpucost
// binary where ExecStart= expects it.
func unitRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	var sys string
	for _, dir := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			sys = dir
			break
		}
	}
	if sys == "" {
		t.Skip("no system unit folder (/usr/lib/systemd/system) to verify against")
	}
	dst := filepath.Join(root, "usr/lib/systemd/system")
	err := filepath.WalkDir(sys, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(sys, path)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(root, "etc/systemd/system")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	for name := range loadUnits(t) {
		data, err := os.ReadFile(filepath.Join(systemdDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(etc, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(root, unitBinary)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(gpucost(t), bin); err != nil { // a symlink would resolve inside root
		data, err := os.ReadFile(gpucost(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestSystemdAnalyzeVerify runs `systemd-analyze verify` on every unit: any message (an unknown
// key, a bad calendar spec, a missing dependency) fails. Then `systemd-analyze security` must
// rate every service's exposure at 2.0 or less ("OK").
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa := tooltest.Find(t, "systemd", "systemd-analyze")
	root := unitRoot(t)
	etc := filepath.Join(root, "etc/systemd/system")
	names := sortedKeys(loadUnits(t))
	r := runIn(t, etc, cleanEnv(), sa, append([]string{"verify", "--root=" + root}, names...)...)
	if r.code != 0 || strings.TrimSpace(r.stdout+r.stderr) != "" {
		t.Errorf("systemd-analyze verify (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".service") {
			continue
		}
		r := runIn(t, etc, cleanEnv(), sa, "security", "--offline=yes", "--threshold=20", "--root="+root, name)
		if r.code != 0 {
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			t.Errorf("systemd-analyze security %s: exposure above 2.0 (exit %d): %s", name, r.code, lines[len(lines)-1])
		}
	}
}

// TestSystemdTimersMatchServeSchedules checks, with `systemd-analyze calendar`, that each timer
// fires exactly when gpucost serve's cron schedule (gpucost.yaml) would run the same job, and
// as often as it should.
func TestSystemdTimersMatchServeSchedules(t *testing.T) {
	sa := tooltest.Find(t, "systemd", "systemd-analyze")
	units := loadUnits(t)
	absCfg, _ := filepath.Abs(filepath.Join(systemdDir, "gpucost.yaml"))
	cfg := configPrint(t, "deploy/systemd/gpucost.yaml", "GPUCOST_CONFIG="+absCfg)
	schedules := map[string]string{
		"gpucost-scrape":   cfg.Serve.ScrapeSchedule,
		"gpucost-optimize": cfg.Optimize.Schedule,
		"gpucost-report":   cfg.Report.Schedule,
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const n = 5
	for name, period := range timers {
		t.Run(name, func(t *testing.T) {
			spec := units[name+".timer"].one("Timer", "OnCalendar")
			r := runIn(t, tmpRoot, cleanEnv("TZ=UTC"), sa, "calendar", fmt.Sprintf("--iterations=%d", n),
				"--base-time="+base.Format("2006-01-02 15:04:05")+" UTC", spec)
			if r.code != 0 {
				t.Fatalf("systemd-analyze calendar %q: %s", spec, r.stderr)
			}
			var got []time.Time
			for _, m := range regexp.MustCompile(`(?m)^\s*(?:Next elapse|Iter\. #\d+): (.+)$`).FindAllStringSubmatch(r.stdout, -1) {
				at, err := time.Parse("Mon 2006-01-02 15:04:05 MST", strings.TrimSpace(m[1]))
				if err != nil {
					t.Fatalf("systemd-analyze calendar output %q: %v", m[1], err)
				}
				got = append(got, at.UTC())
			}
			if len(got) != n {
				t.Fatalf("systemd-analyze calendar %q: %d times in\n%s", spec, len(got), r.stdout)
			}
			for i := 1; i < n; i++ {
				if d := got[i].Sub(got[i-1]); d != period {
					t.Errorf("%s fires every %v (%v then %v), want every %v", name, d, got[i-1], got[i], period)
				}
			}
			if schedules[name] == "" {
				t.Skipf("this gpucost has no schedule for %s to compare with", name)
			}
			sched, err := cron.ParseStandard(schedules[name])
			if err != nil {
				t.Fatalf("gpucost.yaml schedule %q: %v", schedules[name], err)
			}
			next := base
			for i := 0; i < n; i++ {
				next = sched.Next(next)
				if !next.Equal(got[i]) {
					t.Errorf("%s (OnCalendar=%s) fires at %v, gpucost serve (%q) at %v", name, spec, got[i], schedules[name], next)
					break
				}
			}
		})
	}
}
