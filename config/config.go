// Package config is gpucost's configuration: the embedded defaults (gpucost.yaml, every key
// documented), a config file on top, then GPUCOST_* environment variables. Load decodes
// strictly and checks every value as the commands will use it (a DSN the driver parses, cron
// schedules, addresses, URLs, SMTP settings); each error names where the bad value came from:
// the file and line, or the variable, and the key. Secrets (the ClickHouse and SMTP passwords,
// the providers' API keys, the Prometheus bearer token) never sit in the file: they are read from the variables or files the
// configuration names (Verda's OAuth2 client id too), and Secrets lists them so that everything
// gpucost writes is scrubbed.
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/robfig/cron/v3"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpuusage"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/selection"
)

// DefaultYAML is the embedded default configuration: every field, documented. A config
// file given with --config is read on top of it, then GPUCOST_* environment variables.
//
//go:embed gpucost.yaml
var DefaultYAML []byte

// Config is gpucost's configuration. Every field has a yaml key (see gpucost.yaml for the
// documentation of each) and an environment override named GPUCOST_ + the upper-cased key path
// joined by underscores, e.g. scrape.spool_dir → GPUCOST_SCRAPE_SPOOL_DIR.
type Config struct {
	ClickHouse ClickHouseConfig `yaml:"clickhouse"`
	Scrape     ScrapeConfig     `yaml:"scrape"`
	HTTP       HTTPConfig       `yaml:"http"`
	Providers  ProvidersConfig  `yaml:"providers"`
	Serve      ServeConfig      `yaml:"serve"`
	Optimize   OptimizeConfig   `yaml:"optimize"`
	Report     ReportConfig     `yaml:"report"`
	Prometheus PrometheusConfig `yaml:"prometheus"`
	Log        LogConfig        `yaml:"log"`
}

// LogConfig says how every command logs (on stderr): the least level written and the format.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug, info, warn or error
	Format string `yaml:"format"` // text (logfmt) or json
}

// LogLevels and LogFormats are the values of log.level and log.format.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"text", "json"}
)

// SlogLevel is the slog level of log.level (info when it is not one, which Load rejects).
func (l LogConfig) SlogLevel() slog.Level {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.Level)); err != nil {
		return slog.LevelInfo
	}
	return level
}

func (l LogConfig) check() error {
	var errs []error
	if !slices.Contains(LogLevels, l.Level) {
		errs = append(errs, bad("log.level", "%s is not one of %s", selection.Quote(l.Level), strings.Join(LogLevels, ", ")))
	}
	if !slices.Contains(LogFormats, l.Format) {
		errs = append(errs, bad("log.format", "%s is not one of %s", selection.Quote(l.Format), strings.Join(LogFormats, ", ")))
	}
	return errors.Join(errs...)
}

// PrometheusConfig says where the plan reads how busy each workload's GPUs were (the DCGM
// exporter's metrics, through the Prometheus HTTP API; package gpuusage). An empty URL
// measures nothing. The bearer token never sits in the file: it is read from the environment
// variable BearerTokenEnv or the file BearerTokenFile.
type PrometheusConfig struct {
	URL             string   `yaml:"url"`
	Query           string   `yaml:"query"`
	Window          Duration `yaml:"window"`
	Timeout         Duration `yaml:"timeout"`
	BearerTokenEnv  string   `yaml:"bearer_token_env"`
	BearerTokenFile string   `yaml:"bearer_token_file"`
}

// OptimizeConfig configures `gpucost optimize` and its nightly run in serve.
type OptimizeConfig struct {
	// Workloads is the teams' workloads file; empty plans the sample teams built into gpucost
	// (plans.ReadWorkloads).
	Workloads string            `yaml:"workloads"`
	Schedule  string            `yaml:"schedule"`
	Options   optimizer.Options `yaml:"options"`
}

// ClickHouseConfig says where the store is.
type ClickHouseConfig struct {
	DSN     string `yaml:"dsn"`
	Cluster string `yaml:"cluster"`
}

// ScrapeConfig tunes a scrape run.
type ScrapeConfig struct {
	Providers          []string `yaml:"providers"`
	Parallelism        int      `yaml:"parallelism"`
	SourceTimeout      Duration `yaml:"source_timeout"`
	SourceTimeoutMax   Duration `yaml:"source_timeout_max"`
	LoadTimeout        Duration `yaml:"load_timeout"`
	MinOfferRatio      float64  `yaml:"min_offer_ratio"`
	MaxPricePerGPUHour float64  `yaml:"max_price_per_gpu_hour"`
	OutlierFactor      float64  `yaml:"outlier_factor"`
	SpoolDir           string   `yaml:"spool_dir"`
	LockWait           Duration `yaml:"lock_wait"`
}

// HTTPConfig tunes the shared HTTP client of the sources.
type HTTPConfig struct {
	UserAgent       string   `yaml:"user_agent"`
	RetryMax        int      `yaml:"retry_max"`
	RetryWaitMin    Duration `yaml:"retry_wait_min"`
	RetryWaitMax    Duration `yaml:"retry_wait_max"`
	AttemptTimeout  Duration `yaml:"attempt_timeout"`
	MaxBodyBytes    int64    `yaml:"max_body_bytes"`
	MaxSourceBytes  int64    `yaml:"max_source_bytes"`
	MaxSourceOffers int      `yaml:"max_source_offers"`
}

