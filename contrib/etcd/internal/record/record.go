// Package record is the value an instance's key holds in etcd: the
// instance as JSON, {"address": "host:port", "weight": 10, "tags": {...}}.
package record

import (
	"encoding/json"
	"errors"

	"github.com/petrel-rpc/petrel/discovery"
)

type record struct {
	Address string            `json:"address"`
	Weight  int               `json:"weight,omitempty"`
	Tags    map[string]string `json:"tags,omitempty"`
}

// Encode returns inst's value.
func Encode(inst discovery.Instance) (string, error) {
	b, err := json.Marshal(record{Address: inst.Address, Weight: inst.Weight, Tags: inst.Tags})
	return string(b), err
}

// ErrNoAddress is returned by Decode for a value without an address.
var ErrNoAddress = errors.New("record: the instance has no address")

// Decode reads a value written by Encode (unknown fields are ignored).
func Decode(v []byte) (discovery.Instance, error) {
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return discovery.Instance{}, err
	}
	if r.Address == "" {
		return discovery.Instance{}, ErrNoAddress
	}
	return discovery.Instance{Address: r.Address, Weight: r.Weight, Tags: r.Tags}, nil
}
