// Package deployments_test checks every file in deployments/ without a cluster or a Docker
// engine: the Helm chart is linted and rendered with the Helm library for each values file, the
// rendered manifests decode strictly into the Kubernetes API types (unknown fields fail), the
// compose files load with the compose loader, and every FORMWARD_* variable the compose files,
// the chart and the systemd unit set is one the binary reads (its --help names each one).
//
// This is a Go module of its own, so the product's go.mod lists only what the product uses; it
// builds the formward binary from the repository root and reads the variables from its --help.
//
// FORMWARD_UPDATE_MANIFESTS=1 rewrites deployments/kubernetes/formward.yaml from the chart
// (`make render-manifests`); otherwise the test fails when that file and the chart disagree.
package deployments_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"
)

const (
	chartDir      = "helm/formward"
	manifestsFile = "kubernetes/formward.yaml"
	releaseName   = "formward"
	namespace     = "formward"
	// A syntactically valid master key for rendering; never a real one.
	testMasterKey = "dGVzdC1vbmx5LXRlc3Qtb25seS10ZXN0LW9ubHktdGU="
)

// valuesCases are the chart's values files, each with what a user passes beside it.
var valuesCases = []struct {
	file      string
	overrides map[string]any
}{
	{"values-embedded.yaml", map[string]any{"secret": map[string]any{"masterKey": testMasterKey}}},
	{"values-scaled.yaml", nil},
	// The defaults: the embedded mode once a key and the public URL are given.
	{"values.yaml", map[string]any{"secret": map[string]any{"masterKey": testMasterKey}, "publicURL": "https://forms.example.com"}},
}

var formwardVar = regexp.MustCompile(`FORMWARD_[A-Z0-9_]+`)

// formwardBin is the formward binary built from the repository root by TestMain: the
// deployments module checks the product from outside, as a user runs it.
var formwardBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "formward-deployments-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "deployments: temp dir:", err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "formward")
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "deployments: building formward: %v\n%s\n", err, out)
			return 1
		}
		formwardBin = bin
		return m.Run()
	}()
	os.Exit(code)
}

// binaryVariables runs `formward [cmd…] --help` for every command and returns the FORMWARD_*
// variables each names, keyed by the command path ("" is the root).
func binaryVariables(t *testing.T) (all map[string]bool, byCommand map[string]map[string]bool) {
	t.Helper()
	all, byCommand = map[string]bool{}, map[string]map[string]bool{}
	var walk func(path []string)
	walk = func(path []string) {
		cmd := exec.Command(formwardBin, append(slices.Clone(path), "--help")...)
		// An empty environment: the help names each variable with its default, never a value
		// from the environment of the test.
		cmd.Env = []string{}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("formward %s --help: %v: %s", strings.Join(path, " "), err, out)
		}
		vars := map[string]bool{}
		for _, v := range formwardVar.FindAllString(string(out), -1) {
			vars[v], all[v] = true, true
		}
		byCommand[strings.Join(path, " ")] = vars
		for _, sub := range subcommands(string(out)) {
			if sub != "help" && sub != "completion" {
				walk(append(slices.Clone(path), sub))
			}
		}
	}
	walk(nil)
	if !all["FORMWARD_MASTER_KEY"] || !all["FORMWARD_TRUSTED_PROXIES"] || !all["FORMWARD_KAFKA_GROUP"] {
		t.Fatalf("the help output names too few variables to compare with: %v", keys(all))
	}
	return all, byCommand
}