// ProvidersConfig configures each source.
type ProvidersConfig struct {
	VastAI    ProviderConfig `yaml:"vastai"`
	RunPod    ProviderConfig `yaml:"runpod"`
	Lambda    ProviderConfig `yaml:"lambda"`
	CoreWeave ProviderConfig `yaml:"coreweave"`
	Verda     ProviderConfig `yaml:"verda"`
	OCI       ProviderConfig `yaml:"oci"`
	Vultr     ProviderConfig `yaml:"vultr"`
	// TensorDock needs an API key (api_key_env/api_key_file): its API answers only to a token.
	TensorDock ProviderConfig `yaml:"tensordock"`
	Nebius     ProviderConfig `yaml:"nebius"`
	// DigitalOcean is DigitalOcean's GPU Droplets: the API's size list with a token, else the
	// pricing page of its documentation.
	DigitalOcean ProviderConfig `yaml:"digitalocean"`
	Hyperstack   ProviderConfig `yaml:"hyperstack"`
}

// ProviderConfig is one source's endpoint and credentials. The key itself never sits in the
// file: it is read from the environment variable APIKeyEnv or the file APIKeyFile.
type ProviderConfig struct {
	URL        string   `yaml:"url"`
	PageURL    string   `yaml:"page_url"`
	APIKeyEnv  string   `yaml:"api_key_env"`
	APIKeyFile string   `yaml:"api_key_file"`
	Delay      Duration `yaml:"delay"`
	// PageLimit is the offers asked for per request (vastai only; 0 takes the source's default).
	PageLimit int `yaml:"page_limit"`
	// ClientIDEnv and ClientIDFile name where the OAuth2 client id is read (verda only, whose
	// API key is the client secret). Like the key, the id never sits in the file.
	ClientIDEnv  string `yaml:"client_id_env"`
	ClientIDFile string `yaml:"client_id_file"`
	// ShapesURL is the shapes catalog the price list is joined with (oci only; its url is the
	// price list).
	ShapesURL string `yaml:"shapes_url"`
	// MetalURL is the bare-metal plan list (vultr only; url is its VM plan list).
	MetalURL string `yaml:"metal_url"`
	// CatalogURL is the REST v2 GPU catalog, read only with a key for the serverless prices
	// (runpod only; url is its GraphQL endpoint).
	CatalogURL string `yaml:"catalog_url"`
}

// ServeConfig configures `gpucost serve`.
type ServeConfig struct {
	Listen           string   `yaml:"listen"`
	ScrapeSchedule   string   `yaml:"scrape_schedule"`
	ScrapeOnStart    bool     `yaml:"scrape_on_start"`
	StaleAfter       Duration `yaml:"stale_after"`
	ShutdownGrace    Duration `yaml:"shutdown_grace"`
	QueryTimeout     Duration `yaml:"query_timeout"`
	DashboardRefresh Duration `yaml:"dashboard_refresh"`
}

// ReportConfig configures `gpucost report` and its weekly email in serve.
type ReportConfig struct {
	Schedule     string `yaml:"schedule"`
	OutDir       string `yaml:"out_dir"`
	HistoryWeeks int    `yaml:"history_weeks"`
	// DashboardURL is linked from every team's email; "" links nothing.
	DashboardURL string     `yaml:"dashboard_url"`
	SMTP         SMTPConfig `yaml:"smtp"`
}

// SMTPConfig says how report emails leave. The password never sits in the file: it is read
// from the environment variable PasswordEnv or the file PasswordFile.
type SMTPConfig struct {
	Host         string   `yaml:"host"`
	Port         int      `yaml:"port"`
	From         string   `yaml:"from"`
	Username     string   `yaml:"username"`
	PasswordEnv  string   `yaml:"password_env"`
	PasswordFile string   `yaml:"password_file"`
	StartTLS     string   `yaml:"starttls"`
	Timeout      Duration `yaml:"timeout"`
	Retries      int      `yaml:"retries"`
	RetryWait    Duration `yaml:"retry_wait"`
}

// Duration is a time.Duration written as "90s" or "5m" in YAML and the environment.
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %s (want e.g. 90s, 5m, 2h)", selection.Quote(string(b)))
	}
	*d = Duration(v)
	return nil
}

