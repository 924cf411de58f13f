// Command linearizability-checker decides whether a recorded history of requests against one
// Kubernetes resource type is linearizable, with Porcupine (github.com/anishathalye/porcupine) and the
// model in model.go. The Capstan failover tests write the history as JSON; this program reads it,
// prints a JSON verdict on stdout and exits 0 (linearizable), 1 (not linearizable), 2 (the check ran
// out of time) or 3 (bad input).
//
// Operations whose outcome is unknown to the client (a timeout, a lost connection, a 504) are
// open-ended, as etcd's robustness tests treat them: they may take effect at any time after their
// call, or never. A write's effect is identified in the history's watch events (every write carries
// a value no other write carries), which gives it its resourceVersion; an unknown write the watch
// never shows did not take effect, and is left out (were it applied, later reads would show a value
// no operation wrote, and the check fails). Deletes conditional on one state all match its one
// DELETED event: it belongs to an acknowledged delete of that state if any, and the other unknown
// deletes of that state are left out. Operations that failed without effect (a 503) are left
// out too.
//
// Usage: linearizability-checker [-timeout 60s] [-visualize FILE.html] HISTORY.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
)

// recordedItem is one object of a list answer.
type recordedItem struct {
	Name  string `json:"name"`
	RV    string `json:"rv"`
	Value string `json:"value"`
}

// recordedResult is what the client got back.
type recordedResult struct {
	// ok, exists, conflict, notfound; failed (nothing was done); unknown (the answer was lost).
	Status string         `json:"status"`
	RV     string         `json:"rv"`
	Value  string         `json:"value"`
	Items  []recordedItem `json:"items"`
}

// recordedOperation is one request: who sent it, when it was sent and answered (any clock, one
// unit: the test uses microseconds), what it asked and what it got.
type recordedOperation struct {
	Client   int            `json:"client"`
	Call     int64          `json:"call"`
	Return   int64          `json:"return"`
	Op       string         `json:"op"`
	Name     string         `json:"name"`
	Value    string         `json:"value"`
	ExpectRV string         `json:"expectRv"`
	Result   recordedResult `json:"result"`
}

// recordedEvent is one watch event of the type (a complete watch, from before the first operation).
type recordedEvent struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	RV    string `json:"rv"`
	Value string `json:"value"`
}

type recordedHistory struct {
	Operations []recordedOperation `json:"operations"`
	Events     []recordedEvent     `json:"events"`
}

// verdict is printed on stdout as JSON.
type verdict struct {
	Result          string  `json:"result"`
	Linearizable    bool    `json:"linearizable"`
	Operations      int     `json:"operations"`
	Checked         int     `json:"checked"`
	UnknownResolved int     `json:"unknownResolved"`
	UnknownDropped  int     `json:"unknownDropped"`
	FailedDropped   int     `json:"failedDropped"`
	Visualization   string  `json:"visualization,omitempty"`
	Error           string  `json:"error,omitempty"`
	Seconds         float64 `json:"seconds"`
}

func parseRV(s string) (uint64, error) {
	if s == "" {
		return 0, nil
	}
	return strconv.ParseUint(s, 10, 64)
}

// eventIndex finds the watch event that a write produced.
type eventIndex map[string]recordedEvent

func eventKey(typ, name, value string) string { return typ + "\x00" + name + "\x00" + value }

func indexEvents(events []recordedEvent) eventIndex {
	idx := eventIndex{}
	for _, e := range events {
		idx[eventKey(e.Type, e.Name, e.Value)] = e
	}
	return idx
}