// subcommands reads the "Available Commands:" section of a cobra help text.
func subcommands(help string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.HasPrefix(line, "Available Commands:"):
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			out = append(out, strings.Fields(line)[0])
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkVariables fails for every FORMWARD_* name set in a file that the binary does not read.
func checkVariables(t *testing.T, where string, set []string, known map[string]bool) {
	t.Helper()
	if len(set) == 0 {
		t.Errorf("%s sets no FORMWARD_* variable: nothing was compared", where)
	}
	for _, name := range set {
		if !known[name] {
			t.Errorf("%s sets %s, which no formward command reads (see formward --help)", where, name)
		}
	}
}

// ---- Helm ----

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

// userValues is a values file merged with the overrides (what `-f file --set …` gives Helm).
func userValues(t *testing.T, file string, overrides map[string]any) map[string]any {
	t.Helper()
	vals, err := chartutil.ReadValuesFile(filepath.Join(chartDir, file))
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return mergeMaps(vals.AsMap(), overrides)
}

func mergeMaps(dst, src map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(dm, sm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

var kubeVersion = &chartutil.KubeVersion{Version: "v1.31.0", Major: "1", Minor: "31"}

// render renders the chart as `helm install` would (no cluster: lookup finds nothing unless a
// client is given) and returns the manifests in template order.
func render(t *testing.T, vals map[string]any, client engine.ClientProvider) ([]string, error) {
	t.Helper()
	ch := loadChart(t)
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kubeVersion
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: releaseName, Namespace: namespace, IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	var files map[string]string
	if client != nil {
		files, err = engine.RenderWithClientProvider(ch, rv, client)
	} else {
		files, err = engine.Render(ch, rv)
	}
	if err != nil {
		return nil, err
	}
	// Helm's install order (service account, Secret, Services, Deployments, …), then the hooks:
	// the order kubectl applies the plain manifests in.
	for name := range files {
		if !strings.HasSuffix(name, ".yaml") || strings.HasPrefix(filepath.Base(name), "_") {
			delete(files, name) // NOTES.txt and partials are not manifests
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("split manifests: %w", err)
	}
	var docs []string
	for _, m := range manifests {
		docs = append(docs, strings.TrimSpace(m.Content))
	}
	for _, h := range hooks {
		docs = append(docs, strings.TrimSpace(h.Manifest))
	}
	return docs, nil
}

func TestChartLint(t *testing.T) {
	for _, c := range valuesCases {
		t.Run(c.file, func(t *testing.T) {
			linter := lint.AllWithKubeVersion(chartDir, userValues(t, c.file, c.overrides), namespace, kubeVersion)
			for _, msg := range linter.Messages {
				if msg.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", msg)
				} else {
					t.Logf("helm lint: %s", msg)
				}
			}
		})
	}
}

// object is one rendered manifest decoded into its API type.
type object struct {
	kind, name string
	obj        any
}

// decodeStrict decodes a manifest into the Go type of its kind; unknown or duplicate fields
// fail, as do kinds the chart is not expected to render.
func decodeStrict(doc string) (object, error) {
	var meta struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		return object{}, fmt.Errorf("not YAML: %w", err)
	}
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		obj = &autoscalingv2.HorizontalPodAutoscaler{}
	case "networking.k8s.io/v1 Ingress":
		obj = &networkingv1.Ingress{}
	case "networking.k8s.io/v1 NetworkPolicy":
		obj = &networkingv1.NetworkPolicy{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = &serviceMonitor{}
	case "monitoring.coreos.com/v1 PrometheusRule":
		obj = &prometheusRule{}
	default:
		return object{}, fmt.Errorf("unexpected kind %q %q", meta.APIVersion, meta.Kind)
	}
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		return object{}, fmt.Errorf("%s %s: %w", meta.Kind, meta.Metadata.Name, err)
	}
	if meta.Metadata.Name == "" {
		return object{}, fmt.Errorf("%s without a name", meta.Kind)
	}
	return object{kind: meta.Kind, name: meta.Metadata.Name, obj: obj}, nil
}

// serviceMonitor and prometheusRule are the fields of the Prometheus Operator's CRDs the chart
// uses; strict decoding into them catches misspelt or misplaced fields.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector *struct {
			MatchNames []string `json:"matchNames,omitempty"`
		} `json:"namespaceSelector,omitempty"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path,omitempty"`
			Interval      string `json:"interval,omitempty"`
			ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

type prometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ruleGroups `json:"spec"`
}

