// A small controller-runtime operator for Capstan's tests: it reconciles Widgets (a CRD with a
// status subresource, created by the test) in one namespace. For each Widget it creates or updates
// an owned ConfigMap `<widget>-config` holding spec.message, then writes status.configMap,
// status.observedGeneration and status.phase=Ready through the status subresource. Every reconcile
// prints one JSON line on stdout (`{"widget":..., "generation":...}`), so the test can follow it.
//
// Usage: go-operator KUBECONFIG NAMESPACE GROUP
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

type reconciler struct {
	client.Client
	gvk schema.GroupVersionKind
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(r.gvk)
	if err := r.Get(ctx, req.NamespacedName, widget); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	message, _, _ := unstructured.NestedString(widget.Object, "spec", "message")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: widget.GetName() + "-config", Namespace: widget.GetNamespace()}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": message}
		return controllerutil.SetControllerReference(widget, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	status := map[string]interface{}{
		"configMap":          cm.Name,
		"observedGeneration": widget.GetGeneration(),
		"phase":              "Ready",
	}
	if err := unstructured.SetNestedMap(widget.Object, status, "status"); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Status().Update(ctx, widget); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, err
	}
	line, _ := json.Marshal(map[string]interface{}{"widget": widget.GetName(), "generation": widget.GetGeneration(), "configMap": cm.Name})
	fmt.Println(string(line))
	return ctrl.Result{}, nil
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go-operator KUBECONFIG NAMESPACE GROUP")
		os.Exit(2)
	}
	kubeconfig, namespace, group := os.Args[1], os.Args[2], os.Args[3]
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{namespace: {}}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
	widget := &unstructured.Unstructured{}
	widget.SetGroupVersionKind(gvk)
	err = ctrl.NewControllerManagedBy(mgr).
		For(widget).
		Owns(&corev1.ConfigMap{}).
		Complete(&reconciler{Client: mgr.GetClient(), gvk: gvk})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(`{"started":true}`)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
