package deploy_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/tooltest"
)

// The Kubernetes manifests: deploy/kubernetes/{base,cronjobs,serve}, Kustomize without
// patches, so the offline rendering below (resources followed recursively, the namespace set) is
// what `kubectl kustomize` produces; when kubectl is installed the tests compare the two.

const k8sDir = "kubernetes"

// variants are the kustomize overlays and the gpucost jobs each must run: the same work, done
// by CronJobs or by serve.
var variants = map[string][]string{
	"cronjobs": {"migrate", "optimize", "report", "scrape"},
	"serve":    {"migrate", "serve"},
}

// secretExample is the Secret the manifests read, shipped as an example, not applied.
const secretExample = "base/secret.example.yaml"

// kinds are the API types a manifest may hold, by apiVersion and kind.
var kinds = map[string]func() metav1.Object{
	"batch/v1/CronJob":         func() metav1.Object { return &batchv1.CronJob{} },
	"batch/v1/Job":             func() metav1.Object { return &batchv1.Job{} },
	"apps/v1/Deployment":       func() metav1.Object { return &appsv1.Deployment{} },
	"v1/ConfigMap":             func() metav1.Object { return &corev1.ConfigMap{} },
	"v1/Secret":                func() metav1.Object { return &corev1.Secret{} },
	"v1/Service":               func() metav1.Object { return &corev1.Service{} },
	"v1/PersistentVolumeClaim": func() metav1.Object { return &corev1.PersistentVolumeClaim{} },
	"v1/ServiceAccount":        func() metav1.Object { return &corev1.ServiceAccount{} },
	"v1/Namespace":             func() metav1.Object { return &corev1.Namespace{} },
}

// object is one decoded manifest.
type object struct {
	file      string // relative to deploy/kubernetes, or "kubectl kustomize"
	kind      string
	namespace string // as rendered
	obj       metav1.Object
}

func (o object) id() string { return o.kind + "/" + o.obj.GetName() }

// decodeManifests decodes every YAML document of data strictly into its API type: unknown or
// duplicate fields, wrong types and unsupported kinds are errors.
func decodeManifests(file string, data []byte) ([]object, error) {
	var objs []object
	for i, doc := range splitDocuments(data) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: document %d: %v", file, i+1, err)
		}
		newObj, ok := kinds[tm.APIVersion+"/"+tm.Kind]
		if !ok {
			return nil, fmt.Errorf("%s: document %d: unsupported apiVersion %q kind %q (the test knows %s)", file, i+1, tm.APIVersion, tm.Kind, strings.Join(sortedKeys(kinds), ", "))
		}
		obj := newObj()
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", file, tm.Kind, err)
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("%s: %s without metadata.name", file, tm.Kind)
		}
		objs = append(objs, object{file: file, kind: tm.Kind, namespace: obj.GetNamespace(), obj: obj})
	}
	return objs, nil
}

// splitDocuments splits a YAML stream on "---" lines and drops documents that hold only
// comments.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		for _, line := range strings.Split(cur.String(), "\n") {
			if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
				docs = append(docs, bytes.Clone(cur.Bytes()))
				break
			}
		}
		cur.Reset()
	}
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimRight(line, " \t\r\n") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return docs
}

// kustomization is the part of kustomize's Kustomization these manifests use; anything else
// is an error, so that the offline rendering stays faithful (no patches, no generators).
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources"`
}

// render follows dir's kustomization: the objects of its resources, files and directories
// (recursively), with the namespace set. used collects every file it read.
func render(t *testing.T, dir string, used map[string]bool) []object {
	t.Helper()
	kfile := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(kfile)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	used[kfile] = true
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("%s: %v (the offline rendering supports apiVersion, kind, namespace and resources)", kfile, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("%s: apiVersion/kind %s/%s, want kustomize.config.k8s.io/v1beta1/Kustomization", kfile, k.APIVersion, k.Kind)
	}
	if len(k.Resources) == 0 {
		t.Fatalf("%s: no resources", kfile)
	}
	var objs []object
	for _, res := range k.Resources {
		path := filepath.Join(dir, res)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("%s: resource %q: %v", kfile, res, err)
		}
		if fi.IsDir() {
			objs = append(objs, render(t, path, used)...)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		used[path] = true
		rel, _ := filepath.Rel(k8sDir, path)
		got, err := decodeManifests(rel, data)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, got...)
	}
	if k.Namespace != "" {
		for i := range objs {
			if objs[i].kind != "Namespace" {
				objs[i].namespace = k.Namespace
			}
		}
	}
	return objs
}

