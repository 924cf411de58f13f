// go-apply drives server-side apply the way Go clients write it, against the API server at URL
// (plain HTTP, no credentials unless GO_APPLY_TOKEN is set) in namespace NS: client-go's typed apply configurations (Apply and
// ApplyStatus on Deployments, Apply on ConfigMaps, by two field managers, one conflicting, then
// forcing) with the Extract helpers reading each manager's fields back from managedFields, and
// controller-runtime's client.Apply (the Apply method with apply configurations, and Patch with
// client.Apply on an unstructured object). Each check prints one line `ok <name>` or
// `FAIL <name>: <why>`; the exit status is 1 when any failed.
//
//	go-apply URL NS
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var failed bool

func check(name string, err error) {
	if err != nil {
		failed = true
		fmt.Printf("FAIL %s: %v\n", name, err)
		return
	}
	fmt.Printf("ok %s\n", name)
}

func expect(cond bool, format string, args ...interface{}) error {
	if cond {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// conflictError checks err is kube's 409 apply conflict naming manager and field.
func conflictError(err error, manager, field string) error {
	if err == nil {
		return fmt.Errorf("applied without conflict")
	}
	if !apierrors.IsConflict(err) {
		return fmt.Errorf("want a Conflict, got %v", err)
	}
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Details == nil || len(st.Status().Details.Causes) == 0 {
		return fmt.Errorf("conflict without causes: %v", err)
	}
	c := st.Status().Details.Causes[0]
	if string(c.Type) != "FieldManagerConflict" || c.Field != field || !strings.Contains(c.Message, fmt.Sprintf("%q", manager)) {
		return fmt.Errorf("unexpected cause %+v", c)
	}
	return nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-apply URL NS")
		os.Exit(2)
	}
	cfg := &rest.Config{Host: os.Args[1]}
	// GO_APPLY_TOKEN: a bearer token (TLS unverified), to run the same checks against kube-apiserver.
	if token := os.Getenv("GO_APPLY_TOKEN"); token != "" {
		cfg.BearerToken = token
		cfg.TLSClientConfig.Insecure = true
	}
	ns := os.Args[2]
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	// ConfigMaps with client-go's typed apply configurations.
	cms := cs.CoreV1().ConfigMaps(ns)
	cmA := corev1ac.ConfigMap("cm", ns).WithLabels(map[string]string{"owner": "a"}).WithData(map[string]string{"shared": "1", "a": "x"})
	_, err = cms.Apply(ctx, cmA, metav1.ApplyOptions{FieldManager: "manager-a"})
	check("configmap apply creates", err)
	cmB := corev1ac.ConfigMap("cm", ns).WithData(map[string]string{"shared": "2", "b": "y"})
	_, err = cms.Apply(ctx, cmB, metav1.ApplyOptions{FieldManager: "manager-b"})
	check("configmap conflicting apply answers 409", conflictError(err, "manager-a", ".data.shared"))
	got, err := cms.Apply(ctx, cmB, metav1.ApplyOptions{FieldManager: "manager-b", Force: true})
	check("configmap forced apply", err)
	if err == nil {
		check("configmap forced apply result", expect(reflect.DeepEqual(got.Data, map[string]string{"shared": "2", "a": "x", "b": "y"}), "data %v", got.Data))
		extractedA, err := corev1ac.ExtractConfigMap(got, "manager-a")
		check("extract manager-a after losing .data.shared", err)
		if err == nil {
			check("manager-a owns a and its label only", expect(reflect.DeepEqual(extractedA.Data, map[string]string{"a": "x"}) && reflect.DeepEqual(extractedA.Labels, map[string]string{"owner": "a"}), "extracted %v %v", extractedA.Data, extractedA.Labels))
		}
		extractedB, err := corev1ac.ExtractConfigMap(got, "manager-b")
		check("extract manager-b", err)
		if err == nil {
			check("manager-b owns shared and b", expect(reflect.DeepEqual(extractedB.Data, map[string]string{"shared": "2", "b": "y"}), "extracted %v", extractedB.Data))
		}
	}
	// manager-a re-applies without "a": the field it alone owned goes.
	got, err = cms.Apply(ctx, corev1ac.ConfigMap("cm", ns).WithLabels(map[string]string{"owner": "a"}), metav1.ApplyOptions{FieldManager: "manager-a"})
	check("configmap apply without a field removes it", err)
	if err == nil {
		check("configmap removal result", expect(reflect.DeepEqual(got.Data, map[string]string{"shared": "2", "b": "y"}), "data %v", got.Data))
	}

	// Deployments: Apply by two managers, a conflict on replicas, force, ApplyStatus.
	deps := cs.AppsV1().Deployments(ns)
	labels := map[string]string{"app": "web"}
	depA := appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(2).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("web").WithImage("nginx:1").
				WithPorts(corev1ac.ContainerPort().WithContainerPort(80).WithProtocol("TCP"))))))
	_, err = deps.Apply(ctx, depA, metav1.ApplyOptions{FieldManager: "deployer"})
	check("deployment apply creates", err)
	scaler := appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(5))
	_, err = deps.Apply(ctx, scaler, metav1.ApplyOptions{FieldManager: "autoscaler"})
	check("deployment conflicting apply answers 409", conflictError(err, "deployer", ".spec.replicas"))
	var dep *appsv1.Deployment
	dep, err = deps.Apply(ctx, scaler, metav1.ApplyOptions{FieldManager: "autoscaler", Force: true})
	check("deployment forced apply", err)
	if err == nil {
		check("deployment replicas", expect(ptr.Deref(dep.Spec.Replicas, 0) == 5, "replicas %v", dep.Spec.Replicas))
		ex, err := appsv1ac.ExtractDeployment(dep, "deployer")
		check("extract deployer", err)
		if err == nil {
			check("deployer no longer owns replicas but keeps its container", expect(ex.Spec != nil && ex.Spec.Replicas == nil && ex.Spec.Template != nil && len(ex.Spec.Template.Spec.Containers) == 1 && ptr.Deref(ex.Spec.Template.Spec.Containers[0].Image, "") == "nginx:1", "extracted %+v", ex.Spec))
		}
	}
	// The deployer re-applies its configuration without replicas: no conflict, replicas stay.
	dep, err = deps.Apply(ctx, appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("web").WithImage("nginx:2"))))), metav1.ApplyOptions{FieldManager: "deployer"})
	check("deployment re-apply without replicas", err)
	if err == nil {
		c := dep.Spec.Template.Spec.Containers
		check("deployment re-apply result", expect(ptr.Deref(dep.Spec.Replicas, 0) == 5 && len(c) == 1 && c[0].Image == "nginx:2" && len(c[0].Ports) == 0, "replicas %v containers %+v", dep.Spec.Replicas, c))
	}
	status := appsv1ac.Deployment("web", ns).WithStatus(appsv1ac.DeploymentStatus().WithReplicas(3).
		WithConditions(appsv1ac.DeploymentCondition().WithType(appsv1.DeploymentAvailable).WithStatus("True").WithReason("Test")))
	// Forced: where a deployment controller runs (the reference), it owns the status fields too.
	dep, err = deps.ApplyStatus(ctx, status, metav1.ApplyOptions{FieldManager: "status-writer", Force: true})
	check("deployment ApplyStatus", err)
	if err == nil {
		var sub string
		for _, e := range dep.ManagedFields {
			if e.Manager == "status-writer" {
				sub = e.Subresource
			}
		}
		check("status entry names its subresource", expect(dep.Status.Replicas == 3 && sub == "status", "replicas %d subresource %q", dep.Status.Replicas, sub))
		ex, err := appsv1ac.ExtractDeploymentStatus(dep, "status-writer")
		check("extract status-writer status", err)
		if err == nil {
			check("status-writer owns its status", expect(ex.Status != nil && ptr.Deref(ex.Status.Replicas, 0) == 3 && len(ex.Status.Conditions) == 1, "extracted %+v", ex.Status))
		}
	}

	// controller-runtime's client.Apply.
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		check("controller-runtime client", err)
		os.Exit(1)
	}
	err = c.Apply(ctx, corev1ac.ConfigMap("cr", ns).WithData(map[string]string{"k": "v"}), client.FieldOwner("controller"))
	check("controller-runtime Apply creates", err)
	err = c.Apply(ctx, corev1ac.ConfigMap("cr", ns).WithData(map[string]string{"k": "other"}), client.FieldOwner("intruder"))
	check("controller-runtime Apply conflict", conflictError(err, "controller", ".data.k"))
	err = c.Apply(ctx, corev1ac.ConfigMap("cr", ns).WithData(map[string]string{"k": "other"}), client.FieldOwner("intruder"), client.ForceOwnership)
	check("controller-runtime Apply with ForceOwnership", err)
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]interface{}{"name": "cr", "namespace": ns},
		"data":     map[string]interface{}{"k2": "v2"},
	}}
	err = c.Patch(ctx, u, client.Apply, client.FieldOwner("controller"), client.ForceOwnership) //nolint:staticcheck // the Patch form many controllers still use
	check("controller-runtime Patch with client.Apply", err)
	if err == nil {
		data, _, _ := unstructured.NestedStringMap(u.Object, "data")
		check("controller-runtime Patch result", expect(reflect.DeepEqual(data, map[string]string{"k": "other", "k2": "v2"}), "data %v", data))
		mf, _ := json.Marshal(u.GetManagedFields())
		check("controller owns only k2", expect(strings.Contains(string(mf), `"manager":"controller","operation":"Apply"`) && strings.Contains(string(mf), `{"f:data":{"f:k2":{}}}`), "managedFields %s", mf))
	}
	if failed {
		os.Exit(1)
	}
}