// UnmarshalYAML parses a duration in a config file; its error carries the node's position, so
// a bad duration names the file and line.
func (d *Duration) UnmarshalYAML(node ast.Node) error {
	tk := node.GetToken()
	if tk == nil {
		return &yaml.SyntaxError{Message: "a duration is required (e.g. 90s, 5m, 2h)", Token: tk}
	}
	if err := d.UnmarshalText([]byte(tk.Value)); err != nil {
		return &yaml.SyntaxError{Message: err.Error(), Token: tk}
	}
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Load returns the embedded defaults, overlaid by the file at path (when not empty) and
// then by GPUCOST_* environment variables, validated. Every error names where the bad value
// came from: the file and line, or the variable.
func Load(path string, getenv func(string) string) (Config, error) {
	var c Config
	org := origins{}
	if err := decodeConfig("embedded defaults", DefaultYAML, &c); err != nil {
		return c, err
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("reading config: %w", err)
		}
		if err := decodeConfig(path, data, &c); err != nil {
			return c, err
		}
		org.addFile(path, data)
	}
	if err := applyEnv(reflect.ValueOf(&c).Elem(), "GPUCOST", "", getenv, org); err != nil {
		return c, err
	}
	pathErr := c.placeState(getenv, os.Geteuid() == 0)
	return c, org.explain(errors.Join(pathErr, c.validate()))
}

// placeState puts the folders the configuration leaves empty (scrape.spool_dir, report.out_dir)
// in gpucost's state folder (StateDir), so that no default depends on the folder gpucost runs in.
func (c *Config) placeState(getenv func(string) string, root bool) error {
	if c.Scrape.SpoolDir != "" && c.Report.OutDir != "" {
		return nil
	}
	dir, err := StateDir(getenv, root)
	if err != nil {
		key := "scrape.spool_dir"
		if c.Scrape.SpoolDir != "" {
			key = "report.out_dir"
		}
		return bad(key, "not set, and %v: set it (GPUCOST_%s)", err, strings.ToUpper(strings.ReplaceAll(key, ".", "_")))
	}
	if c.Scrape.SpoolDir == "" {
		c.Scrape.SpoolDir = filepath.Join(dir, "spool")
	}
	if c.Report.OutDir == "" {
		c.Report.OutDir = filepath.Join(dir, "reports")
	}
	return nil
}

// StateDir is gpucost's state folder, where the folders the configuration leaves empty go:
// $STATE_DIRECTORY (set by systemd's StateDirectory=; the first when it lists several), else
// /var/lib/gpucost for root, else $XDG_STATE_HOME/gpucost, else ~/.local/state/gpucost. Relative
// paths in the variables are ignored, as the XDG Base Directory specification says.
func StateDir(getenv func(string) string, root bool) (string, error) {
	if dirs := getenv("STATE_DIRECTORY"); dirs != "" {
		if dir, _, _ := strings.Cut(dirs, ":"); filepath.IsAbs(dir) {
			return dir, nil
		}
	}
	if root {
		return "/var/lib/gpucost", nil
	}
	if dir := getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "gpucost"), nil
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "gpucost"), nil
	}
	return "", errors.New("there is no state folder ($STATE_DIRECTORY, $XDG_STATE_HOME and $HOME are unset)")
}

// decodeConfig decodes data strictly onto c: unknown keys, wrong types and bad values are errors
// that name the file and line, with the lines around it.
func decodeConfig(name string, data []byte, c *Config) error {
	err := yaml.UnmarshalWithOptions(data, c, yaml.Strict())
	if err == nil {
		return nil
	}
	var ye yaml.Error
	if !errors.As(err, &ye) || ye.GetToken() == nil {
		return fmt.Errorf("config %s: %s", name, yaml.FormatError(err, false, true))
	}
	pos := ye.GetToken().Position
	msg := ye.GetMessage()
	for key, now := range movedKeys {
		if strings.Contains(msg, `unknown field "`+key+`"`) {
			msg += " (" + key + " has moved: " + now + ")"
		}
	}
	// FormatError starts with "[line:column] message"; the lines of the file around it follow.
	_, excerpt, _ := strings.Cut(yaml.FormatError(err, false, true), "\n")
	return fmt.Errorf("config %s:%d:%d: %s\n%s", name, pos.Line, pos.Column, msg, excerpt)
}

// origins says where each configuration value came from, by key path (serve.stale_after): a
// file and line ("config FILE:LINE") or a variable ("environment variable GPUCOST_..."). A key
// in neither has its embedded default.
type origins map[string]string

// addFile records the line of every key of a config file, flow mappings included.
func (o origins) addFile(name string, data []byte) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return // decodeConfig has reported it
	}
	var walk func(prefix string, n ast.Node)
	walk = func(prefix string, n ast.Node) {
		switch n := n.(type) {
		case *ast.MappingNode:
			for _, v := range n.Values {
				walk(prefix, v)
			}
		case *ast.MappingValueNode:
			key := n.Key.GetToken().Value
			if prefix != "" {
				key = prefix + "." + key
			}
			o[key] = fmt.Sprintf("config %s:%d", name, n.Key.GetToken().Position.Line)
			walk(key, n.Value)
		}
	}
	for _, doc := range f.Docs {
		walk("", doc.Body)
	}
}

// of returns where key's value came from; "" for an embedded default.
func (o origins) of(key string) string { return o[key] }

// explain prefixes every fieldError of err with where its value came from.
func (o origins) explain(err error) error {
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range flatten(err) {
		var fe fieldError
		if !errors.As(e, &fe) {
			out = append(out, e)
			continue
		}
		from := ""
		for _, k := range append([]string{fe.key}, fe.also...) {
			if from = o.of(k); from != "" {
				break
			}
		}
		if from == "" {
			from = "the embedded defaults (config/gpucost.yaml)"
		}
		out = append(out, fmt.Errorf("%s: %w", from, fe))
	}
	return errors.Join(out...)
}