// TestKubernetesManifestsDecodeStrictly decodes every YAML file under deploy/kubernetes into
// the API types and checks that each is used by a kustomization (the example Secret aside).
func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	used := map[string]bool{}
	for v := range variants {
		render(t, filepath.Join(k8sDir, v), used)
	}
	n := 0
	err := filepath.WalkDir(k8sDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
			return err
		}
		n++
		rel, _ := filepath.Rel(k8sDir, path)
		if d.Name() != "kustomization.yaml" {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if _, err := decodeManifests(rel, data); err != nil {
				t.Error(err)
			}
		}
		if !used[path] && rel != secretExample {
			t.Errorf("%s is not a resource of any kustomization: apply it from one or remove it", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("only %d manifests under %s", n, k8sDir)
	}
}

// exampleSecret reads the shipped example Secret: its name and keys with their values.
func exampleSecret(t *testing.T) (*corev1.Secret, map[string]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k8sDir, secretExample))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeManifests(secretExample, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].kind != "Secret" {
		t.Fatalf("%s: want exactly one Secret", secretExample)
	}
	s := objs[0].obj.(*corev1.Secret)
	keys := map[string]string{}
	for k, v := range s.Data {
		keys[k] = string(v)
	}
	for k, v := range s.StringData {
		keys[k] = v
	}
	return s, keys
}

// workload is an object that runs pods.
type workload struct {
	object
	pod *corev1.PodSpec
}

func workloads(objs []object) []workload {
	var ws []workload
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *batchv1.CronJob:
			ws = append(ws, workload{o, &v.Spec.JobTemplate.Spec.Template.Spec})
		case *batchv1.Job:
			ws = append(ws, workload{o, &v.Spec.Template.Spec})
		case *appsv1.Deployment:
			ws = append(ws, workload{o, &v.Spec.Template.Spec})
		}
	}
	return ws
}

// byKind indexes objects by kind and name.
func byKind(objs []object) map[string]map[string]object {
	m := map[string]map[string]object{}
	for _, o := range objs {
		if m[o.kind] == nil {
			m[o.kind] = map[string]object{}
		}
		m[o.kind][o.obj.GetName()] = o
	}
	return m
}

// TestKubernetesVariants renders each variant and checks what matters for running gpucost.
func TestKubernetesVariants(t *testing.T) {
	secret, secretKeys := exampleSecret(t)
	for _, v := range sortedKeys(variants) {
		t.Run(v, func(t *testing.T) {
			objs := render(t, filepath.Join(k8sDir, v), map[string]bool{})
			checkVariant(t, v, objs, secret, secretKeys)
		})
	}
}

func checkVariant(t *testing.T, variant string, objs []object, secret *corev1.Secret, secretKeys map[string]string) {
	idx := byKind(objs)
	seen := map[string]string{}
	for _, o := range objs {
		if f, dup := seen[o.id()]; dup {
			t.Errorf("%s is defined twice (%s and %s)", o.id(), f, o.file)
		}
		seen[o.id()] = o.file
	}
	// Everything in one namespace, the Secret's.
	for _, o := range objs {
		if o.kind == "Namespace" {
			if o.obj.GetName() != secret.Namespace {
				t.Errorf("%s: namespace %s, the example Secret is in %s", o.file, o.obj.GetName(), secret.Namespace)
			}
			continue
		}
		if o.namespace != secret.Namespace {
			t.Errorf("%s: %s renders into namespace %q, want %q (the example Secret's)", o.file, o.id(), o.namespace, secret.Namespace)
		}
	}
	if len(idx["Namespace"]) != 1 {
		t.Errorf("want one Namespace, have %d", len(idx["Namespace"]))
	}

	ws := workloads(objs)
	var jobs []string
	image := ""
	for _, w := range ws {
		for _, c := range w.pod.Containers {
			if len(c.Args) > 0 {
				jobs = append(jobs, c.Args[0])
			}
			if image == "" {
				image = c.Image
			} else if c.Image != image {
				t.Errorf("%s: container %s runs %s, others %s: use one image (kustomize edit set image changes all)", w.file, c.Name, c.Image, image)
			}
		}
		checkPod(t, w, idx, secret, secretKeys)
	}
	sort.Strings(jobs)
	if !slices.Equal(jobs, variants[variant]) {
		t.Errorf("the %s variant runs gpucost %v, want %v", variant, jobs, variants[variant])
	}
	if n := len(idx["CronJob"]); variant == "serve" && n > 0 {
		t.Errorf("the serve variant has %d CronJobs: serve schedules its own runs, the two would run everything twice", n)
	}
	if n := len(idx["Deployment"]); variant == "cronjobs" && n > 0 {
		t.Errorf("the cronjobs variant has %d Deployments: a serve Deployment would run everything twice", n)
	}
	checkSpoolClaims(t, ws, idx)
	checkServices(t, idx)
}

