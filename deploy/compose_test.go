package deploy_test

import (
	"encoding/json"
	"encoding/xml"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// docker-compose.yml's gpucost services, and what the other services do for gpucost: Grafana's
// read-only ClickHouse user and its pinned plugin.

// composeFile is docker-compose.yml: its services, each decoded when asked for, and its named
// volumes.
type composeFile struct {
	Services map[string]json.RawMessage `json:"services"`
	Volumes  map[string]json.RawMessage `json:"volumes"`
}

// composeService is the part of a compose service the checks use.
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

// readCompose reads docker-compose.yml at the repository root.
func readCompose(t *testing.T) composeFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return f
}

// service decodes the named service.
func (f composeFile) service(t *testing.T, name string) composeService {
	t.Helper()
	raw, ok := f.Services[name]
	if !ok {
		t.Fatalf("docker-compose.yml has no service %s", name)
	}
	var s composeService
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("docker-compose.yml: service %s: %v", name, err)
	}
	return s
}

var reInterpolation = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}`)

// interpolate does what compose does with ${VAR:-default} and ${VAR}, VAR set in dotenv (the
// .env file, or the shell) or not.
func interpolate(s string, dotenv map[string]string) string {
	return reInterpolation.ReplaceAllStringFunc(s, func(m string) string {
		sub := reInterpolation.FindStringSubmatch(m)
		if v := dotenv[sub[1]]; v != "" {
			return v
		}
		return sub[2]
	})
}

// mount is one entry of a service's volumes: a named volume or a folder or file of the host
// (./path, relative to the compose file), where it appears in the container, and whether it
// is read-only.
type mount struct {
	source, target string
	readOnly       bool
}

func (s composeService) mounts() []mount {
	var out []mount
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		m := mount{source: parts[0]}
		if len(parts) > 1 {
			m.target = parts[1]
		}
		m.readOnly = len(parts) > 2 && slices.Contains(strings.Split(parts[2], ","), "ro")
		out = append(out, m)
	}
	return out
}

// imageConfig is the configuration file the image carries: its path in the image (ENV
// GPUCOST_CONFIG of deploy/Dockerfile) and its content (the COPY here-document there).
func imageConfig(t *testing.T) (path, content string) {
	t.Helper()
	stages := parseDockerfile(t, "Dockerfile")
	final := stages[len(stages)-1]
	for _, e := range final.all("ENV") {
		if k, v, _ := strings.Cut(e.args, "="); k == "GPUCOST_CONFIG" {
			path = v
		}
	}
	for _, c := range final.all("COPY") {
		if f := strings.Fields(c.args); c.heredoc != "" && f[len(f)-1] == path {
			content = c.heredoc
		}
	}
	if path == "" || content == "" {
		t.Fatal("Dockerfile: no configuration file written by a COPY here-document at ENV GPUCOST_CONFIG")
	}
	return path, content
}

// serveConfig is the effective configuration of the gpucost service, as `gpucost config print`
// in its container would show it with these .env variables: the service's environment,
// interpolated, on the image's configuration file, or on a file under one of its bind mounts
// when GPUCOST_CONFIG names one (binds gives the folder that stands in for a mount's source).
func serveConfig(t *testing.T, serve composeService, dotenv, binds map[string]string) effectiveConfig {
	t.Helper()
	imagePath, content := imageConfig(t)
	image := filepath.Join(t.TempDir(), "gpucost.yaml")
	if err := os.WriteFile(image, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for k, v := range serve.Environment {
		v = interpolate(v, dotenv)
		if k == "GPUCOST_CONFIG" {
			host := ""
			if v == imagePath {
				host = image
			}
			for _, m := range serve.mounts() {
				if dir, ok := binds[m.source]; ok && under(v, m.target) {
					rel, _ := filepath.Rel(m.target, v)
					host = filepath.Join(dir, rel)
				}
			}
			if host == "" {
				t.Fatalf("service gpucost: GPUCOST_CONFIG=%s is neither the image's %s nor on a folder the service mounts", v, imagePath)
			}
			v = host
		}
		env = append(env, k+"="+v)
	}
	return configPrint(t, "docker-compose.yml service gpucost", env...)
}

// TestComposeGpucostServices checks the gpucost and gpucost-migrate services: built from
// deploy/Dockerfile, migrate first, ClickHouse reached with the compose credentials, serve on
// loopback, the spool on a named volume, secrets passed through rather than written.
func TestComposeGpucostServices(t *testing.T) {
	file := readCompose(t)
	serve, migrate, ch := file.service(t, "gpucost"), file.service(t, "gpucost-migrate"), file.service(t, "clickhouse")

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
		dsn, err := url.Parse(interpolate(s.Environment["GPUCOST_CLICKHOUSE_DSN"], nil))
		if err != nil {
			t.Errorf("service %s: GPUCOST_CLICKHOUSE_DSN: %v", name, err)
			continue
		}
		pass, _ := dsn.User.Password()
		host, port, _ := net.SplitHostPort(dsn.Host)
		want := map[string][2]string{
			"host":     {host, "clickhouse"},
			"port":     {port, "9000"},
			"user":     {dsn.User.Username(), interpolate(ch.Environment["CLICKHOUSE_USER"], nil)},
			"password": {pass, interpolate(ch.Environment["CLICKHOUSE_PASSWORD"], nil)},
			"database": {strings.TrimPrefix(dsn.Path, "/"), interpolate(ch.Environment["CLICKHOUSE_DB"], nil)},
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

	// serve's effective configuration with no .env: the image's configuration file plus the
	// service's environment.
	if imagePath, _ := imageConfig(t); interpolate(serve.Environment["GPUCOST_CONFIG"], nil) != imagePath {
		t.Errorf("service gpucost: GPUCOST_CONFIG is %q without an .env, want the image's %s", serve.Environment["GPUCOST_CONFIG"], imagePath)
	}
	cfg := serveConfig(t, serve, nil, nil)
	checkServePortAndSpool(t, file, serve, cfg)
	for _, name := range cfg.secretEnvNames("serve") {
		v, ok := serve.Environment[name]
		if !ok {
			t.Errorf("service gpucost: %s is not passed through", name)
		} else if !strings.HasPrefix(v, "${"+name) {
			t.Errorf("service gpucost: %s=%q: pass it through from the environment (${%s:-}), never write it here", name, v, name)
		}
	}
	if host := interpolate(serve.Environment["GPUCOST_REPORT_SMTP_HOST"], nil); host != "" {
		if _, ok := file.Services[host]; !ok {
			t.Logf("service gpucost: report.smtp.host %q is not a service of docker-compose.yml (yet): the weekly email cannot leave", host)
		}
	}
}

// checkServePortAndSpool checks that serve's port is published on loopback and its spool is
// on a named volume.
func checkServePortAndSpool(t *testing.T, file composeFile, serve composeService, cfg effectiveConfig) {
	t.Helper()
	_, port, _ := net.SplitHostPort(cfg.Serve.Listen)
	if !slices.Contains(serve.Ports, "127.0.0.1:"+port+":"+port) {
		t.Errorf("service gpucost: serve listens on %s; want the port published on loopback only (127.0.0.1:%s:%s), have %v", cfg.Serve.Listen, port, port, serve.Ports)
	}
	spoolMounted := false
	for _, m := range serve.mounts() {
		if under(cfg.Scrape.SpoolDir, m.target) {
			spoolMounted = true
			if _, ok := file.Volumes[m.source]; !ok {
				t.Errorf("service gpucost: scrape.spool_dir %s is on %s, not a declared named volume", cfg.Scrape.SpoolDir, m.source)
			}
		}
	}
	if !spoolMounted {
		t.Errorf("service gpucost: scrape.spool_dir %s is on no volume: spooled batches would be lost with the container", cfg.Scrape.SpoolDir)
	}
}

// ownConfigFolder is the folder of the repository where docker compose users put their own
// configuration and workloads (local/README.md says how).
const ownConfigFolder = "./local"

// TestComposeOwnConfigAndWorkloads is what a user does to run compose on their own
// configuration and teams: files in ./local, GPUCOST_CONFIG and GPUCOST_OPTIMIZE_WORKLOADS in
// .env. The folder must be mounted read-only, kept out of git and of the image's build context,
// and gpucost must then use the files; the spool stays on its volume whatever the file says.
func TestComposeOwnConfigAndWorkloads(t *testing.T) {
	root := repoRoot(t)
	file := readCompose(t)
	serve := file.service(t, "gpucost")
	var own *mount
	for _, m := range serve.mounts() {
		if m.source == ownConfigFolder {
			own = &m
		}
	}
	if own == nil {
		t.Fatalf("service gpucost does not mount %s: there is no way to give it your own configuration and workloads", ownConfigFolder)
	}
	if !own.readOnly || !filepath.IsAbs(own.target) {
		t.Errorf("service gpucost: %s is mounted at %q, read-only %v: want an absolute path, read-only", own.source, own.target, own.readOnly)
	}
	if _, err := os.Stat(filepath.Join(root, ownConfigFolder, "README.md")); err != nil {
		t.Errorf("%s/README.md, which says what to put there: %v", ownConfigFolder, err)
	}
	gitignore, _ := os.ReadFile(filepath.Join(root, ".gitignore"))
	if !slices.Contains(strings.Fields(string(gitignore)), "/local/*") {
		t.Errorf(".gitignore does not keep your files in %s out of git (/local/*)", ownConfigFolder)
	}
	dockerignore, _ := os.ReadFile("Dockerfile.dockerignore")
	if !slices.Contains(strings.Fields(string(dockerignore)), "local") {
		t.Errorf("Dockerfile.dockerignore does not keep %s out of the image's build context", ownConfigFolder)
	}

	// A user's folder: a configuration that names its workloads file beside it and a spool
	// folder of its own, and another workloads file.
	local := t.TempDir()
	inside := func(name string) string { return filepath.ToSlash(filepath.Join(own.target, name)) }
	userCfg := "optimize:\n  workloads: " + inside("workloads.yaml") + "\nscrape:\n  spool_dir: /tmp/my-spool\n"
	if err := os.WriteFile(filepath.Join(local, "gpucost.yaml"), []byte(userCfg), 0o644); err != nil {
		t.Fatal(err)
	}
	binds := map[string]string{ownConfigFolder: local}

	cfg := serveConfig(t, serve, map[string]string{"GPUCOST_CONFIG": inside("gpucost.yaml")}, binds)
	if cfg.Optimize.Workloads != inside("workloads.yaml") {
		t.Errorf("with GPUCOST_CONFIG=%s: optimize.workloads %q, want the file's %s", inside("gpucost.yaml"), cfg.Optimize.Workloads, inside("workloads.yaml"))
	}
	checkServePortAndSpool(t, file, serve, cfg)

	cfg = serveConfig(t, serve, map[string]string{"GPUCOST_OPTIMIZE_WORKLOADS": inside("teams.yaml")}, binds)
	if cfg.Optimize.Workloads != inside("teams.yaml") {
		t.Errorf("with GPUCOST_OPTIMIZE_WORKLOADS=%s in .env: optimize.workloads %q", inside("teams.yaml"), cfg.Optimize.Workloads)
	}
}

// TestComposeGpucostHealthcheck: the gpucost service's health is `gpucost healthcheck` run by
// the image's own binary (the image is distroless: no shell, no curl), a real subcommand, with
// a timeout shorter than its interval.
func TestComposeGpucostHealthcheck(t *testing.T) {
	serve := readCompose(t).service(t, "gpucost")
	var hc struct {
		Test        []string `json:"test"`
		Interval    string   `json:"interval"`
		Timeout     string   `json:"timeout"`
		Retries     int      `json:"retries"`
		StartPeriod string   `json:"start_period"`
	}
	if len(serve.Healthcheck) == 0 {
		t.Fatal("service gpucost has no healthcheck")
	}
	if err := json.Unmarshal(serve.Healthcheck, &hc); err != nil {
		t.Fatalf("service gpucost: healthcheck: %v", err)
	}
	if len(hc.Test) < 3 || hc.Test[0] != "CMD" {
		t.Fatalf("service gpucost: healthcheck test %q: want [\"CMD\", the image's gpucost, \"healthcheck\"] (CMD-SHELL needs a shell, which the image has not)", hc.Test)
	}
	stages := parseDockerfile(t, "Dockerfile")
	var binaries []string
	for _, c := range stages[len(stages)-1].all("COPY") {
		if f := strings.Fields(c.args); strings.HasPrefix(f[0], "--from=") && filepath.Base(f[len(f)-1]) == "gpucost" {
			binaries = append(binaries, f[len(f)-1])
		}
	}
	if !slices.Contains(binaries, hc.Test[1]) {
		t.Errorf("service gpucost: the healthcheck runs %s; the image's binary is at %v", hc.Test[1], binaries)
	}
	checkSubcommand(t, "docker-compose.yml service gpucost healthcheck", hc.Test[2:])
	interval, err1 := time.ParseDuration(hc.Interval)
	timeout, err2 := time.ParseDuration(hc.Timeout)
	if err1 != nil || err2 != nil || timeout <= 0 || timeout >= interval || hc.Retries < 1 {
		t.Errorf("service gpucost: healthcheck interval %q, timeout %q, retries %d: want a timeout shorter than the interval and a retry", hc.Interval, hc.Timeout, hc.Retries)
	}
}

// xmlNode is any element of a ClickHouse configuration file.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []xmlNode  `xml:",any"`
}

// child returns the first child element named name, or nil.
func (n *xmlNode) child(name string) *xmlNode {
	if n == nil {
		return nil
	}
	for i := range n.Nodes {
		if n.Nodes[i].XMLName.Local == name {
			return &n.Nodes[i]
		}
	}
	return nil
}

func (n *xmlNode) text() string {
	if n == nil {
		return ""
	}
	return strings.TrimSpace(n.Text)
}

func (n *xmlNode) attr(name string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

var rePinnedPlugin = regexp.MustCompile(`^grafana-clickhouse-datasource (\d+\.\d+\.\d+)$`)

// TestComposeGrafanaReadsAsReadOnlyUser: Grafana installs its ClickHouse plugin at a pinned
// version and connects as a user of its own, which a users file mounted into the clickhouse
// service makes read-only (readonly 1, only the plugin's query timeout changeable) on the
// gpucost database only, with its password from the environment like the others.
func TestComposeGrafanaReadsAsReadOnlyUser(t *testing.T) {
	file := readCompose(t)
	grafana, ch := file.service(t, "grafana"), file.service(t, "clickhouse")

	if p := grafana.Environment["GF_INSTALL_PLUGINS"]; !rePinnedPlugin.MatchString(p) {
		t.Errorf("service grafana: GF_INSTALL_PLUGINS %q: pin the plugin (grafana-clickhouse-datasource X.Y.Z), or every new install gets whatever is newest", p)
	}
	prov, err := os.ReadFile(filepath.Join("grafana", "provisioning", "datasources", "clickhouse.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"username: ${GPUCOST_GRAFANA_CLICKHOUSE_USER}", "password: ${GPUCOST_GRAFANA_CLICKHOUSE_PASSWORD}"} {
		if !strings.Contains(string(prov), want) {
			t.Errorf("grafana/provisioning/datasources/clickhouse.yaml does not take %q from the environment compose sets", want)
		}
	}
	user := interpolate(grafana.Environment["GPUCOST_GRAFANA_CLICKHOUSE_USER"], nil)
	if user == "" || user == interpolate(ch.Environment["CLICKHOUSE_USER"], nil) {
		t.Fatalf("service grafana: connects as %q, gpucost's own read-write user: give it the read-only one", user)
	}

	// The users file: mounted into ClickHouse's users.d, read-only.
	var users *xmlNode
	for _, m := range ch.mounts() {
		if !strings.HasPrefix(m.target, "/etc/clickhouse-server/users.d/") || !strings.HasSuffix(m.target, ".xml") {
			continue
		}
		if !m.readOnly || !strings.HasPrefix(m.source, "./") {
			t.Errorf("service clickhouse: users file %s: want a file of the repository, mounted read-only", m.source)
		}
		data, err := os.ReadFile(filepath.Join(repoRoot(t), m.source))
		if err != nil {
			t.Fatal(err)
		}
		var root xmlNode
		if err := xml.Unmarshal(data, &root); err != nil {
			t.Fatalf("%s: %v", m.source, err)
		}
		if root.XMLName.Local != "clickhouse" {
			t.Errorf("%s: root element <%s>, want <clickhouse> (the image is a current server)", m.source, root.XMLName.Local)
		}
		if root.child("users").child(user) != nil {
			users = &root
		}
	}
	if users == nil {
		t.Fatalf("service clickhouse: no users file in users.d defines the user %s that Grafana connects as", user)
	}
	u := users.child("users").child(user)
	profileName := u.child("profile").text()
	profile := users.child("profiles").child(profileName)
	if profile.child("readonly").text() != "1" {
		t.Errorf("user %s: profile %q has readonly %q, want 1 (no writes, no DDL)", user, profileName, profile.child("readonly").text())
	}
	var changeable []string
	for _, c := range profile.child("constraints").Nodes {
		if (&c).child("changeable_in_readonly") != nil {
			changeable = append(changeable, c.XMLName.Local)
		}
	}
	if !slices.Equal(changeable, []string{"max_execution_time"}) {
		t.Errorf("user %s: settings changeable in readonly mode %v, want only the plugin's query timeout, max_execution_time", user, changeable)
	}
	var dbs []string
	for _, d := range u.child("allow_databases").Nodes {
		dbs = append(dbs, (&d).text())
	}
	if db := interpolate(ch.Environment["CLICKHOUSE_DB"], nil); !slices.Equal(dbs, []string{db}) {
		t.Errorf("user %s: allow_databases %v, want the gpucost database %s only", user, dbs, db)
	}

	// The password: from a variable of the clickhouse service, which Grafana gets too.
	pw := u.child("password")
	variable := pw.attr("from_env")
	if pw == nil || variable == "" || pw.text() != "" {
		t.Fatalf("user %s: the password must come from the environment (<password from_env=\"VAR\"/>), never be written in the file", user)
	}
	chValue, ok := ch.Environment[variable]
	if !ok || !strings.HasPrefix(chValue, "${"+variable) {
		t.Errorf("service clickhouse: %s=%q: pass it from the environment (${%s:-...}) for the users file", variable, chValue, variable)
	}
	grafanaValue := grafana.Environment["GPUCOST_GRAFANA_CLICKHOUSE_PASSWORD"]
	if !strings.HasPrefix(grafanaValue, "${"+variable) {
		t.Errorf("service grafana: GPUCOST_GRAFANA_CLICKHOUSE_PASSWORD=%q, want the clickhouse service's ${%s...}", grafanaValue, variable)
	}
	for _, dotenv := range []map[string]string{nil, {variable: "s3cret-of-grafana"}} {
		if a, b := interpolate(chValue, dotenv), interpolate(grafanaValue, dotenv); a != b || a == "" {
			t.Errorf("with .env %v, ClickHouse expects Grafana's password %q and Grafana sends %q", dotenv, a, b)
		}
	}
}
