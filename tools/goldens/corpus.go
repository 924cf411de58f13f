package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// namedCase is anything a corpus file lists: each case has a name, used in error messages.
type namedCase interface {
	caseName() string
}

// transformCorpus reads every corpus file of corpusDir ({"cases": [C, ...]}), turns each case into a
// golden with each, and writes {"cases": [G, ...]} under the same name in goldenDir.
func transformCorpus[C namedCase, G any](corpusDir, goldenDir string, each func(C) (G, error)) error {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		return err
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var corpus struct {
			Cases []C `json:"cases"`
		}
		if err := json.Unmarshal(data, &corpus); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		out := struct {
			Cases []G `json:"cases"`
		}{Cases: []G{}}
		for _, c := range corpus.Cases {
			g, err := each(c)
			if err != nil {
				return fmt.Errorf("%s, case %q: %w", file, c.caseName(), err)
			}
			out.Cases = append(out.Cases, g)
		}
		encoded, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		target := filepath.Join(goldenDir, filepath.Base(file))
		if err := os.WriteFile(target, append(encoded, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d cases\n", target, len(out.Cases))
	}
	return nil
}