type ruleGroups struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Limit    int    `json:"limit,omitempty"`
		Rules    []struct {
			Alert       string            `json:"alert,omitempty"`
			Record      string            `json:"record,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			KeepFiring  string            `json:"keep_firing_for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

func (g ruleGroups) check() error {
	if len(g.Groups) == 0 {
		return errors.New("no rule groups")
	}
	for _, grp := range g.Groups {
		if grp.Name == "" || len(grp.Rules) == 0 {
			return fmt.Errorf("rule group %q: a name and rules are required", grp.Name)
		}
		for _, r := range grp.Rules {
			if (r.Alert == "") == (r.Record == "") || strings.TrimSpace(r.Expr) == "" {
				return fmt.Errorf("rule group %q: every rule needs alert or record (one of them) and expr: %+v", grp.Name, r)
			}
		}
	}
	return nil
}

func TestChartRendersStrictly(t *testing.T) {
	known, byCommand := binaryVariables(t)
	for _, c := range valuesCases {
		t.Run(c.file, func(t *testing.T) {
			docs, err := render(t, userValues(t, c.file, c.overrides), nil)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			objs := decodeAll(t, docs)
			checkManifests(t, objs, known, byCommand)
		})
	}
}

func decodeAll(t *testing.T, docs []string) []object {
	t.Helper()
	if len(docs) == 0 {
		t.Fatal("the chart rendered nothing")
	}
	var objs []object
	for _, doc := range docs {
		o, err := decodeStrict(doc)
		if err != nil {
			t.Errorf("%v\n%s", err, doc)
			continue
		}
		objs = append(objs, o)
	}
	return objs
}

// checkManifests checks what strict decoding cannot: the variables are the binary's, every
// secret key read exists, volumes and selectors line up, and the read-only root has its volumes.
func checkManifests(t *testing.T, objs []object, known map[string]bool, byCommand map[string]map[string]bool) {
	t.Helper()
	secrets := map[string]map[string]bool{}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.kind]++
		if s, ok := o.obj.(*corev1.Secret); ok {
			secrets[s.Name] = map[string]bool{}
			for k := range s.Data {
				secrets[s.Name][k] = true
			}
			for k := range s.StringData {
				secrets[s.Name][k] = true
			}
		}
	}
	for _, o := range objs {
		var pod *corev1.PodTemplateSpec
		var selector *metav1.LabelSelector
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			pod, selector = &v.Spec.Template, v.Spec.Selector
		case *batchv1.Job:
			pod = &v.Spec.Template
		case *prometheusRule:
			if err := v.Spec.check(); err != nil {
				t.Errorf("PrometheusRule %s: %v", o.name, err)
			}
		}
		if pod == nil {
			continue
		}
		where := o.kind + " " + o.name
		if selector != nil {
			for k, want := range selector.MatchLabels {
				if pod.Labels[k] != want {
					t.Errorf("%s: selector %s=%s does not match the pod labels %v", where, k, want, pod.Labels)
				}
			}
		}
		volumes := map[string]bool{}
		for _, v := range pod.Spec.Volumes {
			volumes[v.Name] = true
		}
		for _, ctr := range pod.Spec.Containers {
			mounts := map[string]bool{}
			for _, m := range ctr.VolumeMounts {
				if !volumes[m.Name] {
					t.Errorf("%s: container %s mounts %s, which is no volume of the pod", where, ctr.Name, m.Name)
				}
				mounts[m.MountPath] = true
			}
			if sc := ctr.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Errorf("%s: container %s runs without a read-only root filesystem", where, ctr.Name)
			} else if !mounts["/tmp"] || !mounts["/data"] {
				t.Errorf("%s: container %s has a read-only root but no /tmp and /data volumes", where, ctr.Name)
			}
			var set []string
			seen := map[string]bool{}
			for _, e := range ctr.Env {
				if seen[e.Name] {
					t.Errorf("%s: container %s sets %s twice", where, ctr.Name, e.Name)
				}
				seen[e.Name] = true
				if strings.HasPrefix(e.Name, "FORMWARD_") {
					set = append(set, e.Name)
				}
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					ref := e.ValueFrom.SecretKeyRef
					if keys, made := secrets[ref.Name]; made && !keys[ref.Key] && (ref.Optional == nil || !*ref.Optional) {
						t.Errorf("%s: %s reads key %s, which Secret %s does not hold", where, e.Name, ref.Key, ref.Name)
					}
				}
			}
			checkVariables(t, where, set, known)
			// A role's variables that its own command does not read are reported, not failed:
			// the metrics listener of relay and worker comes with their metrics.
			if len(ctr.Args) == 1 {
				for _, name := range set {
					if cmd, ok := byCommand[ctr.Args[0]]; ok && !cmd[name] {
						t.Logf("%s: %s is set but `formward %s` does not read it", where, name, ctr.Args[0])
					}
				}
			}
		}
	}
	for _, kind := range []string{"Deployment", "Service"} {
		if kinds[kind] == 0 {
			t.Errorf("no %s rendered", kind)
		}
	}
	checkProbesAndBudgets(t, objs)
	checkBackupTools(t, objs)
}

