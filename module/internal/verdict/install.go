package verdict

import (
	"trafikey/module/internal/grammar"
	"trafikey/protocol"
)

// INSTALL reads the version key only.
const (
	// InstallVersion is GET version.
	InstallVersion Reads = 1 << iota
)

// InstallSeen is what INSTALL has read.
type InstallSeen struct {
	// Read are the reads done so far.
	Read    Reads
	Version Str
}

// Install is INSTALL's verdict: need the version; then its refusal
// (WRONGTYPE, or EMQWIRE for another wire), or stamp (write SET version 1,
// reply 1) true, or already installed (reply 0) when stamp is false. It runs
// no fence: it is what the fence checks for.
func Install(s *InstallSeen) (need Reads, stamp bool, err error) {
	if s.Read&InstallVersion == 0 {
		return InstallVersion, false, nil
	}
	v := s.Version
	switch {
	case v.Err != nil:
		return 0, false, v.Err
	case !v.Found:
		return 0, true, nil
	case string(v.V) == protocol.WireString:
		return 0, false, nil
	}
	return 0, false, grammar.Refusal(protocol.ErrWireFound(grammar.Stored(v.V)))
}