// checkPod checks one workload's pod template, its controller's policies and each container.
func checkPod(t *testing.T, w workload, idx map[string]map[string]object, secret *corev1.Secret, secretKeys map[string]string) {
	what := w.file + ": " + w.id()
	pod := w.pod

	// Controller policies.
	switch v := w.obj.(type) {
	case *batchv1.CronJob:
		checkCronJob(t, what, v)
		checkJobSpec(t, what, &v.Spec.JobTemplate.Spec)
	case *batchv1.Job:
		checkJobSpec(t, what, &v.Spec)
	case *appsv1.Deployment:
		if v.Spec.Replicas == nil || *v.Spec.Replicas != 1 {
			t.Errorf("%s: replicas must be 1: each serve pod schedules every scrape, and the run lock only covers one spool", what)
		}
		if v.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("%s: strategy %q, want Recreate: a rolling update runs two schedulers at once and cannot move a ReadWriteOnce spool", what, v.Spec.Strategy.Type)
		}
		sel, err := metav1.LabelSelectorAsMap(v.Spec.Selector)
		if err != nil || len(sel) == 0 || !labelsMatch(sel, v.Spec.Template.Labels) {
			t.Errorf("%s: selector %v does not select the pod template's labels %v", what, sel, v.Spec.Template.Labels)
		}
	}

	// Identity and privileges (the namespace enforces the restricted Pod Security Standard).
	if pod.ServiceAccountName == "" {
		t.Errorf("%s: no serviceAccountName (the default account may carry permissions)", what)
	} else if _, ok := idx["ServiceAccount"][pod.ServiceAccountName]; !ok {
		t.Errorf("%s: serviceAccountName %q is not defined", what, pod.ServiceAccountName)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("%s: automountServiceAccountToken must be false: gpucost never calls the Kubernetes API", what)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Errorf("%s: host namespaces", what)
	}
	psc := pod.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: securityContext.seccompProfile must be RuntimeDefault", what)
	}

	// Volumes.
	volumes := map[string]corev1.Volume{}
	mounted := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
		switch {
		case v.ConfigMap != nil:
			cm, ok := idx["ConfigMap"][v.ConfigMap.Name]
			if !ok {
				t.Errorf("%s: volume %s: ConfigMap %q is not defined", what, v.Name, v.ConfigMap.Name)
				break
			}
			for _, it := range v.ConfigMap.Items {
				if _, ok := cm.obj.(*corev1.ConfigMap).Data[it.Key]; !ok {
					t.Errorf("%s: volume %s: ConfigMap %s has no key %q", what, v.Name, v.ConfigMap.Name, it.Key)
				}
			}
		case v.PersistentVolumeClaim != nil:
			if _, ok := idx["PersistentVolumeClaim"][v.PersistentVolumeClaim.ClaimName]; !ok {
				t.Errorf("%s: volume %s: PersistentVolumeClaim %q is not defined", what, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		case v.Secret != nil:
			if v.Secret.SecretName != secret.Name {
				t.Errorf("%s: volume %s: Secret %q, the example Secret is %q", what, v.Name, v.Secret.SecretName, secret.Name)
			}
			for _, it := range v.Secret.Items {
				if _, ok := secretKeys[it.Key]; !ok {
					t.Errorf("%s: volume %s: the example Secret has no key %q", what, v.Name, it.Key)
				}
			}
		case v.EmptyDir != nil:
			if v.EmptyDir.SizeLimit == nil {
				t.Errorf("%s: emptyDir %s without sizeLimit can fill the node's disk", what, v.Name)
			}
		default:
			t.Errorf("%s: volume %s: only configMap, secret, emptyDir and persistentVolumeClaim volumes are expected", what, v.Name)
		}
	}

	if len(pod.Containers) == 0 {
		t.Errorf("%s: no containers", what)
	}
	for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
		cwhat := what + ": container " + c.Name
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok {
				t.Errorf("%s: mounts undefined volume %s", cwhat, m.Name)
			}
			mounted[m.Name] = true
		}
		checkContainer(t, cwhat, c, psc)
		checkSecretRefs(t, cwhat, c, idx, secret, secretKeys)
	}
	for name := range volumes {
		if !mounted[name] {
			t.Errorf("%s: volume %s is mounted by no container", what, name)
		}
	}
	for _, c := range pod.Containers {
		checkGpucostContainer(t, what+": container "+c.Name, w, c, volumes, idx, secretKeys)
	}
}

