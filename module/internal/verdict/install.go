package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// InstallRead is a read INSTALL's verdict asks for.
type InstallRead uint8

// INSTALL's reads.
const (
	// InstallNone: the verdict is final.
	InstallNone InstallRead = iota
	// InstallVersion: GET version. INSTALL runs no fence: this read is what
	// the fence of every other verb checks.
	InstallVersion
)

// InstallSeen is what INSTALL has read so far.
type InstallSeen struct {
	Version Reply[Field]
}

// InstallStep is INSTALL's verdict, a refusal, or the next read it needs.
type InstallStep struct {
	Need InstallRead
	Err  error
	// Stamp: the version key is absent; write SET version 2 and reply 1.
	// Otherwise it holds this wire already: reply 0, write nothing.
	Stamp bool
}

// Install decides EMQ.INSTALL: a key of another type is WRONGTYPE (GET's own
// error, which also types the key SET would write), another wire (1
// included: no dataset is upgraded in place) EMQWIRE.
func Install(s *InstallSeen) InstallStep {
	if !s.Version.Made {
		return InstallStep{Need: InstallVersion}
	}
	v := s.Version
	switch {
	case v.Err != nil:
		return InstallStep{Err: v.Err}
	case !v.Val.Set:
		return InstallStep{Stamp: true}
	case v.Val.Is(protocol.WireString):
		return InstallStep{}
	}
	return InstallStep{Err: grammar.Refusal(grammar.Clip(protocol.ErrWireFound(string(v.Val.Bytes))))}
}