// flatten lists the errors joined in err.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// fieldError is a bad configuration value: its key path and what is wrong. also names other
// keys the value is checked against (their origin is named when key's is the default).
type fieldError struct {
	key  string
	msg  string
	also []string
}

func (e fieldError) Error() string { return e.key + ": " + e.msg }

// bad returns a fieldError.
func bad(key, format string, args ...any) error {
	return fieldError{key: key, msg: fmt.Sprintf(format, args...)}
}

// movedKeys are keys of earlier releases and where their setting lives now, for the error a
// config file that still has one gets.
var movedKeys = map[string]string{
	"offer_max_age": "optimize.options.max_offer_age_hours, in hours (default 24)",
}

// applyEnv sets every field of v from its GPUCOST_* variable when that is set, and records the
// variable as the origin of the field's key path (path is the key path of v).
func applyEnv(v reflect.Value, prefix, path string, getenv func(string) string, org origins) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		name := prefix + "_" + strings.ToUpper(key)
		keyPath := key
		if path != "" {
			keyPath = path + "." + key
		}
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct {
			if err := applyEnv(fv, name, keyPath, getenv, org); err != nil {
				return err
			}
			continue
		}
		raw := getenv(name)
		if raw == "" {
			continue
		}
		if err := setFromString(fv, raw); err != nil {
			return fmt.Errorf("environment variable %s: %s: %w", name, keyPath, err)
		}
		org[keyPath] = "environment variable " + name
	}
	return nil
}

func setFromString(v reflect.Value, raw string) error {
	if v.Type() == reflect.TypeOf(Duration(0)) {
		return v.Addr().Interface().(*Duration).UnmarshalText([]byte(raw))
	}
	if v.Kind() == reflect.Pointer { // an optional value: set, it points at what the text says
		p := reflect.New(v.Type().Elem())
		if err := setFromString(p.Elem(), raw); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return fmt.Errorf("invalid boolean %q (want true or false)", raw)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid integer %q", raw)
		}
		v.SetInt(n)
	case reflect.Float64:
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("invalid number %q", raw)
		}
		v.SetFloat(n)
	case reflect.Slice:
		var items []string
		for _, s := range strings.Split(raw, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, s)
			}
		}
		v.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}

// ProviderNames are the sources gpucost knows, in the order they are listed.
var ProviderNames = []string{"coreweave", "digitalocean", "hyperstack", "lambda", "nebius", "oci", "runpod", "tensordock", "vastai", "verda", "vultr"}

// validate checks every value: each error is a fieldError naming its key. Commands can rely
// on what passes: a DSN the driver parses, positive timeouts, schedules cron accepts.
func (c Config) validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(c.ClickHouse.check())
	add(c.Scrape.check())
	add(c.HTTP.check())
	for _, name := range ProviderNames {
		pc, _ := Provider(c, name)
		add(pc.check("providers." + name))
	}
	add(c.Serve.check())
	add(checkSchedule("optimize.schedule", c.Optimize.Schedule))
	add(optionErrors(c.Optimize.Options.Validate()))
	add(c.Report.check())
	add(c.Prometheus.check())
	add(c.Log.check())
	return errors.Join(errs...)
}

// check validates the prometheus section: a URL without credentials (or none), a query
// template gpuusage takes, a positive window of whole milliseconds (PromQL's resolution) and
// timeout, a variable name for the token.
func (p PrometheusConfig) check() error {
	errs := []error{checkURL("prometheus.url", p.URL), positive("prometheus.window", p.Window), positive("prometheus.timeout", p.Timeout)}
	if u, err := url.Parse(p.URL); err == nil && u.User != nil {
		errs = append(errs, bad("prometheus.url", "holds a user or password: give a bearer token (prometheus.bearer_token_env or bearer_token_file) instead"))
	}
	if err := gpuusage.CheckQuery(p.Query); err != nil {
		errs = append(errs, bad("prometheus.query", "%v", err))
	}
	if p.Window.Std()%time.Millisecond != 0 {
		errs = append(errs, bad("prometheus.window", "%s is finer than PromQL's milliseconds", p.Window.Std()))
	}
	if p.BearerTokenEnv != "" && !envName.MatchString(p.BearerTokenEnv) {
		errs = append(errs, bad("prometheus.bearer_token_env", "%s is not an environment variable name", selection.Quote(p.BearerTokenEnv)))
	}
	return errors.Join(errs...)
}

// BearerToken reads the token sent to Prometheus from BearerTokenFile or the BearerTokenEnv
// variable; "" when neither is set. The value is never logged or put in an error.
func (p PrometheusConfig) BearerToken(getenv func(string) string) (string, error) {
	return readSecret("the prometheus.bearer_token", p.BearerTokenFile, p.BearerTokenEnv, getenv)
}