// checkCronJob checks the schedule and the policies that keep runs apart.
func checkCronJob(t *testing.T, what string, cj *batchv1.CronJob) {
	s := cj.Spec
	sched, err := cron.ParseStandard(s.Schedule)
	if err != nil {
		t.Errorf("%s: schedule %q: %v", what, s.Schedule, err)
		return
	}
	if s.TimeZone == nil || (*s.TimeZone != "Etc/UTC" && *s.TimeZone != "UTC") {
		t.Errorf("%s: timeZone must be Etc/UTC: gpucost's schedules and weeks are UTC, the controller's local zone is not defined", what)
	}
	if s.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("%s: concurrencyPolicy %q, want Forbid", what, s.ConcurrencyPolicy)
	}
	period := minPeriod(sched)
	if s.StartingDeadlineSeconds == nil || *s.StartingDeadlineSeconds < 60 {
		t.Errorf("%s: startingDeadlineSeconds must be set and at least 60 (the controller checks every 10 s; without one, 100 missed runs stop the CronJob)", what)
	} else if d := time.Duration(*s.StartingDeadlineSeconds) * time.Second; d >= period {
		t.Errorf("%s: startingDeadlineSeconds %v is not below the period %v: a late run would meet the next one", what, d, period)
	}
	if s.SuccessfulJobsHistoryLimit == nil || s.FailedJobsHistoryLimit == nil {
		t.Errorf("%s: set successfulJobsHistoryLimit and failedJobsHistoryLimit", what)
	}
	if ad := s.JobTemplate.Spec.ActiveDeadlineSeconds; ad == nil {
		t.Errorf("%s: jobTemplate activeDeadlineSeconds unset: with Forbid, a hung run blocks every later one", what)
	} else if d := time.Duration(*ad) * time.Second; d >= period {
		t.Errorf("%s: activeDeadlineSeconds %v is not below the period %v: a hung run would skip the next one", what, d, period)
	}
}

// minPeriod is the shortest gap between consecutive activations of sched over two weeks.
func minPeriod(sched cron.Schedule) time.Duration {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := at.Add(14 * 24 * time.Hour)
	best := time.Duration(1<<63 - 1)
	prev := sched.Next(at)
	for prev.Before(end) {
		next := sched.Next(prev)
		if d := next.Sub(prev); d < best {
			best = d
		}
		prev = next
	}
	return best
}

// checkJobSpec checks retries and the pod failure policy.
func checkJobSpec(t *testing.T, what string, js *batchv1.JobSpec) {
	if js.BackoffLimit == nil {
		t.Errorf("%s: set backoffLimit (the default, 6 retries, is rarely what a job wants)", what)
	}
	rp := js.Template.Spec.RestartPolicy
	if rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
		t.Errorf("%s: restartPolicy %q, want Never or OnFailure", what, rp)
	}
	if js.PodFailurePolicy == nil {
		return
	}
	if rp != corev1.RestartPolicyNever {
		t.Errorf("%s: podFailurePolicy needs restartPolicy Never", what)
	}
	names := map[string]bool{}
	for _, c := range js.Template.Spec.Containers {
		names[c.Name] = true
	}
	for _, r := range js.PodFailurePolicy.Rules {
		if r.OnExitCodes == nil {
			continue
		}
		if r.OnExitCodes.ContainerName != nil && !names[*r.OnExitCodes.ContainerName] {
			t.Errorf("%s: podFailurePolicy names container %q, which the pod does not have", what, *r.OnExitCodes.ContainerName)
		}
		for _, code := range r.OnExitCodes.Values {
			// cmd/gpucost: 1 failed, 2 usage, 3 partial, 4 another run holds the lock, 5 batches in
			// the spool's quarantine.
			if code < 1 || code > 5 {
				t.Errorf("%s: podFailurePolicy exit code %d is not one gpucost uses (1 failed, 2 usage, 3 partial, 4 busy, 5 quarantine)", what, code)
			}
		}
	}
}

// checkContainer checks image, resources and the restricted security context.
func checkContainer(t *testing.T, what string, c corev1.Container, psc *corev1.PodSecurityContext) {
	if !pinned(c.Image) {
		t.Errorf("%s: image %q is not pinned to a tag or digest", what, c.Image)
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, ok := c.Resources.Requests[res]
		if !ok {
			t.Errorf("%s: no %s request", what, res)
		}
		lim, okLim := c.Resources.Limits[res]
		if res == corev1.ResourceMemory && !okLim {
			t.Errorf("%s: no memory limit", what)
		}
		if ok && okLim && lim.Cmp(req) < 0 {
			t.Errorf("%s: %s limit %s below its request %s", what, res, lim.String(), req.String())
		}
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Errorf("%s: no securityContext", what)
		return
	}
	nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (sc.RunAsNonRoot == nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot)
	if !nonRoot {
		t.Errorf("%s: runAsNonRoot must be true", what)
	}
	uid := psc.RunAsUser
	if sc.RunAsUser != nil {
		uid = sc.RunAsUser
	}
	if uid == nil || *uid == 0 {
		t.Errorf("%s: runAsUser must be a non-zero uid (the image's nonroot user is 65532)", what)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation must be false", what)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem must be true", what)
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Errorf("%s: privileged", what)
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Errorf("%s: capabilities must drop ALL and add none", what)
	}
}

