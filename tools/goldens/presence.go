package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	imagepolicyv1alpha1 "k8s.io/api/imagepolicy/v1alpha1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// writePresence writes the table at out (schema/go-field-presence.txt, read by
// src/codec/protobuf/field-presence.ts): for every proto message of the served API's Go
// types (every struct reachable from the schemes' kinds that has protobuf-tagged fields), its fields
// coded
//
//	p  a pointer field: any value on the wire, zero included, was set on purpose
//	a  a non-pointer string, number or bool whose json tag lacks omitempty: Go's JSON always writes it
//
// under the proto package of the Go package (k8s.io/api/apps/v1 is k8s.io.api.apps.v1) and the proto
// field name of the protobuf tag's name=. Messages with no such field are left out. Packages, messages
// and fields are sorted (byte order), so the output is the same on every run.
func writePresence(out string) error {
	tables := map[string]map[string][]string{} // proto package -> message -> "field:code" entries
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		var entries []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			visit(f.Type)
			field, ok := protoFieldName(f.Tag.Get("protobuf"))
			if !ok {
				continue
			}
			if code := presenceCode(f); code != "" {
				entries = append(entries, field+":"+code)
			}
		}
		if len(entries) == 0 {
			return
		}
		pkg := protoPackage(t.PkgPath())
		if tables[pkg] == nil {
			tables[pkg] = map[string][]string{}
		}
		sort.Strings(entries)
		tables[pkg][t.Name()] = entries
	}
	schemes, err := presenceSchemes()
	if err != nil {
		return err
	}
	for _, s := range schemes {
		for gvk, t := range s.AllKnownTypes() {
			if gvk.Version != runtime.APIVersionInternal {
				visit(t)
			}
		}
	}
	for _, message := range unreachedMessages {
		visit(reflect.TypeOf(message))
	}

	var b strings.Builder
	for _, pkg := range sortedKeys(tables) {
		fmt.Fprintf(&b, "@%s\n", pkg)
		for _, message := range sortedKeys(tables[pkg]) {
			fmt.Fprintf(&b, "%s %s\n", message, strings.Join(tables[pkg][message], " "))
		}
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// unreachedMessages are the generated.proto messages that no kind of the schemes reaches through its
// fields, so that the table covers every message of the API's proto packages but runtime's (the
// envelope, which the codec reads on its own).
var unreachedMessages = []any{
	metav1.Timestamp{}, metav1.Duration{}, // the wire forms of Time and Duration
	metav1.GroupKind{}, metav1.GroupVersion{}, metav1.ApplyOptions{}, metav1.TableOptions{},
	metav1.List{}, metav1.PartialObjectMetadataList{}, metav1.RootPaths{}, metav1.Patch{},
	metav1beta1.PartialObjectMetadataList{},
	// autoscaling/v1 carries v2's metrics in annotations; their messages exist all the same.
	autoscalingv1.MetricSpec{}, autoscalingv1.MetricStatus{}, autoscalingv1.HorizontalPodAutoscalerCondition{},
	corev1.AvoidPods{}, corev1.Preconditions{},
	resourcev1alpha3.DeviceSelector{},
}

// presenceSchemes are the schemes whose kinds root the walk: kube-apiserver's (every built-in group)
// and the groups it serves or speaks without installing them in that scheme.
func presenceSchemes() ([]*runtime.Scheme, error) {
	extra := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		admissionv1.AddToScheme, admissionv1beta1.AddToScheme,
		apidiscoveryv2.AddToScheme, apidiscoveryv2beta1.AddToScheme,
		imagepolicyv1alpha1.AddToScheme,
		extensionsv1beta1.AddToScheme,
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
	} {
		if err := add(extra); err != nil {
			return nil, err
		}
	}
	return []*runtime.Scheme{legacyscheme.Scheme, extra}, nil
}

// protoFieldName is the name= of a protobuf struct tag ("bytes,1,opt,name=metadata"); false for
// untagged fields, which are not on the wire.
func protoFieldName(tag string) (string, bool) {
	for _, part := range strings.Split(tag, ",") {
		if name, ok := strings.CutPrefix(part, "name="); ok {
			return name, true
		}
	}
	return "", false
}

// presenceCode is p, a or "" for a struct field (see writePresence).
func presenceCode(f reflect.StructField) string {
	if f.Type.Kind() == reflect.Pointer {
		return "p"
	}
	kind := f.Type.Kind()
	if kind != reflect.String && kind != reflect.Bool && !isNumber(kind) {
		return ""
	}
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") {
		return ""
	}
	return "a"
}

// protoPackage is the generated.proto package of a Go package: its import path with "/" as "." and
// "-" as "_" (k8s.io/kube-aggregator/pkg/apis/apiregistration/v1 is
// k8s.io.kube_aggregator.pkg.apis.apiregistration.v1).
func protoPackage(goPackage string) string {
	return strings.NewReplacer("/", ".", "-", "_").Replace(goPackage)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
