// Command go-decode lists and watches the workload and core resources of one namespace with
// client-go's TYPED clientset, once with JSON and once with protobuf, so a test can check that
// whatever Capstan stored decodes into client-go's Go types.
//
// stdout: one JSON line per resource and encoding, in a fixed order:
//
//	{"resource":"deployments","encoding":"json"|"protobuf","listed":N,"watched":N,"error":""}
//
// listed is the number of items of a typed List; watched the number of ADDED events of a classic
// watch from resourceVersion "0" (the server replays the current objects as ADDED), read until it
// has as many as were listed. error is "" only when the list and the watch decoded every object, the
// watch delivered no ERROR event and the watched names are the listed names; otherwise it says what
// went wrong (a decode error, an ERROR event's Status, a timeout, a missing name). The exit status is
// 0 when every line could be written, whatever the errors; 2 on bad flags or an unusable kubeconfig.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// result is one stdout line.
type result struct {
	Resource string `json:"resource"`
	Encoding string `json:"encoding"`
	Listed   int    `json:"listed"`
	Watched  int    `json:"watched"`
	Error    string `json:"error"`
}

// typedClient is what every typed namespaced client of client-go offers for one resource.
type typedClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// resource is the check of one resource: list, then watch from "0".
type resource struct {
	name  string
	check func(ctx context.Context, watchTimeout time.Duration) result
}

// entry builds the check of one resource from its typed client; item is a value of the item's Go
// type, which every ADDED event's object must have.
func entry[L runtime.Object](name string, c typedClient[L], item runtime.Object) resource {
	return resource{name: name, check: func(ctx context.Context, watchTimeout time.Duration) result {
		r := result{Resource: name}
		list, err := c.List(ctx, metav1.ListOptions{})
		if err != nil {
			r.Error = "list: " + err.Error()
			return r
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			r.Error = "list items: " + err.Error()
			return r
		}
		r.Listed = len(items)
		listed := map[string]bool{}
		for _, o := range items {
			m, err := meta.Accessor(o)
			if err != nil {
				r.Error = "list item: " + err.Error()
				return r
			}
			listed[m.GetName()] = true
		}
		timeoutSeconds := int64(watchTimeout / time.Second)
		wctx, cancel := context.WithTimeout(ctx, watchTimeout+5*time.Second)
		defer cancel()
		w, err := c.Watch(wctx, metav1.ListOptions{ResourceVersion: "0", TimeoutSeconds: &timeoutSeconds})
		if err != nil {
			r.Error = "watch: " + err.Error()
			return r
		}
		defer w.Stop()
		watched := map[string]bool{}
		wantType := fmt.Sprintf("%T", item)
		for r.Watched < r.Listed {
			ev, ok := <-w.ResultChan()
			if !ok {
				r.Error = fmt.Sprintf("watch ended after %d of %d ADDED events", r.Watched, r.Listed)
				return r
			}
			switch ev.Type {
			case watch.Added:
				if got := fmt.Sprintf("%T", ev.Object); got != wantType {
					r.Error = fmt.Sprintf("watch: ADDED event carries a %s, want %s", got, wantType)
					return r
				}
				m, err := meta.Accessor(ev.Object)
				if err != nil {
					r.Error = "watch event: " + err.Error()
					return r
				}
				r.Watched++
				watched[m.GetName()] = true
			case watch.Error:
				// client-go reports an event it cannot decode as an ERROR event carrying a Status.
				r.Error = "watch ERROR event: " + describe(ev.Object)
				return r
			default:
				r.Error = fmt.Sprintf("watch: unexpected %s event before the replay of existing objects ended", ev.Type)
				return r
			}
		}
		var missing []string
		for n := range listed {
			if !watched[n] {
				missing = append(missing, n)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			r.Error = "watch did not replay listed objects: " + strings.Join(missing, ", ")
		}
		return r
	}}
}

func describe(o runtime.Object) string {
	if s, ok := o.(*metav1.Status); ok {
		return fmt.Sprintf("%d %s: %s", s.Code, s.Reason, s.Message)
	}
	return fmt.Sprintf("%T %v", o, o)
}

func resources(cs *kubernetes.Clientset, ns string) []resource {
	return []resource{
		entry[*appsv1.DeploymentList]("deployments", cs.AppsV1().Deployments(ns), &appsv1.Deployment{}),
		entry[*appsv1.ReplicaSetList]("replicasets", cs.AppsV1().ReplicaSets(ns), &appsv1.ReplicaSet{}),
		entry[*appsv1.StatefulSetList]("statefulsets", cs.AppsV1().StatefulSets(ns), &appsv1.StatefulSet{}),
		entry[*appsv1.DaemonSetList]("daemonsets", cs.AppsV1().DaemonSets(ns), &appsv1.DaemonSet{}),
		entry[*corev1.PodList]("pods", cs.CoreV1().Pods(ns), &corev1.Pod{}),
		entry[*corev1.ServiceList]("services", cs.CoreV1().Services(ns), &corev1.Service{}),
		entry[*batchv1.JobList]("jobs", cs.BatchV1().Jobs(ns), &batchv1.Job{}),
		entry[*batchv1.CronJobList]("cronjobs", cs.BatchV1().CronJobs(ns), &batchv1.CronJob{}),
		entry[*corev1.ConfigMapList]("configmaps", cs.CoreV1().ConfigMaps(ns), &corev1.ConfigMap{}),
		entry[*corev1.SecretList]("secrets", cs.CoreV1().Secrets(ns), &corev1.Secret{}),
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path of the kubeconfig")
	namespace := flag.String("namespace", "", "namespace to list and watch")
	watchTimeout := flag.Duration("watch-timeout", 10*time.Second, "longest wait for one watch's replay")
	flag.Parse()
	if *kubeconfig == "" || *namespace == "" {
		fmt.Fprintln(os.Stderr, "usage: go-decode --kubeconfig FILE --namespace NS [--watch-timeout 10s]")
		os.Exit(2)
	}
	base, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, encoding := range []struct{ name, contentType string }{
		{"json", "application/json"},
		{"protobuf", "application/vnd.kubernetes.protobuf"},
	} {
		cfg := *base
		cfg.ContentType = encoding.contentType
		// Only the one media type is accepted, so a server answering another one fails loudly
		// instead of the check silently testing JSON twice.
		cfg.AcceptContentTypes = encoding.contentType
		cfg.QPS, cfg.Burst = 1000, 1000
		cs, err := kubernetes.NewForConfig(&cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "clientset:", err)
			os.Exit(2)
		}
		for _, res := range resources(cs, *namespace) {
			r := res.check(context.Background(), *watchTimeout)
			r.Encoding = encoding.name
			if err := enc.Encode(r); err != nil {
				fmt.Fprintln(os.Stderr, "stdout:", err)
				os.Exit(1)
			}
		}
	}
}
