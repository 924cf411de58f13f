package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/replicaset"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/batch/job"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/endpoint"
	"k8s.io/kubernetes/pkg/registry/core/event"
	"k8s.io/kubernetes/pkg/registry/core/limitrange"
	"k8s.io/kubernetes/pkg/registry/core/namespace"
	"k8s.io/kubernetes/pkg/registry/core/node"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolume"
	"k8s.io/kubernetes/pkg/registry/core/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/core/podtemplate"
	"k8s.io/kubernetes/pkg/registry/core/replicationcontroller"
	"k8s.io/kubernetes/pkg/registry/core/resourcequota"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/core/service"
	"k8s.io/kubernetes/pkg/registry/core/serviceaccount"
	"k8s.io/kubernetes/pkg/registry/discovery/endpointslice"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/ingressclass"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
	"k8s.io/kubernetes/pkg/registry/scheduling/priorityclass"
	"k8s.io/kubernetes/pkg/registry/storage/storageclass"
)

// strategy is what kube-apiserver's registry runs on a write of one kind.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

// strategies by kind: the registry strategies whose create and update checks the goldens record.
var strategies = map[string]strategy{
	"ConfigMap":             configmap.Strategy,
	"Secret":                secret.Strategy,
	"PriorityClass":         priorityclass.Strategy,
	"Lease":                 lease.Strategy,
	"Role":                  role.Strategy,
	"ClusterRole":           clusterrole.Strategy,
	"RoleBinding":           rolebinding.Strategy,
	"ClusterRoleBinding":    clusterrolebinding.Strategy,
	"StorageClass":          storageclass.Strategy,
	"IngressClass":          ingressclass.Strategy,
	"Pod":                   pod.Strategy,
	"Service":               service.Strategy,
	"PodTemplate":           podtemplate.Strategy,
	"ReplicationController": replicationcontroller.Strategy,
	"Deployment":            deployment.Strategy,
	"ReplicaSet":            replicaset.Strategy,
	"StatefulSet":           statefulset.Strategy,
	"DaemonSet":             daemonset.Strategy,
	"Job":                   job.Strategy,
	"CronJob":               cronjob.Strategy,
	"NetworkPolicy":         networkpolicy.Strategy,
	"Ingress":               ingress.Strategy,
	"PersistentVolumeClaim": persistentvolumeclaim.Strategy,
	"PersistentVolume":      persistentvolume.Strategy,
	"Endpoints":             endpoint.Strategy,
	"EndpointSlice":         endpointslice.Strategy,
	"Node":                  node.Strategy,

	// Policy, autoscaling, quota, namespace, service account and event kinds.
	"PodDisruptionBudget":     poddisruptionbudget.Strategy,
	"HorizontalPodAutoscaler": horizontalpodautoscaler.Strategy,
	"LimitRange":              limitrange.Strategy,
	"ResourceQuota":           resourcequota.Strategy,
	"Namespace":               namespace.Strategy,
	"ServiceAccount":          serviceaccount.Strategy,
	"Event":                   event.Strategy,
}

// statusStrategies by kind: the strategies of the status subresource, for cases that write it.
var statusStrategies = map[string]strategy{
	"PodDisruptionBudget":     poddisruptionbudget.StatusStrategy,
	"HorizontalPodAutoscaler": horizontalpodautoscaler.StatusStrategy,
	"ResourceQuota":           resourcequota.StatusStrategy,
	"Namespace":               namespace.StatusStrategy,
}

type validationCase struct {
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
	// Old, when set, makes the case an update of Old to Object.
	Old json.RawMessage `json:"old,omitempty"`
	// Subresource "status" makes an update a write to the status subresource.
	Subresource string `json:"subresource,omitempty"`
}

type validationGolden struct {
	Name string `json:"name"`
	// Status is kube's answer (422 Invalid with causes), or null when the write is valid.
	Status json.RawMessage `json:"status"`
}

