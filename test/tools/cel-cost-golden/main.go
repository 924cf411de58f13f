// Command cel-cost-golden runs kube-apiserver's own CEL compilation and CRD validation over the
// cost corpus (test/fixtures/cel-cost/corpus.json) and writes what kube estimates for every
// x-kubernetes-validations rule: the static cost range, the cardinality the rule is multiplied
// by, the cost kube compares with the per-rule limit, the messageExpression's cost, and the
// findings ValidateCustomResourceDefinition reports for the whole CRD.
//
// Usage: cel-cost-golden CORPUS.json OUT.json
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

type corpusCase struct {
	Name   string                          `json:"name"`
	Schema apiextensionsv1.JSONSchemaProps `json:"schema"`
	// Samples are custom resources (their root objects) every rule is evaluated on, at each
	// value its node has in them, for the runtime costs.
	Samples []map[string]any `json:"samples,omitempty"`
}

type corpus struct {
	Cases []corpusCase `json:"cases"`
}

type estimate struct {
	Min uint64 `json:"min,string"`
	Max uint64 `json:"max,string"`
}

type ruleResult struct {
	Path              string    `json:"path"`
	Index             int       `json:"index"`
	Rule              string    `json:"rule"`
	MessageExpression string    `json:"messageExpression,omitempty"`
	Error             string    `json:"error,omitempty"`
	Cost              *estimate `json:"cost,omitempty"`
	Cardinality       uint64    `json:"cardinality,string"`
	RuleCost          uint64    `json:"ruleCost,string"`
	MessageCost       *estimate `json:"messageExpressionCost,omitempty"`
	Runtime           []runtime `json:"runtime,omitempty"`
}

// runtime is one evaluation of a rule on one value: cel-go's actual cost, and the result or error.
type runtime struct {
	Sample int    `json:"sample"`
	Value  int    `json:"value"`
	Cost   uint64 `json:"cost,string"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// step leads from a node's value to its children's: a property, every item, every map value.
type step struct{ prop, kind string }

// valuesAt gives the values the node at STEPS has in OBJ, in document order (map values by key).
func valuesAt(obj any, steps []step) []any {
	vals := []any{obj}
	for _, st := range steps {
		var next []any
		for _, v := range vals {
			switch st.kind {
			case "prop":
				if m, ok := v.(map[string]any); ok {
					if c, ok := m[st.prop]; ok {
						next = append(next, c)
					}
				}
			case "items":
				if l, ok := v.([]any); ok {
					next = append(next, l...)
				}
			case "values":
				if m, ok := v.(map[string]any); ok {
					keys := make([]string, 0, len(m))
					for k := range m {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						next = append(next, m[k])
					}
				}
			}
		}
		vals = next
	}
	return vals
}

type finding struct {
	Type    string `json:"type"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

type caseResult struct {
	Name     string       `json:"name"`
	Rules    []ruleResult `json:"rules"`
	Findings []finding    `json:"findings"`
}

var baseEnvSet = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())

// sizes answers the estimator's size questions from the schema's declared bounds, as kube's CRD
// compilation answers them: the path from `self` down to a node gives its largest size.
type sizes struct{ root *apiservercel.DeclType }

func (s sizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	t := s.root
	for _, step := range path[1:] {
		switch step {
		case "@items", "@values":
			t = t.ElemType
		case "@keys":
			t = t.KeyType
		default:
			f, ok := t.Fields[step]
			if !ok {
				return nil
			}
			t = f.Type
		}
		if t == nil {
			return nil
		}
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(t.MaxElements)}
}

func (s sizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// estimateRange compiles EXPR in the rule environment kube builds for a node of type DECL and
// returns cel-go's whole estimate (kube keeps only its maximum).
func estimateRange(decl *apiservercel.DeclType, expr string, optionalOldSelf bool) (*estimate, error) {
	self := decl.MaybeAssignTypeName("selfType0")
	var old *types.Type = self.CelType()
	if optionalOldSelf {
		old = types.NewOptionalType(self.CelType())
	}
	envSet, err := baseEnvSet.Extend(
		environment.VersionedOptions{IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions: []celgo.EnvOption{celgo.Variable("self", self.CelType())},
			DeclTypes:  []*apiservercel.DeclType{self}},
		environment.VersionedOptions{IntroducedVersion: version.MajorMinor(1, 24),
			EnvOptions: []celgo.EnvOption{celgo.Variable("oldSelf", old)}},
	)
	if err != nil {
		return nil, err
	}
	env := envSet.NewExpressionsEnv()
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return nil, issues.Err()
	}
	est, err := env.EstimateCost(ast, &library.CostEstimator{SizeEstimator: sizes{root: decl}})
	if err != nil {
		return nil, err
	}
	return &estimate{Min: est.Min, Max: est.Max}, nil
}