// pinned reports whether an image reference names a tag other than latest, or a digest.
func pinned(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	name := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(name, ":")
	return i > 0 && i < len(name)-1 && name[i+1:] != "latest"
}

// checkSecretRefs checks that secrets come from the example Secret's keys, and that nothing
// secret is written in the manifest itself.
func checkSecretRefs(t *testing.T, what string, c corev1.Container, idx map[string]map[string]object, secret *corev1.Secret, secretKeys map[string]string) {
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			up := strings.ToUpper(e.Name)
			for _, word := range []string{"DSN", "PASSWORD", "API_KEY", "TOKEN", "SECRET"} {
				if strings.Contains(up, word) && e.Value != "" {
					t.Errorf("%s: env %s is written in the manifest: take it from the Secret", what, e.Name)
				}
			}
			continue
		}
		if ref := e.ValueFrom.SecretKeyRef; ref != nil {
			if ref.Name != secret.Name {
				t.Errorf("%s: env %s reads Secret %q, the example Secret is %q", what, e.Name, ref.Name, secret.Name)
			} else if _, ok := secretKeys[ref.Key]; !ok {
				t.Errorf("%s: env %s reads key %q, which the example Secret (%s) does not have", what, e.Name, ref.Key, secretExample)
			}
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
			cm, ok := idx["ConfigMap"][ref.Name]
			if !ok {
				t.Errorf("%s: env %s reads undefined ConfigMap %q", what, e.Name, ref.Name)
			} else if _, ok := cm.obj.(*corev1.ConfigMap).Data[ref.Key]; !ok {
				t.Errorf("%s: env %s reads key %q, which ConfigMap %s does not have", what, e.Name, ref.Key, ref.Name)
			}
		}
	}
	for _, ef := range c.EnvFrom {
		if ef.SecretRef != nil && ef.SecretRef.Name != secret.Name {
			t.Errorf("%s: envFrom Secret %q, the example Secret is %q", what, ef.SecretRef.Name, secret.Name)
		}
		if ef.ConfigMapRef != nil {
			if _, ok := idx["ConfigMap"][ef.ConfigMapRef.Name]; !ok {
				t.Errorf("%s: envFrom undefined ConfigMap %q", what, ef.ConfigMapRef.Name)
			}
		}
	}
}

