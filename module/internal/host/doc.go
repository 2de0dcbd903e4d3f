// Package host is the module's only boundary with the server: cgo, the C
// entry points, command registration, and every call a handler makes to the
// server. Nothing else in the module imports "C".
//
// # Crossings
//
// C owns everything the server calls: ValkeyModule_OnLoad (and the Redis
// name), the API lookup by name through the getter the server passes in the
// context, the command registration with EVAL-style key-specs, and key-position
// requests, answered in C without entering Go, and the preanswered calls of a
// command (Command.Preanswer: every TRA.SETBIT, decided by its handler's
// verdict as handed to C at load, and the TRA.GETBIT calls of a small
// offset). A command
// costs one crossing into Go: its C trampoline passes the arguments to the
// dispatcher, which runs
// the Handler and leaves the reply encoded in C memory for the trampoline to
// emit. A host call costs one crossing into C for a whole Batch of commands;
// the replies come back encoded in C memory and are decoded without
// allocation. CheckKeys is one crossing; BeginWrites none (the guard's state
// comes with the command).
//
// # A handler
//
//	func complete(c *host.Call) error {
//		active, row, id := c.Arg(2), c.Arg(3), c.Arg(4)
//		res, err := c.Read().
//			Cmd(host.HGET).Arg(row).Str("attempts").
//			Cmd(host.ZSCORE).Arg(active).Arg(id).
//			Run()
//		if err != nil {
//			return err // WRONGTYPE … from the server, as it came
//		}
//		…
//		if err := c.CheckKeys(host.KeyUpdate, metrics); err != nil {
//			return err // NOPERM No permissions to access a key
//		}
//		w, err := c.BeginWrites()
//		if err != nil {
//			return err // ERR EMQ write-paused
//		}
//		if _, err := w.Write().Cmd("HINCRBY").Arg(metrics).Str("count").Int(1).
//			Cmd("ZREM").Arg(active).Arg(id).Run(); err != nil {
//			return err
//		}
//		c.ReplyInt(1)
//		return nil
//	}
//
// # Rules
//
//   - Reads use the read format and replicate nothing: a read batch takes
//     only the read commands (ReadCmd), and the format carries RM_Call's
//     no-writes flag ('W'), so the server refuses a write in a read all the
//     same. Writes use the write format (without 'W', with "!") and reach the
//     AOF and replicas as their effects. Only Writes.Write sends the write format, and only BeginWrites
//     makes a Writes. call.c and call.go hold the adapter; a test keeps the
//     formats, RM_Call and the key API out of every other file.
//   - A write passes its arguments as the server's scripts pass theirs, so
//     the server stores what it would store for the Lua executor. Up to 9.0
//     they are fresh strings (SET keeps an integer int-encoded): an argument
//     of the command's own longer than EmbedMax bytes (a payload) is passed
//     on without a copy, as the server stores it raw either way; so is every
//     argument past the format's sixteenth specifier (a long HSET's tail,
//     whose values the server copies). From 9.1 (ScriptsHoldArgs) Lua calls
//     commands with strings it holds, and so does a write: none is copied.
//   - HGET, HMGET, ZSCORE, ZCARD, LLEN, EXISTS, STRLEN and GETBIT, spelled
//     in upper case as the verbs spell them and with a valid argument count,
//     are answered
//     through the key API instead of RM_Call, outside cluster mode (there
//     RM_Call refuses a key of a slot the node does not serve, or one
//     migrating away, which a lookup does not see): the same reply,
//     type and bytes (WRONGTYPE included), the same lookup (a key past its
//     expiry is deleted and reads as absent; nothing is created). A ZSCORE
//     whose score is not an integer, a GETBIT offset of 8·2^20 or more or
//     not in canonical digits, a GETBIT inside a string of at most EmbedMax
//     bytes (it may be embstr or int-encoded, which the key API's string
//     access would re-encode), and every other read, goes through RM_Call; so does any other spelling (hget), which is how tests compare
//     both paths. GET cannot take the key API: its string access (DMA)
//     re-encodes an int or embstr value as raw. What a fast read does not
//     do, as it runs no command: count in INFO commandstats, show in
//     MONITOR, pass through another module's command filters, or have
//     CLIENT TRACKING remember its key for the caller (a read through RM_Call
//     is remembered, as a script's is). The field names of HGET and HMGET
//     passed with Batch.Str (the program's own strings) are looked up with
//     server strings kept across commands, a few KB at most, instead of one
//     made and freed per field. An XADD passes its arguments added with
//     Str, Words or Word as such kept strings too, held for the call
//     without a reference of their own (the stream copies them).
//   - HSET, HINCRBY, ZADD (scores, no option), ZREM, ZPOPMIN with a
//     count, and XADD key [MAXLEN ~ <count>] * <field> <value> … (a job
//     event's entry, a PUBLISH), spelled in upper case, are written
//     through the key API instead of RM_Call, outside cluster mode, unless
//     the module argument key-writes no turned it off (SetKeyWrites): the
//     same lookup, the same change through the server's functions (which
//     convert encodings as the commands do), the same reply, keyspace
//     events and key signal (and, for XADD, readers blocked on the stream
//     woken), and the command itself replicated with RM_Replicate as the
//     command would have propagated it (XADD with the id it generated and
//     its trim made exact), in order with the writes RM_Call makes. An
//     XADD more than 100 entries over its bound, whose approximate trim
//     could stop at a limit the key API's trim does not share, goes
//     through RM_Call. A
//     write whose outcome the adapter cannot be sure is the command's (a
//     key of another type, a repeated field or member, a score or count
//     not in canonical integer digits, a hash value HINCRBY would refuse,
//     an overflow, a score ZPOPMIN would write with the server's own
//     digits) goes through RM_Call, having changed nothing. What differs:
//     INFO commandstats lists no nested command, and the dirty count (what
//     drives save points) counts one change per replicated write. DEL
//     stays with RM_Call (the key API deletes an open key by a second
//     lookup).
//   - The TRA family reads and writes its key (argv[1]) with a bit call of
//     its own, one crossing: Call.ReadBit reads as GETBIT does (a read
//     lookup; a bit inside a string of at most EmbedMax bytes through GETBIT by
//     RM_Call), and Writes.SetBit reads as SETBIT does (a write lookup, the
//     string unshared, which leaves it raw) and writes only when the plan
//     the handler passes says so for what it found, with what SETBIT does
//     beside the data (the key signalled, the setbit event, the command
//     replicated verbatim, one dirty count). An offset of SmallBitOffsets
//     or more is first checked against proto-max-bulk-len; past it the call
//     answers ErrBitUnanswered and the handler runs the server's commands.
//     The module declares NO_IMPLICIT_SIGNAL_MODIFIED, so a call that
//     changed nothing signals nothing.
//   - Host replies are classified from their RESP2 type: string, integer,
//     array (at most four deep), null, and an error, which is the call's
//     error with the server's text (WRONGTYPE …). Anything else is
//     ErrHostReply, never a panic.
//   - An error reply's text ends at its first NUL, as the server ends a
//     script's (both replies go through addReplyErrorFormat, which also turns
//     CR and LF into spaces): a text carrying stored bytes reads the same on
//     both executors, with no clipping by the handler.
//   - Argument bytes, Values and Results are views of scratch memory: valid
//     until the handler returns, Values and Results only until the next host
//     call of the command. Copy what must live longer.
//   - A host-reply string of 1024 bytes or more (a payload) is not copied:
//     the reply stream carries its address in the server's memory (the
//     string a fast read made, or the call reply), which is kept until the
//     command ends, and ReplyBulk of those bytes has the server emit them
//     from there. Between the server's read and the client's reply a
//     payload is copied once, by the reply itself.
//   - A panic in a handler is recovered, logged, and answered as ErrInternal;
//     misuse of this package (a stale Value, a reply that is not one complete
//     value, a write without the guard) is answered the same way.
//   - Commands may nest (a module command called through the host or from a
//     script): each depth has its own scratch. A script cannot start a script,
//     so EVAL and FCALL through the host inside a script fail (ErrHostReply).
//   - Everything runs on the server's thread, in the handler's goroutine:
//     never call the host from another goroutine, and keep nothing from a
//     Call after the handler returns.
//   - Call.NowMillis is the server's cached clock at the start of the command,
//     the one TIME answers with, so both executors compute the same deadlines.
//   - Between commands the server's thread sits in C holding a Go P, as if
//     in a system call. Go's monitor thread takes such a P and wakes a
//     thread to spin and park again when the P's goroutine has run on one
//     scheduling tick for 10 ms, or when the call lasts a monitor round and
//     no other P is idle. The server's thread never passes through the
//     scheduler, so the first held forever; with one P the second held at
//     every pause of a lightly loaded server. Each costs the server's core
//     several µs per command (EMQ.VERSION at one client: 30.6 µs of server
//     CPU per call against PING's 16.3). So while commands come back to back,
//     a top-level command yields to the scheduler once every 9 ms of the
//     server's clock (a new tick, before the monitor's 10 ms have passed
//     since it saw the last), and the module runs with two Ps by default
//     (one stays idle): 21.7 µs. The yield is a thread handoff inside that
//     command (see yieldEveryUS), the one cost of the boundary that grows
//     with the load on the machine.
//   - No Go code runs in a fork child (BGSAVE, BGREWRITEAOF): the module
//     registers nothing that would run there.
package host
