package host

// ReadCmd is a command a read batch may run: one of the closed set below,
// the reads the verbs make. A read batch takes nothing else, so a write cannot
// be placed in one by mistake; and every read runs with RM_Call's no-writes
// flag besides (the read format), so the server refuses a write that reached
// one anyway (a debug command's, DebugRead).
type ReadCmd uint8

// The read commands, spelled as the verbs spell them (upper case, which the
// read fast path answers; see the package rules).
const (
	_ ReadCmd = iota
	EXISTS
	GET
	GETBIT
	HEXISTS
	HGET
	HGETALL
	HLEN
	HMGET
	HSTRLEN
	LLEN
	LRANGE
	PTTL
	STRLEN
	XINFO
	ZCARD
	ZCOUNT
	ZRANGE
	ZRANGEBYSCORE
	ZRANK
	ZSCORE
	readCmds
)

var readNames = [readCmds]string{
	EXISTS:        "EXISTS",
	GET:           "GET",
	GETBIT:        "GETBIT",
	HEXISTS:       "HEXISTS",
	HGET:          "HGET",
	HGETALL:       "HGETALL",
	HLEN:          "HLEN",
	HMGET:         "HMGET",
	HSTRLEN:       "HSTRLEN",
	LLEN:          "LLEN",
	LRANGE:        "LRANGE",
	PTTL:          "PTTL",
	STRLEN:        "STRLEN",
	XINFO:         "XINFO",
	ZCARD:         "ZCARD",
	ZCOUNT:        "ZCOUNT",
	ZRANGE:        "ZRANGE",
	ZRANGEBYSCORE: "ZRANGEBYSCORE",
	ZRANK:         "ZRANK",
	ZSCORE:        "ZSCORE",
}

// String is the command's name as it is sent.
func (r ReadCmd) String() string {
	if r == 0 || r >= readCmds {
		panic("host: not a read command")
	}
	return readNames[r]
}

// ReadBatch is a read batch: a Batch whose commands are ReadCmds, run with
// the read format (nothing replicates, a write is refused). Get one from
// Call.Read.
//
//	res, err := c.Read().
//		Cmd(host.HGET).Arg(row).Str("attempts").
//		Cmd(host.TYPE).Arg(metrics).
//		Run()
type ReadBatch Batch

// Read starts a read batch. It discards a batch of this command still being
// built.
func (c *Call) Read() *ReadBatch { return (*ReadBatch)(c.lv.batch.start(c, false)) }

// DebugRead starts a read batch whose commands are named by the caller, any
// spelling of any command: for a debug command only (Command.Debug), which
// tests use to compare the read paths and to see the server refuse a write
// in a read. It panics in any other command.
func (c *Call) DebugRead() *DebugReadBatch { return c.debugBatch("DebugRead", false) }

// DebugNested starts a batch of commands run as another module's command
// runs them: by any name, through RM_Call without the no-writes flag, so a
// write command runs (unreplicated by this module). It is the path CLIENT
// PAUSE WRITE does not hold, on which tests meet the write guard of a
// nested verb. For a debug command only, like DebugRead.
func (c *Call) DebugNested() *DebugReadBatch { return c.debugBatch("DebugNested", true) }

func (c *Call) debugBatch(what string, nested bool) *DebugReadBatch {
	c.check()
	if !c.cmd.Debug {
		panic("host: " + what + " in " + c.cmd.Name + ", which is not a debug command")
	}
	b := c.lv.batch.start(c, false)
	b.nested = nested
	return (*DebugReadBatch)(b)
}

// DebugReadBatch is the batch of DebugRead and DebugNested.
type DebugReadBatch Batch

// Cmd starts the next command, named as given.
func (b *DebugReadBatch) Cmd(name string) *DebugReadBatch {
	(*Batch)(b).Cmd(name)
	return b
}

// Argv adds the command's own i-th argument (Batch.Argv).
func (b *DebugReadBatch) Argv(i int) *DebugReadBatch {
	(*Batch)(b).Argv(i)
	return b
}

// Str adds a string argument (Batch.Str).
func (b *DebugReadBatch) Str(s string) *DebugReadBatch {
	(*Batch)(b).Str(s)
	return b
}

// Do runs a batch of one command (Batch.Do).
func (b *DebugReadBatch) Do() (Value, error) { return (*Batch)(b).Do() }

// Cmd starts the next command of the batch; its arguments follow.
func (b *ReadBatch) Cmd(cmd ReadCmd) *ReadBatch {
	(*Batch)(b).Cmd(cmd.String())
	return b
}

// Arg adds a binary-safe argument (Batch.Arg).
func (b *ReadBatch) Arg(p []byte) *ReadBatch {
	(*Batch)(b).Arg(p)
	return b
}

// Str adds a string argument of the program's own (Batch.Str).
func (b *ReadBatch) Str(s string) *ReadBatch {
	(*Batch)(b).Str(s)
	return b
}

// Int adds an integer argument in decimal.
func (b *ReadBatch) Int(v int64) *ReadBatch {
	(*Batch)(b).Int(v)
	return b
}

// Argv adds the command's own i-th argument by reference (Batch.Argv).
func (b *ReadBatch) Argv(i int) *ReadBatch {
	(*Batch)(b).Argv(i)
	return b
}

// Do runs a batch of exactly one command and returns its reply or its error
// (see Results.At).
func (b *ReadBatch) Do() (Value, error) { return (*Batch)(b).Do() }

// Run runs the batch in one crossing, stopping at the first command that
// fails, and returns the replies with that command's error (nil when all
// succeeded).
func (b *ReadBatch) Run() (Results, error) { return (*Batch)(b).Run() }

// RunAll runs every command of the batch in one crossing, whatever their
// replies; each command's error is in its Results.At.
func (b *ReadBatch) RunAll() Results { return (*Batch)(b).run(false) }
