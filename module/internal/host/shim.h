/* The C half of the host boundary: what the Go side and the C files share.
 *
 * Written from the Valkey module API reference; no server header is used. Every
 * API function is fetched by name through the getter the server passes as the
 * first word of the context (see shim.c). Only constants and structures that
 * cross the boundary are declared here. */
#ifndef TRAFIKEY_SHIM_H
#define TRAFIKEY_SHIM_H

#include <stddef.h>
#include <stdint.h>

/* Module API return codes and call-reply types (the RESP2 subset plus the
 * others, which the adapter refuses). */
/* The module options declared at load (VALKEYMODULE_OPTIONS_*), the ones
 * true of trafikey; docs/NATIVE.md says why each other is left out and what
 * each version does with them.
 * HANDLE_IO_ERRORS: the module has no data type, so nothing of its own can
 * fail to load from an RDB. HANDLE_REPL_ASYNC_LOAD: it keeps no state
 * outside the keyspace, so a replica may serve the old dataset while it
 * loads the new one (repl-diskless-load swapdb). */
#define EMQ_OPTIONS_HANDLE_IO_ERRORS (1 << 0)
#define EMQ_OPTIONS_HANDLE_REPL_ASYNC_LOAD (1 << 2)
/* NO_IMPLICIT_SIGNAL_MODIFIED: the TRA family opens its key for writing
 * and signals it only when it changed it, as SETBIT does; every other
 * write goes through RM_Call, which signals its keys itself. */
#define EMQ_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED (1 << 1)
/* SKIP_COMMAND_VALIDATION (8.1 on): RM_Replicate, which replicates the
 * key-API writes' commands, skips looking the command's name up; it never
 * checked arity. The host replicates only HSET, HINCRBY, ZADD, ZREM and
 * ZPOPMIN, built with the arguments the key API wrote, so the lookup only
 * costs (about 0.1 µs a write). */
#define EMQ_OPTIONS_SKIP_COMMAND_VALIDATION (1 << 4)
/* HANDLE_ATOMIC_SLOT_MIGRATION (9.0 on): without it CLUSTER MIGRATESLOTS
 * refuses to run on a node with the module. The module keeps nothing
 * outside the keyspace and subscribes to no event, so a slot's keys being
 * imported before its ownership moves are nothing to it; every write it
 * replicates is a command of the queue's slot. */
#define EMQ_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION (1 << 5)
/* Declared at load as far as the server knows them (GetModuleOptionsAll):
 * a server stores any bits it is given, and one that does not know an
 * option would not keep its promise. */
#define EMQ_OPTIONS                                                                                          \
    (EMQ_OPTIONS_HANDLE_IO_ERRORS | EMQ_OPTIONS_HANDLE_REPL_ASYNC_LOAD | EMQ_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED | \
     EMQ_OPTIONS_SKIP_COMMAND_VALIDATION | EMQ_OPTIONS_HANDLE_ATOMIC_SLOT_MIGRATION)

#define EMQ_OK 0
#define EMQ_ERR 1
#define EMQ_REPLY_STRING 0
#define EMQ_REPLY_ERROR 1
#define EMQ_REPLY_INTEGER 2
#define EMQ_REPLY_ARRAY 3
#define EMQ_REPLY_NULL 4

/* Markers of our own in the host-reply stream (not server reply types). */
#define EMQ_NODE_CALLFAIL 200 /* RM_Call returned NULL; an int64 errno follows */
#define EMQ_NODE_TOODEEP 201  /* an array nested deeper than EMQ_MAX_REPLY_DEPTH */
#define EMQ_NODE_REF 202      /* a string by reference: uint64 address, uint32 length */

/* A host-reply string at least this long is not copied into the reply
 * stream: the stream carries its address in the server's own memory, which
 * is kept until the command ends (emq_io.keep), and a client reply of those
 * bytes is emitted from there (EMQ_R_REF). */
#define EMQ_REF_MIN 1024

/* A client reply of a kept server string at least this long is the string
 * itself (RM_ReplyWithString), not its bytes: a server that avoids copying
 * large replies (Valkey 9.1's min-string-size-avoid-copy-reply, 16 KB by
 * default) then writes it from the string, where the bytes would be copied
 * into the reply buffers first. A server that copies copies either way. */