// internal decodes a versioned object, defaults it and converts it to the internal version, as
// kube-apiserver's request decoding does; it returns the object and its metadata, in the request's
// namespace (the generic registry store sets it before its checks).
func internal(raw []byte, namespace string) (runtime.Object, metav1.Object, error) {
	versioned, gvk, err := legacyscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	legacyscheme.Scheme.Default(versioned)
	obj, err := legacyscheme.Scheme.UnsafeConvertToVersion(versioned, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
	if err != nil {
		return nil, nil, err
	}
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	objMeta.SetNamespace(namespace)
	return obj, objMeta, nil
}

func validateCase(c validationCase) (json.RawMessage, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(c.Object, &head); err != nil {
		return nil, err
	}
	st, ok := strategies[head.Kind]
	if c.Subresource == "status" && len(c.Old) > 0 {
		st, ok = statusStrategies[head.Kind]
	} else if c.Subresource != "" {
		return nil, fmt.Errorf("subresource %q needs an update case of a kind with a status strategy", c.Subresource)
	}
	if !ok {
		return nil, fmt.Errorf("no strategy for kind %q", head.Kind)
	}
	ns := head.Metadata.Namespace
	if ns == "" {
		ns = "default"
	}
	if !st.NamespaceScoped() {
		ns = ""
	}
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	// Declarative validation identifies the request by its RequestInfo, as the API server's filters set it.
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return nil, err
	}
	verb := "create"
	if len(c.Old) > 0 {
		verb = "update"
	}
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: verb, APIGroup: gv.Group, APIVersion: gv.Version,
		Namespace: ns, Resource: plural(head.Kind), Subresource: c.Subresource, Name: "",
	})
	obj, objMeta, err := internal(c.Object, ns)
	if err != nil {
		return nil, err
	}
	// As the generic registry store does: a create gets the system fields (uid, creation time); an
	// update keeps the stored object's.
	if len(c.Old) == 0 {
		rest.FillObjectMetaSystemFields(objMeta)
		err = rest.BeforeCreate(st, ctx, obj)
	} else {
		old, oldMeta, oerr := internal(c.Old, ns)
		if oerr != nil {
			return nil, oerr
		}
		rest.FillObjectMetaSystemFields(oldMeta)
		objMeta.SetUID(oldMeta.GetUID())
		err = rest.BeforeUpdate(st, ctx, obj, old)
	}
	if err == nil {
		return json.RawMessage("null"), nil
	}
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		return nil, err
	}
	return json.Marshal(stableInvalid(status.Status()))
}

// stableInvalid orders a 422's causes by field and message and rebuilds its message from them the
// way kube aggregates field errors (each distinct text once, several in brackets). kube lists the
// errors of map entries in Go's random map order; this keeps regenerated goldens identical.
func stableInvalid(st metav1.Status) metav1.Status {
	if st.Reason != metav1.StatusReasonInvalid || st.Details == nil || len(st.Details.Causes) < 2 {
		return st
	}
	causes := append([]metav1.StatusCause(nil), st.Details.Causes...)
	sort.SliceStable(causes, func(i, j int) bool {
		if causes[i].Field != causes[j].Field {
			return causes[i].Field < causes[j].Field
		}
		return causes[i].Message < causes[j].Message
	})
	st.Details.Causes = causes
	prefix, _, found := strings.Cut(st.Message, " is invalid: ")
	if !found {
		return st
	}
	var texts []string
	seen := map[string]bool{}
	for _, c := range causes {
		text := c.Message
		if c.Field != "" {
			text = c.Field + ": " + c.Message
		}
		if !seen[text] {
			seen[text] = true
			texts = append(texts, text)
		}
	}
	joined := texts[0]
	if len(texts) > 1 {
		joined = "[" + strings.Join(texts, ", ") + "]"
	}
	st.Message = prefix + " is invalid: " + joined
	return st
}

// irregularPlurals are the resource names of corpus kinds that do not add "s" or "es" to the kind.
var irregularPlurals = map[string]string{
	"NetworkPolicy": "networkpolicies",
	"Endpoints":     "endpoints",
}

// plural is the resource name of a corpus kind.
func plural(kind string) string {
	if p, ok := irregularPlurals[kind]; ok {
		return p
	}
	lower := strings.ToLower(kind)
	if strings.HasSuffix(lower, "s") {
		return lower + "es"
	}
	return lower + "s"
}

func (c validationCase) caseName() string { return c.Name }

func runValidation(corpusDir, goldenDir string) error {
	return transformCorpus(corpusDir, goldenDir, func(c validationCase) (validationGolden, error) {
		status, err := validateCase(c)
		return validationGolden{Name: c.Name, Status: status}, err
	})
}

// preparedForCreate decodes and defaults a versioned object, runs its kind's PrepareForCreate on the
// internal version (as the generic registry store does before validating a create) and encodes the
// result in the object's own version.
func preparedForCreate(raw []byte) ([]byte, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	st, ok := strategies[head.Kind]
	if !ok {
		return nil, fmt.Errorf("no strategy for kind %q", head.Kind)
	}
	gv, err := schema.ParseGroupVersion(head.APIVersion)
	if err != nil {
		return nil, err
	}
	ns := "default"
	if !st.NamespaceScoped() {
		ns = ""
	}
	obj, _, err := internal(raw, ns)
	if err != nil {
		return nil, err
	}
	st.PrepareForCreate(genericapirequest.WithNamespace(context.Background(), ns), obj)
	versioned, err := legacyscheme.Scheme.ConvertToVersion(obj, gv)
	if err != nil {
		return nil, err
	}
	return json.Marshal(versioned)
}