// containerEnv is the environment the container gets: literal values, and the example
// Secret's and ConfigMaps' values for references.
func containerEnv(c corev1.Container, idx map[string]map[string]object, secretKeys map[string]string) (env []string, names map[string]bool) {
	names = map[string]bool{}
	add := func(k, v string) { env = append(env, k+"="+v); names[k] = true }
	for _, ef := range c.EnvFrom {
		switch {
		case ef.SecretRef != nil:
			for k, v := range secretKeys {
				add(ef.Prefix+k, v)
			}
		case ef.ConfigMapRef != nil:
			if cm, ok := idx["ConfigMap"][ef.ConfigMapRef.Name]; ok {
				for k, v := range cm.obj.(*corev1.ConfigMap).Data {
					add(ef.Prefix+k, v)
				}
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			add(e.Name, e.Value)
		case e.ValueFrom.SecretKeyRef != nil:
			add(e.Name, secretKeys[e.ValueFrom.SecretKeyRef.Key])
		case e.ValueFrom.ConfigMapKeyRef != nil:
			if cm, ok := idx["ConfigMap"][e.ValueFrom.ConfigMapKeyRef.Name]; ok {
				add(e.Name, cm.obj.(*corev1.ConfigMap).Data[e.ValueFrom.ConfigMapKeyRef.Key])
			}
		}
	}
	return env, names
}

// mountedFile is what a path inside the container resolves to.
type mountedFile struct {
	volume    corev1.Volume
	mountPath string
	content   *string // a ConfigMap key's content; nil for other volumes
}

// resolve finds the volume holding path in the container (the deepest mount), and for a
// ConfigMap volume the key's content; ok is false when the path is on the image's read-only
// root filesystem.
func resolve(path string, c corev1.Container, volumes map[string]corev1.Volume, idx map[string]map[string]object) (f mountedFile, ok bool, err error) {
	best := -1
	for _, m := range c.VolumeMounts {
		if under(path, m.MountPath) && len(m.MountPath) > best {
			v := volumes[m.Name]
			f, best, ok = mountedFile{volume: v, mountPath: m.MountPath}, len(m.MountPath), true
			if m.SubPath != "" {
				return f, ok, fmt.Errorf("%s is mounted with subPath: ConfigMap updates never reach it", m.MountPath)
			}
		}
	}
	if !ok || f.volume.ConfigMap == nil {
		return f, ok, nil
	}
	rel, _ := filepath.Rel(f.mountPath, path)
	key := rel
	if items := f.volume.ConfigMap.Items; len(items) > 0 {
		key = ""
		for _, it := range items {
			if it.Path == rel {
				key = it.Key
			}
		}
	}
	cm, found := idx["ConfigMap"][f.volume.ConfigMap.Name]
	if !found {
		return f, ok, fmt.Errorf("ConfigMap %s is not defined", f.volume.ConfigMap.Name)
	}
	content, found := cm.obj.(*corev1.ConfigMap).Data[key]
	if key == "" || !found {
		return f, ok, fmt.Errorf("%s: ConfigMap %s mounted at %s has no key for %s", path, cm.obj.GetName(), f.mountPath, rel)
	}
	f.content = &content
	return f, ok, nil
}

// checkGpucostContainer runs the container's configuration through gpucost itself and checks
// that the paths it names exist in the pod: the config file, the workloads file, a persistent
// spool; that the secrets it reads are set; and that serve listens where the probes knock.
func checkGpucostContainer(t *testing.T, what string, w workload, c corev1.Container, volumes map[string]corev1.Volume, idx map[string]map[string]object, secretKeys map[string]string) {
	if len(c.Command) > 0 && !slices.Equal(c.Command, []string{"gpucost"}) {
		t.Errorf("%s: command %v: leave it to the image's ENTRYPOINT (gpucost) and set args", what, c.Command)
	}
	if len(c.Args) == 0 {
		t.Errorf("%s: no args: name the gpucost subcommand", what)
		return
	}
	sub := c.Args[0]
	env, names := containerEnv(c, idx, secretKeys)
	if !names["GPUCOST_CLICKHOUSE_DSN"] {
		t.Errorf("%s: GPUCOST_CLICKHOUSE_DSN is not set (from the Secret): gpucost would use the local development server", what)
	}

	// The config file: GPUCOST_CONFIG must name a key of a mounted ConfigMap. gpucost reads it
	// from a local copy.
	var local []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k != "GPUCOST_CONFIG" {
			local = append(local, kv)
			continue
		}
		f, ok, err := resolve(v, c, volumes, idx)
		switch {
		case err != nil:
			t.Errorf("%s: GPUCOST_CONFIG: %v", what, err)
			return
		case !ok || f.content == nil:
			t.Errorf("%s: GPUCOST_CONFIG=%s is not on a mounted ConfigMap", what, v)
			return
		}
		path := filepath.Join(t.TempDir(), "gpucost.yaml")
		if err := os.WriteFile(path, []byte(*f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		local = append(local, "GPUCOST_CONFIG="+path)
	}
	if sub != "migrate" && !names["GPUCOST_CONFIG"] {
		t.Errorf("%s: GPUCOST_CONFIG is not set: gpucost %s would run on the image's defaults, not the ConfigMap", what, sub)
	}
	cfg := configPrint(t, what, local...)

	for _, name := range cfg.secretEnvNames(sub) {
		if !names[name] {
			t.Errorf("%s: the configuration reads %s, which the container does not set (from the Secret)", what, name)
		}
	}
	if sub == "scrape" || sub == "serve" {
		f, ok, _ := resolve(cfg.Scrape.SpoolDir, c, volumes, idx)
		if !filepath.IsAbs(cfg.Scrape.SpoolDir) || !ok || f.volume.PersistentVolumeClaim == nil {
			t.Errorf("%s: scrape.spool_dir %q is not on a PersistentVolumeClaim: spooled batches (ClickHouse down) and the run lock must outlive the pod", what, cfg.Scrape.SpoolDir)
		}
	}
	if sub == "optimize" || sub == "serve" || sub == "report" {
		f, ok, err := resolve(cfg.Optimize.Workloads, c, volumes, idx)
		switch {
		case err != nil:
			t.Errorf("%s: optimize.workloads: %v", what, err)
		case !ok || f.content == nil:
			t.Errorf("%s: optimize.workloads %q is not on a mounted ConfigMap", what, cfg.Optimize.Workloads)
		default:
			if _, err := optimizer.ParseWorkloads(cfg.Optimize.Workloads, []byte(*f.content)); err != nil {
				t.Errorf("%s: the workloads file does not parse: %v", what, err)
			}
		}
	}
	if cj, ok := w.obj.(*batchv1.CronJob); ok {
		want := map[string]string{"scrape": cfg.Serve.ScrapeSchedule, "optimize": cfg.Optimize.Schedule, "report": cfg.Report.Schedule}[sub]
		if want != "" && cj.Spec.Schedule != want {
			t.Errorf("%s: schedule %q, but the config's (serve's) is %q: keep the variants in step", what, cj.Spec.Schedule, want)
		}
	}
	if sub == "serve" {
		checkServeContainer(t, what, c, cfg.Serve.Listen)
	}
}

// checkServeContainer checks serve's port and probes: readiness on /readyz, liveness on /livez,
// never /healthz.
func checkServeContainer(t *testing.T, what string, c corev1.Container, listen string) {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		t.Errorf("%s: serve.listen %q: %v", what, listen, err)
		return
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		t.Errorf("%s: serve.listen %q is loopback: probes and Prometheus cannot reach it", what, listen)
	}
	port, _ := strconv.Atoi(portStr)
	portOf := func(p intstr.IntOrString) int {
		if p.Type == intstr.Int {
			return p.IntValue()
		}
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				return int(cp.ContainerPort)
			}
		}
		return -1
	}
	found := false
	for _, cp := range c.Ports {
		found = found || int(cp.ContainerPort) == port
	}
	if !found {
		t.Errorf("%s: serve listens on %d, not a container port", what, port)
	}
	// Readiness asks /readyz (ClickHouse answers gpucost's check within a second), liveness and
	// startup /livez (the process answers) or the port. /healthz, which one stale provider
	// turns 503, is none of them.
	check := func(kind string, p *corev1.Probe, path string) {
		if p == nil {
			t.Errorf("%s: no %s probe", what, kind)
			return
		}
		switch {
		case p.HTTPGet != nil:
			if portOf(p.HTTPGet.Port) != port {
				t.Errorf("%s: %s probe on port %s, serve listens on %d", what, kind, p.HTTPGet.Port.String(), port)
			}
			switch got := p.HTTPGet.Path; {
			case strings.HasPrefix(got, "/healthz"):
				t.Errorf("%s: the %s probe asks /healthz, which answers 503 while one provider's data is stale: a provider's page change would take serve out of the Service (or restart it); ask %s", what, kind, path)
			case got != path:
				t.Errorf("%s: the %s probe asks %s, want %s", what, kind, got, path)
			}
			if path == "/readyz" && p.TimeoutSeconds < 2 {
				t.Errorf("%s: %s probe timeoutSeconds %d: /readyz waits up to a second for ClickHouse's answer", what, kind, p.TimeoutSeconds)
			}
		case p.TCPSocket != nil && path == "/livez":
			if portOf(p.TCPSocket.Port) != port {
				t.Errorf("%s: %s probe on port %s, serve listens on %d", what, kind, p.TCPSocket.Port.String(), port)
			}
		default:
			t.Errorf("%s: unexpected %s probe", what, kind)
		}
	}
	check("readiness", c.ReadinessProbe, "/readyz")
	check("liveness", c.LivenessProbe, "/livez")
	if c.StartupProbe != nil {
		check("startup", c.StartupProbe, "/livez")
	}
}

