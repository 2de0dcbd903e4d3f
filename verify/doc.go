// Package verify holds the adversarial checks that the two executors of the
// trafikey protocol, the Lua scripts (the oracle) and the native module,
// behave identically, byte for byte. It has no code of its own outside its
// tests:
//
//   - The differential test (differential_test.go) generates random
//     sequences of protocol calls with pgregory.net/rapid, valid and
//     malformed, runs each sequence step by step on two real servers, one
//     per executor, and requires equal replies after every step and equal
//     datasets after every step, up to the clock-dependent values listed in
//     docs/VERIFICATION.md. A failing sequence is shrunk and written to
//     testdata/corpus, and every file there is replayed on every run.
//   - The fuzz target (fuzz_test.go) sends arbitrary argument vectors to
//     every command the module registers on one server: the server must
//     live on, and a refused call must leave DEBUG DIGEST unchanged.
//
// docs/VERIFICATION.md says what is compared, how to run the checks longer,
// and what they found.
package verify