// optionErrors turns the optimizer's errors ("option NAME: ...") into fieldErrors of
// optimize.options.NAME. optimizer.Options.Validate gives no typed error, so its message is
// read here, the one place that does.
func optionErrors(err error) error {
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range flatten(err) {
		if name, msg, ok := strings.Cut(strings.TrimPrefix(e.Error(), "option "), ": "); ok && strings.HasPrefix(e.Error(), "option ") {
			out = append(out, bad("optimize.options."+name, "%s", msg))
		} else {
			out = append(out, bad("optimize.options", "%v", e))
		}
	}
	return errors.Join(out...)
}

// dsnSchemes are the DSN schemes of the ClickHouse driver: the native protocol, or HTTP(S).
var dsnSchemes = []string{"clickhouse", "tcp", "http", "https"}

// check parses the DSN the way the store will, so a DSN that cannot work fails here, at load,
// and not on every query of a run. Errors never repeat the DSN (it may hold a password).
func (c ClickHouseConfig) check() error {
	if c.DSN == "" {
		return bad("clickhouse.dsn", "required (clickhouse://user@host:9000/database)")
	}
	u, err := url.Parse(c.DSN)
	if err != nil {
		return bad("clickhouse.dsn", "not a URL like clickhouse://user@host:9000/database (URL-encode special characters of the password)")
	}
	if !slices.Contains(dsnSchemes, u.Scheme) {
		return bad("clickhouse.dsn", "scheme %s: want clickhouse:// (the native protocol) or http(s)://", selection.Quote(u.Scheme))
	}
	opts, err := clickhouse.ParseDSN(c.DSN)
	if err != nil {
		// The driver's errors (clickhouse-go's ParseDSN) name the bad parameter and its value,
		// never the password: the driver redacts the URL.
		return bad("clickhouse.dsn", "%v", err)
	}
	var errs []error
	for _, a := range opts.Addr {
		if _, port, err := net.SplitHostPort(a); err != nil || !validPort(port, false) {
			errs = append(errs, bad("clickhouse.dsn", "address %s: want host:port", selection.Quote(a)))
		}
	}
	if opts.DialTimeout < 0 || opts.ReadTimeout < 0 || opts.ConnMaxLifetime < 0 {
		errs = append(errs, bad("clickhouse.dsn", "dial_timeout, read_timeout and conn_max_lifetime must not be negative"))
	}
	if opts.MaxOpenConns < 0 || opts.MaxIdleConns < 0 {
		errs = append(errs, bad("clickhouse.dsn", "max_open_conns and max_idle_conns must not be negative"))
	}
	if c.Cluster != "" && !clusterName.MatchString(c.Cluster) {
		errs = append(errs, bad("clickhouse.cluster", "%s is not a cluster name (letters, digits, '_', '.', '-')", selection.Quote(c.Cluster)))
	}
	return errors.Join(errs...)
}

// MaxOpenConns is the size of the DSN's connection pool (max_open_conns; the driver's default
// is 10). The configuration has been validated.
func (c ClickHouseConfig) MaxOpenConns() int {
	opts, err := clickhouse.ParseDSN(c.DSN)
	if err != nil || opts.MaxOpenConns <= 0 {
		return 10
	}
	return opts.MaxOpenConns
}

var clusterName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func (s ScrapeConfig) check() error {
	var errs []error
	if len(s.Providers) == 0 {
		errs = append(errs, bad("scrape.providers", "name at least one of %s", strings.Join(ProviderNames, ", ")))
	}
	seen := map[string]bool{}
	for _, p := range s.Providers {
		switch {
		case !slices.Contains(ProviderNames, p):
			errs = append(errs, bad("scrape.providers", "unknown provider %s (want some of %s)", selection.Quote(p), strings.Join(ProviderNames, ", ")))
		case seen[p]:
			errs = append(errs, bad("scrape.providers", "%s is listed twice", p))
		}
		seen[p] = true
	}
	if s.Parallelism < 1 {
		errs = append(errs, bad("scrape.parallelism", "must be at least 1, not %d", s.Parallelism))
	}
	// source_timeout_max is at least source_timeout (the pipeline raises it): a configuration
	// that raises only the timeout keeps working.
	errs = append(errs, positive("scrape.source_timeout", s.SourceTimeout), positive("scrape.source_timeout_max", s.SourceTimeoutMax),
		positive("scrape.load_timeout", s.LoadTimeout), notNegative("scrape.lock_wait", s.LockWait))
	if !(s.MinOfferRatio >= 0 && s.MinOfferRatio <= 1) {
		errs = append(errs, bad("scrape.min_offer_ratio", "must be between 0 and 1, not %g", s.MinOfferRatio))
	}
	if !(s.MaxPricePerGPUHour > 0) {
		errs = append(errs, bad("scrape.max_price_per_gpu_hour", "must be positive, not %g", s.MaxPricePerGPUHour))
	}
	if !(s.OutlierFactor == 0 || s.OutlierFactor > 1) {
		errs = append(errs, bad("scrape.outlier_factor", "must be above 1 (or 0 to disable the check), not %g", s.OutlierFactor))
	}
	return errors.Join(errs...)
}