// checkProbesAndBudgets: every container of a Deployment has HTTP readiness and liveness probes
// on a port it declares, and every Deployment that may run more than one pod (replicas, or an
// HPA) has a PodDisruptionBudget selecting its pods.
func checkProbesAndBudgets(t *testing.T, objs []object) {
	t.Helper()
	var budgets []*policyv1.PodDisruptionBudget
	scaled := map[string]bool{}
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *policyv1.PodDisruptionBudget:
			budgets = append(budgets, v)
		case *autoscalingv2.HorizontalPodAutoscaler:
			if v.Spec.MaxReplicas > 1 {
				scaled[v.Spec.ScaleTargetRef.Name] = true
			}
		}
	}
	for _, o := range objs {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for _, ctr := range d.Spec.Template.Spec.Containers {
			ports := map[string]bool{}
			for _, p := range ctr.Ports {
				ports[p.Name] = true
			}
			for kind, p := range map[string]*corev1.Probe{"readiness": ctr.ReadinessProbe, "liveness": ctr.LivenessProbe} {
				switch {
				case p == nil || p.HTTPGet == nil:
					t.Errorf("Deployment %s: container %s has no HTTP %s probe", d.Name, ctr.Name, kind)
				case !ports[p.HTTPGet.Port.String()]:
					t.Errorf("Deployment %s: the %s probe of %s calls port %q, which the container does not declare", d.Name, kind, ctr.Name, p.HTTPGet.Port.String())
				}
			}
		}
		if (d.Spec.Replicas == nil || *d.Spec.Replicas <= 1) && !scaled[d.Name] {
			continue
		}
		covered := false
		for _, b := range budgets {
			sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
			if err == nil && sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				covered = true
			}
		}
		if !covered {
			t.Errorf("Deployment %s may run more than one pod but no PodDisruptionBudget selects them", d.Name)
		}
	}
}

// checkBackupTools: a serve on PostgreSQL that takes scheduled backups runs the image variant
// with the PostgreSQL client tools; otherwise FORMWARD_BACKUP_INTERVAL is 0.
func checkBackupTools(t *testing.T, objs []object) {
	t.Helper()
	for _, o := range objs {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok || d.Name != releaseName+"-serve" {
			continue
		}
		ctr := d.Spec.Template.Spec.Containers[0]
		names := map[string]bool{}
		for _, e := range ctr.Env {
			names[e.Name] = true
		}
		env := envOf(ctr)
		if !names["FORMWARD_DATABASE_URL"] {
			continue
		}
		if env["FORMWARD_BACKUP_INTERVAL"] != "0" && !strings.HasSuffix(ctr.Image, "-postgres") {
			t.Errorf("serve on PostgreSQL takes backups every %q with image %s, which has no pg_dump", env["FORMWARD_BACKUP_INTERVAL"], ctr.Image)
		}
	}
}

func TestChartScaledOut(t *testing.T) {
	docs, err := render(t, userValues(t, "values-scaled.yaml", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, docs)
	got := map[string]bool{}
	for _, o := range objs {
		got[o.kind+" "+o.name] = true
		switch v := o.obj.(type) {
		case *corev1.Secret:
			t.Errorf("values-scaled.yaml names an existing Secret, yet the chart rendered Secret %s", v.Name)
		case *batchv1.Job:
			if hook := v.Annotations["helm.sh/hook"]; !strings.Contains(hook, "pre-upgrade") || !strings.Contains(hook, "pre-install") {
				t.Errorf("migrate Job hook = %q, want pre-install and pre-upgrade with an existing Secret", hook)
			}
		case *appsv1.Deployment:
			if v.Name == "formward-serve" {
				env := envOf(v.Spec.Template.Spec.Containers[0])
				if env["FORMWARD_PUBLIC_URL"] != "https://forms.example.com" || env["FORMWARD_TRUSTED_PROXIES"] == "" || env["FORMWARD_S3_ENDPOINT"] == "" {
					t.Errorf("serve env lacks the public URL, trusted proxies or S3: %v", env)
				}
				if v.Spec.Replicas != nil {
					t.Errorf("serve has an HPA, yet its Deployment fixes replicas to %d", *v.Spec.Replicas)
				}
				// Backups with pg_dump, into the bucket: the image is the PostgreSQL variant.
				if img := v.Spec.Template.Spec.Containers[0].Image; img != "formward:0.1.0-postgres" || env["FORMWARD_BACKUP_INTERVAL"] != "24h" {
					t.Errorf("serve runs %s with FORMWARD_BACKUP_INTERVAL %q, want the postgres variant taking daily backups", img, env["FORMWARD_BACKUP_INTERVAL"])
				}
			}
		}
	}
	for _, want := range []string{
		"Deployment formward-serve", "Deployment formward-relay", "Deployment formward-worker", "Job formward-migrate",
		"HorizontalPodAutoscaler formward-serve", "HorizontalPodAutoscaler formward-worker",
		"PodDisruptionBudget formward-serve", "PodDisruptionBudget formward-relay", "PodDisruptionBudget formward-worker",
		"Ingress formward", "NetworkPolicy formward-serve", "ServiceMonitor formward", "PrometheusRule formward",
	} {
		if !got[want] {
			t.Errorf("values-scaled.yaml rendered no %s; got %v", want, keys(got))
		}
	}
}

func envOf(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		out[e.Name] = e.Value
	}
	return out
}

