// Command go-informer runs a client-go SharedInformer for ConfigMaps in one namespace and reports
// what it sees, so Capstan's tests can check that a real client-go informer stays in sync.
//
// stdout: one JSON line per informer callback
//
//	{"event":"add"|"update"|"delete","name":N,"rv":RV,"oldRv":RV?,"tombstone":bool?}
//
// plus {"event":"synced"} once the initial list is in the store, and, for each line "dump" read
// from stdin, {"event":"dump","items":[{"name":N,"rv":RV},...]} with the store's content sorted by
// name. stderr: klog output (reflector list/watch/relist messages at -v=4).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

type item struct {
	Name string `json:"name"`
	RV   string `json:"rv"`
}

type line struct {
	Event     string `json:"event"`
	Name      string `json:"name,omitempty"`
	RV        string `json:"rv,omitempty"`
	OldRV     string `json:"oldRv,omitempty"`
	Tombstone bool   `json:"tombstone,omitempty"`
	Items     []item `json:"items,omitempty"`
	Error     string `json:"error,omitempty"`
}

// out serialises stdout writes: callbacks and dumps come from different goroutines.
var (
	outMu sync.Mutex
	out   = bufio.NewWriter(os.Stdout)
)

func emit(l line) {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	outMu.Lock()
	defer outMu.Unlock()
	out.Write(b)
	out.WriteByte('\n')
	out.Flush()
}

func asConfigMap(obj interface{}) (*corev1.ConfigMap, bool) {
	if cm, ok := obj.(*corev1.ConfigMap); ok {
		return cm, false
	}
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		if cm, ok := t.Obj.(*corev1.ConfigMap); ok {
			return cm, true
		}
	}
	return nil, false
}

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "path of the kubeconfig")
	namespace := flag.String("namespace", "default", "namespace whose ConfigMaps are watched")
	watchTimeout := flag.Int64("watch-timeout", 0, "if > 0, timeoutSeconds sent on every watch instead of client-go's 5-10 minutes")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(2)
	}
	cfg.QPS = 1000
	cfg.Burst = 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(2)
	}

	// Only watch requests carry timeoutSeconds: shortening it makes the server end watches often,
	// which is the "watch timeout" path an informer must survive.
	tweak := func(o *metav1.ListOptions) {
		if *watchTimeout > 0 && o.TimeoutSeconds != nil {
			t := *watchTimeout
			o.TimeoutSeconds = &t
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(*namespace), informers.WithTweakListOptions(tweak))
	informer := factory.Core().V1().ConfigMaps().Informer()
	if err := informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		emit(line{Event: "watchError", Error: err.Error()})
		cache.DefaultWatchErrorHandler(ctx, r, err)
	}); err != nil {
		panic(err)
	}
	_, err = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if cm, _ := asConfigMap(obj); cm != nil {
				emit(line{Event: "add", Name: cm.Name, RV: cm.ResourceVersion})
			}
		},
		UpdateFunc: func(oldObj, newObj interface{}) {
			o, _ := asConfigMap(oldObj)
			n, _ := asConfigMap(newObj)
			if o != nil && n != nil {
				emit(line{Event: "update", Name: n.Name, RV: n.ResourceVersion, OldRV: o.ResourceVersion})
			}
		},
		DeleteFunc: func(obj interface{}) {
			if cm, tomb := asConfigMap(obj); cm != nil {
				emit(line{Event: "delete", Name: cm.Name, RV: cm.ResourceVersion, Tombstone: tomb})
			}
		},
	})
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
			emit(line{Event: "synced"})
		}
	}()

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch strings.TrimSpace(in.Text()) {
		case "dump":
			items := []item{}
			for _, obj := range informer.GetStore().List() {
				if cm, _ := asConfigMap(obj); cm != nil {
					items = append(items, item{Name: cm.Name, RV: cm.ResourceVersion})
				}
			}
			sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
			emit(line{Event: "dump", Items: items})
		case "quit":
			return
		}
	}
	// stdin closed: the test is gone.
}