#define EMQ_REF_REPLY_MIN 16384

/* Deepest array nesting a host reply may have (a top-level array is depth 1). */
#define EMQ_MAX_REPLY_DEPTH 4

/* Key-spec and ACL flags (VALKEYMODULE_CMD_KEY_*). */
#define EMQ_KEY_RO (1ULL << 0)
#define EMQ_KEY_RW (1ULL << 1)
#define EMQ_KEY_ACCESS (1ULL << 4)
#define EMQ_KEY_UPDATE (1ULL << 5)
#define EMQ_KEY_INSERT (1ULL << 6)
#define EMQ_KEY_DELETE (1ULL << 7)

/* Tags of the client-reply stream a Go handler builds and C emits. */
#define EMQ_R_INT 'i'   /* int64 */
#define EMQ_R_BULK 'b'  /* uint32 length, bytes */
#define EMQ_R_ERROR 'e' /* uint32 length, bytes, NUL */
#define EMQ_R_NULL 'n'
#define EMQ_R_ARRAY 'a' /* uint32 element count, then the elements */
#define EMQ_R_REF 'r'   /* a bulk string by reference: uint64 address, uint32 length */

/* How deep module commands may nest (a command calling a command through the
 * host, or through a script). Each level has its own scratch buffers. */
#define EMQ_MAX_DEPTH 16
/* How many commands the module can register: one trampoline each. */
#define EMQ_MAX_COMMANDS 64

/* Key kinds of a command: none, or numkeys-style keys read or written, or
 * one key at argv[1] read or written (the TRA family). */
#define EMQ_KEYS_NONE 0
#define EMQ_KEYS_READ 1
#define EMQ_KEYS_WRITE 2
#define EMQ_KEYS_FIRST_READ 3
#define EMQ_KEYS_FIRST_WRITE 4

/* The context flags a blocking command looks at (VALKEYMODULE_CTX_FLAGS_*). */
#define EMQ_CTX_LUA (1 << 0)
#define EMQ_CTX_MULTI (1 << 1)
#define EMQ_CTX_DENY_BLOCKING (1 << 21)
/* RM_BlockClientOnKeysWithFlags: serve the client when its key is
 * signalled even while the key does not exist (VALKEYMODULE_BLOCK_UNBLOCK_DELETED). */
#define EMQ_BLOCK_UNBLOCK_DELETED (1 << 0)

/* A growable byte buffer in C memory. Go writes into it directly and asks C to
 * grow it (emq_buf_reserve) when full. */
typedef struct emq_buf {
    unsigned char *p;
    size_t len, cap;
} emq_buf;

/* One command argument as a pointer and length (from RM_StringPtrLen). */
typedef struct emq_arg {
    const char *p;
    size_t n;
} emq_arg;

/* Bit offsets below this are valid whatever proto-max-bulk-len says (its
 * least is 1 MB, and the server's bound is 8 bits a byte of it). */
#define EMQ_SMALL_BIT_OFFSETS (8LL << 20)

/* What a TRA bit call saw of argv[1] (emq_bit). */
#define EMQ_BIT_OK 0
#define EMQ_BIT_WRONGTYPE 1
#define EMQ_BIT_SLOW 2 /* the call could not answer: use the host's commands */
typedef struct emq_bit_seen {
    long long len; /* the string's length, 0 with no key */
    int status;    /* EMQ_BIT_* */
    int bit;       /* the bit at the offset before the call, 0 past the end */
    int wrote;     /* the write was applied */
} emq_bit_seen;

/* Scratch for one nesting depth, reused by every command at that depth. */
typedef struct emq_io {
    emq_buf req; /* host commands, encoded by Go */
    emq_buf out; /* their replies, encoded by C */
    emq_buf rep; /* the client reply, encoded by Go, emitted by C */
    emq_buf keys; /* keys for emq_check_keys, encoded by Go */
    int ncalls;  /* host commands the last batch ran */
    int oom;     /* the last batch could not grow out */
    /* what the EMQ_NODE_REF strings of this command point into, freed when
     * the command ends (emq_release): server strings (FreeString) and call
     * replies (FreeCallReply), tagged in the low bit (1: a call reply) */
    void **keep;
    size_t nkeep, capkeep;
    emq_bit_seen seen; /* what the command's last bit call saw */
    /* keys the command's writes made ready for clients blocked on them,
     * signalled after the command (uint32 length, bytes, each), by Go */
    emq_buf ready;
    /* > 0: the handler asked to block the client on the key in block for
     * this many ms (it replied nothing); set by Go, cleared by C */
    long long block_ms;
    emq_buf block;
} emq_io;