func (h HTTPConfig) check() error {
	errs := []error{notNegative("http.retry_wait_min", h.RetryWaitMin), notNegative("http.retry_wait_max", h.RetryWaitMax),
		positive("http.attempt_timeout", h.AttemptTimeout)}
	if h.RetryMax < 0 || h.RetryMax > 100 {
		errs = append(errs, bad("http.retry_max", "must be between 0 and 100, not %d", h.RetryMax))
	}
	if h.RetryWaitMax < h.RetryWaitMin {
		errs = append(errs, fieldError{key: "http.retry_wait_max", also: []string{"http.retry_wait_min"},
			msg: fmt.Sprintf("%s is below http.retry_wait_min %s", h.RetryWaitMax.Std(), h.RetryWaitMin.Std())})
	}
	if h.MaxBodyBytes <= 0 {
		errs = append(errs, bad("http.max_body_bytes", "must be positive, not %d", h.MaxBodyBytes))
	}
	if h.MaxSourceBytes <= 0 {
		errs = append(errs, bad("http.max_source_bytes", "must be positive, not %d", h.MaxSourceBytes))
	}
	if h.MaxSourceOffers <= 0 {
		errs = append(errs, bad("http.max_source_offers", "must be positive, not %d", h.MaxSourceOffers))
	}
	if strings.IndexFunc(h.UserAgent, unicode.IsControl) >= 0 {
		errs = append(errs, bad("http.user_agent", "holds a control character"))
	}
	return errors.Join(errs...)
}

// envName is what an environment variable may be called.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Which providers read which optional settings of their block: a setting a source does not
// read is refused, never silently ignored.
var (
	pageAndAPI = []string{"digitalocean", "hyperstack", "lambda", "verda"}                                  // page_url: the page read without a key
	paced      = []string{"coreweave", "digitalocean", "hyperstack", "lambda", "nebius", "vastai", "verda"} // delay: between requests or page fetches
	keyless    = []string{"coreweave", "nebius", "oci"}                                                     // no API key at all
)

func (p ProviderConfig) check(key string) error {
	errs := []error{checkURL(key+".url", p.URL), checkURL(key+".page_url", p.PageURL), checkURL(key+".shapes_url", p.ShapesURL), checkURL(key+".metal_url", p.MetalURL), checkURL(key+".catalog_url", p.CatalogURL), notNegative(key+".delay", p.Delay)}
	if p.ShapesURL != "" && key != "providers.oci" {
		errs = append(errs, bad(key+".shapes_url", "only providers.oci joins a shapes catalog"))
	}
	if p.MetalURL != "" && key != "providers.vultr" {
		errs = append(errs, bad(key+".metal_url", "only providers.vultr reads a bare-metal plan list"))
	}
	if p.CatalogURL != "" && key != "providers.runpod" {
		errs = append(errs, bad(key+".catalog_url", "only providers.runpod reads a v2 catalog"))
	}
	name := strings.TrimPrefix(key, "providers.")
	if p.PageURL != "" && !slices.Contains(pageAndAPI, name) {
		errs = append(errs, bad(key+".page_url", "only the providers with both an API and a pricing page read one (%s)", strings.Join(pageAndAPI, ", ")))
	}
	if p.Delay != 0 && !slices.Contains(paced, name) {
		errs = append(errs, bad(key+".delay", "%s makes no paced requests: only %s read a delay", name, strings.Join(paced, ", ")))
	}
	if (p.APIKeyEnv != "" || p.APIKeyFile != "") && slices.Contains(keyless, name) {
		errs = append(errs, bad(key+".api_key_env", "%s publishes its prices without a key: none is read", name))
	}
	switch {
	case p.PageLimit < 0:
		errs = append(errs, bad(key+".page_limit", "must not be negative, not %d", p.PageLimit))
	case p.PageLimit > 0 && key != "providers.vastai":
		errs = append(errs, bad(key+".page_limit", "only providers.vastai pages its answers"))
	}
	if p.APIKeyEnv != "" && !envName.MatchString(p.APIKeyEnv) {
		errs = append(errs, bad(key+".api_key_env", "%s is not an environment variable name", selection.Quote(p.APIKeyEnv)))
	}
	switch {
	case (p.ClientIDEnv != "" || p.ClientIDFile != "") && key != "providers.verda":
		errs = append(errs, bad(key+".client_id_env", "only providers.verda has a client id (its api_key is the client secret)"))
	case p.ClientIDEnv != "" && !envName.MatchString(p.ClientIDEnv):
		errs = append(errs, bad(key+".client_id_env", "%s is not an environment variable name", selection.Quote(p.ClientIDEnv)))
	}
	return errors.Join(errs...)
}

// checkURL accepts "" (the source's default) or an absolute http(s) URL.
func checkURL(key, s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return bad(key, "%s is not an http(s):// URL", selection.Quote(s))
	}
	return nil
}

