package deploy_test

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// docker-compose.yml's gpucost services (the others belong to other parts of the project and
// are only looked at where gpucost depends on them).

// composeService is the part of a compose service the gpucost services use.
type composeService struct {
	Build *struct {
		Context    string            `json:"context"`
		Dockerfile string            `json:"dockerfile"`
		Args       map[string]string `json:"args"`
	} `json:"build"`
	Image       string            `json:"image"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	Ports       []string          `json:"ports"`
	Volumes     []string          `json:"volumes"`
	DependsOn   map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on"`
	Healthcheck json.RawMessage `json:"healthcheck"`
}

var reInterpolation = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}`)

// interpolate does what compose does with ${VAR:-default} when VAR is unset.
func interpolate(s string) string {
	return reInterpolation.ReplaceAllString(s, "$2")
}

// TestComposeGpucostServices checks the gpucost and gpucost-migrate services: built from
// deploy/Dockerfile, migrate first, ClickHouse reached with the compose credentials, serve on
// loopback, the spool on a named volume, secrets passed through rather than written.
func TestComposeGpucostServices(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]json.RawMessage `json:"services"`
		Volumes  map[string]json.RawMessage `json:"volumes"`
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	service := func(name string) composeService {
		raw, ok := file.Services[name]
		if !ok {
			t.Fatalf("docker-compose.yml has no service %s", name)
		}
		var s composeService
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("docker-compose.yml: service %s: %v", name, err)
		}
		return s
	}
	serve, migrate, ch := service("gpucost"), service("gpucost-migrate"), service("clickhouse")

	for name, s := range map[string]composeService{"gpucost": serve, "gpucost-migrate": migrate} {
		if s.Build == nil || s.Build.Dockerfile != "deploy/Dockerfile" || s.Build.Context != "." {
			t.Errorf("service %s: want build context . and dockerfile deploy/Dockerfile", name)
		}
		if s.Image != serve.Image {
			t.Errorf("service %s: image %q, gpucost's is %q: one image for both", name, s.Image, serve.Image)
		}
		if d := s.DependsOn["clickhouse"]; d.Condition != "service_healthy" {
			t.Errorf("service %s: depends_on clickhouse %q, want condition service_healthy", name, d.Condition)
		}
		checkSubcommand(t, "docker-compose.yml service "+name, s.Command)

		// The DSN: the clickhouse service, its port, database and credentials.
		dsn, err := url.Parse(interpolate(s.Environment["GPUCOST_CLICKHOUSE_DSN"]))
		if err != nil {
			t.Errorf("service %s: GPUCOST_CLICKHOUSE_DSN: %v", name, err)
			continue
		}
		pass, _ := dsn.User.Password()
		host, port, _ := net.SplitHostPort(dsn.Host)
		want := map[string][2]string{
			"host":     {host, "clickhouse"},
			"port":     {port, "9000"},
			"user":     {dsn.User.Username(), interpolate(ch.Environment["CLICKHOUSE_USER"])},
			"password": {pass, interpolate(ch.Environment["CLICKHOUSE_PASSWORD"])},
			"database": {strings.TrimPrefix(dsn.Path, "/"), interpolate(ch.Environment["CLICKHOUSE_DB"])},
		}
		for what, v := range want {
			if v[0] != v[1] {
				t.Errorf("service %s: the DSN's %s is %q, the clickhouse service's %q", name, what, v[0], v[1])
			}
		}
		if !strings.Contains(s.Environment["GPUCOST_CLICKHOUSE_DSN"], "${CLICKHOUSE_PASSWORD") {
			t.Errorf("service %s: the DSN's password must follow ${CLICKHOUSE_PASSWORD...}, as the clickhouse service's does", name)
		}
	}
	if len(ch.Healthcheck) == 0 {
		t.Error("service clickhouse has no healthcheck: service_healthy would never be reached")
	}
	if d := serve.DependsOn["gpucost-migrate"]; d.Condition != "service_completed_successfully" {
		t.Errorf("service gpucost: depends_on gpucost-migrate %q, want service_completed_successfully", d.Condition)
	}

	// serve's effective configuration: the image's config file plus the service's environment.
	stages := parseDockerfile(t, "Dockerfile")
	var imageCfg string
	for _, c := range stages[len(stages)-1].all("COPY") {
		if c.heredoc != "" {
			imageCfg = c.heredoc
		}
	}
	local := filepath.Join(t.TempDir(), "gpucost.yaml")
	if err := os.WriteFile(local, []byte(imageCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GPUCOST_CONFIG=" + local}
	for k, v := range serve.Environment {
		env = append(env, k+"="+interpolate(v))
	}
	cfg := configPrint(t, "docker-compose.yml service gpucost", env...)
	_, port, _ := net.SplitHostPort(cfg.Serve.Listen)
	if !slices.Contains(serve.Ports, "127.0.0.1:"+port+":"+port) {
		t.Errorf("service gpucost: serve listens on %s; want the port published on loopback only (127.0.0.1:%s:%s), have %v", cfg.Serve.Listen, port, port, serve.Ports)
	}
	spoolMounted := false
	for _, v := range serve.Volumes {
		src, dst, _ := strings.Cut(v, ":")
		if under(cfg.Scrape.SpoolDir, dst) {
			spoolMounted = true
			if _, ok := file.Volumes[src]; !ok {
				t.Errorf("service gpucost: volume %s is not a declared named volume", src)
			}
		}
	}
	if !spoolMounted {
		t.Errorf("service gpucost: scrape.spool_dir %s is on no volume: spooled batches would be lost with the container", cfg.Scrape.SpoolDir)
	}
	for _, name := range cfg.secretEnvNames("serve") {
		v, ok := serve.Environment[name]
		if !ok {
			t.Errorf("service gpucost: %s is not passed through", name)
		} else if !strings.HasPrefix(v, "${"+name) {
			t.Errorf("service gpucost: %s=%q: pass it through from the environment (${%s:-}), never write it here", name, v, name)
		}
	}
	if host := interpolate(serve.Environment["GPUCOST_REPORT_SMTP_HOST"]); host != "" {
		if _, ok := file.Services[host]; !ok {
			t.Logf("service gpucost: report.smtp.host %q is not a service of docker-compose.yml (yet): the weekly email cannot leave", host)
		}
	}
}
