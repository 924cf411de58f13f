package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// writeShape writes, for every struct type of the served API (by its OpenAPI definition name), how Go's
// JSON encoder treats each field that Capstan must reproduce:
//
//	z  a non-pointer string, number, bool, slice or map with omitempty: dropped when zero or empty
//	s  a non-pointer struct (omitempty has no effect on it): always written, "{}" at least
//	a  a string, number or bool without omitempty: always written, its zero value when unset
//	n  a slice or map without omitempty: always written, null when unset
//
// Types with their own JSON form (Time, Quantity, IntOrString, RawExtension, ...) are left alone.
func writeShape(out string) error {
	seen := map[reflect.Type]bool{}
	lines := map[string]string{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		if customJSON(t) {
			return
		}
		fields := fieldCodes(t, visit)
		if len(fields) > 0 {
			sort.Strings(fields)
			lines[definitionName(t)] = strings.Join(fields, " ")
		}
	}
	addScheme := func(s *runtime.Scheme) {
		for gvk, t := range s.AllKnownTypes() {
			if gvk.Version == runtime.APIVersionInternal {
				continue
			}
			visit(t)
		}
	}
	addScheme(legacyscheme.Scheme)
	extra := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(extra); err != nil {
		return err
	}
	if err := apiregistrationv1.AddToScheme(extra); err != nil {
		return err
	}
	addScheme(extra)
	names := make([]string, 0, len(lines))
	for n := range lines {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", n, lines[n])
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// fieldCodes are the "name:code" entries of struct t's JSON fields, the fields of inlined (anonymous,
// untagged) structs included, as Go's encoder flattens them; visit is called on every field's type.
func fieldCodes(t reflect.Type, visit func(reflect.Type)) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		visit(f.Type)
		if f.Anonymous && name == "" {
			// Inlined (e.g. TypeMeta, EphemeralContainerCommon): its fields belong to this type.
			embedded := f.Type
			if embedded.Kind() == reflect.Pointer {
				embedded = embedded.Elem()
			}
			out = append(out, fieldCodes(embedded, visit)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		if code := classify(f.Type, opts); code != "" {
			out = append(out, name+":"+code)
		}
	}
	return out
}

// classify is a field's code (see writeShape), or "" for fields written as they are (pointers with
// omitempty, types with their own JSON form).
func classify(t reflect.Type, opts string) string {
	omitempty := strings.Contains(","+opts+",", ",omitempty,")
	omitzero := strings.Contains(","+opts+",", ",omitzero,")
	kind := t.Kind()
	scalar := kind == reflect.String || kind == reflect.Bool || isNumber(kind)
	switch {
	case customJSON(t):
		return ""
	case kind == reflect.Struct && !omitzero:
		return "s"
	case (scalar || kind == reflect.Slice || kind == reflect.Map) && (omitempty || omitzero):
		return "z"
	case scalar:
		return "a"
	case kind == reflect.Slice || kind == reflect.Map:
		return "n"
	}
	return ""
}

func isNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

var marshaler = reflect.TypeOf((*interface{ MarshalJSON() ([]byte, error) })(nil)).Elem()

// customJSON reports types that encode themselves (Time, Quantity, IntOrString, RawExtension, ...).
func customJSON(t reflect.Type) bool {
	return t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)
}

// definitionName is the OpenAPI definition name of a Go type: k8s.io/api/core/v1.Pod is io.k8s.api.core.v1.Pod.
func definitionName(t reflect.Type) string {
	path := t.PkgPath()
	if rest, ok := strings.CutPrefix(path, "k8s.io/"); ok {
		path = "io.k8s." + rest
	}
	return strings.ReplaceAll(path, "/", ".") + "." + t.Name()
}
