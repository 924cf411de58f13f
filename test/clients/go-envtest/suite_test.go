// An ordinary controller-runtime envtest suite, run unmodified against whatever KUBEBUILDER_ASSETS
// points at (Capstan's `envtest-assets` directory or the reference kube-apiserver and etcd).
//
// TestMain starts the control plane with envtest, which installs the Gadget CRD given in
// CRDInstallOptions, a validating webhook configuration given in WebhookInstallOptions (pointed at
// the manager's webhook server with a CA envtest makes), and provisions the admin user; a manager
// runs a reconciler that gives every Gadget an owned ConfigMap and a status. The tests check the
// reconciler's work, the webhook's denial, and that a user provisioned with AddUser is forbidden
// until a Role and RoleBinding allow it.
//
// The last line on stdout is `ENVTEST_TIMING {"startMs":...,"stopMs":...,"totalMs":...}`: how
// long Environment.Start took (control plane ready, CRDs served, webhooks installed), how long
// Environment.Stop took, and the whole run.
package envtestsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

var gadgetGVK = schema.GroupVersionKind{Group: "envtest.capstan.test", Version: "v1", Kind: "Gadget"}

var (
	testEnv     *envtest.Environment
	adminClient client.Client
)

// gadgetCRD is a namespaced CRD with a status subresource.
func gadgetCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.envtest.capstan.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: gadgetGVK.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec":   {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"message": str}},
						"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"configMap": str, "phase": str}},
					},
				}},
			}},
		},
	}
}

// gadgetWebhook sends Gadgets of the namespace envtest-webhook to the manager's /validate-gadget.
func gadgetWebhook() *admissionv1.ValidatingWebhookConfiguration {
	path := "/validate-gadget"
	fail := admissionv1.Fail
	none := admissionv1.SideEffectClassNone
	return &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "envtest-gadget-validation"},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name:                    "vgadget.envtest.capstan.test",
			ClientConfig:            admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "system", Name: "webhook-service", Path: &path}},
			Rules:                   []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}, Rule: admissionv1.Rule{APIGroups: []string{gadgetGVK.Group}, APIVersions: []string{"v1"}, Resources: []string{"gadgets"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "envtest-webhook"}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// validateGadget denies a Gadget whose spec.message is "forbidden".
func validateGadget(_ context.Context, req admission.Request) admission.Response {
	gadget := &unstructured.Unstructured{}
	if err := gadget.UnmarshalJSON(req.Object.Raw); err != nil {
		return admission.Errored(400, err)
	}
	if message, _, _ := unstructured.NestedString(gadget.Object, "spec", "message"); message == "forbidden" {
		return admission.Denied(`message "forbidden" is not allowed`)
	}
	return admission.Allowed("")
}

// gadgetReconciler creates or updates the ConfigMap `<gadget>-config` (owned by the Gadget) holding
// spec.message, then sets status.configMap and status.phase=Ready.
type gadgetReconciler struct{ client.Client }

func (r *gadgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	gadget := &unstructured.Unstructured{}
	gadget.SetGroupVersionKind(gadgetGVK)
	if err := r.Get(ctx, req.NamespacedName, gadget); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	message, _, _ := unstructured.NestedString(gadget.Object, "spec", "message")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: gadget.GetName() + "-config", Namespace: gadget.GetNamespace()}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": message}
		return controllerutil.SetControllerReference(gadget, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if err := unstructured.SetNestedMap(gadget.Object, map[string]interface{}{"configMap": cm.Name, "phase": "Ready"}, "status"); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Status().Update(ctx, gadget); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func TestMain(m *testing.M) {
	began := time.Now()
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	testEnv = &envtest.Environment{
		CRDInstallOptions:     envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{gadgetCRD()}},
		WebhookInstallOptions: envtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionv1.ValidatingWebhookConfiguration{gadgetWebhook()}},
	}
	_, err := testEnv.Start()
	startMs := time.Since(began).Milliseconds()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest start failed: %v\n", err)
		os.Exit(1)
	}
	code := run(m)
	stopping := time.Now()
	if err := testEnv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "envtest stop failed: %v\n", err)
		code = 1
	}
	stopMs := time.Since(stopping).Milliseconds()
	timing, _ := json.Marshal(map[string]int64{"startMs": startMs, "stopMs": stopMs, "totalMs": time.Since(began).Milliseconds()})
	fmt.Printf("ENVTEST_TIMING %s\n", timing)
	os.Exit(code)
}

// run starts the manager, runs the tests and stops the manager.
func run(m *testing.M) int {
	restCfg := testEnv.Config
	hooks := &testEnv.WebhookInstallOptions
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Metrics:       metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{Host: hooks.LocalServingHost, Port: hooks.LocalServingPort, CertDir: hooks.LocalServingCertDir}),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		return 1
	}
	gadget := &unstructured.Unstructured{}
	gadget.SetGroupVersionKind(gadgetGVK)
	if err := ctrl.NewControllerManagedBy(mgr).For(gadget).Owns(&corev1.ConfigMap{}).Complete(&gadgetReconciler{mgr.GetClient()}); err != nil {
		fmt.Fprintf(os.Stderr, "controller: %v\n", err)
		return 1
	}
	mgr.GetWebhookServer().Register("/validate-gadget", &webhook.Admission{Handler: admission.HandlerFunc(validateGadget)})
	adminClient, err = client.New(restCfg, client.Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintf(os.Stderr, "manager stopped: %v\n", err)
		code = 1
	}
	return code
}

// eventually polls check until it returns nil or the deadline passes.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after 20s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	if err := adminClient.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

