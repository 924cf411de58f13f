// Command go-crd-field-selectors checks field selectors on custom resources through client-go, as
// kube's e2e CustomResourceFieldSelectors test does with its informers, without a webhook pod: it
// serves the CRD's conversion webhook itself (HTTPS on 127.0.0.1 with a generated CA passed as the
// caBundle), renaming the top-level field hostPort (v1, the storage version) to host and port (v2)
// as the e2e test's agnhost converter does. Both versions declare selectableFields.
//
// It runs raw watches and dynamic informers with field selectors per version (selectable fields,
// metadata.name, metadata.namespace, !=, and combinations), moves objects into and out of their
// selections (creates, updates through either version, a deletecollection by field selector),
// and compares what every watch and informer saw, per object and in order, with what
// kube-apiserver 1.36 sends: an object entering a selection is ADDED, one leaving it is DELETED
// with its previous content and the new resourceVersion. It also checks LIST with field
// selectors and kube's 400 for fields a version does not declare.
//
// Usage: go-crd-field-selectors KUBECONFIG NAMESPACE GROUP
//
// Informers stream their initial list (client-go's WatchListClient, on by default); with
// KUBE_FEATURE_WatchListClient=false they list, then watch.
//
// It creates the namespace and the CRD selectables.GROUP, and deletes both before exiting.
// stdout: one line per check, "ok NAME" or "FAIL NAME: DETAIL"; the exit status is 1 if any
// check failed, 2 if the scenario could not run.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

const plural = "selectables"

var failed bool

func check(name string, ok bool, detail string, args ...any) {
	if ok {
		fmt.Printf("ok %s\n", name)
		return
	}
	failed = true
	fmt.Printf("FAIL %s: %s\n", name, fmt.Sprintf(detail, args...))
}

func fatal(format string, args ...any) {
	fmt.Printf("FAIL setup: %s\n", fmt.Sprintf(format, args...))
	panic(errAbort)
}

var errAbort = fmt.Errorf("scenario aborted")

// ---- the conversion webhook ----

// serveConverter starts the HTTPS conversion webhook and returns its URL and the CA's PEM.
func serveConverter() (string, []byte) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		fatal("%v", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "go-crd-field-selectors CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		fatal("%v", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		fatal("%v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		fatal("%v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal("%v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/crdconvert", convertHandler)
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return "https://" + ln.Addr().String() + "/crdconvert", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// convertHandler answers a ConversionReview: v1's hostPort "h:p" is v2's host "h" and port "p".
func convertHandler(w http.ResponseWriter, r *http.Request) {
	var review map[string]any
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, _ := review["request"].(map[string]any)
	desired, _ := req["desiredAPIVersion"].(string)
	objects, _ := req["objects"].([]any)
	converted := make([]any, 0, len(objects))
	for _, o := range objects {
		obj, _ := o.(map[string]any)
		obj["apiVersion"] = desired
		if strings.HasSuffix(desired, "/v2") {
			if hp, ok := obj["hostPort"].(string); ok {
				host, port, _ := strings.Cut(hp, ":")
				delete(obj, "hostPort")
				obj["host"] = host
				obj["port"] = port
			}
		} else if host, ok := obj["host"].(string); ok {
			port, _ := obj["port"].(string)
			delete(obj, "host")
			delete(obj, "port")
			obj["hostPort"] = host + ":" + port
		}
		converted = append(converted, obj)
	}
	resp := map[string]any{
		"apiVersion": review["apiVersion"],
		"kind":       "ConversionReview",
		"response":   map[string]any{"uid": req["uid"], "result": map[string]any{"status": "Success"}, "convertedObjects": converted},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// ---- the CRD ----

func topLevelSchema(props map[string]any) map[string]any {
	return map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": props}}
}

func selectableCRD(group, url string, caPEM []byte) *unstructured.Unstructured {
	str := map[string]any{"type": "string"}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": "selectable", "kind": "Selectable", "listKind": "SelectableList"},
			"versions": []any{
				map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema":           topLevelSchema(map[string]any{"hostPort": str}),
					"selectableFields": []any{map[string]any{"jsonPath": ".hostPort"}},
				},
				map[string]any{
					"name": "v2", "served": true, "storage": false,
					"schema":           topLevelSchema(map[string]any{"host": str, "port": str}),
					"selectableFields": []any{map[string]any{"jsonPath": ".host"}, map[string]any{"jsonPath": ".port"}},
				},
			},
			"conversion": map[string]any{
				"strategy": "Webhook",
				"webhook": map[string]any{
					"conversionReviewVersions": []any{"v1"},
					"clientConfig":             map[string]any{"url": url, "caBundle": caPEM},
				},
			},
		},
	}}
}

