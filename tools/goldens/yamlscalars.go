package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// yamlScalarCorpus lists plain scalars whose YAML 1.1 resolution is worth pinning down: numbers in
// every notation go-yaml v2 knows (and some it does not), booleans, nulls and timestamps.
type yamlScalarCorpus struct {
	Scalars []string `json:"scalars"`
}

// yamlScalarCase is what kube's YAML-to-JSON step (sigs.k8s.io/yaml over go-yaml v2, as its YAML
// serializer and the apply patch reader use it) makes of one document: the JSON text, or the error.
type yamlScalarCase struct {
	Document string          `json:"document"`
	JSON     json.RawMessage `json:"json,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// runYAMLScalars reads each scalar of the corpus as a mapping value (`v: S`) and as a mapping key
// (`S: 1`), and writes the JSON (or error) kube-apiserver would see for each document.
func runYAMLScalars(corpusPath, out string) error {
	raw, err := os.ReadFile(corpusPath)
	if err != nil {
		return err
	}
	var corpus yamlScalarCorpus
	if err := json.Unmarshal(raw, &corpus); err != nil {
		return fmt.Errorf("%s: %w", corpusPath, err)
	}
	var cases []yamlScalarCase
	for _, s := range corpus.Scalars {
		docs := []string{"v: " + s + "\n"}
		if s != "" {
			docs = append(docs, s+": 1\n")
		}
		for _, doc := range docs {
			c := yamlScalarCase{Document: doc}
			if converted, err := yaml.YAMLToJSON([]byte(doc)); err != nil {
				c.Error = err.Error()
			} else {
				c.JSON = converted
			}
			cases = append(cases, c)
		}
	}
	data, err := json.MarshalIndent(map[string]any{"cases": cases}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append(data, '\n'), 0o644)
}