func TestChartEmbedded(t *testing.T) {
	docs, err := render(t, userValues(t, "values-embedded.yaml", map[string]any{"secret": map[string]any{"masterKey": testMasterKey}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	var deployments []string
	var pvc, secret bool
	for _, o := range decodeAll(t, docs) {
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			deployments = append(deployments, v.Name)
			if v.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType || v.Spec.Replicas == nil || *v.Spec.Replicas != 1 {
				t.Errorf("embedded serve: strategy %s, replicas %v; want Recreate and 1 (one SQLite writer)", v.Spec.Strategy.Type, v.Spec.Replicas)
			}
			env := envOf(v.Spec.Template.Spec.Containers[0])
			if _, ok := env["FORMWARD_DATABASE_URL"]; ok {
				t.Error("embedded serve has a database URL")
			}
		case *corev1.PersistentVolumeClaim:
			pvc = true
		case *corev1.Secret:
			secret = true
			if got := string(v.Data["master-key"]); got != testMasterKey {
				t.Errorf("Secret master-key = %q, want the one given", got)
			}
			if v.Annotations["helm.sh/resource-policy"] != "keep" {
				t.Error("the chart's Secret is not kept on uninstall")
			}
		case *batchv1.Job, *autoscalingv2.HorizontalPodAutoscaler, *policyv1.PodDisruptionBudget:
			t.Errorf("embedded mode rendered %s %s", o.kind, o.name)
		}
	}
	if !slices.Equal(deployments, []string{"formward-serve"}) || !pvc || !secret {
		t.Errorf("embedded mode: deployments %v, PVC %v, Secret %v; want serve alone, a PVC and a Secret", deployments, pvc, secret)
	}
}

// TestChartRefuses covers the settings the chart must not install.
func TestChartRefuses(t *testing.T) {
	master := map[string]any{"secret": map[string]any{"masterKey": testMasterKey}}
	cases := []struct {
		name      string
		file      string
		overrides map[string]any
		want      string
	}{
		{"two serve replicas without S3", "values-scaled.yaml", map[string]any{"s3": map[string]any{"endpoint": ""}}, "s3.endpoint is required"},
		{"autoscaled serve without S3", "values-scaled.yaml", map[string]any{"s3": map[string]any{"endpoint": ""}, "serve": map[string]any{"replicas": 1}}, "s3.endpoint is required"},
		{"embedded with two replicas", "values-embedded.yaml", mergeMaps(master, map[string]any{"serve": map[string]any{"replicas": 2}, "s3": map[string]any{"endpoint": "s3.example.com"}}), "database.postgres is required"},
		{"no master key", "values-embedded.yaml", nil, "secret.masterKey is required"},
		{"no public URL", "values-embedded.yaml", mergeMaps(master, map[string]any{"publicURL": "", "ingress": map[string]any{"enabled": false}}), "publicURL is required"},
		{"Kafka without a worker", "values-scaled.yaml", map[string]any{"worker": map[string]any{"enabled": false}}, "enable relay and worker"},
		{"PostgreSQL without S3 on an emptyDir", "values-scaled.yaml", singleServeWithoutS3(false),
			"database.postgres without s3.endpoint keeps uploaded files, backups and the tombstone log in /data: enable persistence"},
		{"PostgreSQL backups without the client tools", "values-scaled.yaml", map[string]any{"image": map[string]any{"variant": ""}},
			"serve runs pg_dump, which only the image variant with the PostgreSQL client tools has: set image.variant: postgres"},
		{"one volume for several serve pods", "values-scaled.yaml", map[string]any{"persistence": map[string]any{"enabled": true}},
			"persistence is one ReadWriteOnce volume for one serve pod"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, userValues(t, c.file, c.overrides), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("render error = %v, want one saying %q", err, c.want)
			}
		})
	}
}

// singleServeWithoutS3 overrides values-scaled.yaml to one serve pod without S3, with or without
// the persistent volume.
func singleServeWithoutS3(persistence bool) map[string]any {
	return map[string]any{
		"s3":          map[string]any{"endpoint": ""},
		"serve":       map[string]any{"replicas": 1, "autoscaling": map[string]any{"enabled": false}},
		"persistence": map[string]any{"enabled": persistence},
	}
}

