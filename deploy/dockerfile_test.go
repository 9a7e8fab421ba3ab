package deploy_test

import (
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/tooltest"
)

// deploy/Dockerfile, checked without a Docker daemon: its instructions are parsed, its build
// command is compared with `make docker-binary`, which is then run, and the binary is checked.

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line    int
	cmd     string // upper case: FROM, RUN, COPY...
	args    string
	heredoc string // the body of a <<EOF here-document, if any
}

// stage is one FROM and the instructions after it.
type stage struct {
	image, name string
	ins         []instruction
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.ins {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

var reHeredoc = regexp.MustCompile(`<<-?['"]?([A-Za-z_]+)['"]?`)

// parseDockerfile splits the Dockerfile into stages of instructions.
func parseDockerfile(t *testing.T, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var stages []stage
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		start := i + 1
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				continue
			}
			line = strings.TrimSuffix(line, `\`) + " " + next
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if m := reHeredoc.FindStringSubmatch(in.args); m != nil {
			var body []string
			for i++; i < len(lines) && lines[i] != m[1]; i++ {
				body = append(body, lines[i])
			}
			if i == len(lines) {
				t.Fatalf("%s:%d: here-document %s is not closed", path, start, m[1])
			}
			in.heredoc = strings.Join(body, "\n") + "\n"
		}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			s := stage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s:%d: %s before FROM", path, start, in.cmd)
			}
			continue
		}
		stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, in)
	}
	return stages
}

// buildCommand returns the stage's `go build` RUN command, without BuildKit's --mount flags.
func buildCommand(t *testing.T, s stage) (instruction, string) {
	t.Helper()
	for _, in := range s.all("RUN") {
		if strings.Contains(in.args, "go build") {
			var words []string
			for _, w := range strings.Fields(in.args) {
				if !strings.HasPrefix(w, "--mount=") {
					words = append(words, w)
				}
			}
			return in, strings.Join(words, " ")
		}
	}
	t.Fatal("Dockerfile: the build stage has no RUN ... go build")
	return instruction{}, ""
}

// TestDockerfile checks the image's structure: a cached module layer, a static build, a
// non-root final image whose configuration names paths that exist in it.
func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, "Dockerfile")
	if len(stages) != 2 {
		t.Fatalf("Dockerfile: %d stages, want 2 (build and final)", len(stages))
	}
	build, final := stages[0], stages[1]

	// The build stage: the Go of go.mod, modules downloaded in their own layer.
	gomod, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goLine == nil {
		t.Fatal("go.mod has no go line")
	}
	if want := "golang:" + string(goLine[1]); build.image != want && !strings.HasPrefix(build.image, want+"-") && !strings.HasPrefix(build.image, want+".") {
		t.Errorf("Dockerfile: build stage FROM %s, want %s (go.mod says go %s; the image's GOTOOLCHAIN=local cannot fetch another)", build.image, want, goLine[1])
	}
	order := map[string]int{}
	for i, in := range build.ins {
		switch {
		case in.cmd == "COPY" && strings.Fields(in.args)[0] == "go.mod" && strings.Contains(in.args, "go.sum"):
			order["copy go.mod"] = i + 1
		case in.cmd == "RUN" && strings.Contains(in.args, "go mod download"):
			order["go mod download"] = i + 1
		case in.cmd == "COPY" && strings.HasPrefix(in.args, ". "):
			order["copy ."] = i + 1
		}
	}
	if !(order["copy go.mod"] > 0 && order["copy go.mod"] < order["go mod download"] && order["go mod download"] < order["copy ."]) {
		t.Errorf("Dockerfile: want COPY go.mod go.sum, RUN go mod download, then COPY . . (a cached module layer); have %v", order)
	}
	in, cmd := buildCommand(t, build)
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "-X main.version=${VERSION}", "./cmd/gpucost"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("Dockerfile:%d: the go build lacks %s: %s", in.line, want, cmd)
		}
	}
	if !slices.ContainsFunc(build.all("ARG"), func(a instruction) bool { return strings.HasPrefix(a.args, "VERSION") }) {
		t.Error("Dockerfile: the build stage declares no ARG VERSION")
	}

	// The final stage: pinned, non-root, gpucost as the entrypoint, serve by default.
	if !pinned(final.image) {
		t.Errorf("Dockerfile: final FROM %s is not pinned to a tag", final.image)
	}
	if !(strings.HasPrefix(final.image, "gcr.io/distroless/static") && strings.HasSuffix(final.image, ":nonroot")) && !strings.HasPrefix(final.image, "alpine:") {
		t.Errorf("Dockerfile: final FROM %s: want distroless/static:nonroot or alpine", final.image)
	}
	users := final.all("USER")
	if len(users) == 0 {
		t.Fatal("Dockerfile: the final stage sets no USER: it would run as root")
	}
	user := users[len(users)-1].args
	uid, _, _ := strings.Cut(user, ":")
	if uid == "root" || uid == "0" {
		t.Errorf("Dockerfile: USER %s is root", user)
	}
	execForm := func(cmd string) []string {
		ins := final.all(cmd)
		if len(ins) == 0 {
			return nil
		}
		var v []string
		if err := json.Unmarshal([]byte(ins[len(ins)-1].args), &v); err != nil {
			t.Errorf("Dockerfile: %s %s is not the exec (JSON) form: signals would go to a shell", cmd, ins[len(ins)-1].args)
		}
		return v
	}
	if ep := execForm("ENTRYPOINT"); !slices.Equal(ep, []string{"gpucost"}) {
		t.Errorf("Dockerfile: ENTRYPOINT %v, want [\"gpucost\"]", ep)
	}
	cmdArgs := execForm("CMD")
	if !slices.Equal(cmdArgs, []string{"serve"}) {
		t.Errorf("Dockerfile: CMD %v, want [\"serve\"]", cmdArgs)
	}
	checkSubcommand(t, "Dockerfile CMD", cmdArgs)

	// Where things land in the image.
	copies := map[string]instruction{} // destination → COPY
	for _, c := range final.all("COPY") {
		f := strings.Fields(c.args)
		copies[f[len(f)-1]] = c
	}
	if c, ok := copies["/usr/local/bin/gpucost"]; !ok || !strings.Contains(c.args, "--from="+build.name) {
		t.Error("Dockerfile: the binary is not copied from the build stage to /usr/local/bin/gpucost (on the image's PATH, as ENTRYPOINT needs)")
	}
	env := map[string]string{}
	for _, e := range final.all("ENV") {
		k, v, _ := strings.Cut(e.args, "=")
		env[k] = v
	}
	cfgPath := env["GPUCOST_CONFIG"]
	cfgCopy, ok := copies[cfgPath]
	if cfgPath == "" || !ok || cfgCopy.heredoc == "" {
		t.Fatalf("Dockerfile: ENV GPUCOST_CONFIG=%q is not a config file written by a COPY here-document", cfgPath)
	}
	local := filepath.Join(t.TempDir(), "gpucost.yaml")
	if err := os.WriteFile(local, []byte(cfgCopy.heredoc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := configPrint(t, "Dockerfile's "+cfgPath, "GPUCOST_CONFIG="+local)

	wl, ok := copies[cfg.Optimize.Workloads]
	if !ok {
		t.Errorf("Dockerfile: optimize.workloads %s is not copied into the image", cfg.Optimize.Workloads)
	} else if src := strings.Fields(wl.args)[0]; src != "plans/workloads.sample.yaml" {
		t.Errorf("Dockerfile: %s comes from %s, want plans/workloads.sample.yaml", cfg.Optimize.Workloads, src)
	}
	var volumes []string
	for _, v := range final.all("VOLUME") {
		var vs []string
		if err := json.Unmarshal([]byte(v.args), &vs); err != nil {
			vs = strings.Fields(v.args)
		}
		volumes = append(volumes, vs...)
	}
	state := ""
	for _, v := range volumes {
		if under(cfg.Scrape.SpoolDir, v) {
			state = v
		}
	}
	if state == "" {
		t.Errorf("Dockerfile: scrape.spool_dir %s is on no VOLUME %v: spooled batches would die with the container", cfg.Scrape.SpoolDir, volumes)
	} else if c, ok := copies[state]; !ok || !strings.Contains(c.args, "--from="+build.name) {
		t.Errorf("Dockerfile: the state folder %s is not created in the build stage and copied (distroless has no shell to mkdir)", state)
	} else {
		src := strings.Fields(c.args)[len(strings.Fields(c.args))-2]
		chown := regexp.MustCompile(`chown -R ` + regexp.QuoteMeta(user) + ` ` + regexp.QuoteMeta(src) + `\b`)
		if !slices.ContainsFunc(build.all("RUN"), func(r instruction) bool { return chown.MatchString(r.args) }) {
			t.Errorf("Dockerfile: %s (the volume %s) is not chowned to the USER %s: gpucost could not write its spool", src, state, user)
		}
	}
	exposed := final.all("EXPOSE")
	_, port, _ := strings.Cut(cfg.Serve.Listen, ":")
	if len(exposed) == 0 || exposed[0].args != port || !strings.HasPrefix(cfg.Serve.Listen, "0.0.0.0:") {
		t.Errorf("Dockerfile: serve listens on %s, EXPOSE says %v: want 0.0.0.0:PORT and EXPOSE PORT", cfg.Serve.Listen, exposed)
	}
	if cfg.Report.OutDir != "" && !filepath.IsAbs(cfg.Report.OutDir) {
		t.Errorf("Dockerfile: report.out_dir %q is relative to an unspecified working directory", cfg.Report.OutDir)
	}

	// The context: the ignore file keeps local data out, not what the build copies.
	ignore, err := os.ReadFile("Dockerfile.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".git", ".data", "bin"} {
		if !slices.Contains(strings.Fields(string(ignore)), want) {
			t.Errorf("Dockerfile.dockerignore does not exclude %s", want)
		}
	}
}

// TestDockerBinary checks that `make docker-binary` runs the Dockerfile's build command word for
// word, runs it, and checks the binary: static, trimmed, stamped with the version.
func TestDockerBinary(t *testing.T) {
	makePath := tooltest.Find(t, "make", "make")
	root := repoRoot(t)
	stages := parseDockerfile(t, "Dockerfile")
	_, dockerCmd := buildCommand(t, stages[0])

	const version = "v0.0.0-deploytest"
	out := filepath.Join(t.TempDir(), "gpucost")
	env := cleanEnv("GO=go")
	dry := runIn(t, root, env, makePath, "-s", "-n", "docker-binary", "VERSION="+version, "DOCKER_BINARY="+out)
	if dry.code != 0 {
		t.Fatalf("make -n docker-binary: exit %d: %s", dry.code, dry.stderr)
	}
	want := shellWords(strings.NewReplacer("${VERSION}", version, "/out/gpucost", out).Replace(dockerCmd))
	if got := shellWords(strings.TrimSpace(dry.stdout)); !slices.Equal(got, want) {
		t.Errorf("make docker-binary and the Dockerfile build differently:\n  make:       %q\n  Dockerfile: %q", got, want)
	}

	if r := runIn(t, root, env, makePath, "-s", "docker-binary", "VERSION="+version, "DOCKER_BINARY="+out); r.code != 0 {
		t.Fatalf("make docker-binary: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a program interpreter (PT_INTERP): it is dynamically linked and will not start on distroless/static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	if fileCmd, err := exec.LookPath("file"); err == nil {
		if r := runIn(t, root, env, fileCmd, out); !strings.Contains(r.stdout, "statically linked") {
			t.Errorf("file says: %s", r.stdout)
		}
	}
	bi, err := buildinfo.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	// Go does not record -ldflags under -trimpath (they may hold paths): `gpucost version`
	// below shows the -X, the missing symbol table shows the -s.
	if settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("build settings CGO_ENABLED=%q -trimpath=%q, want 0 and true", settings["CGO_ENABLED"], settings["-trimpath"])
	}
	if f.Section(".symtab") != nil {
		t.Error("the binary has a symbol table: built without -s")
	}
	r := runIn(t, root, cleanEnv(), out, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "gpucost "+version+" ") {
		t.Errorf("gpucost version: exit %d, %q; want gpucost %s ...", r.code, r.stdout, version)
	}
}

// shellWords splits a command line into words as sh would for these simple commands: quotes
// group and are removed, nothing is expanded.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	quote, inWord := rune(0), false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