func walk(s *apiextensions.JSONSchemaProps, path string, steps []step, samples []map[string]any, ctx *validation.CELSchemaContext, out *[]ruleResult) error {
	child := func(st step) []step { return append(append([]step{}, steps...), st) }
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := s.Properties[n]
		if err := walk(&p, path+".properties["+n+"]", child(step{n, "prop"}), samples, ctx.ChildPropertyContext(&p, n), out); err != nil {
			return err
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		if err := walk(s.Items.Schema, path+".items", child(step{"", "items"}), samples, ctx.ChildItemsContext(s.Items.Schema), out); err != nil {
			return err
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		a := s.AdditionalProperties.Schema
		if err := walk(a, path+".additionalProperties", child(step{"", "values"}), samples, ctx.ChildAdditionalPropertiesContext(a), out); err != nil {
			return err
		}
	}
	if len(s.XValidations) == 0 {
		return nil
	}
	info, err := ctx.TypeInfo()
	if err != nil || info == nil {
		return fmt.Errorf("%s: no type info: %v", path, err)
	}
	results, err := cel.Compile(info.Schema, info.DeclType, celconfig.PerCallLimit, baseEnvSet, cel.NewExpressionsEnvLoader())
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	for i, cr := range results {
		rule := s.XValidations[i]
		r := ruleResult{Path: path, Index: i, Rule: rule.Rule, MessageExpression: rule.MessageExpression}
		if cr.Error != nil {
			r.Error = cr.Error.Detail
		} else {
			opt := rule.OptionalOldSelf != nil && *rule.OptionalOldSelf
			e, err := estimateRange(info.DeclType, rule.Rule, opt)
			if err != nil {
				return fmt.Errorf("%s[%d]: %v", path, i, err)
			}
			if e.Max != cr.MaxCost {
				return fmt.Errorf("%s[%d]: estimate %d differs from Compile's %d", path, i, e.Max, cr.MaxCost)
			}
			r.Cost = e
			if ctx.MaxCardinality != nil {
				r.Cardinality = *ctx.MaxCardinality
			} else {
				r.Cardinality = cr.MaxCardinality
			}
			r.RuleCost = guardedProduct(cr.MaxCost, r.Cardinality)
			if cr.MessageExpression != nil {
				m, err := estimateRange(info.DeclType, rule.MessageExpression, false)
				if err != nil {
					return fmt.Errorf("%s[%d] messageExpression: %v", path, i, err)
				}
				if m.Max != cr.MessageExpressionMaxCost {
					return fmt.Errorf("%s[%d]: messageExpression estimate %d differs from Compile's %d", path, i, m.Max, cr.MessageExpressionMaxCost)
				}
				r.MessageCost = m
			}
			if !cr.UsesOldSelf {
				for si, sample := range samples {
					// A resource's root (or an embedded resource) has apiVersion, kind and metadata, as kube's validator sees it.
					valueSchema := info.Schema
					if path == "openAPIV3Schema" || s.XEmbeddedResource {
						valueSchema = model.WithTypeAndObjectMeta(info.Schema)
					}
					for vi, v := range valuesAt(sample, steps) {
						act := map[string]any{"self": cel.UnstructuredToVal(v, valueSchema)}
						val, details, err := cr.Program.ContextEval(context.Background(), act)
						rt := runtime{Sample: si, Value: vi}
						if details != nil && details.ActualCost() != nil {
							rt.Cost = *details.ActualCost()
						}
						if err != nil {
							rt.Error = err.Error()
						} else {
							rt.Result = fmt.Sprint(val.Value())
						}
						r.Runtime = append(r.Runtime, rt)
					}
				}
			}
		}
		*out = append(*out, r)
	}
	return nil
}

// unstructured turns json.Numbers into int64 or float64, as kube's JSON decoding of objects does.
func unstructured(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = unstructured(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = unstructured(e)
		}
		return t
	}
	return v
}

func guardedProduct(a, b uint64) uint64 {
	if a == 0 {
		return 0
	}
	if ^uint64(0)/a < b {
		return ^uint64(0)
	}
	return a * b
}

// crdFindings runs kube's CRD validation on a CRD whose only version has SCHEMA.
func crdFindings(schema *apiextensionsv1.JSONSchemaProps) ([]finding, error) {
	v1 := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.cost.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cost.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema},
			}},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1"}},
	}
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, &internal, nil); err != nil {
		return nil, err
	}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), &internal)
	out := []finding{}
	for _, e := range errs {
		out = append(out, finding{Type: string(e.Type), Field: e.Field, Message: e.Error()})
	}
	return out, nil
}

func run(corpusPath, outPath string) error {
	data, err := os.ReadFile(corpusPath)
	if err != nil {
		return err
	}
	var c corpus
	if err := json.Unmarshal(data, &c); err != nil {
		return err
	}
	// Samples are unstructured objects as kube decodes them: integers int64, other numbers float64.
	var raw struct {
		Cases []struct {
			Samples []any `json:"samples"`
		} `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	for i := range c.Cases {
		for j := range c.Cases[i].Samples {
			c.Cases[i].Samples[j] = unstructured(raw.Cases[i].Samples[j]).(map[string]any)
		}
	}
	results := []caseResult{}
	for _, cc := range c.Cases {
		var internal apiextensions.JSONSchemaProps
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&cc.Schema, &internal, nil); err != nil {
			return fmt.Errorf("%s: %v", cc.Name, err)
		}
		root := validation.RootCELContext(&internal)
		rules := []ruleResult{}
		if err := walk(&internal, "openAPIV3Schema", nil, cc.Samples, root, &rules); err != nil {
			return fmt.Errorf("%s: %v", cc.Name, err)
		}
		findings, err := crdFindings(&cc.Schema)
		if err != nil {
			return fmt.Errorf("%s: %v", cc.Name, err)
		}
		results = append(results, caseResult{Name: cc.Name, Rules: rules, Findings: findings})
	}
	buf, err := json.MarshalIndent(map[string]any{
		"generatedBy": "test/tools/cel-cost-golden (k8s.io/apiextensions-apiserver " + strings.TrimSpace(moduleVersion) + ")",
		"cases":       results,
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(outPath, append(buf, '\n'), 0o644)
}

const moduleVersion = "v0.36.4"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cel-cost-golden CORPUS.json OUT.json")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "cel-cost-golden:", err)
		os.Exit(1)
	}
}
