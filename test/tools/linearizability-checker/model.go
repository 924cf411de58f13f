package main

// The sequential specification of one Kubernetes resource type as the API promises it: objects by
// name, each with the resourceVersion of its last write, and the type's resourceVersion, which every
// write moves strictly forward. A consistent list is a snapshot of every object at its
// resourceVersion; no write after it may get a smaller one.

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// object is one stored object as the model sees it: its resourceVersion and the value the test
// wrote (a token unique to the write).
type object struct {
	Name  string
	RV    uint64
	Value string
}

// state is immutable: every step that changes it returns a new one.
type state struct {
	// RV is the largest resourceVersion any write or consistent list has shown so far.
	RV uint64
	// Objects, sorted by name.
	Objects []object
}

// input is what a client asked.
type input struct {
	Op       string // create, update, delete, get, list
	Name     string
	Value    string
	ExpectRV uint64 // update and delete: the resourceVersion the write is conditional on
}

// output is what the client was told (or, for an operation whose answer was lost, what the watch
// showed it did).
type output struct {
	Status string // ok, exists, conflict, notfound
	RV     uint64
	Value  string
	Items  []object
}

func (s state) find(name string) (int, bool) {
	i := sort.Search(len(s.Objects), func(i int) bool { return s.Objects[i].Name >= name })
	return i, i < len(s.Objects) && s.Objects[i].Name == name
}

// with returns a copy of s whose object `name` is o (or is removed when o is nil), at resourceVersion rv.
func (s state) with(name string, o *object, rv uint64) state {
	i, found := s.find(name)
	objects := make([]object, 0, len(s.Objects)+1)
	objects = append(objects, s.Objects[:i]...)
	if o != nil {
		objects = append(objects, *o)
	}
	if found {
		objects = append(objects, s.Objects[i+1:]...)
	} else {
		objects = append(objects, s.Objects[i:]...)
	}
	return state{RV: rv, Objects: objects}
}

// step applies one operation with its observed output: whether the type could have answered so,
// and the state after it.
func step(s state, in input, out output) (bool, state) {
	i, present := s.find(in.Name)
	switch in.Op {
	case "create":
		switch out.Status {
		case "ok":
			if present || out.RV <= s.RV {
				return false, s
			}
			return true, s.with(in.Name, &object{Name: in.Name, RV: out.RV, Value: in.Value}, out.RV)
		case "exists":
			return present, s
		}
	case "update":
		switch out.Status {
		case "ok":
			if !present || s.Objects[i].RV != in.ExpectRV || out.RV <= s.RV {
				return false, s
			}
			return true, s.with(in.Name, &object{Name: in.Name, RV: out.RV, Value: in.Value}, out.RV)
		case "conflict":
			return present && s.Objects[i].RV != in.ExpectRV, s
		case "notfound":
			return !present, s
		}
	case "delete":
		switch out.Status {
		case "ok":
			if !present || s.Objects[i].RV != in.ExpectRV {
				return false, s
			}
			if out.RV == 0 {
				// A delete whose resourceVersion nobody saw (see main.go): it moves nothing the model checks.
				return true, s.with(in.Name, nil, s.RV)
			}
			if out.RV <= s.RV {
				return false, s
			}
			return true, s.with(in.Name, nil, out.RV)
		case "conflict":
			return present && s.Objects[i].RV != in.ExpectRV, s
		case "notfound":
			return !present, s
		}
	case "get":
		switch out.Status {
		case "ok":
			return present && s.Objects[i].RV == out.RV && s.Objects[i].Value == out.Value, s
		case "notfound":
			return !present, s
		}
	case "list":
		if out.Status != "ok" || out.RV < s.RV || len(out.Items) != len(s.Objects) {
			return false, s
		}
		for k, item := range out.Items {
			if item != s.Objects[k] {
				return false, s
			}
		}
		return true, state{RV: out.RV, Objects: s.Objects}
	}
	return false, s
}

func describeObjects(objects []object) string {
	parts := make([]string, len(objects))
	for k, o := range objects {
		parts[k] = fmt.Sprintf("%s@%d=%s", o.Name, o.RV, o.Value)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// resourceModel is the porcupine model of one resource type.
var resourceModel = porcupine.Model{
	Init: func() interface{} { return state{} },
	Step: func(s, in, out interface{}) (bool, interface{}) {
		return step(s.(state), in.(input), out.(output))
	},
	Equal: func(a, b interface{}) bool {
		x, y := a.(state), b.(state)
		if x.RV != y.RV || len(x.Objects) != len(y.Objects) {
			return false
		}
		for k := range x.Objects {
			if x.Objects[k] != y.Objects[k] {
				return false
			}
		}
		return true
	},
	Hash: func(s interface{}) uint64 {
		x := s.(state)
		h := fnv.New64a()
		fmt.Fprintf(h, "%d;", x.RV)
		for _, o := range x.Objects {
			fmt.Fprintf(h, "%s@%d=%s;", o.Name, o.RV, o.Value)
		}
		return h.Sum64()
	},
	DescribeOperation: func(in, out interface{}) string {
		i, o := in.(input), out.(output)
		switch i.Op {
		case "create":
			return fmt.Sprintf("create(%s=%s) -> %s %d", i.Name, i.Value, o.Status, o.RV)
		case "update":
			return fmt.Sprintf("update(%s@%d=%s) -> %s %d", i.Name, i.ExpectRV, i.Value, o.Status, o.RV)
		case "delete":
			return fmt.Sprintf("delete(%s@%d) -> %s %d", i.Name, i.ExpectRV, o.Status, o.RV)
		case "get":
			return fmt.Sprintf("get(%s) -> %s %d %s", i.Name, o.Status, o.RV, o.Value)
		default:
			return fmt.Sprintf("list -> %d %s", o.RV, describeObjects(o.Items))
		}
	},
	DescribeState: func(s interface{}) string {
		x := s.(state)
		return fmt.Sprintf("rv %d %s", x.RV, describeObjects(x.Objects))
	},
}
