// Command go-cbor drives Capstan with client-go preferring CBOR (run it with
// KUBE_FEATURE_ClientsAllowCBOR=true and KUBE_FEATURE_ClientsPreferCBOR=true): through the typed
// clientset (content type application/cbor) it creates a ConfigMap with binary data, reads, updates, lists and watches it and
// applies a change with server-side apply; through the dynamic client it creates and lists one more.
// A wrapping transport records the Content-Type of every request body and response, so the caller
// can check that CBOR was used and never fell back to JSON.
//
// stdout: one JSON line per step, {"step":"create","error":"","detail":"..."}, then one line
// {"step":"media","requests":[...],"responses":[...]} with the distinct Content-Types seen. The exit
// status is 0 when every line could be written, whatever the errors; 2 on bad flags or kubeconfig.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

type line struct {
	Step   string `json:"step"`
	Error  string `json:"error"`
	Detail string `json:"detail,omitempty"`
}

// recorder is an http.RoundTripper noting request and response Content-Types.
type recorder struct {
	next      http.RoundTripper
	mu        sync.Mutex
	requests  map[string]bool
	responses map[string]bool
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if ct := req.Header.Get("Content-Type"); ct != "" {
		r.requests[req.Method+" "+ct] = true
	}
	if err == nil {
		r.responses[req.Method+" "+resp.Header.Get("Content-Type")] = true
	}
	return resp, err
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func step(name string, err error, detail string) bool {
	l := line{Step: name, Detail: detail}
	if err != nil {
		l.Error = err.Error()
	}
	emit(l)
	return err == nil
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	namespace := flag.String("namespace", "default", "namespace to work in")
	name := flag.String("name", "go-cbor", "object name prefix")
	flag.Parse()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	rec := &recorder{requests: map[string]bool{}, responses: map[string]bool{}}
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { rec.next = rt; return rec })
	// Typed clients of built-in kinds default to protobuf; ask them for CBOR (client-go refuses this
	// unless KUBE_FEATURE_ClientsAllowCBOR is set). The dynamic client prefers CBOR by itself.
	typed := *config
	typed.ContentType = "application/cbor"
	clients, err := kubernetes.NewForConfig(&typed)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cms := clients.CoreV1().ConfigMaps(*namespace)
	cmName := *name + "-cm"

	// A watch started before the writes must see the create and the update.
	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + cmName})
	if !step("watch-start", err, "") {
		w = watch.NewEmptyWatch()
	}

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: cmName, Labels: map[string]string{"app": "go-cbor"}},
		Data:       map[string]string{"text": "héllo"},
		BinaryData: map[string][]byte{"blob": {0, 1, 2, 255}},
	}
	created, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	detail := ""
	if err == nil {
		detail = fmt.Sprintf("%v", created.BinaryData["blob"])
	}
	step("create", err, detail)

	got, err := cms.Get(ctx, cmName, metav1.GetOptions{})
	if err == nil && (!bytes.Equal(got.BinaryData["blob"], []byte{0, 1, 2, 255}) || got.Data["text"] != "héllo") {
		err = fmt.Errorf("read back %v %q", got.BinaryData["blob"], got.Data["text"])
	}
	step("get", err, "")

	if err == nil {
		got.Data["updated"] = "yes"
		_, err = cms.Update(ctx, got, metav1.UpdateOptions{})
	}
	step("update", err, "")

	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=go-cbor"})
	detail = ""
	if err == nil {
		detail = fmt.Sprintf("%d", len(list.Items))
	}
	step("list", err, detail)

	seen := []string{}
	deadline := time.After(15 * time.Second)
	err = nil
	for len(seen) < 2 && err == nil {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				err = fmt.Errorf("watch closed after %v", seen)
				break
			}
			if obj, isCM := e.Object.(*corev1.ConfigMap); isCM {
				seen = append(seen, string(e.Type)+":"+obj.Data["updated"])
			} else {
				err = fmt.Errorf("event %s with %T", e.Type, e.Object)
			}
		case <-deadline:
			err = fmt.Errorf("watch saw only %v", seen)
		}
	}
	w.Stop()
	step("watch", err, fmt.Sprintf("%v", seen))

	ac := corev1ac.ConfigMap(*name+"-applied", *namespace).WithData(map[string]string{"k": "v"}).WithBinaryData(map[string][]byte{"b": {9}})
	applied, err := cms.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "go-cbor", Force: true})
	detail = ""
	if err == nil {
		detail = fmt.Sprintf("%s %v %d", applied.Data["k"], applied.BinaryData["b"], len(applied.ManagedFields))
	}
	step("apply", err, detail)

	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": *name + "-dyn", "labels": map[string]any{"app": "go-cbor"}},
		"data":     map[string]any{"n": "1"},
	}}
	_, err = dyn.Resource(gvr).Namespace(*namespace).Create(ctx, u, metav1.CreateOptions{})
	step("dynamic-create", err, "")
	ul, err := dyn.Resource(gvr).Namespace(*namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=go-cbor"})
	detail = ""
	if err == nil {
		detail = fmt.Sprintf("%d", len(ul.Items))
	}
	step("dynamic-list", err, detail)

	rec.mu.Lock()
	emit(map[string]any{"step": "media", "requests": keys(rec.requests), "responses": keys(rec.responses)})
	rec.mu.Unlock()
}
