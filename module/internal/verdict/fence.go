package verdict

import "github.com/trafikey/trafikey/module/internal/grammar"

// Fence is the fence's verdict on GET version, for a verb that reads the
// version in its first batch with its first domain reads: its error reply
// (WRONGTYPE) as it came, EMQWIRE when the key is absent or holds another
// wire, nil when it holds this wire.
func Fence(v Reply[Field]) error {
	if v.Err != nil {
		return v.Err
	}
	return grammar.Fence(v.Val.Bytes, v.Val.Set)
}

// refusal is a registry text as a verdict's error.
func refusal(text string) error { return grammar.Refusal(text) }