// ---- what watches and informers saw ----

// summary names an object's version and fields: "v1 hostPort=h:p" or "v2 host=h port=p".
func summary(obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return "tombstone " + summary(t.Obj)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Sprintf("unexpected %T", obj)
	}
	version := u.GetAPIVersion()[strings.LastIndex(u.GetAPIVersion(), "/")+1:]
	if version == "v1" {
		hp, _, _ := unstructured.NestedString(u.Object, "hostPort")
		return "v1 hostPort=" + hp
	}
	host, _, _ := unstructured.NestedString(u.Object, "host")
	port, _, _ := unstructured.NestedString(u.Object, "port")
	return fmt.Sprintf("%s host=%s port=%s", version, host, port)
}

// recorder keeps, per object name, the events one watch or informer delivered, in order.
type recorder struct {
	name string
	mu   sync.Mutex
	seen map[string][]string
	rvs  map[string][]string
}

func newRecorder(name string) *recorder {
	return &recorder{name: name, seen: map[string][]string{}, rvs: map[string][]string{}}
}

func (r *recorder) record(event string, obj any) {
	o := obj
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		r.mu.Lock()
		r.seen["?"] = append(r.seen["?"], fmt.Sprintf("%s %T", event, obj))
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[u.GetName()] = append(r.seen[u.GetName()], event+" "+summary(obj))
	r.rvs[u.GetName()] = append(r.rvs[u.GetName()], u.GetResourceVersion())
}

func (r *recorder) snapshot() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for k, v := range r.seen {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func (r *recorder) lastRV(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	rvs := r.rvs[name]
	if len(rvs) == 0 {
		return ""
	}
	return rvs[len(rvs)-1]
}

// expectEvents waits (up to 15 s) until the recorder saw exactly WANT, then reports the check.
func expectEvents(step string, r *recorder, want map[string][]string) {
	deadline := time.Now().Add(15 * time.Second)
	var got map[string][]string
	for {
		got = r.snapshot()
		if reflect.DeepEqual(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	check(step+": "+r.name, reflect.DeepEqual(got, want), "saw %s, want %s", show(got), show(want))
}

func show(m map[string][]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": ["+strings.Join(m[k], ", ")+"]")
	}
	return "{" + strings.Join(parts, "; ") + "}"
}

func watchInto(ctx context.Context, ri dynamic.ResourceInterface, selector string, r *recorder) {
	w, err := ri.Watch(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		fatal("watch %s: %v", r.name, err)
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				r.record("ERROR", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "?"}}})
				continue
			}
			r.record(string(ev.Type), ev.Object)
		}
	}()
}

func informInto(ctx context.Context, dyn dynamic.Interface, namespace string, gvr schema.GroupVersionResource, selector string, r *recorder) cache.SharedIndexInformer {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, namespace, func(o *metav1.ListOptions) { o.FieldSelector = selector })
	inf := factory.ForResource(gvr).Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.record("add", obj) },
		UpdateFunc: func(_, obj any) { r.record("update", obj) },
		DeleteFunc: func(obj any) { r.record("delete", obj) },
	})
	if err != nil {
		fatal("informer %s: %v", r.name, err)
	}
	factory.Start(ctx.Done())
	return inf
}

func names(list *unstructured.UnstructuredList) []string {
	out := []string{}
	for _, i := range list.Items {
		out = append(out, i.GetName())
	}
	sort.Strings(out)
	return out
}

func expectList(ctx context.Context, ri dynamic.ResourceInterface, selector string, want ...string) {
	if want == nil {
		want = []string{}
	}
	list, err := ri.List(ctx, metav1.ListOptions{FieldSelector: selector})
	if err != nil {
		check("list "+selector, false, "%v", err)
		return
	}
	got := names(list)
	check("list "+selector, reflect.DeepEqual(got, want), "got %v, want %v", got, want)
}

