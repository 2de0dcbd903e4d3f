package host

import (
	"strings"
	"testing"
)

func TestCompile(t *testing.T) {
	h := func(*Call) error { return nil }
	good := []Command{
		{Name: "EMQ.VERSION", Flags: "readonly fast", Arity: 1, Handler: h},
		{Name: "EMQ.CLAIM", Flags: "write deny-oom", Keys: WriteKeys, Arity: -2, Handler: h},
		{Name: "EMQ.STATS", Flags: "readonly", Keys: ReadKeys, Arity: -2, Handler: h},
	}
	cmds, err := compile(good)
	if err != nil {
		t.Fatal(err)
	}
	if cmds[0].flags != "readonly fast" || cmds[0].writes {
		t.Errorf("VERSION: %q writes=%v", cmds[0].flags, cmds[0].writes)
	}
	if cmds[1].flags != "write deny-oom getkeys-api" || !cmds[1].writes {
		t.Errorf("CLAIM: %q writes=%v", cmds[1].flags, cmds[1].writes)
	}
	if cmds[2].flags != "readonly getkeys-api" {
		t.Errorf("STATS: %q", cmds[2].flags)
	}
	bit := BitAnswer{Plans: [2]uint8{0xe, 0xb}, Offset: "ERR o", Bit: "ERR b", WrongType: "ERR t"}
	for _, tc := range []struct {
		c    Command
		want string
	}{
		{Command{Name: "", Handler: h}, "bad command name"},
		{Command{Name: "A B", Handler: h}, "bad command name"},
		{Command{Name: "X"}, "no handler"},
		{Command{Name: "X", Flags: "deny-oom", Handler: h}, "must be flagged write"},
		{Command{Name: "X", Flags: "readonly", Keys: WriteKeys, Handler: h}, "write flag"},
		{Command{Name: "X", Flags: "write deny-oom", Keys: ReadKeys, Handler: h}, "readonly flag"},
		{Command{Name: "X", Flags: "write deny-oom readonly", Handler: h}, "both"},
		{Command{Name: "X", Flags: "readonly getkeys-api", Keys: ReadKeys, Handler: h}, "added by the host"},
		{Command{Name: "X", Keys: 7, Handler: h}, "key kind"},
		{Command{Name: "X", Flags: "write", Keys: WriteKeys, Arity: 4, Handler: h, Preanswer: PreanswerSetBit, Bit: bit}, "SETBIT's key"},
		{Command{Name: "X", Flags: "write", Keys: FirstKeyWrite, Arity: 3, Handler: h, Preanswer: PreanswerSetBit, Bit: bit}, "SETBIT's key"},
		{Command{Name: "X", Flags: "write", Keys: FirstKeyWrite, Arity: 4, Handler: h, Preanswer: PreanswerSetBit}, "plans and refusal texts"},
		{Command{Name: "X", Flags: "write", Keys: FirstKeyWrite, Arity: 4, Handler: h, Preanswer: PreanswerSetBit, Bit: BitAnswer{Plans: [2]uint8{0x10, 1}, Offset: "ERR o", Bit: "ERR b", WrongType: "ERR t"}}, "plans and refusal texts"},
		{Command{Name: "X", Flags: "write", Keys: FirstKeyWrite, Arity: 4, Handler: h, Preanswer: PreanswerSetBit, Bit: BitAnswer{Offset: "ERR o\r\n", Bit: "ERR b", WrongType: "ERR t"}}, "plans and refusal texts"},
		{Command{Name: "X", Flags: "write", Keys: FirstKeyWrite, Arity: 4, Handler: h, Preanswer: PreanswerSetBit, Bit: BitAnswer{Offset: "ERR o", Bit: "ERR b\x00", WrongType: "ERR t"}}, "plans and refusal texts"},
		{Command{Name: "X", Flags: "write", Keys: FirstKeyWrite, Arity: 4, Handler: h, Bit: bit}, "without the SETBIT preanswer"},
		{Command{Name: "X", Flags: "readonly", Keys: FirstKeyRead, Arity: 4, Handler: h, Preanswer: PreanswerGetBit}, "GETBIT's key"},
		{Command{Name: "X", Flags: "write", Keys: FirstKeyWrite, Arity: 3, Handler: h, Preanswer: PreanswerGetBit}, "GETBIT's key"},
		{Command{Name: "X", Flags: "readonly", Keys: FirstKeyRead, Arity: 3, Handler: h, Preanswer: 9}, "bad preanswer"},
	} {
		if _, err := compile([]Command{tc.c}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
	if _, err := compile([]Command{
		{Name: "TRA.SETBIT", Flags: "write deny-oom", Keys: FirstKeyWrite, Arity: 4, Handler: h, Preanswer: PreanswerSetBit, Bit: bit},
		{Name: "TRA.GETBIT", Flags: "readonly fast", Keys: FirstKeyRead, Arity: 3, Handler: h, Preanswer: PreanswerGetBit},
	}); err != nil {
		t.Errorf("the TRA preanswers: %v", err)
	}
	if _, err := compile([]Command{good[0], {Name: "emq.version", Flags: "readonly", Handler: h}}); err == nil {
		t.Error("a name registered twice (any case) passed")
	}
	many := make([]Command, maxCommands+1)
	for i := range many {
		many[i] = Command{Name: "C" + strings.Repeat("x", i), Handler: h}
	}
	if _, err := compile(many); err == nil {
		t.Error("more commands than trampolines passed")
	}
}