func (s ServeConfig) check() error {
	errs := []error{checkSchedule("serve.scrape_schedule", s.ScrapeSchedule), positive("serve.stale_after", s.StaleAfter),
		notNegative("serve.shutdown_grace", s.ShutdownGrace), positive("serve.query_timeout", s.QueryTimeout),
		positive("serve.dashboard_refresh", s.DashboardRefresh)}
	if _, port, err := net.SplitHostPort(s.Listen); err != nil || !validPort(port, true) {
		errs = append(errs, bad("serve.listen", "%s is not an address like 127.0.0.1:8080 or :8080", selection.Quote(s.Listen)))
	}
	return errors.Join(errs...)
}

// validPort accepts a port number (0, any free port, only when zeroOK).
func validPort(s string, zeroOK bool) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n <= 65535 && (n > 0 || (zeroOK && n == 0))
}

// checkSchedule parses a cron spec as gpucost serve's scheduler does (cron.New's standard
// parser: five fields or a descriptor such as @every 30m).
func checkSchedule(key, spec string) error {
	if _, err := cron.ParseStandard(spec); err != nil {
		return bad(key, "%s is not a cron schedule (e.g. \"5 * * * *\" or \"@every 30m\"): %v", selection.Quote(spec), err)
	}
	return nil
}

func positive(key string, d Duration) error {
	if d <= 0 {
		return bad(key, "must be positive, not %s", d.Std())
	}
	return nil
}

func notNegative(key string, d Duration) error {
	if d < 0 {
		return bad(key, "must not be negative, not %s", d.Std())
	}
	return nil
}

// secrets are the configuration's secrets, as far as they can be read: the ClickHouse password
// (of the DSN's user, or its password parameter) and the SMTP password, which gpucost keeps to
// itself, and every provider's API key and the Prometheus bearer token, which it sends
// (redact.Redactor.AddSent). Each
// command's output and everything it stores is scrubbed of them.
//
// A DSN password that is the DSN's own user, database or host name (docker-compose's default
// gpucost:gpucost@…/gpucost) is left out: the same text is shown as that name anyway, and
// scrubbing it would shred every path and name that holds the word. It is still masked where it
// stands in a DSN, by its shape.
func (c Config) Secrets(getenv func(string) string) (passwords, apiKeys []string) {
	if u, err := url.Parse(c.ClickHouse.DSN); err == nil {
		public := []string{u.User.Username(), strings.Trim(u.Path, "/"), u.Hostname()}
		var dsn []string
		if p, ok := u.User.Password(); ok {
			dsn = append(dsn, p)
		}
		for name, vs := range u.Query() {
			if redact.IsCredentialParam(name) {
				dsn = append(dsn, vs...)
			} else if name == "username" || name == "database" {
				public = append(public, vs...)
			}
		}
		for _, p := range dsn {
			if !slices.Contains(public, p) {
				passwords = append(passwords, p)
			}
		}
	}
	if p, err := c.Report.SMTP.Password(getenv); err == nil {
		passwords = append(passwords, p)
	}
	for _, name := range ProviderNames {
		if pc, ok := Provider(c, name); ok {
			if key, err := pc.APIKey(getenv); err == nil {
				apiKeys = append(apiKeys, key)
			}
			if id, err := pc.ClientID(getenv); err == nil && id != "" {
				apiKeys = append(apiKeys, id) // sent with the secret: scrubbed like it
			}
		}
	}
	if token, err := c.Prometheus.BearerToken(getenv); err == nil && token != "" {
		apiKeys = append(apiKeys, token) // sent to Prometheus, as a key to a provider
	}
	return passwords, apiKeys
}

// APIKey reads a provider's key from its file or environment variable; "" when neither is set.
func (p ProviderConfig) APIKey(getenv func(string) string) (string, error) {
	return readSecret("the API key", p.APIKeyFile, p.APIKeyEnv, getenv)
}

// ClientID reads a provider's OAuth2 client id (verda) from its file or environment variable;
// "" when neither is set. It is treated as a secret, as the key is.
func (p ProviderConfig) ClientID(getenv func(string) string) (string, error) {
	return readSecret("the client id", p.ClientIDFile, p.ClientIDEnv, getenv)
}