// expectBadRequest checks kube's 400 BadRequest for a field selector on an undeclared field.
func expectBadRequest(step string, err error, message string) {
	if err == nil {
		check(step, false, "succeeded, want 400")
		return
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		check(step, false, "error %v is not a Status", err)
		return
	}
	s := status.Status()
	check(step, s.Code == 400 && s.Reason == metav1.StatusReasonBadRequest && s.Message == message,
		"got %d %s %q, want 400 BadRequest %q", s.Code, s.Reason, s.Message, message)
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go-crd-field-selectors KUBECONFIG NAMESPACE GROUP")
		os.Exit(2)
	}
	kubeconfig, ns, group := os.Args[1], os.Args[2], os.Args[3]
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	namespaces := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	code := func() (code int) {
		defer func() {
			if p := recover(); p != nil {
				if p != errAbort {
					fmt.Printf("FAIL setup: panic %v\n", p)
				}
				code = 2
			}
		}()
		defer func() {
			// Watches and informers stop first: they would retry against the deleted CRD.
			cancel()
			_ = crds.Delete(context.Background(), plural+"."+group, metav1.DeleteOptions{})
			_ = namespaces.Delete(context.Background(), ns, metav1.DeleteOptions{})
		}()
		scenario(ctx, dyn, crds, namespaces, ns, group)
		if failed {
			return 1
		}
		return 0
	}()
	os.Exit(code)
}