func TestReconcilerOwnsConfigMap(t *testing.T) {
	ctx := context.Background()
	createNamespace(t, "envtest-reconcile")
	gadget := &unstructured.Unstructured{}
	gadget.SetGroupVersionKind(gadgetGVK)
	gadget.SetNamespace("envtest-reconcile")
	gadget.SetName("g1")
	_ = unstructured.SetNestedField(gadget.Object, "hello", "spec", "message")
	if err := adminClient.Create(ctx, gadget); err != nil {
		t.Fatalf("create gadget: %v", err)
	}
	cm := &corev1.ConfigMap{}
	eventually(t, "owned ConfigMap", func() error {
		if err := adminClient.Get(ctx, types.NamespacedName{Namespace: "envtest-reconcile", Name: "g1-config"}, cm); err != nil {
			return err
		}
		if cm.Data["message"] != "hello" {
			return fmt.Errorf("data %v", cm.Data)
		}
		return nil
	})
	if refs := cm.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != gadget.GetUID() || refs[0].Controller == nil || !*refs[0].Controller {
		t.Fatalf("owner references %+v, want the gadget %s as controller", refs, gadget.GetUID())
	}
	eventually(t, "status Ready", func() error {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gadgetGVK)
		if err := adminClient.Get(ctx, client.ObjectKeyFromObject(gadget), got); err != nil {
			return err
		}
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Ready" {
			return fmt.Errorf("status %v", got.Object["status"])
		}
		return nil
	})
	// An update of the spec reaches the ConfigMap.
	eventually(t, "spec update", func() error {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(gadgetGVK)
		if err := adminClient.Get(ctx, client.ObjectKeyFromObject(gadget), got); err != nil {
			return err
		}
		_ = unstructured.SetNestedField(got.Object, "changed", "spec", "message")
		return adminClient.Update(ctx, got)
	})
	eventually(t, "ConfigMap follows the spec", func() error {
		if err := adminClient.Get(ctx, types.NamespacedName{Namespace: "envtest-reconcile", Name: "g1-config"}, cm); err != nil {
			return err
		}
		if cm.Data["message"] != "changed" {
			return fmt.Errorf("data %v", cm.Data)
		}
		return nil
	})
}

func TestAddUserNeedsRBAC(t *testing.T) {
	ctx := context.Background()
	const ns = "envtest-rbac"
	createNamespace(t, ns)
	user, err := testEnv.AddUser(envtest.User{Name: "envtest-alice", Groups: []string{"envtest-devs"}}, nil)
	if err != nil {
		t.Fatalf("AddUser: %v", err)
	}
	alice, err := client.New(user.Config(), client.Options{})
	if err != nil {
		t.Fatalf("client for alice: %v", err)
	}
	list := &corev1.ConfigMapList{}
	err = alice.List(ctx, list, client.InNamespace(ns))
	if !apierrors.IsForbidden(err) {
		t.Fatalf("alice lists ConfigMaps before any binding: got %v, want Forbidden", err)
	}
	const want = `configmaps is forbidden: User "envtest-alice" cannot list resource "configmaps" in API group "" in the namespace "envtest-rbac"`
	if err.Error() != want {
		t.Fatalf("forbidden message %q, want %q", err.Error(), want)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "configmap-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "devs-read-configmaps"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "envtest-devs"}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := adminClient.Create(ctx, obj); err != nil {
			t.Fatalf("create %T: %v", obj, err)
		}
	}
	eventually(t, "alice lists ConfigMaps once bound", func() error { return alice.List(ctx, list, client.InNamespace(ns)) })
	// envtest's kubectl for the user (the assets' kubectl, when the directory has one).
	if _, err := os.Stat(filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")); err == nil {
		kubectl, err := user.Kubectl()
		if err != nil {
			t.Fatalf("kubectl for alice: %v", err)
		}
		stdout, stderr, err := kubectl.Run("get", "configmaps", "-n", ns, "-o", "name")
		if err != nil {
			t.Fatalf("kubectl get configmaps as alice: %v: %s", err, readAll(stderr))
		}
		if out := readAll(stdout); !strings.Contains(out, "configmap/kube-root-ca.crt") && out != "" {
			t.Fatalf("kubectl get configmaps as alice printed %q", out)
		}
		if _, stderr, err := kubectl.Run("delete", "configmap", "-n", ns, "anything"); err == nil || !strings.Contains(readAll(stderr), `User "envtest-alice" cannot delete resource "configmaps"`) {
			t.Fatalf("kubectl delete as alice: err %v, stderr %q; want forbidden", err, readAll(stderr))
		}
	}
	// The Role grants reading only.
	err = alice.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nope"}})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("alice creates a ConfigMap: got %v, want Forbidden", err)
	}
}

func TestValidatingWebhookFromInstallOptions(t *testing.T) {
	ctx := context.Background()
	const ns = "envtest-webhook"
	createNamespace(t, ns)
	gadget := func(name, message string) *unstructured.Unstructured {
		g := &unstructured.Unstructured{}
		g.SetGroupVersionKind(gadgetGVK)
		g.SetNamespace(ns)
		g.SetName(name)
		_ = unstructured.SetNestedField(g.Object, message, "spec", "message")
		return g
	}
	const want = `admission webhook "vgadget.envtest.capstan.test" denied the request: message "forbidden" is not allowed`
	// Until the manager's webhook server listens, calls fail (failurePolicy Fail) with another message.
	eventually(t, "the webhook denies", func() error {
		err := adminClient.Create(ctx, gadget("bad", "forbidden"))
		if err == nil {
			t.Fatalf("a forbidden gadget was created")
		}
		if err.Error() != want {
			return err
		}
		return nil
	})
	if err := adminClient.Create(ctx, gadget("good", "fine")); err != nil {
		t.Fatalf("the webhook denies an allowed gadget: %v", err)
	}
}

func readAll(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}
