// Package deploy holds no code. Its folder holds gpucost's deployment files, and its tests
// check them offline, without a cluster, a Docker daemon or a running systemd:
//
//   - Dockerfile: the build stage's `go build` is the command of `make docker-binary`; that
//     binary is static, trimmed and stamped with its version; the final image runs as non-root
//     with a config whose paths exist in the image.
//   - kubernetes/: every manifest decodes strictly (unknown fields are errors) into the
//     Kubernetes API types; both kustomize variants (cronjobs/, serve/) are complete and
//     consistent: cron schedules, concurrencyPolicy Forbid, secret keys that the example Secret
//     has, resources and a restricted security context on every container, real gpucost
//     subcommands, and a ConfigMap that gpucost's own config loader accepts.
//   - systemd/: units parse, pass `systemd-analyze verify` and `security`, and their timers fire
//     when gpucost serve's schedules do.
//   - prometheus/: the alerting rules name gpucost's real metrics and pass their promtool unit
//     tests; with GPUCOST_INTEGRATION=1, a real Prometheus scrapes a running `gpucost serve` and
//     evaluates the rules on its job metrics (a failed weekly report, a plan that ran).
//   - docker-compose.yml (at the repo root): the gpucost services build from the Dockerfile and reach ClickHouse.
//
// Checks that need a tool (systemd-analyze, promtool) skip when it is missing, unless
// GPUCOST_INTEGRATION=1, where a missing tool is a failure.
//
// deploy/ is a Go module of its own (deploy/go.mod), so the libraries only these checks use
// (the Kubernetes API types, sigs.k8s.io/yaml) stay out of the product's go.mod. It requires the
// product module replaced by the folder above (`replace github.com/gpucost/gpucost => ../`): the
// checks import gpucost's packages of this tree (optimizer's workloads parser, pipeline's
// metrics, store/storetest). The checks of what gpucost itself accepts build the binary from
// the repository root and ask it (`gpucost config print`, `gpucost help`), as an operator would. The module also holds what the product's tests run but must not
// depend on: the test runner of `make test` (`tool gotest.tools/gotestsum`) and smtpsink/, the
// real SMTP server (github.com/emersion/go-smtp) of the email tests, which the product's
// report/smtptest builds and drives. `make test` and `make vet` run this module after the
// product's; by hand: cd deploy && go test ./...
package deploy
