// Command goldens runs kube-apiserver 1.36's own defaulting (the SetDefaults_* functions registered in
// its scheme, with 1.36's default feature gates) over Capstan's corpus of objects and writes what
// kube makes of each: the oracle Capstan's defaulting tests compare with. With `shape`, it writes
// instead how Go's JSON encoder writes each field of the API's types (see shape.go), which the
// server reads at run time to store objects in the shape kube-apiserver stores them. With `presence`,
// it writes the protobuf codec's table of Go pointer and always-written fields (see presence.go); with
// `protobuf`, the bytes apimachinery's protobuf serializer writes for a corpus (see protobuf.go); with
// `cbor`, the bytes its CBOR serializer writes and what its CBOR decoder accepts (see cbor.go); with
// `yamlscalars`, the JSON sigs.k8s.io/yaml makes of plain YAML scalars as values and keys (see
// yamlscalars.go).
//
// Usage (from the project root, `npm run gen:goldens`):
//
//	go run ./tools/goldens test/fixtures/defaulting test/golden/defaulting
//	go run ./tools/goldens shape schema/go-shape.txt
//	go run ./tools/goldens validate test/fixtures/validation test/golden/validation
//	go run ./tools/goldens presence schema/go-field-presence.txt
//	go run ./tools/goldens protobuf test/fixtures/protobuf test/golden/protobuf
//	go run ./tools/goldens cbor test/fixtures/cbor test/golden/cbor
//	go run ./tools/goldens yamlscalars test/fixtures/yaml-scalars/scalars.json test/golden/yaml-scalars/scalars.json
//
// Every corpus file is JSON: {"cases": [{"name": "...", "object": {...}}, ...]}, each object a
// complete versioned object (apiVersion and kind set). The golden file of the same name holds
// {"cases": [{"name": "...", "defaulted": {...}}]}: the object decoded into its versioned Go type
// (so unknown fields are dropped, as kube's decoder drops them), defaulted, and encoded as JSON.
// A case with "prepareForCreate": true is also put through its kind's registry strategy
// PrepareForCreate (in the internal version, as kube-apiserver runs it on a create) before it is
// encoded: what a create stores beyond scheme defaulting, such as a Pod's matchLabelKeys merged into
// its selectors and AppArmor annotations copied to fields.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kubernetes/pkg/api/legacyscheme"

	_ "k8s.io/kubernetes/pkg/apis/admissionregistration/install"
	_ "k8s.io/kubernetes/pkg/apis/apiserverinternal/install"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/authentication/install"
	_ "k8s.io/kubernetes/pkg/apis/authorization/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/certificates/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/flowcontrol/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/node/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	_ "k8s.io/kubernetes/pkg/apis/storagemigration/install"
)

type corpusCase struct {
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
	// PrepareForCreate, when set, runs the kind's registry strategy PrepareForCreate after defaulting.
	PrepareForCreate bool `json:"prepareForCreate,omitempty"`
}

type goldenCase struct {
	Name      string          `json:"name"`
	Defaulted json.RawMessage `json:"defaulted"`
}

func defaulted(raw []byte) ([]byte, error) {
	obj, _, err := legacyscheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(obj)
	return json.Marshal(obj)
}

func (c corpusCase) caseName() string { return c.Name }

func run(corpusDir, goldenDir string) error {
	return transformCorpus(corpusDir, goldenDir, func(c corpusCase) (goldenCase, error) {
		if c.PrepareForCreate {
			d, err := preparedForCreate(c.Object)
			return goldenCase{Name: c.Name, Defaulted: d}, err
		}
		d, err := defaulted(c.Object)
		return goldenCase{Name: c.Name, Defaulted: d}, err
	})
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "validate" {
		if err := runValidation(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "cbor" {
		if err := runCBOR(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "protobuf" {
		if err := runProtobuf(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) >= 5 && os.Args[1] == "managedfields" {
		// Further arguments: CRD files (JSON) whose custom resources the corpus also writes.
		if err := runManagedFields(os.Args[2], os.Args[3], os.Args[4], os.Args[5:]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "presence" {
		if err := writePresence(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "yamlscalars" {
		if err := runYAMLScalars(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "shufflesharding" {
		if err := runShuffleSharding(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "shape" {
		if err := writeShape(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "goldens:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: goldens CORPUS_DIR GOLDEN_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "goldens:", err)
		os.Exit(1)
	}
}
