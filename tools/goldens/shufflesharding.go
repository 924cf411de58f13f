package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// shuffleShardingCase is one flow dealt by kube's shuffle-sharding Dealer.
type shuffleShardingCase struct {
	FlowSchema    string `json:"flowSchema"`
	Distinguisher string `json:"distinguisher"`
	// Hash is kube's hashFlowID of the flow, as a decimal string (it does not fit a JSON number).
	Hash     string `json:"hash"`
	DeckSize int    `json:"deckSize"`
	HandSize int    `json:"handSize"`
	Hand     []int  `json:"hand"`
}

// flowHash is apf_controller.go's hashFlowID (unexported there): SHA-256 over the schema name, a
// zero byte and the distinguisher, first 8 bytes little-endian.
func flowHash(fsName, distinguisher string) uint64 {
	h := sha256.New()
	h.Write([]byte(fsName))
	h.Write([]byte{0})
	h.Write([]byte(distinguisher))
	return binary.LittleEndian.Uint64(h.Sum(nil)[:8])
}

// runShuffleSharding writes the hands kube-apiserver 1.36's Dealer deals to flows of the bootstrap
// levels' queue settings (and a few others), for Capstan's dealer to be compared with.
func runShuffleSharding(out string) error {
	sizes := [][2]int{{128, 6}, {64, 6}, {16, 4}, {16, 2}, {1, 1}, {7, 3}, {1 << 20, 3}}
	flows := [][2]string{
		{"global-default", "alice"}, {"global-default", "bench-flood"}, {"global-default", "bench-quiet"},
		{"service-accounts", "system:serviceaccount:default:x"}, {"kube-controller-manager", "kube-system"},
		{"fair", "noisy"}, {"system-leader-election", "system:kube-scheduler"}, {"catch-all", ""},
	}
	var cases []shuffleShardingCase
	for _, size := range sizes {
		dealer, err := shufflesharding.NewDealer(size[0], size[1])
		if err != nil {
			return fmt.Errorf("dealer %v: %w", size, err)
		}
		for _, flow := range flows {
			hash := flowHash(flow[0], flow[1])
			cases = append(cases, shuffleShardingCase{
				FlowSchema: flow[0], Distinguisher: flow[1], Hash: fmt.Sprint(hash),
				DeckSize: size[0], HandSize: size[1], Hand: dealer.DealIntoHand(hash, nil),
			})
		}
	}
	data, err := json.MarshalIndent(cases, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append(data, '\n'), 0o644)
}