// checkSpoolClaims checks that a ReadWriteOnce claim has one writer: one workload, and that one
// never runs twice at once.
func checkSpoolClaims(t *testing.T, ws []workload, idx map[string]map[string]object) {
	users := map[string][]string{}
	for _, w := range ws {
		for _, v := range w.pod.Volumes {
			if v.PersistentVolumeClaim != nil {
				users[v.PersistentVolumeClaim.ClaimName] = append(users[v.PersistentVolumeClaim.ClaimName], w.id())
			}
		}
	}
	for name, o := range idx["PersistentVolumeClaim"] {
		pvc := o.obj.(*corev1.PersistentVolumeClaim)
		if _, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
			t.Errorf("%s: PersistentVolumeClaim %s requests no storage", o.file, name)
		}
		if slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteOnce) && len(users[name]) > 1 {
			t.Errorf("PersistentVolumeClaim %s is ReadWriteOnce but used by %v", name, users[name])
		}
	}
}

// checkServices checks that each Service selects a Deployment's pods on a port they have.
func checkServices(t *testing.T, idx map[string]map[string]object) {
	for name, o := range idx["Service"] {
		svc := o.obj.(*corev1.Service)
		var target *appsv1.Deployment
		for _, d := range idx["Deployment"] {
			dep := d.obj.(*appsv1.Deployment)
			if len(svc.Spec.Selector) > 0 && labelsMatch(svc.Spec.Selector, dep.Spec.Template.Labels) {
				target = dep
			}
		}
		if target == nil {
			t.Errorf("%s: Service %s selects no Deployment's pods", o.file, name)
			continue
		}
		for _, sp := range svc.Spec.Ports {
			ok := false
			for _, c := range target.Spec.Template.Spec.Containers {
				for _, cp := range c.Ports {
					ok = ok || (sp.TargetPort.Type == intstr.String && cp.Name == sp.TargetPort.StrVal) ||
						(sp.TargetPort.Type == intstr.Int && cp.ContainerPort == sp.TargetPort.IntVal)
				}
			}
			if !ok {
				t.Errorf("%s: Service %s port %s targets %s, which Deployment %s's containers do not expose", o.file, name, sp.Name, sp.TargetPort.String(), target.Name)
			}
		}
	}
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestKubernetesCommandsAreRealSubcommands runs `gpucost ARGS --help` for every container.
func TestKubernetesCommandsAreRealSubcommands(t *testing.T) {
	for _, v := range sortedKeys(variants) {
		for _, w := range workloads(render(t, filepath.Join(k8sDir, v), map[string]bool{})) {
			for _, c := range w.pod.Containers {
				t.Run(v+"/"+w.obj.GetName()+"/"+c.Name, func(t *testing.T) {
					checkSubcommand(t, w.file+": container "+c.Name, c.Args)
				})
			}
		}
	}
}

// TestKubernetesConfigMapIsAcceptedByGpucost checks the ConfigMap's gpucost.yaml on its own:
// `GPUCOST_CONFIG=gpucost.yaml gpucost config print` must exit 0, and its workloads.yaml must
// parse as a workloads file.
func TestKubernetesConfigMapIsAcceptedByGpucost(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(k8sDir, "base", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeManifests("base/configmap.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	cm := objs[0].obj.(*corev1.ConfigMap)
	cfgYAML, ok := cm.Data["gpucost.yaml"]
	if !ok {
		t.Fatalf("ConfigMap %s has no gpucost.yaml", cm.Name)
	}
	path := filepath.Join(t.TempDir(), "gpucost.yaml")
	if err := os.WriteFile(path, []byte(cfgYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := configPrint(t, "ConfigMap "+cm.Name+" gpucost.yaml", "GPUCOST_CONFIG="+path)
	if cfg.Scrape.SpoolDir == "" || !filepath.IsAbs(cfg.Scrape.SpoolDir) {
		t.Errorf("scrape.spool_dir %q: want an absolute path on the spool volume", cfg.Scrape.SpoolDir)
	}
	if _, err := optimizer.ParseWorkloads("workloads.yaml", []byte(cm.Data["workloads.yaml"])); err != nil {
		t.Errorf("ConfigMap %s workloads.yaml: %v", cm.Name, err)
	}
	// A config gpucost rejects must fail the check: the loader is strict.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(cfgYAML+"\nnot_a_key: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runIn(t, tmpRoot, cleanEnv("GPUCOST_CONFIG="+bad), gpucost(t), "config", "print"); r.code == 0 {
		t.Error("gpucost config print accepts an unknown key: this check proves nothing")
	}
}

// TestKubernetesKustomizeBuild renders each variant with `kubectl kustomize` (when kubectl is
// installed) and checks that it yields the offline rendering's objects, each decoding strictly.
func TestKubernetesKustomizeBuild(t *testing.T) {
	kubectl := tooltest.Optional(t, "the offline rendering is checked by TestKubernetesVariants", "kubectl")
	for _, v := range sortedKeys(variants) {
		t.Run(v, func(t *testing.T) {
			r := runIn(t, ".", os.Environ(), kubectl, "kustomize", filepath.Join(k8sDir, v))
			if r.code != 0 {
				t.Fatalf("kubectl kustomize %s: exit %d: %s", v, r.code, r.stderr)
			}
			built, err := decodeManifests("kubectl kustomize "+v, []byte(r.stdout))
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, o := range render(t, filepath.Join(k8sDir, v), map[string]bool{}) {
				want[o.id()] = o.namespace
			}
			got := map[string]string{}
			for _, o := range built {
				got[o.id()] = o.namespace
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("kubectl kustomize %s renders (object: namespace)\n  %v\nthe offline rendering\n  %v", v, got, want)
			}
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