// readSecret reads a secret from file when one is named, else from the environment variable
// env; "" when neither is set. Surrounding white space (a file's final newline) is dropped.
func readSecret(what, file, env string, getenv func(string) string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("reading %s file: %w", what, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if env != "" {
		return strings.TrimSpace(getenv(env)), nil
	}
	return "", nil
}

// check validates the report section, as part of Config.validate: a bad SMTP setting stops
// every command at start, not the weekly job on Monday.
func (r ReportConfig) check() error {
	errs := []error{checkSchedule("report.schedule", r.Schedule), checkURL("report.dashboard_url", r.DashboardURL)}
	if u, err := url.Parse(r.DashboardURL); err == nil && u.User != nil {
		errs = append(errs, bad("report.dashboard_url", "holds a user or password, which every email would show"))
	}
	if r.HistoryWeeks < 1 || r.HistoryWeeks > 104 {
		errs = append(errs, bad("report.history_weeks", "%d not in 1..104", r.HistoryWeeks))
	}
	s := r.SMTP
	if s.Host == "" {
		errs = append(errs, bad("report.smtp.host", "required"))
	}
	if s.Port < 1 || s.Port > 65535 {
		errs = append(errs, bad("report.smtp.port", "%d not a port", s.Port))
	}
	if _, err := report.Recipients(s.From); err != nil || strings.Contains(s.From, ",") {
		errs = append(errs, bad("report.smtp.from", "%s is not one email address", selection.Quote(s.From)))
	}
	if !slices.Contains([]string{"mandatory", "opportunistic", "off"}, s.StartTLS) {
		errs = append(errs, bad("report.smtp.starttls", "%s (want mandatory, opportunistic or off)", selection.Quote(s.StartTLS)))
	}
	errs = append(errs, positive("report.smtp.timeout", s.Timeout), notNegative("report.smtp.retry_wait", s.RetryWait))
	if s.Retries < 0 || s.Retries > 10 {
		errs = append(errs, bad("report.smtp.retries", "%d not in 0..10", s.Retries))
	}
	if s.PasswordEnv != "" && !envName.MatchString(s.PasswordEnv) {
		errs = append(errs, bad("report.smtp.password_env", "%s is not an environment variable name", selection.Quote(s.PasswordEnv)))
	}
	return errors.Join(errs...)
}

// password reads the SMTP password from PasswordFile or the PasswordEnv variable; "" when
// neither is set. The value is never logged or put in an error.
func (s SMTPConfig) Password(getenv func(string) string) (string, error) {
	return readSecret("the report.smtp.password", s.PasswordFile, s.PasswordEnv, getenv)
}

// Provider returns the configuration of the provider called name.
func Provider(cfg Config, name string) (ProviderConfig, bool) {
	switch name {
	case scrapers.VastName:
		return cfg.Providers.VastAI, true
	case scrapers.RunPodName:
		return cfg.Providers.RunPod, true
	case scrapers.LambdaName:
		return cfg.Providers.Lambda, true
	case scrapers.CoreWeaveName:
		return cfg.Providers.CoreWeave, true
	case scrapers.VerdaName:
		return cfg.Providers.Verda, true
	case scrapers.OCIName:
		return cfg.Providers.OCI, true
	case scrapers.VultrName:
		return cfg.Providers.Vultr, true
	case scrapers.TensorDockName:
		return cfg.Providers.TensorDock, true
	case scrapers.NebiusName:
		return cfg.Providers.Nebius, true
	case scrapers.DigitalOceanName:
		return cfg.Providers.DigitalOcean, true
	case scrapers.HyperstackName:
		return cfg.Providers.Hyperstack, true
	}
	return ProviderConfig{}, false
}

// WriteEffective writes the configuration as YAML with the DSN's password masked, then for each
// provider whether an API key was found, and whether a Prometheus bearer token was (never the
// key or the token). scrub masks what else looks like a
// credential (a URL's password, ?api_key=) in the YAML: the text is printed as a message.
func WriteEffective(w io.Writer, c Config, getenv func(string) string, scrub func(string) string) error {
	c.ClickHouse.DSN = MaskDSN(c.ClickHouse.DSN)
	out, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	fmt.Fprint(w, scrub(string(out)))
	fmt.Fprintln(w, "# API keys found:")
	for _, name := range ProviderNames {
		pc, _ := Provider(c, name)
		state := "not set"
		if key, err := pc.APIKey(getenv); err != nil {
			state = "error: " + err.Error()
		} else if key != "" {
			state = "set (masked)"
		}
		if pc.ClientIDEnv != "" || pc.ClientIDFile != "" {
			id := "client id not set"
			if v, err := pc.ClientID(getenv); err != nil {
				id = "client id error: " + err.Error()
			} else if v != "" {
				id = "client id set (masked)"
			}
			state += ", " + id
		}
		if _, err := fmt.Fprintf(w, "#   %s: %s\n", name, state); err != nil {
			return err
		}
	}
	state := "not set"
	if token, err := c.Prometheus.BearerToken(getenv); err != nil {
		state = "error: " + err.Error()
	} else if token != "" {
		state = "set (masked)"
	}
	_, err = fmt.Fprintf(w, "# Prometheus bearer token: %s\n", state)
	return err
}

// MaskDSN replaces the DSN's password, given as the user's or as a parameter, with REDACTED.
func MaskDSN(dsn string) string {
	if _, err := url.Parse(dsn); err != nil {
		return "(unparsable DSN, hidden)"
	}
	return (*redact.Redactor)(nil).URL(dsn)
}

// Pipeline is the scrape section as the pipeline takes it.
func (s ScrapeConfig) Pipeline() pipeline.Config {
	return pipeline.Config{
		Parallelism:        s.Parallelism,
		SourceTimeout:      s.SourceTimeout.Std(),
		SourceTimeoutMax:   s.SourceTimeoutMax.Std(),
		LoadTimeout:        s.LoadTimeout.Std(),
		MinOfferRatio:      s.MinOfferRatio,
		MaxPricePerGPUHour: decimal.NewFromFloat(s.MaxPricePerGPUHour),
		OutlierFactor:      s.OutlierFactor,
		SpoolDir:           s.SpoolDir,
		LockWait:           s.LockWait.Std(),
	}
}