// prepare turns the recorded history into porcupine operations: failed operations and unknown ones
// the watch does not show are left out; unknown writes it shows get its resourceVersion and stay open.
func prepare(h recordedHistory, v *verdict) ([]porcupine.Operation, error) {
	events := indexEvents(h.Events)
	// Which value each write left at each resourceVersion, to find what a delete removed.
	valueAt := map[string]string{}
	for _, e := range h.Events {
		if e.Type == "ADDED" || e.Type == "MODIFIED" {
			valueAt[e.Name+"@"+e.RV] = e.Value
		}
	}
	// fromWatch finds the event a write produced: a create's ADDED and an update's MODIFIED carry its
	// value; a delete's DELETED carries the value of the state it was conditional on.
	fromWatch := func(r recordedOperation) (uint64, bool, error) {
		var e recordedEvent
		var found bool
		switch r.Op {
		case "create":
			e, found = events[eventKey("ADDED", r.Name, r.Value)]
		case "update":
			e, found = events[eventKey("MODIFIED", r.Name, r.Value)]
		case "delete":
			if removed, ok := valueAt[r.Name+"@"+r.ExpectRV]; ok {
				e, found = events[eventKey("DELETED", r.Name, removed)]
			}
		}
		if !found {
			return 0, false, nil
		}
		rv, err := parseRV(e.RV)
		return rv, err == nil, err
	}
	// A delete is found in the watch by the state it removed, which every delete conditional on that
	// state matches, and only one of them can have removed it: an acknowledged one if there is one,
	// else the unknown one called first (the widest window). The other unknown ones did not take effect.
	deleter := map[string]int{}
	for k, r := range h.Operations {
		if r.Op != "delete" || (r.Result.Status != "ok" && r.Result.Status != "unknown") {
			continue
		}
		key := r.Name + "@" + r.ExpectRV
		j, seen := deleter[key]
		switch {
		case !seen:
			deleter[key] = k
		case h.Operations[j].Result.Status == "ok":
		case r.Result.Status == "ok" || r.Call < h.Operations[j].Call:
			deleter[key] = k
		}
	}
	var ops []porcupine.Operation
	for k, r := range h.Operations {
		expect, err := parseRV(r.ExpectRV)
		if err != nil {
			return nil, fmt.Errorf("operation %d: expectRv: %v", k, err)
		}
		in := input{Op: r.Op, Name: r.Name, Value: r.Value, ExpectRV: expect}
		ret := r.Return
		var out output
		switch {
		case r.Result.Status == "failed":
			v.FailedDropped++
			continue
		case r.Result.Status == "unknown" && r.Op == "delete" && deleter[r.Name+"@"+r.ExpectRV] != k:
			v.UnknownDropped++
			continue
		case r.Result.Status == "unknown":
			rv, found, err := fromWatch(r)
			if err != nil {
				return nil, fmt.Errorf("operation %d: %v", k, err)
			}
			if !found {
				v.UnknownDropped++
				continue
			}
			v.UnknownResolved++
			out = output{Status: "ok", RV: rv}
			ret = math.MaxInt64
		case r.Op == "delete" && r.Result.Status == "ok" && r.Result.RV == "":
			// Answered with a Status, which carries no resourceVersion: the watch gives it (0 when it
			// never shows the delete).
			rv, _, err := fromWatch(r)
			if err != nil {
				return nil, fmt.Errorf("operation %d: %v", k, err)
			}
			out = output{Status: "ok", RV: rv}
		default:
			rv, err := parseRV(r.Result.RV)
			if err != nil {
				return nil, fmt.Errorf("operation %d: rv: %v", k, err)
			}
			out = output{Status: r.Result.Status, RV: rv, Value: r.Result.Value}
			if r.Op == "list" {
				items := make([]object, len(r.Result.Items))
				for j, it := range r.Result.Items {
					irv, err := parseRV(it.RV)
					if err != nil {
						return nil, fmt.Errorf("operation %d item %d: rv: %v", k, j, err)
					}
					items[j] = object{Name: it.Name, RV: irv, Value: it.Value}
				}
				sort.Slice(items, func(a, b int) bool { return items[a].Name < items[b].Name })
				out.Items = items
			}
		}
		switch r.Op {
		case "create", "update", "delete", "get", "list":
		default:
			return nil, fmt.Errorf("operation %d: unknown op %q", k, r.Op)
		}
		if ret < r.Call {
			return nil, fmt.Errorf("operation %d returns before its call", k)
		}
		ops = append(ops, porcupine.Operation{ClientId: r.Client, Input: in, Call: r.Call, Output: out, Return: ret})
	}
	return ops, nil
}

func main() {
	timeout := flag.Duration("timeout", 60*time.Second, "give up (exit 2) after this long")
	visualize := flag.String("visualize", "", "write Porcupine's HTML visualization here when the history is not linearizable")
	flag.Parse()
	v := verdict{}
	finish := func(code int) {
		out, _ := json.Marshal(v)
		fmt.Println(string(out))
		os.Exit(code)
	}
	if flag.NArg() != 1 {
		v.Result, v.Error = "error", "usage: linearizability-checker [-timeout D] [-visualize FILE] HISTORY.json"
		finish(3)
	}
	data, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		v.Result, v.Error = "error", err.Error()
		finish(3)
	}
	var h recordedHistory
	if err := json.Unmarshal(data, &h); err != nil {
		v.Result, v.Error = "error", err.Error()
		finish(3)
	}
	v.Operations = len(h.Operations)
	ops, err := prepare(h, &v)
	if err != nil {
		v.Result, v.Error = "error", err.Error()
		finish(3)
	}
	v.Checked = len(ops)
	started := time.Now()
	result, info := porcupine.CheckOperationsVerbose(resourceModel, ops, *timeout)
	v.Seconds = time.Since(started).Seconds()
	switch result {
	case porcupine.Ok:
		v.Result, v.Linearizable = "linearizable", true
		finish(0)
	case porcupine.Illegal:
		v.Result = "not linearizable"
		if *visualize != "" {
			if err := porcupine.VisualizePath(resourceModel, info, *visualize); err == nil {
				v.Visualization = *visualize
			}
		}
		finish(1)
	default:
		v.Result = "unknown: the check timed out"
		finish(2)
	}
}