func scenario(ctx context.Context, dyn dynamic.Interface, crds, namespaces dynamic.NamespaceableResourceInterface, ns, group string) {
	url, caPEM := serveConverter()
	if _, err := namespaces.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil {
		fatal("create namespace: %v", err)
	}
	if _, err := crds.Create(ctx, selectableCRD(group, url, caPEM), metav1.CreateOptions{}); err != nil {
		fatal("create CRD: %v", err)
	}
	v1gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
	v2gvr := schema.GroupVersionResource{Group: group, Version: "v2", Resource: plural}
	v1 := dyn.Resource(v1gvr).Namespace(ns)
	v2 := dyn.Resource(v2gvr).Namespace(ns)
	newV2 := func(name string, fields map[string]any) *unstructured.Unstructured {
		obj := map[string]any{"apiVersion": group + "/v2", "kind": "Selectable", "metadata": map[string]any{"name": name}}
		for k, v := range fields {
			obj[k] = v
		}
		return &unstructured.Unstructured{Object: obj}
	}

	// Served and converting: a probe written through v2 (stored as v1) reads back through v2.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := v2.Create(ctx, newV2("probe", map[string]any{"host": "probe", "port": "1"}), metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			if got, err := v2.Get(ctx, "probe", metav1.GetOptions{}); err == nil && summary(got) == "v2 host=probe port=1" {
				break
			}
		}
		if time.Now().After(deadline) {
			fatal("the CRD was not served with working conversion within 30 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := v2.Delete(ctx, "probe", metav1.DeleteOptions{}); err != nil {
		fatal("delete probe: %v", err)
	}
	for {
		if _, err := v2.Get(ctx, "probe", metav1.GetOptions{}); apierrors.IsNotFound(err) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Watches and informers, each with its own field selector, before any object exists.
	watches := map[string]*recorder{}
	watchOn := func(label string, ri dynamic.ResourceInterface, selector string) {
		r := newRecorder("watch " + label + " " + selector)
		watches[label+" "+selector] = r
		watchInto(ctx, ri, selector, r)
	}
	watchOn("v2", v2, "host=host1")
	watchOn("v2", v2, "host=host1,port=80")
	watchOn("v2", v2, "host!=host1")
	watchOn("v2", v2, "metadata.name=sel-c,port=80")
	watchOn("v1", v1, "hostPort=host1:80")
	watchOn("v1", v1, "metadata.name=sel-b")
	watchOn("v2 all namespaces", dyn.Resource(v2gvr), "metadata.namespace="+ns)

	informers := map[string]*recorder{}
	var synced []cache.InformerSynced
	informOn := func(gvr schema.GroupVersionResource, selector string) {
		r := newRecorder("informer " + gvr.Version + " " + selector)
		informers[gvr.Version+" "+selector] = r
		synced = append(synced, informInto(ctx, dyn, ns, gvr, selector, r).HasSynced)
	}
	informOn(v2gvr, "host=host1")
	informOn(v2gvr, "host=host1,port=80")
	informOn(v2gvr, "host!=host1")
	informOn(v1gvr, "hostPort=host1:80")
	informOn(v1gvr, "metadata.name=sel-b")
	syncCtx, syncCancel := context.WithTimeout(ctx, 20*time.Second)
	if !cache.WaitForCacheSync(syncCtx.Done(), synced...) {
		syncCancel()
		fatal("informers did not sync within 20 s")
	}
	syncCancel()

	// Create three objects through v2 (the e2e test's), then move sel-c into the host1:80
	// selections by an update through v1.
	for name, fields := range map[string]map[string]any{
		"sel-a": {"host": "host1", "port": "80"},
		"sel-b": {"host": "host1", "port": "8080"},
		"sel-c": {"host": "host2"},
	} {
		if _, err := v2.Create(ctx, newV2(name, fields), metav1.CreateOptions{}); err != nil {
			fatal("create %s: %v", name, err)
		}
	}
	expectList(ctx, v2, "host=host1", "sel-a", "sel-b")
	expectList(ctx, v2, "host=host1,port=80", "sel-a")
	expectList(ctx, v2, "host!=host1", "sel-c")
	expectList(ctx, v1, "hostPort=host1:80", "sel-a")
	expectList(ctx, v1, "hostPort=host1:8080", "sel-b")
	expectList(ctx, v1, "hostPort=host2:", "sel-c")
	expectList(ctx, v1, "metadata.name=sel-b,hostPort=host1:8080", "sel-b")
	expectList(ctx, v1, "metadata.name=sel-b,hostPort=host1:80")
	expectList(ctx, dyn.Resource(v1gvr), "metadata.namespace="+ns, "sel-a", "sel-b", "sel-c")
	expectList(ctx, dyn.Resource(v1gvr), "metadata.namespace="+ns+"-other")

	c, err := v1.Get(ctx, "sel-c", metav1.GetOptions{})
	if err != nil {
		fatal("get sel-c through v1: %v", err)
	}
	check("sel-c read through v1", summary(c) == "v1 hostPort=host2:", "got %s", summary(c))
	c.Object["hostPort"] = "host1:80"
	if _, err := v1.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		fatal("update sel-c through v1: %v", err)
	}

	a80, b8080, c2, c80 := "v2 host=host1 port=80", "v2 host=host1 port=8080", "v2 host=host2 port=", "v2 host=host1 port=80"
	expectEvents("after creates", watches["v2 host=host1"], map[string][]string{"sel-a": {"ADDED " + a80}, "sel-b": {"ADDED " + b8080}, "sel-c": {"ADDED " + c80}})
	expectEvents("after creates", watches["v2 host=host1,port=80"], map[string][]string{"sel-a": {"ADDED " + a80}, "sel-c": {"ADDED " + c80}})
	expectEvents("after creates", watches["v1 hostPort=host1:80"], map[string][]string{"sel-a": {"ADDED v1 hostPort=host1:80"}, "sel-c": {"ADDED v1 hostPort=host1:80"}})
	expectEvents("after creates", informers["v2 host=host1"], map[string][]string{"sel-a": {"add " + a80}, "sel-b": {"add " + b8080}, "sel-c": {"add " + c80}})
	expectEvents("after creates", informers["v1 hostPort=host1:80"], map[string][]string{"sel-a": {"add v1 hostPort=host1:80"}, "sel-c": {"add v1 hostPort=host1:80"}})

	// Out of the selections: a deletecollection by field selector (sel-a and sel-c), and sel-b
	// moved to host2 by an update through v2.
	zero := int64(0)
	if err := v2.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{FieldSelector: "host=host1,port=80"}); err != nil {
		fatal("deletecollection host=host1,port=80: %v", err)
	}
	b, err := v2.Get(ctx, "sel-b", metav1.GetOptions{})
	if err != nil {
		fatal("get sel-b: %v", err)
	}
	b.Object["host"] = "host2"
	updated, err := v2.Update(ctx, b, metav1.UpdateOptions{})
	if err != nil {
		fatal("update sel-b: %v", err)
	}
	b2 := "v2 host=host2 port=8080"

	expectList(ctx, v2, "host=host1")
	expectList(ctx, v2, "host=host1,port=80")
	expectList(ctx, v2, "host!=host1", "sel-b")
	expectList(ctx, v1, "hostPort=host1:80")
	expectList(ctx, v1, "hostPort=host2:8080", "sel-b")

	expectEvents("at the end", watches["v2 host=host1"], map[string][]string{
		"sel-a": {"ADDED " + a80, "DELETED " + a80},
		"sel-b": {"ADDED " + b8080, "DELETED " + b8080},
		"sel-c": {"ADDED " + c80, "DELETED " + c80},
	})
	check("a watch's DELETED for an object leaving its selection carries the update's resourceVersion",
		watches["v2 host=host1"].lastRV("sel-b") == updated.GetResourceVersion(), "got %s, want %s", watches["v2 host=host1"].lastRV("sel-b"), updated.GetResourceVersion())
	expectEvents("at the end", watches["v2 host=host1,port=80"], map[string][]string{
		"sel-a": {"ADDED " + a80, "DELETED " + a80},
		"sel-c": {"ADDED " + c80, "DELETED " + c80},
	})
	expectEvents("at the end", watches["v2 host!=host1"], map[string][]string{
		"sel-b": {"ADDED " + b2},
		"sel-c": {"ADDED " + c2, "DELETED " + c2},
	})
	expectEvents("at the end", watches["v2 metadata.name=sel-c,port=80"], map[string][]string{
		"sel-c": {"ADDED " + c80, "DELETED " + c80},
	})
	expectEvents("at the end", watches["v1 hostPort=host1:80"], map[string][]string{
		"sel-a": {"ADDED v1 hostPort=host1:80", "DELETED v1 hostPort=host1:80"},
		"sel-c": {"ADDED v1 hostPort=host1:80", "DELETED v1 hostPort=host1:80"},
	})
	expectEvents("at the end", watches["v1 metadata.name=sel-b"], map[string][]string{
		"sel-b": {"ADDED v1 hostPort=host1:8080", "MODIFIED v1 hostPort=host2:8080"},
	})
	expectEvents("at the end", watches["v2 all namespaces metadata.namespace="+ns], map[string][]string{
		"sel-a": {"ADDED " + a80, "DELETED " + a80},
		"sel-b": {"ADDED " + b8080, "MODIFIED " + b2},
		"sel-c": {"ADDED " + c2, "MODIFIED " + c80, "DELETED " + c80},
	})

	expectEvents("at the end", informers["v2 host=host1"], map[string][]string{
		"sel-a": {"add " + a80, "delete " + a80},
		"sel-b": {"add " + b8080, "delete " + b8080},
		"sel-c": {"add " + c80, "delete " + c80},
	})
	expectEvents("at the end", informers["v2 host=host1,port=80"], map[string][]string{
		"sel-a": {"add " + a80, "delete " + a80},
		"sel-c": {"add " + c80, "delete " + c80},
	})
	expectEvents("at the end", informers["v2 host!=host1"], map[string][]string{
		"sel-b": {"add " + b2},
		"sel-c": {"add " + c2, "delete " + c2},
	})
	expectEvents("at the end", informers["v1 hostPort=host1:80"], map[string][]string{
		"sel-a": {"add v1 hostPort=host1:80", "delete v1 hostPort=host1:80"},
		"sel-c": {"add v1 hostPort=host1:80", "delete v1 hostPort=host1:80"},
	})
	expectEvents("at the end", informers["v1 metadata.name=sel-b"], map[string][]string{
		"sel-b": {"add v1 hostPort=host1:8080", "update v1 hostPort=host2:8080"},
	})

	// A field the version does not declare: 400 for LIST and WATCH.
	_, err = v2.List(ctx, metav1.ListOptions{FieldSelector: "hostPort=host1:80"})
	expectBadRequest("list v2 hostPort=host1:80 (v1's field)", err, wantUnknown("hostPort"))
	_, err = v1.Watch(ctx, metav1.ListOptions{FieldSelector: "host=host1"})
	expectBadRequest("watch v1 host=host1 (v2's field)", err, wantUnknown("host"))
	_, err = dyn.Resource(v2gvr).List(ctx, metav1.ListOptions{FieldSelector: "spec.host=host1"})
	expectBadRequest("list v2 spec.host=host1 in all namespaces", err, wantUnknown("spec.host"))
}

// wantUnknown is kube-apiserver 1.36's message for a field selector on an undeclared field.
func wantUnknown(field string) string {
	return fmt.Sprintf("field label not supported: %s", field)
}
