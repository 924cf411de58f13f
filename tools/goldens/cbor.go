package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
)

// cborCase is one object of a CBOR corpus file (the protobuf corpus's format, plus Unstructured for
// objects kube-apiserver holds as unstructured content: custom resources and their lists).
type cborCase struct {
	Name           string          `json:"name"`
	WatchEventType string          `json:"watchEventType,omitempty"`
	Unstructured   bool            `json:"unstructured,omitempty"`
	Object         json.RawMessage `json:"object"`
}

func (c cborCase) caseName() string { return c.Name }

// cborGolden is what Go makes of a cborCase: CBOR is the hex of the bytes kube-apiserver writes for it
// (application/cbor: the self-described tag 55799 and the object; for a watch event, one item of an
// application/cbor-seq watch stream, a WatchEvent holding the object's bytes), JSON is the object as
// kube's JSON serializer writes the same decoded value (what decoding the CBOR must give back).
type cborGolden struct {
	Name           string          `json:"name"`
	WatchEventType string          `json:"watchEventType,omitempty"`
	Unstructured   bool            `json:"unstructured,omitempty"`
	CBOR           string          `json:"cbor"`
	JSON           json.RawMessage `json:"json"`
}

// cborInput is one CBOR input to decode (hex, with or without the self-described tag) into a built-in
// kind (Kind and APIVersion name the Go type) or, with Unstructured, into unstructured content.
type cborInput struct {
	Name         string `json:"name"`
	Hex          string `json:"hex"`
	APIVersion   string `json:"apiVersion,omitempty"`
	Kind         string `json:"kind,omitempty"`
	Unstructured bool   `json:"unstructured,omitempty"`
}

func (c cborInput) caseName() string { return c.Name }

// cborVerdict is what kube's CBOR decoder makes of a cborInput: Error is the lax (non-strict) decoder's
// error ("" when accepted), StrictError the strict decoder's (unknown fields), JSON the accepted value.
type cborVerdict struct {
	Name        string `json:"name"`
	Hex         string `json:"hex"`
	Error       string `json:"error"`
	StrictError string `json:"strictError,omitempty"`
	// JSON is the accepted object as kube's JSON serializer writes it, as text (compact, so that deeply
	// nested inputs stay small).
	JSON string `json:"json,omitempty"`
}

// runCBOR writes the CBOR goldens: every objects corpus file of corpusDir/objects (transformCorpus) and
// the decoder verdicts of every input file of corpusDir/inputs, plus values.json, the encodings of Go
// values a JSON corpus cannot hold (NaN, infinities, -0, big integers).
func runCBOR(corpusDir, goldenDir string) error {
	scheme, err := protobufScheme()
	if err != nil {
		return err
	}
	metav1.AddMetaToScheme(scheme)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Group: "meta.k8s.io", Version: "v1"})
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	s := cbor.NewSerializer(scheme, scheme)
	strict := cbor.NewSerializer(scheme, scheme, cbor.Strict(true))
	stream := cbor.NewSerializer(scheme, scheme, cbor.Transcode(false))
	err = transformCorpus(filepath.Join(corpusDir, "objects"), filepath.Join(goldenDir, "objects"), func(c cborCase) (cborGolden, error) {
		var obj runtime.Object
		if c.Unstructured && isListJSON(c.Object) {
			l := &unstructured.UnstructuredList{}
			if err := l.UnmarshalJSON(c.Object); err != nil {
				return cborGolden{}, err
			}
			obj = l
		} else if c.Unstructured {
			// Custom resources are served as decoded from their stored JSON: decoding, encoding and
			// decoding again makes every whole float an integer, as it is in what kube-apiserver serves.
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(c.Object); err != nil {
				return cborGolden{}, err
			}
			stored, err := u.MarshalJSON()
			if err != nil {
				return cborGolden{}, err
			}
			u = &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(stored); err != nil {
				return cborGolden{}, err
			}
			obj = u
		} else {
			obj, _, err = decoder.Decode(c.Object, nil, nil)
			if err != nil {
				return cborGolden{}, err
			}
		}
		var body bytes.Buffer
		if err := s.Encode(obj, &body); err != nil {
			return cborGolden{}, err
		}
		wire := body.Bytes()
		if c.WatchEventType != "" {
			var out bytes.Buffer
			enc := streaming.NewEncoder(cbor.NewFramer().NewFrameWriter(&out), stream)
			event := &metav1.WatchEvent{Type: c.WatchEventType, Object: runtime.RawExtension{Raw: wire}}
			if err := enc.Encode(event); err != nil {
				return cborGolden{}, err
			}
			wire = out.Bytes()
		}
		encoded, err := json.Marshal(obj)
		if err != nil {
			return cborGolden{}, err
		}
		return cborGolden{Name: c.Name, WatchEventType: c.WatchEventType, Unstructured: c.Unstructured, CBOR: hex.EncodeToString(wire), JSON: encoded}, nil
	})
	if err != nil {
		return err
	}
	err = transformCorpus(filepath.Join(corpusDir, "inputs"), filepath.Join(goldenDir, "inputs"), func(c cborInput) (cborVerdict, error) {
		data, err := hex.DecodeString(c.Hex)
		if err != nil {
			return cborVerdict{}, err
		}
		v := cborVerdict{Name: c.Name, Hex: c.Hex}
		decode := func(d runtime.Decoder) (runtime.Object, error) {
			if c.Unstructured {
				obj, _, err := d.Decode(data, nil, &unstructured.Unstructured{})
				return obj, err
			}
			into, err := scheme.New(schema.FromAPIVersionAndKind(c.APIVersion, c.Kind))
			if err != nil {
				return nil, err
			}
			obj, _, err := d.Decode(data, nil, into)
			return obj, err
		}
		obj, err := decode(s)
		if err != nil {
			v.Error = err.Error()
			return v, nil
		}
		if _, err := decode(strict); err != nil {
			v.StrictError = err.Error()
		}
		encoded, err := json.Marshal(obj)
		if err != nil {
			return cborVerdict{}, err
		}
		v.JSON = string(encoded)
		return v, nil
	})
	if err != nil {
		return err
	}
	return writeCBORValues(filepath.Join(goldenDir, "values.json"))
}

