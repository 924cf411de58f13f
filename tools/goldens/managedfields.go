package main

// managedfields runs apimachinery's own managed-fields code (k8s.io/apimachinery/pkg/util/managedfields:
// the FieldManager chain of managed fields updater, cap, build manager info, strip meta and the
// structured-merge-diff updater, with the typed converter built from the 1.36 OpenAPI models) over
// the object corpus of test/fixtures/managedfields/objects/: sequences of writes, each a new object
// (the first diffed against the kind's zero Go object, as a create is), the manager, the
// subresource and the fields the strategy resets. It writes what kube records in
// metadata.managedFields after each write to test/golden/managedfields/objects/, each entry's time
// replaced by the step that stamped it, which test/unit/fieldmanager-objects.test.ts compares
// Capstan's field manager with. A step with "op": "apply" (and "force") is a server-side apply of
// its object through FieldManager.Apply instead: the golden then also holds the object kube made
// (without managedFields) or the Status of its error (conflicts), for test/unit/fieldmanager-apply.test.ts
// (corpus test/fixtures/managedfields/apply/).
//
//	go run ./tools/goldens managedfields schema/openapi-v2.json test/fixtures/managedfields/objects test/golden/managedfields/objects

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

type mfStep struct {
	// Op is "" (an update, the default), "apply" (Object is then the applied configuration) or
	// "patch" (an update whose new object is the live one with Patch merged in, RFC 7386).
	Op          string                 `json:"op,omitempty"`
	Patch       map[string]interface{} `json:"patch,omitempty"`
	Force       bool                   `json:"force,omitempty"`
	Manager     string                 `json:"manager"`
	Subresource string                 `json:"subresource"`
	Reset       [][]string             `json:"reset"`
	Live        map[string]interface{} `json:"live,omitempty"`
	Object      map[string]interface{} `json:"object"`
}

type mfSequence struct {
	Name  string   `json:"name"`
	Steps []mfStep `json:"steps"`
}

func (s mfSequence) caseName() string { return s.Name }

type mfGoldenStep struct {
	ManagedFields []metav1.ManagedFieldsEntry `json:"managedFields"`
	// Apply steps: the object kube's FieldManager.Apply made (managedFields left out) or its error.
	Object map[string]interface{} `json:"object,omitempty"`
	Error  *metav1.Status         `json:"error,omitempty"`
}

type mfGolden struct {
	Name  string         `json:"name"`
	Steps []mfGoldenStep `json:"steps"`
}

// sameVersion converts as a custom resource's `None` conversion strategy does: the object is
// relabelled with the target version, nothing else changes (every built-in object of a sequence
// is in one version; the CRD-shaped kind's versions share one schema).
type sameVersion struct{}

func (sameVersion) Convert(in, out, context interface{}) error { return fmt.Errorf("not supported") }
func (sameVersion) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return in, nil
	}
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok || target == u.GroupVersionKind() {
		return in, nil
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(target)
	return out, nil
}
func (sameVersion) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// zeroCreater makes the kind's zero Go object, as kube-apiserver's scheme does for the apply path's
// before-first-apply step.
type zeroCreater struct{}

func (zeroCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	return zeroObject(gvk)
}

type emptyCreater struct{}

func (emptyCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]interface{}{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// stepTime is the time every entry stamped at step i is given, so that goldens do not depend on the clock.
func stepTime(i int) metav1.Time {
	return metav1.NewTime(time.Date(2000, 1, 1, 0, 0, i, 0, time.UTC))
}

// crdModels adds the models kube-apiserver types a CRD's custom resources with (its
// buildOpenAPIModelsForApply: every version's OpenAPI v3 from apiextensions' builder, merged) to
// the built-in ones; the types both have (ObjectMeta...) are the built-in ones.
func crdModels(models map[string]*spec.Schema, crdPaths []string) (map[string]*spec.Schema, error) {
	if len(crdPaths) == 0 {
		return models, nil
	}
	specs := []*spec3.OpenAPI{}
	for _, p := range crdPaths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := json.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, v := range crd.Spec.Versions {
			s, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			specs = append(specs, s)
		}
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		return nil, err
	}
	for name, s := range merged.Components.Schemas {
		if _, ok := models[name]; !ok {
			models[name] = s
		}
	}
	return models, nil
}

func loadTypeConverter(openapiPath string, crdPaths []string) (managedfields.TypeConverter, error) {
	data, err := os.ReadFile(openapiPath)
	if err != nil {
		return nil, err
	}
	var swagger spec.Swagger
	if err := json.Unmarshal(data, &swagger); err != nil {
		return nil, err
	}
	models := map[string]*spec.Schema{}
	for name, s := range swagger.Definitions {
		s := s
		models[name] = &s
	}
	// kube-apiserver's own models declare the default of these list-map keys (+default="TCP"),
	// which the published document leaves out; items that omit them are keyed by the default.
	for _, name := range []string{"io.k8s.api.core.v1.ContainerPort", "io.k8s.api.core.v1.ServicePort"} {
		if m, ok := models[name]; ok {
			p := m.Properties["protocol"]
			p.Default = "TCP"
			m.Properties["protocol"] = p
		}
	}
	models, err = crdModels(models, crdPaths)
	if err != nil {
		return nil, err
	}
	return managedfields.NewTypeConverter(models, false)
}