// TestChartPostgresWithoutS3: on PostgreSQL without S3, serve's /data (files, backups, the
// tombstone log) is a PersistentVolumeClaim, and backups off need no client tools.
func TestChartPostgresWithoutS3(t *testing.T) {
	known, byCommand := binaryVariables(t)
	docs, err := render(t, userValues(t, "values-scaled.yaml", singleServeWithoutS3(true)), nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, docs)
	checkManifests(t, objs, known, byCommand)
	var pvc string
	for _, o := range objs {
		if v, ok := o.obj.(*corev1.PersistentVolumeClaim); ok {
			pvc = v.Name
		}
	}
	for _, o := range objs {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok || d.Name != "formward-serve" {
			continue
		}
		if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("serve with a ReadWriteOnce volume: strategy %s, want Recreate", d.Spec.Strategy.Type)
		}
		var claim string
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == "data" && v.PersistentVolumeClaim != nil {
				claim = v.PersistentVolumeClaim.ClaimName
			}
		}
		if pvc == "" || claim != pvc {
			t.Errorf("serve's /data is on claim %q, the chart made claim %q", claim, pvc)
		}
		if env := envOf(d.Spec.Template.Spec.Containers[0]); env["FORMWARD_S3_ENDPOINT"] != "" {
			t.Errorf("serve without S3 has FORMWARD_S3_ENDPOINT %q", env["FORMWARD_S3_ENDPOINT"])
		}
	}

	// Scheduled backups off: the distroless image will do, and the manifests say so.
	docs, err = render(t, userValues(t, "values-scaled.yaml", mergeMaps(singleServeWithoutS3(true),
		map[string]any{"image": map[string]any{"variant": ""}, "backup": map[string]any{"interval": "0"}})), nil)
	if err != nil {
		t.Fatalf("backups off with the distroless image: %v", err)
	}
	for _, o := range decodeAll(t, docs) {
		if d, ok := o.obj.(*appsv1.Deployment); ok && d.Name == "formward-serve" {
			ctr := d.Spec.Template.Spec.Containers[0]
			if ctr.Image != "formward:0.1.0" || envOf(ctr)["FORMWARD_BACKUP_INTERVAL"] != "0" {
				t.Errorf("backups off: serve runs %s with FORMWARD_BACKUP_INTERVAL %q", ctr.Image, envOf(ctr)["FORMWARD_BACKUP_INTERVAL"])
			}
		}
	}
}

// secretClient answers the chart's lookup of its Secret as a cluster holding one would.
type secretClient struct{ client dynamic.Interface }

func (c secretClient) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion != "v1" || kind != "Secret" {
		return nil, false, fmt.Errorf("unexpected lookup of %s %s", apiVersion, kind)
	}
	return c.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}), true, nil
}

func clusterWithSecret(data map[string]string) engine.ClientProvider {
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "formward", "namespace": namespace},
		"data":     map[string]any{},
	}}
	for k, v := range data {
		secret.Object["data"].(map[string]any)[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	scheme := runtime.NewScheme()
	return secretClient{client: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{{Version: "v1", Resource: "secrets"}: "SecretList"}, secret)}
}