func isListJSON(raw []byte) bool {
	var probe struct {
		Items json.RawMessage `json:"items"`
	}
	return json.Unmarshal(raw, &probe) == nil && probe.Items != nil
}

// cborValue is one Go value encoded as a field of unstructured content ({"v": value}): CBOR is the hex
// of the encoding, Error the encoder's refusal.
type cborValue struct {
	Name  string `json:"name"`
	CBOR  string `json:"cbor,omitempty"`
	Error string `json:"error,omitempty"`
}

func writeCBORValues(file string) error {
	values := []struct {
		name string
		v    interface{}
	}{
		{"int-0", int64(0)}, {"int-23", int64(23)}, {"int-24", int64(24)}, {"int-255", int64(255)},
		{"int-256", int64(256)}, {"int-65535", int64(65535)}, {"int-65536", int64(65536)},
		{"int-4294967295", int64(4294967295)}, {"int-4294967296", int64(4294967296)},
		{"int-max-safe", int64(9007199254740991)}, {"int-2^53", int64(9007199254740992)},
		{"int64-max", int64(math.MaxInt64)}, {"int-minus-1", int64(-1)}, {"int-minus-24", int64(-24)},
		{"int-minus-25", int64(-25)}, {"int-minus-256", int64(-256)}, {"int-minus-257", int64(-257)},
		{"int64-min", int64(math.MinInt64)},
		{"float-0", 0.0}, {"float-minus-0", math.Copysign(0, -1)}, {"float-1", 1.0}, {"float-1.5", 1.5},
		{"float-0.1", 0.1}, {"float-65504", 65504.0}, {"float-65505", 65505.0}, {"float-1e300", 1e300},
		{"float-5.960464477539063e-8", 5.960464477539063e-8}, {"float-1e-7", 1e-7}, {"float-3.4028234663852886e38", 3.4028234663852886e38},
		{"float-100000", 100000.0}, {"float-minus-2.5", -2.5}, {"float-smallest-denormal", 5e-324},
		{"float-NaN", math.NaN()}, {"float-Inf", math.Inf(1)}, {"float-minus-Inf", math.Inf(-1)},
		{"string-empty", ""}, {"string-ascii", "hello"}, {"string-unicode", "héllo ☃ 😀"},
		{"string-24", "abcdefghijklmnopqrstuvwx"}, {"bool-true", true}, {"bool-false", false}, {"null", nil},
		{"array-empty", []interface{}{}}, {"map-empty", map[string]interface{}{}},
		{"map-key-order", map[string]interface{}{"b": int64(1), "a": int64(2), "aa": int64(3), "B": int64(4), "é": int64(5), "abcdefghijklmnopqrstuvwxyz": int64(6), "z": int64(7)}},
	}
	out := struct {
		Cases []cborValue `json:"cases"`
	}{}
	for _, e := range values {
		u := &unstructured.Unstructured{Object: map[string]interface{}{"v": e.v}}
		c := cborValue{Name: e.name}
		b, err := direct.Marshal(u.Object)
		if err != nil {
			c.Error = err.Error()
		} else {
			c.CBOR = hex.EncodeToString(b)
		}
		out.Cases = append(out.Cases, c)
	}
	encoded, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, append(encoded, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d cases\n", file, len(out.Cases))
	return nil
}
