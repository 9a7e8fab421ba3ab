package main

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/gpucost/gpucost/optimizer"
)

// defaultConfigYAML is the embedded default configuration: every field, documented. A config
// file given with --config is read on top of it, then GPUCOST_* environment variables.
//
//go:embed gpucost.yaml
var defaultConfigYAML []byte

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
}

// OptimizeConfig configures `gpucost optimize` and its nightly run in serve.
type OptimizeConfig struct {
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
	UserAgent      string   `yaml:"user_agent"`
	RetryMax       int      `yaml:"retry_max"`
	RetryWaitMin   Duration `yaml:"retry_wait_min"`
	RetryWaitMax   Duration `yaml:"retry_wait_max"`
	AttemptTimeout Duration `yaml:"attempt_timeout"`
	MaxBodyBytes   int64    `yaml:"max_body_bytes"`
	MaxSourceBytes int64    `yaml:"max_source_bytes"`
}

// ProvidersConfig configures each source.
type ProvidersConfig struct {
	VastAI    ProviderConfig `yaml:"vastai"`
	RunPod    ProviderConfig `yaml:"runpod"`
	Lambda    ProviderConfig `yaml:"lambda"`
	CoreWeave ProviderConfig `yaml:"coreweave"`
}

// ProviderConfig is one source's endpoint and credentials. The key itself never sits in the
// file: it is read from the environment variable APIKeyEnv or the file APIKeyFile.
type ProviderConfig struct {
	URL        string   `yaml:"url"`
	PageURL    string   `yaml:"page_url"`
	APIKeyEnv  string   `yaml:"api_key_env"`
	APIKeyFile string   `yaml:"api_key_file"`
	Delay      Duration `yaml:"delay"`
}

// ServeConfig configures `gpucost serve`.
type ServeConfig struct {
	Listen         string   `yaml:"listen"`
	ScrapeSchedule string   `yaml:"scrape_schedule"`
	StaleAfter     Duration `yaml:"stale_after"`
	ShutdownGrace  Duration `yaml:"shutdown_grace"`
}

// ReportConfig configures `gpucost report` and its weekly email in serve.
type ReportConfig struct {
	Schedule     string     `yaml:"schedule"`
	OutDir       string     `yaml:"out_dir"`
	HistoryWeeks int        `yaml:"history_weeks"`
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
		return fmt.Errorf("invalid duration %q (want e.g. 90s, 5m, 2h)", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Std returns the time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// loadConfig returns the embedded defaults, overlaid by the file at path (when not empty) and
// then by GPUCOST_* environment variables, validated. Errors name the file and line, or the
// variable.
func loadConfig(path string, getenv func(string) string) (Config, error) {
	var c Config
	if err := decodeConfig("embedded defaults", defaultConfigYAML, &c); err != nil {
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
	}
	if err := applyEnv(reflect.ValueOf(&c).Elem(), "GPUCOST", getenv); err != nil {
		return c, err
	}
	return c, c.validate()
}

// decodeConfig decodes data strictly onto c: unknown keys and wrong types are errors that name
// the file and line.
func decodeConfig(name string, data []byte, c *Config) error {
	if err := yaml.UnmarshalWithOptions(data, c, yaml.Strict()); err != nil {
		msg := yaml.FormatError(err, false, true)
		for key, now := range movedKeys {
			if strings.Contains(msg, `unknown field "`+key+`"`) {
				msg += "\n(" + key + " has moved: " + now + ")"
			}
		}
		return fmt.Errorf("config %s: %s", name, msg)
	}
	return nil
}

// movedKeys are keys of earlier releases and where their setting lives now, for the error a
// config file that still has one gets.
var movedKeys = map[string]string{
	"offer_max_age": "optimize.options.max_offer_age_hours, in hours (default 24)",
}

// applyEnv sets every field of v from its GPUCOST_* variable when that is set.
func applyEnv(v reflect.Value, prefix string, getenv func(string) string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		name := prefix + "_" + strings.ToUpper(key)
		fv := v.Field(i)
		if f.Type.Kind() == reflect.Struct {
			if err := applyEnv(fv, name, getenv); err != nil {
				return err
			}
			continue
		}
		raw := getenv(name)
		if raw == "" {
			continue
		}
		if err := setFromString(fv, raw); err != nil {
			return fmt.Errorf("environment variable %s: %w", name, err)
		}
	}
	return nil
}

func setFromString(v reflect.Value, raw string) error {
	if v.Type() == reflect.TypeOf(Duration(0)) {
		return v.Addr().Interface().(*Duration).UnmarshalText([]byte(raw))
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

// providerNames are the sources gpucost knows, in the order they are listed.
var providerNames = []string{"coreweave", "lambda", "runpod", "vastai"}

func (c Config) validate() error {
	var errs []error
	for _, p := range c.Scrape.Providers {
		if !contains(providerNames, p) {
			errs = append(errs, fmt.Errorf("scrape.providers: unknown provider %q (want some of %s)", p, strings.Join(providerNames, ", ")))
		}
	}
	if c.Scrape.Parallelism < 1 {
		errs = append(errs, errors.New("scrape.parallelism: must be at least 1"))
	}
	if c.Scrape.MinOfferRatio < 0 || c.Scrape.MinOfferRatio > 1 {
		errs = append(errs, errors.New("scrape.min_offer_ratio: must be between 0 and 1"))
	}
	if c.Scrape.MaxPricePerGPUHour <= 0 {
		errs = append(errs, errors.New("scrape.max_price_per_gpu_hour: must be positive"))
	}
	if c.Scrape.SpoolDir == "" {
		errs = append(errs, errors.New("scrape.spool_dir: required"))
	}
	if c.Optimize.Workloads == "" {
		errs = append(errs, errors.New("optimize.workloads: required"))
	}
	if err := c.Optimize.Options.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("optimize.options: %w", err))
	}
	if c.HTTP.RetryWaitMax < c.HTTP.RetryWaitMin {
		errs = append(errs, errors.New("http.retry_wait_max: must not be below http.retry_wait_min"))
	}
	errs = append(errs, c.Report.check())
	return errors.Join(errs...)
}

// apiKey reads a provider's key from its file or environment variable; "" when neither is set.
func (p ProviderConfig) apiKey(getenv func(string) string) (string, error) {
	return readSecret("the API key", p.APIKeyFile, p.APIKeyEnv, getenv)
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

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