// TestChartKeepsStoredSecret: an upgrade never replaces the master key stored in the Secret.
func TestChartKeepsStoredSecret(t *testing.T) {
	const stored = "c3RvcmVkLXN0b3JlZC1zdG9yZWQtc3RvcmVkLXN0b3I="
	cluster := clusterWithSecret(map[string]string{"master-key": stored, "previous-master-keys": ""})
	secretOf := func(t *testing.T, overrides map[string]any) (*corev1.Secret, error) {
		t.Helper()
		docs, err := render(t, userValues(t, "values-embedded.yaml", overrides), cluster)
		if err != nil {
			return nil, err
		}
		for _, o := range decodeAll(t, docs) {
			if s, ok := o.obj.(*corev1.Secret); ok {
				return s, nil
			}
		}
		t.Fatal("no Secret rendered")
		return nil, nil
	}

	t.Run("upgrade without a key keeps the stored one", func(t *testing.T) {
		s, err := secretOf(t, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(s.Data["master-key"]); got != stored {
			t.Errorf("master-key = %q, want the stored %q", got, stored)
		}
	})
	t.Run("a different key is refused", func(t *testing.T) {
		_, err := secretOf(t, map[string]any{"secret": map[string]any{"masterKey": testMasterKey}})
		if err == nil || !strings.Contains(err.Error(), "differs from the master key stored") {
			t.Fatalf("render error = %v, want a refusal to replace the stored key", err)
		}
	})
	t.Run("rotation with the stored key among the previous ones", func(t *testing.T) {
		s, err := secretOf(t, map[string]any{"secret": map[string]any{"masterKey": testMasterKey, "previousMasterKeys": stored}})
		if err != nil {
			t.Fatal(err)
		}
		if string(s.Data["master-key"]) != testMasterKey || string(s.Data["previous-master-keys"]) != stored {
			t.Errorf("after rotation: master-key %q, previous %q", s.Data["master-key"], s.Data["previous-master-keys"])
		}
	})
}

// TestPlainManifests: deployments/kubernetes/formward.yaml is the chart rendered with
// values-scaled.yaml (and no Prometheus Operator resources), so it references the Secret the
// operator creates and never carries one of its own.
func TestPlainManifests(t *testing.T) {
	docs, err := render(t, userValues(t, "values-scaled.yaml", map[string]any{
		"serviceMonitor": map[string]any{"enabled": false}, "prometheusRule": map[string]any{"enabled": false},
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range decodeAll(t, docs) {
		if o.kind == "Secret" {
			t.Fatalf("the plain manifests would carry Secret %s", o.name)
		}
	}
	want := manifestsHeader + strings.Join(docs, "\n---\n") + "\n"
	if os.Getenv("FORMWARD_UPDATE_MANIFESTS") == "1" {
		if err := os.WriteFile(manifestsFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(manifestsFile)
	if err != nil {
		t.Fatalf("%v (make render-manifests writes it)", err)
	}
	if string(got) != want {
		t.Errorf("%s differs from the chart rendered with values-scaled.yaml: run `make render-manifests`", manifestsFile)
	}
}

const manifestsHeader = `# Formward scaled out on Kubernetes, rendered from the Helm chart deployments/helm/formward
# with values-scaled.yaml by ` + "`make render-manifests`" + `: do not edit, change the chart. Prefer the
# chart itself (docs/deploying.md); these manifests are for kubectl-only pipelines.
#
# They reference, never create, the Secret "formward" (keys master-key, database-url,
# s3-access-key, s3-secret-key, optionally smtp-url, previous-master-keys, ip-hash-secret):
#   kubectl create secret generic formward \
#     --from-literal=master-key="$(head -c 32 /dev/urandom | base64)" \
#     --from-literal=database-url='postgres://formward:…@postgres:5432/formward?sslmode=verify-full' \
#     --from-literal=s3-access-key=… --from-literal=s3-secret-key=…
# Edit the host names (forms.example.com, the Kafka brokers, the S3 endpoint) and the image (the
# PostgreSQL variant, deployments/Dockerfile --target postgres: serve's backups run pg_dump), then
#   kubectl apply -f formward.yaml
# The migrate Job (last) runs ` + "`formward migrate`" + `; the processes also apply missing migrations at
# start, one at a time under a PostgreSQL advisory lock. A Job cannot be changed once created:
# on a new release, ` + "`kubectl delete job formward-migrate --ignore-not-found`" + ` before applying (it
# is removed an hour after it finished anyway).
---
`

// TestAlertRulesInStep: the chart's PrometheusRule carries the same rules as the plain Prometheus
// rule file deployments/prometheus/alerts.yaml, when that file exists (a chart cannot read files
// outside its directory, so the two copies are compared here).
func TestAlertRulesInStep(t *testing.T) {
	read := func(path string) ruleGroups {
		t.Helper()
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var g ruleGroups
		if err := yaml.UnmarshalStrict(raw, &g); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := g.check(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return g
	}
	chartRules := read(filepath.Join(chartDir, "files", "alerts.yaml"))
	const plain = "prometheus/alerts.yaml"
	if _, err := os.Stat(plain); errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s does not exist: only the chart's rules were checked", plain)
	}
	if plainRules := read(plain); !reflect.DeepEqual(chartRules, plainRules) {
		t.Errorf("%s/files/alerts.yaml and %s differ: keep the two copies the same", chartDir, plain)
	}
}

// ---- compose ----

func loadCompose(t *testing.T, file string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{file},
		cli.WithEnv([]string{"FORMWARD_MASTER_KEY=" + testMasterKey}),
		cli.WithWorkingDirectory("."),
		cli.WithName("formward"),
		cli.WithInterpolation(true),
		cli.WithConsistency(true),
	)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

var pinnedImage = regexp.MustCompile(`^[a-z0-9./_-]+:[A-Za-z0-9._-]*[0-9][A-Za-z0-9._-]*(@sha256:[0-9a-f]{64})?$`)

func TestCompose(t *testing.T) {
	known, _ := binaryVariables(t)
	for _, c := range []struct {
		file     string
		services []string
		oneShots []string
	}{
		{"compose.yaml", []string{"postgres", "kafka", "minio", "minio-init", "mailpit", "migrate", "serve", "relay", "worker", "proxy"}, []string{"migrate", "minio-init"}},
		{"compose.embedded.yaml", []string{"formward"}, nil},
	} {
		t.Run(c.file, func(t *testing.T) {
			p := loadCompose(t, c.file)
			if got := p.ServiceNames(); !sameSet(got, c.services) {
				t.Errorf("services %v, want %v", got, c.services)
			}
			for _, svc := range p.Services {
				if svc.Build == nil && !pinnedImage.MatchString(svc.Image) {
					t.Errorf("service %s: image %q is not pinned to a version", svc.Name, svc.Image)
				}
				if !slices.Contains(c.oneShots, svc.Name) && (svc.HealthCheck == nil || len(svc.HealthCheck.Test) == 0 || svc.HealthCheck.Disable) {
					t.Errorf("service %s has no healthcheck", svc.Name)
				}
				if svc.Build != nil && !svc.ReadOnly {
					t.Errorf("service %s: formward runs with a read-only root filesystem in production; compose should too", svc.Name)
				}
				var set []string
				for name := range svc.Environment {
					if strings.HasPrefix(name, "FORMWARD_") {
						set = append(set, name)
					}
				}
				if svc.Build != nil {
					checkVariables(t, c.file+" service "+svc.Name, set, known)
				}
			}
			if c.file == "compose.yaml" {
				serve := p.Services["serve"]
				if serve.Deploy == nil || serve.Deploy.Replicas == nil || *serve.Deploy.Replicas != 2 {
					t.Error("compose.yaml: serve should run two replicas")
				}
				for _, name := range []string{"FORMWARD_PUBLIC_URL", "FORMWARD_TRUSTED_PROXIES", "FORMWARD_S3_ENDPOINT", "FORMWARD_KAFKA_BROKERS"} {
					if v := serve.Environment[name]; v == nil || *v == "" {
						t.Errorf("compose.yaml: serve does not set %s", name)
					}
				}
				proxyIP := p.Services["proxy"].Networks["default"].Ipv4Address
				if proxyIP == "" || *serve.Environment["FORMWARD_TRUSTED_PROXIES"] != proxyIP {
					t.Errorf("compose.yaml: serve trusts %q, the proxy is at %q", *serve.Environment["FORMWARD_TRUSTED_PROXIES"], proxyIP)
				}
				// serve takes backups on PostgreSQL: its image has the client tools, or backups are off.
				if iv := serve.Environment["FORMWARD_BACKUP_INTERVAL"]; (iv == nil || *iv != "0") && (serve.Build == nil || serve.Build.Target != postgresTarget) {
					t.Errorf("compose.yaml: serve takes scheduled backups on PostgreSQL without the image's %s target (pg_dump)", postgresTarget)
				}
				for _, role := range []string{"relay", "worker"} {
					if hc := p.Services[role].HealthCheck; hc == nil || !slices.Contains(hc.Test, "http://127.0.0.1:9464/readyz") {
						t.Errorf("compose.yaml: %s's healthcheck does not call /readyz on the metrics listener", role)
					}
				}
			}
		})
	}
}

// postgresTarget is the Dockerfile stage with the PostgreSQL client tools.
const postgresTarget = "postgres"

// TestDockerfilePostgresVariant: the Dockerfile has the stage compose and the chart's
// image.variant name, it installs pg_dump and pg_restore, and the default image stays the last
// (distroless) stage.
func TestDockerfilePostgresVariant(t *testing.T) {
	raw, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages []string
	stage := ""
	body := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "FROM" {
			stage = f[1]
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				stage = f[3]
			}
			stages = append(stages, stage)
		}
		body[stage] += line + "\n"
	}
	if !slices.Contains(stages, postgresTarget) {
		t.Fatalf("Dockerfile has no stage %q; stages %v", postgresTarget, stages)
	}
	if !strings.Contains(body[postgresTarget], "postgresql-client") || !strings.Contains(body[postgresTarget], "USER 65532:65532") ||
		!strings.Contains(body[postgresTarget], `ENTRYPOINT ["/usr/local/bin/formward"]`) {
		t.Errorf("stage %s does not install the PostgreSQL client tools and run formward as 65532:\n%s", postgresTarget, body[postgresTarget])
	}
	if last := stages[len(stages)-1]; !strings.HasPrefix(last, "gcr.io/distroless/") {
		t.Errorf("the default image (last stage) is %s, want the distroless one", last)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

// ---- systemd ----

func TestSystemdUnit(t *testing.T) {
	known, byCommand := binaryVariables(t)
	raw, err := os.ReadFile("systemd/formward.service")
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	var exec string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			name, _, found := strings.Cut(v, "=")
			if !found {
				t.Errorf("malformed %q", line)
			}
			set = append(set, name)
		}
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			exec = v
		}
	}
	checkVariables(t, "systemd/formward.service", set, known)
	if exec != "/usr/local/bin/formward serve" {
		t.Errorf("ExecStart=%q, want the embedded serve", exec)
	}
	for _, name := range set {
		if !byCommand["serve"][name] {
			t.Errorf("systemd/formward.service sets %s, which `formward serve` does not read", name)
		}
	}
}