/* Commands C may answer without entering Go (emq_cmd.preanswer). */
#define EMQ_PRE_NONE 0
#define EMQ_PRE_SETBIT 1
#define EMQ_PRE_GETBIT 2

/* What a trampoline hands to the Go dispatcher: one structure, one crossing. */
typedef struct emq_frame {
    void *ctx;
    void **argv;   /* the server's argument strings */
    emq_arg *args; /* the same arguments as pointers and lengths */
    int argc;
    int id;    /* index in the command table */
    int depth; /* nesting depth, 0 for a client's command */
    long long now_us; /* the server's cached clock at the start of the command */
    emq_io *io;
    /* AvoidReplicaTraffic at the start of the command, for the write guard:
     * a pause or a failover cannot begin while a command runs */
    int avoid_replica_traffic;
    /* 1: the run of a blocked command when a key it blocks on was signalled
     * (the server's reply callback), 0 for the command as sent */
    int rerun;
} emq_frame;

/* One entry of the command table, filled by Go at load. */
typedef struct emq_cmd {
    const char *name;
    const char *flags;
    const char *summary;
    int keys; /* EMQ_KEYS_* */
    int arity;
    int preanswer; /* EMQ_PRE_* */
    /* EMQ_PRE_SETBIT: the handler's write plans for the value 0 and 1 (bit
     * 2*previous+inside set for a write), its refusal texts, and the write
     * guard's */
    unsigned char setbit_plans[2];
    const char *setbit_offset, *setbit_bit, *setbit_wrongtype, *setbit_paused;
} emq_cmd;

/* The table Go fills at load, and the load error if any. */
typedef struct emq_table {
    emq_cmd cmds[EMQ_MAX_COMMANDS];
    int ncmds;
    const char *name;           /* module name */
    int version;                /* module version */
    const char *internal_error; /* the reply text for a failure C must answer itself */
    char err[512];              /* why the load failed, NUL-terminated */
} emq_table;

/* Implemented in shim.c, called from Go. */
int emq_buf_reserve(uintptr_t buf, size_t need);
int emq_check_keys(uintptr_t ctx, uintptr_t keys, int flags);
int emq_check_command(uintptr_t ctx, uintptr_t argv);
void emq_log(const char *level, const char *msg);
int emq_numkeys(uintptr_t p, size_t n, int argc);
/* The module API's context flags of a command (RM_GetContextFlags). */
int emq_context_flags(uintptr_t ctx);
int emq_client_subscribed(uintptr_t ctx);

/* Implemented in call.c: the API lookup of the call adapter, at load. */
int emq_call_init(int (*get_api)(const char *, void *), void *ctx);
/* Turns the key-API writes of call.c on or off (module argument key-writes). */
void emq_set_key_writes(int on);
/* Reports whether writes take the key API. */
int emq_key_writes(void);
/* What emq_call_init found out about the server (see call.c): the longest
 * string it may hold embedded, and whether its scripts hold the arguments
 * of the commands they call. */
size_t emq_embed_max(void);
int emq_scripts_hold_args(void);
/* The module options declared at load (shim.c): EMQ_OPTIONS as far as the
 * server knows them. */
int emq_module_options(void);
/* Implemented in call.c: frees what a command's host replies kept (see
 * emq_io.keep), after its reply was emitted. */
void emq_release(void *ctx, emq_io *io);

/* Implemented in call.c: the TRA family's bit access (see the file). */
int emq_bit(uintptr_t ctx, uintptr_t argv, uintptr_t io, long long offset, int write, int plan);
int emq_preanswer(void *ctx, void **argv, int argc, const emq_cmd *cmd);

/* Implemented in verbatim.c: the API lookup of the TRA family's one
 * replication call, at load, and the call. */
int emq_verbatim_init(int (*get_api)(const char *, void *));
void emq_replicate_verbatim(uintptr_t ctx);

#endif