// mergePatch is RFC 7386: nulls remove, objects merge, anything else replaces.
func mergePatch(target interface{}, patch interface{}) interface{} {
	p, ok := patch.(map[string]interface{})
	if !ok {
		return runtime.DeepCopyJSONValue(patch)
	}
	t, ok := target.(map[string]interface{})
	out := map[string]interface{}{}
	if ok {
		for k, v := range t {
			out[k] = v
		}
	}
	for k, v := range p {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = mergePatch(out[k], v)
		}
	}
	return out
}

// zeroObject is what kube diffs a created object against: the kind's zero Go object, or for a
// custom resource (no Go type) the empty object of its kind.
func zeroObject(gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	zero, err := legacyscheme.Scheme.New(gvk)
	if err != nil {
		u := &unstructured.Unstructured{Object: map[string]interface{}{}}
		u.SetGroupVersionKind(gvk)
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(zero)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

func runManagedFields(openapiPath, corpusDir, goldenDir string, crdPaths []string) error {
	tc, err := loadTypeConverter(openapiPath, crdPaths)
	if err != nil {
		return err
	}
	return transformCorpus(corpusDir, goldenDir, func(seq mfSequence) (mfGolden, error) {
		out := mfGolden{Name: seq.Name, Steps: []mfGoldenStep{}}
		var live *unstructured.Unstructured
		for i, step := range seq.Steps {
			next := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(step.Object)}
			if step.Live != nil {
				live = &unstructured.Unstructured{Object: runtime.DeepCopyJSON(step.Live)}
			}
			gvk := next.GroupVersionKind()
			if step.Op == "patch" {
				if live == nil {
					return out, fmt.Errorf("step %d: a patch needs an object", i)
				}
				patched := mergePatch(live.DeepCopy().Object, step.Patch).(map[string]interface{})
				next = &unstructured.Unstructured{Object: patched}
				unstructured.RemoveNestedField(next.Object, "metadata", "managedFields")
				gvk = next.GroupVersionKind()
			}
			if live == nil {
				// A create: kube diffs against the kind's zero Go object, as its handler makes it.
				u, err := zeroObject(gvk)
				if err != nil {
					return out, fmt.Errorf("step %d: %w", i, err)
				}
				live = u
			}
			reset := fieldpath.NewSet()
			for _, p := range step.Reset {
				parts := make([]interface{}, len(p))
				for j, s := range p {
					parts[j] = s
				}
				reset.Insert(fieldpath.MakePathOrDie(parts...))
			}
			resetFields := map[fieldpath.APIVersion]fieldpath.Filter{}
			if !reset.Empty() {
				resetFields[fieldpath.APIVersion(gvk.GroupVersion().String())] = fieldpath.NewExcludeSetFilter(reset)
			}
			var creater runtime.ObjectCreater = emptyCreater{}
			if step.Op == "apply" {
				creater = zeroCreater{}
			}
			fm, err := managedfields.NewDefaultCRDFieldManager(tc, sameVersion{}, noDefaults{}, creater, gvk, gvk.GroupVersion(), step.Subresource, resetFields)
			if err != nil {
				return out, err
			}
			before := map[string]*metav1.Time{}
			for _, e := range live.GetManagedFields() {
				before[e.Manager+"/"+string(e.Operation)+"/"+e.APIVersion+"/"+e.Subresource] = e.Time
			}
			var result runtime.Object
			if step.Op == "apply" {
				result, err = fm.Apply(live, next, step.Manager, step.Force)
				if err != nil {
					status, ok := err.(apierrors.APIStatus)
					if !ok {
						return out, fmt.Errorf("step %d: %w", i, err)
					}
					st := status.Status()
					out.Steps = append(out.Steps, mfGoldenStep{ManagedFields: live.GetManagedFields(), Error: &st})
					continue
				}
			} else {
				result, err = fm.Update(live, next, step.Manager)
				if err != nil {
					return out, fmt.Errorf("step %d: %w", i, err)
				}
			}
			obj := result.(*unstructured.Unstructured)
			entries := obj.GetManagedFields()
			stamp := stepTime(i)
			for j := range entries {
				e := &entries[j]
				old, ok := before[e.Manager+"/"+string(e.Operation)+"/"+e.APIVersion+"/"+e.Subresource]
				// Entries kube stamped now carry this run's clock; earlier ones carry their step's time.
				if e.Time != nil && e.Time.Year() > 2000 && (!ok || old == nil || !old.Equal(e.Time)) {
					e.Time = &stamp
				}
			}
			sort.SliceStable(entries, func(a, b int) bool {
				p, q := entries[a], entries[b]
				if p.Operation != q.Operation {
					return p.Operation < q.Operation
				}
				ps, qs := int64(0), int64(0)
				if p.Time != nil {
					ps = p.Time.Unix()
				}
				if q.Time != nil {
					qs = q.Time.Unix()
				}
				if ps != qs {
					return ps < qs
				}
				if p.Manager != q.Manager {
					return p.Manager < q.Manager
				}
				if p.APIVersion != q.APIVersion {
					return p.APIVersion < q.APIVersion
				}
				return p.Subresource < q.Subresource
			})
			obj.SetManagedFields(entries)
			golden := mfGoldenStep{ManagedFields: entries}
			if step.Op == "apply" {
				shown := obj.DeepCopy()
				unstructured.RemoveNestedField(shown.Object, "metadata", "managedFields")
				golden.Object = shown.Object
			}
			out.Steps = append(out.Steps, golden)
			// The next write finds the object stored, with the uid a stored object has.
			if obj.GetUID() == "" {
				obj.SetUID("u")
			}
			live = obj
		}
		return out, nil
	})
}
