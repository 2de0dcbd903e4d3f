// Package slots holds what the library and the CLI know of a Valkey
// cluster's hash slots: the slot a hash tag falls in, and the primary that
// serves each slot.
package slots

import (
	"context"
	"strconv"

	"github.com/valkey-io/valkey-go"
)

// Count is the number of a cluster's hash slots.
const Count = 16384

// Of is the hash slot of tag, the part of a key the cluster hashes: CRC16
// (XMODEM) of its bytes, modulo Count.
func Of(tag string) uint16 {
	var crc uint16
	for i := range len(tag) {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % Count
}

// Primaries reads CLUSTER SLOTS through client: the address (host:port)
// of the primary serving each slot, "" for a slot none serves. A range
// that does not parse is left out.
func Primaries(ctx context.Context, client valkey.Client) ([]string, error) {
	ranges, err := client.Do(ctx, client.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return nil, err
	}
	owner := make([]string, Count)
	for _, r := range ranges {
		f, err := r.ToArray()
		if err != nil || len(f) < 3 {
			continue
		}
		lo, err1 := f[0].AsInt64()
		hi, err2 := f[1].AsInt64()
		node, err3 := f[2].ToArray()
		if err1 != nil || err2 != nil || err3 != nil || len(node) < 2 || lo < 0 || hi >= Count || lo > hi {
			continue
		}
		host, _ := node[0].ToString()
		port, _ := node[1].AsInt64()
		addr := host + ":" + strconv.FormatInt(port, 10)
		for slot := lo; slot <= hi; slot++ {
			owner[slot] = addr
		}
	}
	return owner, nil
}
