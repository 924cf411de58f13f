package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// protobufCase is one object of a protobuf corpus file; with WatchEventType set, it is the object of a
// watch event of that type ("ADDED", "MODIFIED", ...) instead of a response body.
type protobufCase struct {
	Name           string          `json:"name"`
	WatchEventType string          `json:"watchEventType,omitempty"`
	Object         json.RawMessage `json:"object"`
}

func (c protobufCase) caseName() string { return c.Name }

// protobufGolden is what Go makes of a protobufCase: Proto is the hex of the bytes kube-apiserver
// writes for it (application/vnd.kubernetes.protobuf: the "k8s\x00" envelope and the object's
// message; for a watch event, one length-prefixed frame of a WatchEvent whose object is that
// envelope), JSON is encoding/json's output of the same typed object.
type protobufGolden struct {
	Name           string          `json:"name"`
	WatchEventType string          `json:"watchEventType,omitempty"`
	Proto          string          `json:"proto"`
	JSON           json.RawMessage `json:"json"`
}

// runProtobuf writes the protobuf goldens of every corpus file of corpusDir into goldenDir (see
// transformCorpus). Each object is decoded as kube-apiserver decodes a JSON body into its versioned
// Go type (unknown fields dropped, no defaulting), then encoded by apimachinery's serializers.
func runProtobuf(corpusDir, goldenDir string) error {
	scheme, err := protobufScheme()
	if err != nil {
		return err
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	envelope := protobuf.NewSerializer(scheme, scheme)
	raw := protobuf.NewRawSerializer(scheme, scheme)
	return transformCorpus(corpusDir, goldenDir, func(c protobufCase) (protobufGolden, error) {
		obj, _, err := decoder.Decode(c.Object, nil, nil)
		if err != nil {
			return protobufGolden{}, err
		}
		var body bytes.Buffer
		if err := envelope.Encode(obj, &body); err != nil {
			return protobufGolden{}, err
		}
		wire := body.Bytes()
		if c.WatchEventType != "" {
			if wire, err = watchFrame(raw, c.WatchEventType, wire); err != nil {
				return protobufGolden{}, err
			}
		}
		encoded, err := json.Marshal(obj)
		if err != nil {
			return protobufGolden{}, err
		}
		return protobufGolden{Name: c.Name, WatchEventType: c.WatchEventType, Proto: hex.EncodeToString(wire), JSON: encoded}, nil
	})
}

// watchFrame is one frame of a protobuf watch stream as kube-apiserver's watch handler writes it: the
// event as a metav1.WatchEvent whose object holds the object's enveloped bytes, encoded by the raw
// (envelope-less) protobuf serializer through a streaming encoder into the length-delimited framer.
func watchFrame(raw runtime.Encoder, eventType string, object []byte) ([]byte, error) {
	var out bytes.Buffer
	encoder := streaming.NewEncoder(protobuf.LengthDelimitedFramer.NewFrameWriter(&out), raw)
	event := &metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Raw: object}}
	if err := encoder.Encode(event); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// protobufScheme knows every versioned kind kube-apiserver serves: its own scheme's, the
// CustomResourceDefinitions of apiextensions-apiserver and the APIServices of kube-aggregator.
func protobufScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for gvk, t := range legacyscheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		obj, ok := reflect.New(t).Interface().(runtime.Object)
		if !ok {
			return nil, fmt.Errorf("%v: %v is not a runtime.Object", gvk, t)
		}
		scheme.AddKnownTypeWithName(gvk, obj)
	}
	for _, add := range []func(*runtime.Scheme) error{
		apiextensionsv1.AddToScheme, apiextensionsv1beta1.AddToScheme,
		apiregistrationv1.AddToScheme, apiregistrationv1beta1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}
