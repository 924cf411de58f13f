package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/registry/coordination/lease"
	"k8s.io/kubernetes/pkg/registry/core/configmap"
	"k8s.io/kubernetes/pkg/registry/core/secret"
	"k8s.io/kubernetes/pkg/registry/networking/ingressclass"
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
	"ConfigMap":          configmap.Strategy,
	"Secret":             secret.Strategy,
	"PriorityClass":      priorityclass.Strategy,
	"Lease":              lease.Strategy,
	"Role":               role.Strategy,
	"ClusterRole":        clusterrole.Strategy,
	"RoleBinding":        rolebinding.Strategy,
	"ClusterRoleBinding": clusterrolebinding.Strategy,
	"StorageClass":       storageclass.Strategy,
	"IngressClass":       ingressclass.Strategy,
}

type validationCase struct {
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
	// Old, when set, makes the case an update of Old to Object.
	Old json.RawMessage `json:"old,omitempty"`
}

type validationGolden struct {
	Name string `json:"name"`
	// Status is kube's answer (422 Invalid with causes), or null when the write is valid.
	Status json.RawMessage `json:"status"`
}

// internal decodes a versioned object, defaults it and converts it to the internal version, as
// kube-apiserver's request decoding does.
func internal(raw []byte) (runtime.Object, error) {
	obj, gvk, err := legacyscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(obj)
	return legacyscheme.Scheme.UnsafeConvertToVersion(obj, schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal})
}

func validateCase(c validationCase) (json.RawMessage, error) {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(c.Object, &head); err != nil {
		return nil, err
	}
	st, ok := strategies[head.Kind]
	if !ok {
		return nil, fmt.Errorf("no strategy for kind %q", head.Kind)
	}
	ns := head.Metadata.Namespace
	if ns == "" {
		ns = "default"
	}
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	obj, err := internal(c.Object)
	if err != nil {
		return nil, err
	}
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	// As the generic registry store does before its checks: the request's namespace, and on create
	// the system fields (uid, creation time); an update keeps the stored object's.
	if !st.NamespaceScoped() {
		ns = ""
		ctx = genericapirequest.WithNamespace(context.Background(), "")
	}
	objMeta.SetNamespace(ns)
	if len(c.Old) == 0 {
		rest.FillObjectMetaSystemFields(objMeta)
		err = rest.BeforeCreate(st, ctx, obj)
	} else {
		old, oerr := internal(c.Old)
		if oerr != nil {
			return nil, oerr
		}
		oldMeta, oerr := meta.Accessor(old)
		if oerr != nil {
			return nil, oerr
		}
		oldMeta.SetNamespace(ns)
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
	return json.Marshal(status.Status())
}

func runValidation(corpusDir, goldenDir string) error {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		return err
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var corpus struct {
			Cases []validationCase `json:"cases"`
		}
		if err := json.Unmarshal(data, &corpus); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		out := struct {
			Cases []validationGolden `json:"cases"`
		}{Cases: []validationGolden{}}
		for _, c := range corpus.Cases {
			status, err := validateCase(c)
			if err != nil {
				return fmt.Errorf("%s, case %q: %w", file, c.Name, err)
			}
			out.Cases = append(out.Cases, validationGolden{Name: c.Name, Status: status})
		}
		encoded, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		target := filepath.Join(goldenDir, filepath.Base(file))
		if err := os.WriteFile(target, append(encoded, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d cases\n", target, len(out.Cases))
	}
	return nil
}
