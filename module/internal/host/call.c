/* The call adapter, C half: the only code that sends commands to the server.
 *
 * Two formats and no other: "vEW" for reads (nothing replicates) and "v!E"
 * for writes (the server replicates each write as its effect, several of one
 * command wrapped in MULTI/EXEC). 'v' passes the arguments as a vector, 'E'
 * returns a refusal before execution as an error reply, and 'W' has the
 * server refuse a command flagged write, so a read cannot write. The calls run in RESP2.
 *
 * A write spreads the 'v' of its format: each argument it copies goes as a
 * fresh buffer ('b'), each run of the others as a vector. The server then
 * holds the only reference to a copied argument, as it does to a script's
 * arguments, so SET stores an integer string int-encoded as a script's SET
 * does (it re-encodes only an unshared value).
 *
 * A read of the commands the verbs read most (HGET, HMGET, ZSCORE, ZCARD,
 * LLEN, EXISTS, ZRANGE of a set's head: ZRANGE key 0 <stop> [WITHSCORES],
 * STRLEN, and GETBIT of a small offset) is answered through the key API
 * instead of RM_Call, with the
 * reply the command would have given, encoded the same way. See fast_read.
 *
 * emq_exec is the one entry point; call.go is the Go half and the only Go
 * code that reaches it. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "shim.h"

static const char FORMAT_READ[] = "vEW";
static const char FORMAT_WRITE[] = "v!E";
/* A debug command's nested call (emq_exec's write 2): a command run as
 * another module's command runs it, without the no-writes flag, the path
 * CLIENT PAUSE WRITE does not hold, on which tests meet the write guard.
 * Go starts one only in a debug command (Call.DebugNested). */
static const char FORMAT_NESTED[] = "vE";

static void *(*Call)(void *ctx, const char *cmd, const char *fmt, ...);
static int (*CallReplyType)(void *r);
static const char *(*CallReplyStringPtr)(void *r, size_t *n);
static long long (*CallReplyInteger)(void *r);
static size_t (*CallReplyLength)(void *r);
static void *(*CallReplyArrayElement)(void *r, size_t i);
static void (*FreeCallReply)(void *r);
static void *(*CreateString)(void *ctx, const char *p, size_t n);
static void (*FreeString)(void *ctx, void *s);
static void (*RetainString)(void *ctx, void *s);
static const char *(*StringPtrLen)(const void *s, size_t *n);
static int (*GetContextFlags)(void *ctx);
static int (*StringAppendBuffer)(void *ctx, void *s, const char *p, size_t n);
static int (*GetServerVersion)(void);

/* The key API of the read fast path. Optional: without one of them every read
 * goes through RM_Call. */
static void *(*OpenKey)(void *ctx, void *name, int mode);
static void (*CloseKey)(void *key);
static int (*KeyType)(void *key);
static int (*KeyExists)(void *ctx, void *name);
static size_t (*ValueLength)(void *key);
static int (*HashGet)(void *key, int flags, ...);
static int (*ZsetScore)(void *key, void *member, double *score);
static int (*ZsetFirstInScoreRange)(void *key, double min, double max, int minex, int maxex);
static void *(*ZsetRangeCurrentElement)(void *key, double *score);
static int (*ZsetRangeNext)(void *key);
static int (*ZsetRangeEndReached)(void *key);
static void (*ZsetRangeStop)(void *key);
static char *(*StringDMA)(void *key, size_t *len, int mode);

/* The TRA family's bit write (emq_bit): the key API and what SETBIT does
 * beside the data. */
static int (*StringTruncate)(void *key, size_t newlen);
static int (*NotifyKeyspaceEvent)(void *ctx, int type, const char *event, void *key);
static int (*SignalModifiedKey)(void *ctx, void *keyname);
/* and what TRA.SETBIT answered in C needs besides: its reply, and the
 * write guard's input */
static int (*ReplyWithError)(void *ctx, const char *err);
static int (*ReplyWithLongLong)(void *ctx, long long v);
static int (*AvoidReplicaTraffic)(void);

/* The key-API writes (key_write): the writes and what the commands do
 * beside the data. Optional: without one of them every write goes through
 * RM_Call. */
static int (*HashSet)(void *key, int flags, ...);
static int (*ZsetAdd)(void *key, double score, void *ele, int *flags);
static int (*ZsetRem)(void *key, void *ele, int *deleted);
static int (*Replicate)(void *ctx, const char *cmd, const char *fmt, ...);
/* XADD's key-API path (xadd_write): optional like the writes above. */
typedef struct {
    unsigned long long ms, seq;
} stream_id; /* ValkeyModuleStreamID */
static int (*StreamAdd)(void *key, int flags, stream_id *id, void **argv, long numfields);
static long long (*StreamTrimByLength)(void *key, int flags, long long length);

#define CTX_FLAGS_LUA (1 << 0)     /* VALKEYMODULE_CTX_FLAGS_LUA */
#define CTX_FLAGS_CLUSTER (1 << 5) /* VALKEYMODULE_CTX_FLAGS_CLUSTER */
#define CTX_FLAGS_REPLICATED (1 << 12) /* VALKEYMODULE_CTX_FLAGS_REPLICATED */
#define CTX_FLAGS_LOADING (1 << 13)    /* VALKEYMODULE_CTX_FLAGS_LOADING */
#define OPEN_READ (1 << 0)         /* VALKEYMODULE_READ */
#define OPEN_WRITE (1 << 1)        /* VALKEYMODULE_WRITE */
#define NOTIFY_GENERIC (1 << 2)    /* VALKEYMODULE_NOTIFY_GENERIC */
#define NOTIFY_STRING (1 << 3)     /* VALKEYMODULE_NOTIFY_STRING */
#define NOTIFY_HASH (1 << 6)       /* VALKEYMODULE_NOTIFY_HASH */
#define NOTIFY_ZSET (1 << 7)       /* VALKEYMODULE_NOTIFY_ZSET */
#define NOTIFY_STREAM (1 << 10)    /* VALKEYMODULE_NOTIFY_STREAM */
#define STREAM_ADD_AUTOID (1 << 0) /* VALKEYMODULE_STREAM_ADD_AUTOID */
#define STREAM_TRIM_APPROX (1 << 0) /* VALKEYMODULE_STREAM_TRIM_APPROX */
#define ZADD_OUT_ADDED (1 << 2)    /* VALKEYMODULE_ZADD_ADDED */
#define ZADD_OUT_UPDATED (1 << 3)  /* VALKEYMODULE_ZADD_UPDATED */
#define HASH_NONE 0                /* VALKEYMODULE_HASH_NONE */
#define KEYTYPE_EMPTY 0            /* VALKEYMODULE_KEYTYPE_* */
#define KEYTYPE_STRING 1
#define KEYTYPE_LIST 2
#define KEYTYPE_HASH 3
#define KEYTYPE_ZSET 5
#define KEYTYPE_STREAM 7

/* How a write passes its arguments, so that the server stores each value
 * with the encoding the Lua executor's call of the same command gives it
 * (SET re-encodes, as an integer or embedded, only a value nobody else
 * holds).
 *
 * A script of the server's own Lua (up to 9.0) passes every argument as a
 * fresh object: a write copies every argument into a fresh buffer but a
 * long one of the command's own (a payload is not copied: the server stores
 * a string longer than embed_max raw whether shared or not), as far as
 * WRITE_SPECS specifiers reach; the arguments past them go as one vector.
 *
 * From 9.1 on Lua is a module of the server's, which calls commands through
 * the module API with every argument a string it made and holds until the
 * call returns, so nothing is re-encoded: with scripts_hold_args a write
 * passes every argument as such a string too, none as a fresh buffer.
 * Fixed at load (emq_call_init); the executors' encodings are compared on
 * each server version by the host's and the module's tests. */
static int scripts_hold_args;
#define WRITE_SPECS 16

#define STACK_ARGS 32

/* args_buf holds a command's server strings and how to release each (own),
 * on the stack for up to STACK_ARGS of them, else allocated. */
typedef struct {
    void **sv;
    unsigned char *own;
    void *stack_sv[STACK_ARGS];
    unsigned char stack_own[STACK_ARGS];
} args_buf;

/* args_buf_init makes room in b for n strings; returns 0 when it could not
 * (args_buf_free is still owed). */
static int args_buf_init(args_buf *b, size_t n) {
    b->sv = n <= STACK_ARGS ? b->stack_sv : malloc(sizeof(void *) * n);
    b->own = n <= STACK_ARGS ? b->stack_own : malloc(n);
    return b->sv && b->own;
}

static void args_buf_free(args_buf *b) {
    if (b->sv != b->stack_sv) free(b->sv);
    if (b->own != b->stack_own) free(b->own);
}

/* Reads take the key API only outside a cluster: there RM_Call refuses a key
 * of a slot this node does not serve (or one migrating away), which a key
 * lookup does not see. Fixed at load, like the server's cluster mode. */
static int fast_reads;

/* The zset range API, for ZRANGE's fast path; without it ZRANGE goes through
 * RM_Call. */
static int zset_range;

/* Writes take the key API where fast_reads does (outside a cluster), with
 * every API key_write needs, unless the module argument key-writes no
 * turned them off (emq_set_key_writes, at load). */
static int key_writes_api, key_writes;

/* The stream API, for XADD's key-API path; without it XADD goes through
 * RM_Call even when key_writes is on. */
static int stream_api;

void emq_set_key_writes(int on) { key_writes = on && key_writes_api && fast_reads; }
int emq_key_writes(void) { return key_writes; }

/* The longest string value this server may hold embedded (or as an
 * integer: at most 20 digits), asked of the server at load; SIZE_MAX when
 * it cannot be asked. Only a raw string is read in place by StringDMA: it
 * re-encodes an embedded or integer one as raw, which OBJECT ENCODING and
 * MEMORY USAGE show and GETBIT leaves alone, so a bit inside a string of at
 * most embed_max bytes is read through GETBIT by RM_Call.
 *
 * The bound is the server's and not one number: Valkey 8 embeds a string
 * of up to 44 bytes, 9.1 one that fits 128 bytes with its object header,
 * its key and its expiry (116 bytes without a key, fewer under one). A
 * string the server makes for a module (CreateString) is embedded exactly
 * when a value without a key of that length may be, the most any key
 * allows; an in-place change (StringAppendBuffer) gives an embedded string
 * a buffer of its own and leaves a raw one's where it is, so the longest
 * length whose string moves is the bound. Embedding is by length alone, so
 * the first length that does not move ends the probe. */
static size_t embed_max = SIZE_MAX;
#define EMBED_PROBE_MAX 4096

static size_t probe_embed_max(void) {
    static char zeros[EMBED_PROBE_MAX];
    if (!StringAppendBuffer) return SIZE_MAX;
    for (size_t n = 0; n <= EMBED_PROBE_MAX; n++) {
        void *s = CreateString(NULL, zeros, n);
        if (!s) return SIZE_MAX;
        size_t len;
        const char *before = StringPtrLen(s, &len);
        int ok = StringAppendBuffer(NULL, s, "", 0) == EMQ_OK;
        const char *after = StringPtrLen(s, &len);
        FreeString(NULL, s);
        if (!ok) return SIZE_MAX;
        if (before == after) return n < 21 ? 20 : n - 1;
    }
    return SIZE_MAX;
}

size_t emq_embed_max(void) { return embed_max; }
int emq_scripts_hold_args(void) { return scripts_hold_args; }

#define GET(fn) if (get_api("RedisModule_" #fn, (void *)&fn) != EMQ_OK) return EMQ_ERR;
#define GET_OPT(fn) if (get_api("RedisModule_" #fn, (void *)&fn) != EMQ_OK) fast = 0;

int emq_call_init(int (*get_api)(const char *, void *), void *ctx) {
    GET(Call) GET(CallReplyType) GET(CallReplyStringPtr) GET(CallReplyInteger) GET(CallReplyLength)
    GET(CallReplyArrayElement) GET(FreeCallReply) GET(CreateString) GET(FreeString) GET(RetainString) GET(StringPtrLen)
    GET(GetContextFlags) GET(OpenKey) GET(CloseKey) GET(KeyType) GET(ValueLength) GET(StringDMA)
    GET(StringTruncate) GET(NotifyKeyspaceEvent) GET(SignalModifiedKey)
    GET(ReplyWithError) GET(ReplyWithLongLong) GET(AvoidReplicaTraffic)
    int fast = 1;
    GET_OPT(OpenKey) GET_OPT(CloseKey) GET_OPT(KeyType) GET_OPT(KeyExists) GET_OPT(ValueLength)
    GET_OPT(HashGet) GET_OPT(ZsetScore)
    GET_OPT(ZsetFirstInScoreRange) GET_OPT(ZsetRangeCurrentElement) GET_OPT(ZsetRangeNext)
    GET_OPT(ZsetRangeEndReached) GET_OPT(ZsetRangeStop) GET_OPT(StringDMA)
    fast_reads = fast && !(GetContextFlags(ctx) & CTX_FLAGS_CLUSTER);
    fast = 1;
    GET_OPT(HashSet) GET_OPT(ZsetAdd) GET_OPT(ZsetRem) GET_OPT(Replicate)
    key_writes_api = fast && HashGet;
    fast = 1;
    GET_OPT(StreamAdd) GET_OPT(StreamTrimByLength)
    stream_api = fast;
    if (get_api("RedisModule_StringAppendBuffer", (void *)&StringAppendBuffer) != EMQ_OK) StringAppendBuffer = NULL;
    embed_max = probe_embed_max();
    if (get_api("RedisModule_GetServerVersion", (void *)&GetServerVersion) != EMQ_OK) GetServerVersion = NULL;
    scripts_hold_args = GetServerVersion && GetServerVersion() >= 0x090100;
    emq_set_key_writes(1);
    zset_range = ZsetFirstInScoreRange && ZsetRangeCurrentElement && ZsetRangeNext && ZsetRangeEndReached &&
                 ZsetRangeStop;
    return EMQ_OK;
}

/* ---- the reply stream: type byte, then its payload, children in pre-order ---- */

static int put(emq_io *io, const void *p, size_t n) {
    emq_buf *b = &io->out;
    if (io->oom) return -1;
    if (b->len + n > b->cap && emq_buf_reserve((uintptr_t)b, b->len + n) != 0) {
        io->oom = 1;
        return -1;
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}
static void put_u8(emq_io *io, unsigned v) { unsigned char c = (unsigned char)v; put(io, &c, 1); }
static void put_u32(emq_io *io, size_t v) { uint32_t x = (uint32_t)v; put(io, &x, 4); }
static void put_i64(emq_io *io, long long v) { put(io, &v, 8); }
static void put_str(emq_io *io, unsigned type, const char *p, size_t n) {
    put_u8(io, type);
    put_u32(io, n);
    put(io, p, n);
}

/* keep_room makes room in the list of what EMQ_NODE_REF strings point
 * into (see emq_io.keep). Returns 0, or -1 when it cannot grow: the caller
 * copies the bytes instead. */
static int keep_room(emq_io *io) {
    if (io->nkeep < io->capkeep) return 0;
    size_t cap = io->capkeep ? 2 * io->capkeep : 16;
    void **k = realloc(io->keep, cap * sizeof(void *));
    if (!k) return -1;
    io->keep = k;
    io->capkeep = cap;
    return 0;
}

/* keep records a server string (reply 0) or a call reply (reply 1), to free
 * when the command ends; keep_room made room for it. */
static void keep(emq_io *io, void *p, int reply) {
    io->keep[io->nkeep++] = (void *)((uintptr_t)p | (uintptr_t)(reply != 0));
}

void emq_release(void *ctx, emq_io *io) {
    for (size_t i = 0; i < io->nkeep; i++) {
        uintptr_t k = (uintptr_t)io->keep[i];
        if (k & 1) {
            FreeCallReply((void *)(k & ~(uintptr_t)1));
        } else {
            FreeString(ctx, (void *)k);
        }
    }
    io->nkeep = 0;
    if (io->capkeep > 1024) { /* one command that kept many: do not pin the list */
        free(io->keep);
        io->keep = NULL;
        io->capkeep = 0;
    }
}

/* put_ref writes a string of at least EMQ_REF_MIN bytes by reference. */
static void put_ref(emq_io *io, const char *p, size_t n) {
    uint64_t addr = (uint64_t)(uintptr_t)p;
    put_u8(io, EMQ_NODE_REF);
    put(io, &addr, 8);
    put_u32(io, n);
}

/* Encodes a reply tree. An array at level EMQ_MAX_REPLY_DEPTH (a fifth nested
 * array) is cut off as TOODEEP, so the recursion is bounded; types outside
 * RESP2 are written as their bare type byte and refused by the Go decoder. */
static void encode(emq_io *io, void *r, int level, int *kept) {
    int t = CallReplyType(r);
    if (t == EMQ_REPLY_ARRAY && level >= EMQ_MAX_REPLY_DEPTH) {
        put_u8(io, EMQ_NODE_TOODEEP);
        return;
    }
    if (t == EMQ_REPLY_STRING || t == EMQ_REPLY_ERROR) {
        size_t n = 0;
        const char *p = CallReplyStringPtr(r, &n);
        if (!p) n = 0;
        /* a long string stays in the reply, which the command keeps */
        if (t == EMQ_REPLY_STRING && n >= EMQ_REF_MIN && kept) {
            *kept = 1;
            put_ref(io, p, n);
            return;
        }
        put_str(io, (unsigned)t, p, n);
        return;
    }
    put_u8(io, (unsigned)t & 0xff);
    if (t == EMQ_REPLY_INTEGER) {
        put_i64(io, CallReplyInteger(r));
    } else if (t == EMQ_REPLY_ARRAY) {
        size_t n = CallReplyLength(r);
        put_u32(io, n);
        for (size_t i = 0; i < n; i++) encode(io, CallReplyArrayElement(r, i), level + 1, kept);
    }
}

/* A script started while a script runs (a module command called from a script
 * calling EVAL) trips a server assertion ('!curr_run_ctx'), so such a call is
 * refused here as a failed call. */
static int script_in_script(void *ctx, const char *name) {
    static const char *const scripts[] = {"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"};
    if (name[0] != 'e' && name[0] != 'E' && name[0] != 'f' && name[0] != 'F') return 0;
    for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++)
        if (!strcasecmp(name, scripts[i])) return (GetContextFlags(ctx) & CTX_FLAGS_LUA) != 0;
    return 0;
}

/* ---- arguments ---- */

/* One host-command argument: bytes in the request (ref -1; -2 for a string
 * of the program's own, which a field read may take from intern), or the
 * command's own argument argv[ref], passed on without a copy. */
typedef struct {
    const char *p;
    size_t n;
    int ref;
} arg;

typedef struct {
    void *ctx;
    void **argv;
    emq_io *io;
} exec_env;

/* The argument as a server string; *own says the caller must free it. */
static void *arg_string(const exec_env *e, const arg *a, int *own) {
    *own = a->ref < 0;
    return a->ref < 0 ? CreateString(e->ctx, a->p, a->n) : e->argv[a->ref];
}

static void release(const exec_env *e, void *s, int own) {
    if (own) FreeString(e->ctx, s);
}

/* ---- the read fast path ---- */

static const char WRONGTYPE[] = "WRONGTYPE Operation against a key holding the wrong kind of value";

enum { SLOW, F_HGET, F_HMGET, F_ZSCORE, F_ZCARD, F_LLEN, F_EXISTS, F_ZRANGE, F_ZRANGE_SCORES, F_STRLEN, F_GETBIT };

/* The fast-path command for a name and argument count (not counting the
 * name), or SLOW. Names match as the verbs spell them, in upper case: any
 * other spelling, and a wrong argument count (whose refusal is the server's
 * to word), goes through RM_Call, which also lets a test compare both paths. */
static int fast_kind(const char *name, size_t len, uint32_t nargs) {
#define IS(s) (len == sizeof(s) - 1 && !memcmp(name, s, sizeof(s) - 1))
    if (IS("HGET")) return nargs == 2 ? F_HGET : SLOW;
    if (IS("HMGET")) return nargs >= 2 ? F_HMGET : SLOW;
    if (IS("ZSCORE")) return nargs == 2 ? F_ZSCORE : SLOW;
    if (IS("ZCARD")) return nargs == 1 ? F_ZCARD : SLOW;
    if (IS("LLEN")) return nargs == 1 ? F_LLEN : SLOW;
    if (IS("EXISTS")) return nargs >= 1 ? F_EXISTS : SLOW;
    if (IS("ZRANGE")) return nargs == 3 ? F_ZRANGE : nargs == 4 ? F_ZRANGE_SCORES : SLOW;
    if (IS("STRLEN")) return nargs == 1 ? F_STRLEN : SLOW;
    if (IS("GETBIT")) return nargs == 2 ? F_GETBIT : SLOW;
    return SLOW;
#undef IS
}

/* The digits of u, as the server writes an unsigned 64-bit number;
 * returns the length. */
static size_t u64_digits(char *buf, unsigned long long u) {
    char tmp[24];
    size_t n = 0, len = 0;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n) buf[len++] = tmp[--n];
    return len;
}

/* The digits of v, as the server's ll2string writes them; returns the length. */
static size_t ll_digits(char *buf, long long v) {
    if (v >= 0) return u64_digits(buf, (unsigned long long)v);
    buf[0] = '-';
    return 1 + u64_digits(buf + 1, 0ULL - (unsigned long long)v);
}

/* A score as ZSCORE replies it in RESP2 (addReplyDouble, d2string): zero as 0
 * or -0, an integral value within +-LLONG_MAX/2 in integer digits. Returns 0
 * for any other value (a fraction, an infinity), whose digits the server
 * writes with its own shortest-round-trip routine: that read goes through
 * RM_Call. */
static size_t score_text(char *buf, double d) {
    if (d == 0) {
        if (signbit(d)) {
            memcpy(buf, "-0", 2);
            return 2;
        }
        buf[0] = '0';
        return 1;
    }
    if (!(d >= (double)(-LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2))) return 0;
    long long ll = (long long)d;
    if ((double)ll != d) return 0;
    return ll_digits(buf, ll);
}

/* canon_ll parses a canonical decimal (an optional '-', digits, no leading
 * zero but "0" itself, no "-0") in the long long range: text the server's
 * string2ll reads as the same value. Returns 0 for any other text. */
static int canon_ll(const char *p, size_t n, long long *v) {
    size_t i = 0;
    int neg = n > 0 && p[0] == '-';
    i = (size_t)neg;
    if (i >= n || n - i > 19 || (p[i] == '0' && (n - i > 1 || neg))) return 0;
    unsigned long long u = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        u = u * 10 + (unsigned long long)(p[i] - '0');
    }
    if (u > (neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX)) return 0;
    *v = neg ? (long long)(0ULL - u) : (long long)u;
    return 1;
}

static void put_int(emq_io *io, long long v) {
    put_u8(io, EMQ_REPLY_INTEGER);
    put_i64(io, v);
}

/* The stop of ZRANGE key 0 <stop> when the range is a set's head as the verbs
 * read it: start exactly "0", stop a canonical decimal of at most 9 digits.
 * Returns -1 for any other range (a negative index, an option), which goes
 * through RM_Call. */
static long long head_stop(const arg *start, const arg *stop) {
    long long v;
    if (start->n != 1 || start->p[0] != '0') return -1;
    return stop->n <= 9 && canon_ll(stop->p, stop->n, &v) && v >= 0 ? v : -1;
}

/* GETBIT's offset when it is a canonical decimal below 8 * 2^20: valid
 * whatever proto-max-bulk-len says (its least is 1 MB, and the server's
 * bound is 8 bits a byte of it). Returns -1 for any other offset, which goes
 * through RM_Call so the server words its own refusal. */
#define SMALL_BIT_OFFSETS EMQ_SMALL_BIT_OFFSETS
static long long small_offset(const arg *o) {
    long long v;
    return canon_ll(o->p, o->n, &v) && v >= 0 && v < SMALL_BIT_OFFSETS ? v : -1;
}

/* The server strings of the field names the verbs read (the program's own
 * strings, ref -2), kept across commands so that a field read makes no
 * string for its name: a job's row read names up to eight fields, each of
 * which would otherwise be a string made and freed. Direct-mapped by a hash
 * of the bytes; a name that meets another's slot replaces it. At most
 * INTERN_SLOTS short strings (a few KB of the server's memory); only the
 * server's thread touches them, and they belong to no context. */
#define INTERN_SLOTS 128
#define INTERN_MAX 24
static struct {
    void *s;
    size_t n;
    char p[INTERN_MAX];
} interned[INTERN_SLOTS];

/* While a call holds kept strings without a reference of its own
 * (intern_hold, an XADD's names), a name that takes a slot leaves the
 * string it replaces in retired, freed when the last hold ends
 * (intern_release). */
static int intern_holds;
static struct {
    void **s;
    size_t n, cap;
} retired;

static void intern_hold(void) { intern_holds++; }

static void intern_release(void) {
    if (--intern_holds > 0) return;
    for (size_t i = 0; i < retired.n; i++) FreeString(NULL, retired.s[i]);
    retired.n = 0;
}

/* The kept string of a field name, or NULL when it cannot be kept (too long,
 * or out of memory): the caller makes its own. */
static void *intern(const arg *a) {
    if (a->n > INTERN_MAX) return NULL;
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < a->n; i++) h = (h ^ (unsigned char)a->p[i]) * 16777619u;
    h ^= h >> 15;
    size_t slot = h % INTERN_SLOTS;
    if (interned[slot].s && interned[slot].n == a->n && !memcmp(interned[slot].p, a->p, a->n)) return interned[slot].s;
    if (interned[slot].s && intern_holds && retired.n == retired.cap) {
        size_t cap = retired.cap ? 2 * retired.cap : 16;
        void **r = realloc(retired.s, cap * sizeof(void *));
        if (!r) return NULL;
        retired.s = r;
        retired.cap = cap;
    }
    void *s = CreateString(NULL, a->p, a->n);
    if (!s) return NULL;
    if (interned[slot].s && intern_holds) {
        retired.s[retired.n++] = interned[slot].s;
    } else if (interned[slot].s) {
        FreeString(NULL, interned[slot].s);
    }
    interned[slot].s = s;
    interned[slot].n = a->n;
    memcpy(interned[slot].p, a->p, a->n);
    return s;
}

/* A hash field's value, or a null when h (the open key) is NULL or has no
 * such field. */
static void put_field(const exec_env *e, void *h, const arg *f) {
    void *v = NULL;
    if (h) {
        void *fs = f->ref == -2 ? intern(f) : NULL;
        int own = 0;
        if (!fs) fs = arg_string(e, f, &own);
        HashGet(h, HASH_NONE, fs, &v, NULL);
        release(e, fs, own);
    }
    if (!v) {
        put_u8(e->io, EMQ_REPLY_NULL);
        return;
    }
    size_t n = 0;
    const char *p = StringPtrLen(v, &n);
    if (n >= EMQ_REF_MIN && keep_room(e->io) == 0) {
        keep(e->io, v, 0); /* freed when the command ends */
        put_ref(e->io, p, n);
        return;
    }
    put_str(e->io, EMQ_REPLY_STRING, p, n);
    FreeString(e->ctx, v);
}

/* fast_read answers one read command through the key API with the reply the
 * command gives through RM_Call: the same type and bytes, WRONGTYPE for a key
 * of another type. The lookups are the commands' own (a read lookup, which
 * deletes a key found logically expired as the command would, and never
 * creates one; EXISTS does not touch the key's access time, as EXISTS does
 * not). Returns 0, having written nothing, when the read must go through
 * RM_Call after all (a score the server formats with its own routine);
 * otherwise 1, with *failed set for an error reply. */
static int fast_read(const exec_env *e, int kind, const arg *a, uint32_t nargs, int *failed) {
    emq_io *io = e->io;
    *failed = 0;
    if (kind == F_EXISTS) {
        long long count = 0;
        for (uint32_t i = 0; i < nargs; i++) {
            int own;
            void *k = arg_string(e, &a[i], &own);
            count += KeyExists(e->ctx, k) != 0;
            release(e, k, own);
        }
        put_int(io, count);
        return 1;
    }
    long long stop = 0;
    int scores = kind == F_ZRANGE_SCORES;
    if (scores && (a[3].n != 10 || memcmp(a[3].p, "WITHSCORES", 10))) return 0;
    if (scores) kind = F_ZRANGE;
    if (kind == F_ZRANGE && ((stop = head_stop(&a[1], &a[2])) < 0 || !zset_range)) return 0;
    long long bitoff = 0;
    if (kind == F_GETBIT && ((bitoff = small_offset(&a[1])) < 0 || !StringDMA)) return 0;
    int own;
    void *name = arg_string(e, &a[0], &own);
    void *key = OpenKey(e->ctx, name, OPEN_READ); /* NULL: no such key */
    int want = kind == F_LLEN                                                 ? KEYTYPE_LIST
               : (kind == F_ZCARD || kind == F_ZSCORE || kind == F_ZRANGE) ? KEYTYPE_ZSET
               : (kind == F_STRLEN || kind == F_GETBIT)                    ? KEYTYPE_STRING
                                                                           : KEYTYPE_HASH;
    int type = KeyType(key);
    int done = 1;
    if (type != KEYTYPE_EMPTY && type != want) {
        put_str(io, EMQ_REPLY_ERROR, WRONGTYPE, sizeof(WRONGTYPE) - 1);
        *failed = 1;
    } else if (kind == F_ZCARD || kind == F_LLEN || kind == F_STRLEN) {
        put_int(io, key ? (long long)ValueLength(key) : 0);
    } else if (kind == F_GETBIT) {
        /* 0 past the end (or for no key), as GETBIT answers; a bit inside a
         * short string goes through RM_Call (see embed_max) */
        size_t len = key ? ValueLength(key) : 0;
        size_t byte = (size_t)(bitoff >> 3);
        long long bit = 0;
        if (byte < len && len <= embed_max) {
            done = 0;
        } else if (byte < len) {
            size_t n = 0;
            const unsigned char *p = (const unsigned char *)StringDMA(key, &n, OPEN_READ);
            if (!p || byte >= n) {
                done = 0;
            } else {
                bit = (p[byte] >> (7 - (bitoff & 7))) & 1;
            }
        }
        if (done) {
            put_int(io, bit);
        }
    } else if (kind == F_ZRANGE) {
        /* the first min(stop + 1, size) members, in the set's order (score,
         * then member), as ZRANGE by rank gives them */
        /* (WITHSCORES: each member then its score, as ZSCORE writes it; a
         * score the server formats with its own routine sends the whole read
         * through RM_Call, the reply written so far taken back) */
        size_t size = key ? ValueLength(key) : 0;
        size_t n = (unsigned long long)stop + 1 < size ? (size_t)stop + 1 : size;
        size_t mark = io->out.len;
        put_u8(io, EMQ_REPLY_ARRAY);
        put_u32(io, scores ? 2 * n : n);
        if (n > 0 && ZsetFirstInScoreRange(key, -INFINITY, INFINITY, 0, 0) == EMQ_OK) {
            size_t got = 0;
            for (; got < n && !ZsetRangeEndReached(key); got++) {
                double score;
                void *m = ZsetRangeCurrentElement(key, &score);
                size_t len = 0;
                const char *p = m ? StringPtrLen(m, &len) : "";
                put_str(io, EMQ_REPLY_STRING, p, len);
                if (m) FreeString(e->ctx, m);
                if (scores) {
                    char text[32];
                    size_t tn = score_text(text, score);
                    if (tn == 0) {
                        done = 0;
                        break;
                    }
                    put_str(io, EMQ_REPLY_STRING, text, tn);
                }
                ZsetRangeNext(key);
            }
            if (!done) {
                if (!io->oom) io->out.len = mark;
                got = n;
            }
            ZsetRangeStop(key);
            if (got != n) io->oom = 1; /* cannot happen: the reply is refused as a whole */
        } else if (n > 0) {
            io->oom = 1;
        }
    } else if (kind == F_HGET) {
        put_field(e, key, &a[1]);
    } else if (kind == F_HMGET) {
        put_u8(io, EMQ_REPLY_ARRAY);
        put_u32(io, nargs - 1);
        for (uint32_t i = 1; i < nargs; i++) put_field(e, key, &a[i]);
    } else { /* F_ZSCORE */
        double score;
        int mown;
        char text[32];
        size_t n = 0;
        void *member = key ? arg_string(e, &a[1], &mown) : NULL;
        int found = key && ZsetScore(key, member, &score) == EMQ_OK;
        if (member) release(e, member, mown);
        if (!found) {
            put_u8(io, EMQ_REPLY_NULL);
        } else if ((n = score_text(text, score)) > 0) {
            put_str(io, EMQ_REPLY_STRING, text, n);
        } else {
            done = 0;
        }
    }
    CloseKey(key);
    release(e, name, own);
    return done;
}

/* ---- the write fast path ----
 *
 * The writes the verbs make most (HSET, HINCRBY, ZADD of scores without
 * options, ZREM, ZPOPMIN with a count, and the events' XADD: see
 * xadd_write) go through the key API instead of RM_Call, with what
 * each command does beside the data, in its order: the same lookup (a
 * write lookup, which deletes a key found expired), the same change of the
 * data through the server's own functions (hashTypeSet, zsetAdd, zsetDel,
 * which convert encodings as the commands do), the key signalled
 * as modified (WATCH, client tracking; the module declares
 * NO_IMPLICIT_SIGNAL_MODIFIED), the keyspace events the command fires, and
 * the command itself replicated as the write's effect when the command
 * would have propagated it (it changed something), in the MULTI/EXEC of
 * the EMQ command's writes, in order with those that go through RM_Call.
 * The reply is the command's.
 *
 * A write is taken here only when the outcome is the command's for sure;
 * every other goes through RM_Call, which answers in the server's words:
 * a key of another type, a score or an increment that is not a canonical
 * integer (within 2^53 for a score), a count of ZPOPMIN that is not a
 * canonical positive integer, a score ZPOPMIN would write with the
 * server's own digits (see score_text), an option, a repeated field or member
 * (the commands size their encodings by the argument count: with the
 * arguments distinct, the count a write ends with is at least that), a
 * hash value that is not a canonical integer for HINCRBY, an increment
 * that would overflow.
 *
 * DEL stays with RM_Call: the key API deletes an open key by looking it up
 * again, where DEL looks it up once, so a DEL of many rows (COMPLETEMANY)
 * costs more through the key API than through RM_Call.
 *
 * What differs from RM_Call, and is not the data: the commands' own
 * counters (INFO commandstats lists no nested HSET), and the server's
 * dirty count (what drives the save points), which counts one change per
 * replicated write instead of one per field or member changed. */

enum { W_SLOW, W_HSET, W_HINCRBY, W_ZADD, W_ZREM, W_ZPOPMIN, W_XADD };

static int write_kind(const char *name, size_t len, uint32_t nargs) {
#define IS(s) (len == sizeof(s) - 1 && !memcmp(name, s, sizeof(s) - 1))
    if (IS("HSET")) return nargs >= 3 && nargs % 2 == 1 ? W_HSET : W_SLOW;
    if (IS("HINCRBY")) return nargs == 3 ? W_HINCRBY : W_SLOW;
    if (IS("ZADD")) return nargs >= 3 && nargs % 2 == 1 ? W_ZADD : W_SLOW;
    if (IS("ZREM")) return nargs >= 2 ? W_ZREM : W_SLOW;
    if (IS("ZPOPMIN")) return nargs == 2 && zset_range ? W_ZPOPMIN : W_SLOW;
    if (IS("XADD")) return nargs >= 4 && stream_api ? W_XADD : W_SLOW;
    return W_SLOW;
#undef IS
}

static int same_arg(const arg *x, const arg *y) { return x->n == y->n && !memcmp(x->p, y->p, x->n); }

/* distinct reports whether a[first], a[first + step], ... below nargs are
 * all different (0 also when it cannot tell: no memory). */
static int distinct(const arg *a, uint32_t first, uint32_t nargs, uint32_t step) {
    uint32_t count = first < nargs ? (nargs - first + step - 1) / step : 0;
    if (count <= 8) {
        for (uint32_t i = first; i < nargs; i += step)
            for (uint32_t j = first; j < i; j += step)
                if (same_arg(&a[i], &a[j])) return 0;
        return 1;
    }
    /* an open-addressing set of indexes + 1, at most half full */
    size_t cap = 32;
    while (cap < 2 * (size_t)count) cap *= 2;
    uint32_t stack[512];
    uint32_t *slot = cap <= 512 ? stack : calloc(cap, sizeof(uint32_t));
    if (!slot) return 0;
    if (slot == stack) memset(stack, 0, cap * sizeof(uint32_t));
    int ok = 1;
    for (uint32_t i = first; i < nargs && ok; i += step) {
        uint32_t h = 2166136261u; /* FNV-1a */
        for (size_t k = 0; k < a[i].n; k++) h = (h ^ (unsigned char)a[i].p[k]) * 16777619u;
        size_t at = h & (cap - 1);
        while (ok && slot[at]) {
            ok = !same_arg(&a[slot[at] - 1], &a[i]);
            at = (at + 1) & (cap - 1);
        }
        if (ok) slot[at] = i + 1;
    }
    if (slot != stack) free(slot);
    return ok;
}

/* The score of a ZADD taken here: a canonical integer within 2^53, which
 * ZADD reads as the same double. */
static int zadd_score(const arg *s, double *d) {
    long long v;
    if (!canon_ll(s->p, s->n, &v) || v > (1LL << 53) || v < -(1LL << 53)) return 0;
    *d = (double)v;
    return 1;
}

/* release_write frees a string of write_strings: own 1 made with the
 * context, 2 a kept one retained. */
static void release_write(const exec_env *e, void *s, unsigned char own) {
    if (own) FreeString(own == 2 ? NULL : e->ctx, s);
}

/* The server strings of a write's arguments: the program's own names kept
 * (intern) and retained for the write, since a later name may take a kept
 * one's slot (see intern), the command's own passed on, the others made;
 * own[i] says how to release sv[i] (release_write). Returns 0 when a
 * string could not be made. */
static int write_strings(const exec_env *e, const arg *a, uint32_t nargs, void **sv, unsigned char *own) {
    for (uint32_t i = 0; i < nargs; i++) {
        int o = 2;
        void *s = a[i].ref == -2 ? intern(&a[i]) : NULL;
        if (s) {
            RetainString(NULL, s);
        } else {
            s = arg_string(e, &a[i], &o);
        }
        sv[i] = s;
        own[i] = (unsigned char)o;
        if (!s) {
            for (uint32_t j = 0; j < i; j++) release_write(e, sv[j], own[j]);
            return 0;
        }
    }
    return 1;
}

/* zpopmin pops the first count members of key (open for writing, a zset or
 * empty) as ZPOPMIN key count does (sv: the key and the count as server
 * strings): its reply (members and scores, flat, as in RESP2), the
 * members removed, the events zpopmin (once) and del (when the set
 * empties), the key signalled, the command replicated. Nothing is written
 * when it returns 0 (a score the server formats with its own routine),
 * and the key is closed either way. */
static int zpopmin(const exec_env *e, void *key, void **sv, size_t count) {
    void *ctx = e->ctx;
    emq_io *io = e->io;
    size_t len = key ? ValueLength(key) : 0;
    size_t n = count < len ? count : len;
    if (n == 0) { /* no key: an empty array, and nothing else */
        CloseKey(key);
        put_u8(io, EMQ_REPLY_ARRAY);
        put_u32(io, 0);
        return 1;
    }
    void *stack_m[STACK_ARGS];
    void **m = n <= STACK_ARGS ? stack_m : malloc(sizeof(void *) * n);
    if (!m) {
        CloseKey(key);
        return 0;
    }
    size_t mark = io->out.len, got = 0;
    int ok = ZsetFirstInScoreRange(key, -INFINITY, INFINITY, 0, 0) == EMQ_OK;
    put_u8(io, EMQ_REPLY_ARRAY);
    put_u32(io, 2 * n);
    while (ok && got < n && !ZsetRangeEndReached(key)) {
        double score;
        char text[32];
        size_t tn, ln = 0;
        void *el = ZsetRangeCurrentElement(key, &score);
        if (!el) {
            ok = 0;
            break;
        }
        m[got++] = el;
        const char *p = StringPtrLen(el, &ln);
        if ((tn = score_text(text, score)) == 0) {
            ok = 0;
            break;
        }
        put_str(io, EMQ_REPLY_STRING, p, ln);
        put_str(io, EMQ_REPLY_STRING, text, tn);
        ZsetRangeNext(key);
    }
    ZsetRangeStop(key);
    ok = ok && got == n;
    for (size_t i = 0; ok && i < n; i++) ZsetRem(key, m[i], NULL);
    int removed = ok && KeyType(key) == KEYTYPE_EMPTY;
    CloseKey(key);
    for (size_t i = 0; i < got; i++) FreeString(ctx, m[i]);
    if (m != stack_m) free(m);
    if (!ok) {
        if (!io->oom) io->out.len = mark; /* the reply taken back: RM_Call answers */
        return 0;
    }
    NotifyKeyspaceEvent(ctx, NOTIFY_ZSET, "zpopmin", sv[0]);
    if (removed) NotifyKeyspaceEvent(ctx, NOTIFY_GENERIC, "del", sv[0]);
    SignalModifiedKey(ctx, sv[0]);
    Replicate(ctx, "ZPOPMIN", "v", sv, (size_t)2);
    return 1;
}

/* XADD's approximate trim (MAXLEN ~) removes whole nodes, and at most a
 * limit of entries a call: 100 times stream-node-max-entries, which XADD
 * makes 10000 when that is 0 and caps at 1000000, and the key API's trim
 * takes as it is (0: no limit). With at most XADD_TRIM_SAME entries over
 * the bound, no limit of either is reached, and both trims remove the same
 * nodes. */
#define XADD_TRIM_SAME 100

/* The most bytes of fields and values an XADD takes here: far below the
 * stream's bound on an entry (1 GB), which would refuse it having created
 * the key. */
#define XADD_ENTRY_MAX (1 << 20)

/* xadd_write runs XADD key [MAXLEN ~ <count>] * <field> <value> ... (a job
 * event's entry, a PUBLISH) through the key API, as xaddCommand does it:
 * the write lookup, the stream created if absent (the new event), the
 * entry appended with an id generated from the command's clock
 * (StreamAdd), the xadd event, the trim and its xtrim event when it
 * removed entries, the key signalled as modified and, on closing it, as
 * ready for blocked readers, and the command replicated as XADD propagates
 * it: with the id it generated and the trim made exact (MAXLEN = <the
 * length left>). The reply is the id. Returns 0, having written nothing,
 * for RM_Call to run it: another option or spelling, an explicit id, an
 * odd count of fields and values, a bound not in canonical digits, a key
 * of another type, more than XADD_TRIM_SAME entries over the bound, an
 * entry of more than XADD_ENTRY_MAX bytes, a stream at the last possible
 * id (StreamAdd refuses it before it writes). */
static int xadd_write(const exec_env *e, const char *name, const arg *a, uint32_t nargs) {
    long long maxlen = -1;
    uint32_t at = 1; /* the id's argument */
    if (a[1].n == 6 && !memcmp(a[1].p, "MAXLEN", 6)) {
        if (nargs < 5 || a[2].n != 1 || a[2].p[0] != '~' || !canon_ll(a[3].p, a[3].n, &maxlen) || maxlen < 0)
            return 0;
        at = 4;
    }
    uint32_t nf = nargs - at - 1; /* fields and values (write_kind: nargs >= 4, so at < nargs) */
    if (a[at].n != 1 || a[at].p[0] != '*' || nf < 2 || nf % 2) return 0;
    size_t bytes = 0;
    for (uint32_t i = at + 1; i < nargs; i++) bytes += a[i].n;
    if (bytes > XADD_ENTRY_MAX) return 0;
    /* sv: the key, then the fields and values; the program's names as the
     * kept strings, held for the call (XADD copies them into the stream,
     * and the replicated command takes its own references) */
    uint32_t nv = nf + 1;
    args_buf buf;
    int done = args_buf_init(&buf, nv);
    void **sv = buf.sv;
    uint32_t made = 0;
    intern_hold();
    for (; done && made < nv; made++) {
        const arg *x = made == 0 ? &a[0] : &a[at + made];
        int o = 0;
        void *s = x->ref == -2 ? intern(x) : NULL;
        if (!s) s = arg_string(e, x, &o);
        if (!s) {
            done = 0;
            break;
        }
        sv[made] = s;
        buf.own[made] = (unsigned char)o;
    }
    void *ctx = e->ctx;
    void *key = done ? OpenKey(ctx, sv[0], OPEN_WRITE) : NULL;
    int type = key ? KeyType(key) : -1;
    done = type == KEYTYPE_EMPTY || type == KEYTYPE_STREAM;
    if (done && maxlen >= 0 && (long long)ValueLength(key) + 1 - maxlen > XADD_TRIM_SAME) done = 0;
    stream_id id = {0, 0};
    if (done) done = StreamAdd(key, STREAM_ADD_AUTOID, &id, sv + 1, (long)(nf / 2)) == EMQ_OK;
    if (done) {
        NotifyKeyspaceEvent(ctx, NOTIFY_STREAM, "xadd", sv[0]);
        long long len = 0;
        if (maxlen >= 0) {
            if (StreamTrimByLength(key, STREAM_TRIM_APPROX, maxlen) > 0)
                NotifyKeyspaceEvent(ctx, NOTIFY_STREAM, "xtrim", sv[0]);
            len = (long long)ValueLength(key);
        }
        CloseKey(key); /* signals the readers blocked on the stream */
        key = NULL;
        SignalModifiedKey(ctx, sv[0]);
        char text[48];
        size_t n = u64_digits(text, id.ms);
        text[n++] = '-';
        n += u64_digits(text + n, id.seq);
        if (maxlen >= 0) {
            Replicate(ctx, name, "sbblbv", sv[0], a[1].p, a[1].n, "=", (size_t)1, len, text, n, sv + 1, (size_t)nf);
        } else {
            Replicate(ctx, name, "sbv", sv[0], text, n, sv + 1, (size_t)nf);
        }
        put_str(e->io, EMQ_REPLY_STRING, text, n);
    }
    CloseKey(key);
    for (uint32_t i = 0; i < made; i++) release(e, sv[i], buf.own[i]);
    intern_release();
    args_buf_free(&buf);
    return done;
}

/* key_write runs one write of write_kind through the key API (see above).
 * Returns 0, having done nothing, for the write to go through RM_Call;
 * otherwise 1, its reply encoded. */
static int key_write(const exec_env *e, int kind, const char *name, const arg *a, uint32_t nargs) {
    if (kind == W_XADD) return xadd_write(e, name, a, nargs);
    double stack_scores[STACK_ARGS / 2];
    double *scores = NULL;
    long long incr = 0;
    if (kind == W_ZADD) {
        uint32_t pairs = (nargs - 1) / 2;
        scores = pairs <= STACK_ARGS / 2 ? stack_scores : malloc(sizeof(double) * pairs);
        if (!scores) return 0;
        int ok = distinct(a, 2, nargs, 2);
        for (uint32_t i = 0; ok && i < pairs; i++) ok = zadd_score(&a[1 + 2 * i], &scores[i]);
        if (!ok) {
            if (scores != stack_scores) free(scores);
            return 0;
        }
    } else if (kind == W_HSET) {
        if (!distinct(a, 1, nargs, 2)) return 0;
    } else if (kind == W_HINCRBY) {
        if (!canon_ll(a[2].p, a[2].n, &incr)) return 0;
    } else if (kind == W_ZPOPMIN) {
        if (!canon_ll(a[1].p, a[1].n, &incr) || incr < 1) return 0;
    }
    args_buf buf;
    int done = args_buf_init(&buf, nargs) && write_strings(e, a, nargs, buf.sv, buf.own);
    if (!done) {
        args_buf_free(&buf);
        if (scores && scores != stack_scores) free(scores);
        return 0;
    }
    void **sv = buf.sv;
    void *ctx = e->ctx;
    emq_io *io = e->io;
    void *key = OpenKey(ctx, sv[0], OPEN_WRITE);
    int type = KeyType(key);
    int want = kind == W_HSET || kind == W_HINCRBY ? KEYTYPE_HASH : KEYTYPE_ZSET;
    long long value = 0;
    void *old = NULL;
    if (type != KEYTYPE_EMPTY && type != want) {
        done = 0; /* RM_Call answers WRONGTYPE */
    } else if (kind == W_HINCRBY) {
        if (key && type == KEYTYPE_HASH) HashGet(key, HASH_NONE, sv[1], &old, NULL);
        if (old) {
            size_t n = 0;
            const char *p = StringPtrLen(old, &n);
            done = canon_ll(p, n, &value);
            FreeString(ctx, old);
        }
        if (done && ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
                     (incr > 0 && value > 0 && incr > LLONG_MAX - value)))
            done = 0; /* RM_Call refuses the overflow */
        value += done ? incr : 0;
    }
    if (!done) {
        CloseKey(key);
    } else if (kind == W_HSET) {
        long long updated = 0;
        for (uint32_t i = 1; i < nargs; i += 2) updated += HashSet(key, HASH_NONE, sv[i], sv[i + 1], NULL);
        CloseKey(key);
        SignalModifiedKey(ctx, sv[0]);
        NotifyKeyspaceEvent(ctx, NOTIFY_HASH, "hset", sv[0]);
        Replicate(ctx, name, "v", sv, (size_t)nargs);
        put_int(io, (long long)(nargs - 1) / 2 - updated);
    } else if (kind == W_HINCRBY) {
        char digits[24];
        size_t n = ll_digits(digits, value);
        void *v = CreateString(ctx, digits, n);
        if (v) HashSet(key, HASH_NONE, sv[1], v, NULL);
        CloseKey(key);
        if (v) {
            FreeString(ctx, v);
            SignalModifiedKey(ctx, sv[0]);
            NotifyKeyspaceEvent(ctx, NOTIFY_HASH, "hincrby", sv[0]);
            Replicate(ctx, name, "v", sv, (size_t)nargs);
            put_int(io, value);
        } else {
            done = 0; /* nothing written: RM_Call makes its own strings */
        }
    } else if (kind == W_ZADD) {
        long long added = 0, updated = 0;
        for (uint32_t i = 1; i < nargs; i += 2) {
            int flags = 0;
            ZsetAdd(key, scores[(i - 1) / 2], sv[i + 1], &flags);
            added += (flags & ZADD_OUT_ADDED) != 0;
            updated += (flags & ZADD_OUT_UPDATED) != 0;
        }
        CloseKey(key);
        if (added || updated) {
            SignalModifiedKey(ctx, sv[0]);
            NotifyKeyspaceEvent(ctx, NOTIFY_ZSET, "zadd", sv[0]);
            Replicate(ctx, name, "v", sv, (size_t)nargs);
        }
        put_int(io, added);
    } else if (kind == W_ZPOPMIN) {
        done = zpopmin(e, key, sv, (size_t)incr);
    } else { /* W_ZREM */
        long long deleted = 0;
        int removed = 0;
        for (uint32_t i = 1; i < nargs && type == KEYTYPE_ZSET && !removed; i++) {
            int d = 0;
            ZsetRem(key, sv[i], &d);
            deleted += d;
            removed = KeyType(key) == KEYTYPE_EMPTY;
        }
        CloseKey(key);
        if (deleted) {
            NotifyKeyspaceEvent(ctx, NOTIFY_ZSET, "zrem", sv[0]);
            if (removed) NotifyKeyspaceEvent(ctx, NOTIFY_GENERIC, "del", sv[0]);
            SignalModifiedKey(ctx, sv[0]);
            Replicate(ctx, name, "v", sv, (size_t)nargs);
        }
        put_int(io, deleted);
    }
    for (uint32_t i = 0; i < nargs; i++) release_write(e, sv[i], buf.own[i]);
    args_buf_free(&buf);
    if (scores && scores != stack_scores) free(scores);
    return done;
}

/* ---- RM_Call ---- */

/* One specifier of a write's format and its two variadic arguments: 'b' with
 * the bytes and their length, or 'v' with a vector of strings and its length.
 * Both take a pointer and a size_t, so one call passes any mix of them. */
typedef struct {
    const void *p;
    size_t n;
} spec;

/* write_call runs a write through RM_Call: the arguments copied as fresh
 * buffers, the others shared in vectors (see WRITE_SPECS). sv has room for
 * every argument; *made is how many strings it put there, to release (own
 * 1 with the context, 2 without, 0 not). An XADD (a job event's entry)
 * passes the program's own strings as the kept ones of intern, held for
 * the call (intern_hold) with no string made or retained: XADD copies
 * every argument into the stream, so nothing keeps them, and its entries
 * are mostly such names (event, id, the events' names and fields). */
static void *write_call(const exec_env *e, const char *name, const arg *a, uint32_t nargs, void **sv,
                        unsigned char *own, size_t *made) {
    spec sp[WRITE_SPECS];
    char fmt[WRITE_SPECS + sizeof(FORMAT_WRITE)];
    int ns = 0;
    size_t nv = 0;
    int share = strcmp(name, "XADD") == 0;
    if (share) intern_hold();
    for (uint32_t i = 0; i < nargs; i++) {
        int last = ns >= WRITE_SPECS - 1; /* the last specifier takes the rest */
        void *kept = share && a[i].ref == -2 ? intern(&a[i]) : NULL;
        if (!kept && !last && !scripts_hold_args && (a[i].ref < 0 || a[i].n <= embed_max)) {
            fmt[ns] = 'b';
            sp[ns++] = (spec){a[i].p, a[i].n};
            continue;
        }
        int o = 2;
        if (kept) {
            /* held (intern_hold): a later intern may replace its slot
             * during the call, and leaves it to intern_release */
            o = 0;
            sv[nv] = kept;
        } else {
            sv[nv] = arg_string(e, &a[i], &o);
        }
        own[nv] = (unsigned char)o;
        if (ns > 0 && fmt[ns - 1] == 'v') {
            sp[ns - 1].n++;
        } else {
            fmt[ns] = 'v';
            sp[ns++] = (spec){&sv[nv], 1};
        }
        nv++;
    }
    *made = nv;
    /* FORMAT_WRITE with its 'v' spread into the specifiers */
    memcpy(fmt + ns, FORMAT_WRITE + 1, sizeof(FORMAT_WRITE) - 1);
    for (int i = ns; i < WRITE_SPECS; i++) sp[i] = (spec){NULL, 0}; /* passed, never read */
    errno = 0;
#define S(i) sp[i].p, sp[i].n
    void *r = Call(e->ctx, name, fmt, S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7), S(8), S(9), S(10), S(11), S(12),
                   S(13), S(14), S(15));
#undef S
    if (share) {
        int err = errno;
        intern_release();
        errno = err;
    }
    return r;
}

/* call runs one command through RM_Call and encodes its reply. Returns 1 when
 * the reply is an error or the call failed. */
static int call(const exec_env *e, const char *name, const arg *a, uint32_t nargs, int write) {
    emq_io *io = e->io;
    args_buf buf;
    if (!args_buf_init(&buf, nargs)) { /* cannot build the arguments: report as a failed call */
        args_buf_free(&buf);
        put_u8(io, EMQ_NODE_CALLFAIL);
        put_i64(io, ENOMEM);
        return 1;
    }
    void **sv = buf.sv;
    unsigned char *own = buf.own;
    size_t nv = 0; /* strings made for the call, to release after it */
    void *r = NULL;
    int err = ESPIPE;
    if (!script_in_script(e->ctx, name)) {
        if (write == 1) {
            r = write_call(e, name, a, nargs, sv, own, &nv);
            err = errno;
        } else {
            for (; nv < nargs; nv++) {
                int o;
                sv[nv] = arg_string(e, &a[nv], &o);
                own[nv] = (unsigned char)o;
            }
            errno = 0;
            r = Call(e->ctx, name, write == 2 ? FORMAT_NESTED : FORMAT_READ, sv, nv);
            err = errno;
        }
    }
    for (size_t i = 0; i < nv; i++) release_write(e, sv[i], own[i]);
    args_buf_free(&buf);
    if (!r) {
        put_u8(io, EMQ_NODE_CALLFAIL);
        put_i64(io, err);
        return 1;
    }
    int failed = CallReplyType(r) == EMQ_REPLY_ERROR;
    /* the reply is kept until the command ends when a string of it goes by
     * reference; when the list cannot grow, it is encoded by copy */
    int kept = 0;
    encode(io, r, 0, keep_room(io) == 0 ? &kept : NULL);
    if (kept) {
        keep(io, r, 1);
    } else {
        FreeCallReply(r);
    }
    return failed;
}

static uint32_t rd32(const unsigned char **p) { uint32_t v; memcpy(&v, *p, 4); *p += 4; return v; }

/* emq_exec runs the host commands encoded in io->req and encodes their replies
 * into io->out. Request: uint32 command count; per command uint32 argument
 * count, uint32 name length, the name and a NUL, then per argument a kind byte
 * (0: uint32 length and bytes; 1: uint32 index into the command's own argv,
 * passed without a copy; 2: as 0, for a string of the program's own). write
 * is 0 for a read batch, 1 for a write batch, 2 for a debug command's nested
 * call (FORMAT_NESTED). With stop_on_error it stops after the first error reply or failed call. Returns
 * how many commands ran. */
int emq_exec(uintptr_t ctxp, uintptr_t argvp, int argc, uintptr_t iop, int write, int stop_on_error) {
    exec_env e = {(void *)ctxp, (void **)argvp, (emq_io *)iop};
    emq_io *io = e.io;
    const unsigned char *p = io->req.p;
    int fast = fast_reads && !write;
    int fastw = key_writes && write == 1;
    io->out.len = 0;
    io->oom = 0;
    io->ncalls = 0;
    uint32_t ncmds = rd32(&p);
    for (uint32_t c = 0; c < ncmds; c++) {
        uint32_t nargs = rd32(&p);
        uint32_t name_len = rd32(&p);
        const char *name = (const char *)p;
        p += name_len + 1;
        arg stack_a[STACK_ARGS];
        arg *a = nargs <= STACK_ARGS ? stack_a : malloc(sizeof(arg) * nargs);
        if (!a) { /* cannot build the arguments: report as a failed call */
            put_u8(io, EMQ_NODE_CALLFAIL);
            put_i64(io, ENOMEM);
            io->ncalls++;
            break;
        }
        for (uint32_t i = 0; i < nargs; i++) {
            unsigned kind = *p++;
            uint32_t v = rd32(&p);
            a[i].ref = -1;
            if (kind == 1 && (int)v < argc) {
                a[i].ref = (int)v;
                a[i].p = StringPtrLen(e.argv[v], &a[i].n);
            } else if (kind == 1) { /* Go checked the index; an empty string keeps a bug harmless */
                a[i].p = "";
                a[i].n = 0;
            } else {
                a[i].p = (const char *)p;
                a[i].n = v;
                p += v;
                if (kind == 2) a[i].ref = -2;
            }
        }
        int failed = 0;
        int kind = fast ? fast_kind(name, name_len, nargs) : SLOW;
        int wkind = fastw ? write_kind(name, name_len, nargs) : W_SLOW;
        if (wkind != W_SLOW) {
            if (!key_write(&e, wkind, name, a, nargs)) failed = call(&e, name, a, nargs, write);
        } else if (kind == SLOW || !fast_read(&e, kind, a, nargs, &failed)) {
            failed = call(&e, name, a, nargs, write);
        }
        if (a != stack_a) free(a);
        io->ncalls++;
        if (failed && stop_on_error) break;
    }
    return io->ncalls;
}

/* ---- the TRA family's bits ----
 *
 * TRA.SETBIT and TRA.GETBIT reach argv[1] through the key API, with the
 * semantics of SETBIT and GETBIT: a write lookup for SETBIT (as SETBIT's,
 * which deletes a key found expired and counts no keyspace hit or miss), a
 * read lookup for GETBIT. SETBIT unshares an existing string before it looks
 * at its bit, which leaves it raw whatever it was (embstr, int): the write
 * access to the string (DMA) does the same. A bit is written exactly as
 * setbitCommand writes it: the string created or grown with zeros to hold
 * the offset's byte (StringTruncate: sdsnewlen for a new key, sdsgrowzero
 * for a short one, as SETBIT allocates them), the bit flipped in place, and
 * then the key signalled as modified (WATCH, client tracking; the module
 * declares NO_IMPLICIT_SIGNAL_MODIFIED, so closing a key opened for writing
 * signals nothing by itself), the keyspace event "setbit" of class string,
 * and the command replicated verbatim, which counts one change in the
 * server's dirty counter as SETBIT's own increment does. A call that changes
 * nothing signals, notifies, counts and replicates nothing.
 *
 * An offset of SMALL_BIT_OFFSETS or more is checked against the server's
 * bound first, as SETBIT and GETBIT check it (8 bits a byte of
 * proto-max-bulk-len, read with CONFIG GET): past it the call does not
 * answer, and the handler runs the server's command, which refuses it in
 * its own words.
 *
 * The Go handlers reach this through emq_bit, one host call; emq_preanswer
 * answers in the trampoline, without entering Go: every TRA.SETBIT, and the
 * TRA.GETBIT calls that need no RM_Call's reply read in Go. */

static int bit_at(const unsigned char *p, long long offset) { return (p[offset >> 3] >> (7 - (offset & 7))) & 1; }

/* getbit_call answers GETBIT argv[1] argv[2] through RM_Call, for a bit
 * inside a string of at most embed_max bytes (see embed_max). Returns
 * the bit, or -1 when the reply is not an integer. */
static int getbit_call(void *ctx, void **argv) {
    errno = 0;
    void *r = Call(ctx, "GETBIT", FORMAT_READ, &argv[1], (size_t)2);
    if (!r) return -1;
    int bit = CallReplyType(r) == EMQ_REPLY_INTEGER ? (int)CallReplyInteger(r) : -1;
    FreeCallReply(r);
    return bit == 0 || bit == 1 ? bit : -1;
}

/* bit_bound reports whether a large offset is within the server's bound
 * (see above): 1 within, 0 past it or when the bound cannot be read. A
 * command the server must obey (its primary's, or the AOF's while it
 * loads) is within it, as SETBIT's is (mustObeyClient): a replica or a
 * restart with a lower proto-max-bulk-len applies what the primary
 * applied. */
static int bit_bound(void *ctx, long long offset) {
    if (GetContextFlags(ctx) & (CTX_FLAGS_REPLICATED | CTX_FLAGS_LOADING)) return 1;
    errno = 0;
    void *r = Call(ctx, "CONFIG", "cc", "GET", "proto-max-bulk-len");
    if (!r) return 0;
    long long max = -1;
    if (CallReplyType(r) == EMQ_REPLY_ARRAY && CallReplyLength(r) == 2) {
        size_t n = 0;
        const char *p = CallReplyStringPtr(CallReplyArrayElement(r, 1), &n);
        char buf[32];
        if (p && n > 0 && n < sizeof(buf)) {
            memcpy(buf, p, n);
            buf[n] = 0;
            char *end;
            errno = 0;
            max = strtoll(buf, &end, 10);
            if (errno || *end) max = -1;
        }
    }
    FreeCallReply(r);
    return max > 0 && (offset >> 3) < max;
}

/* bit_read reads the bit at offset of key, opened for reading, as GETBIT
 * reads it, into *seen. */
static void bit_read(void *ctx, void **argv, void *key, long long offset, emq_bit_seen *seen) {
    int type = KeyType(key);
    if (type != KEYTYPE_EMPTY && type != KEYTYPE_STRING) {
        seen->status = EMQ_BIT_WRONGTYPE;
        return;
    }
    size_t byte = (size_t)(offset >> 3);
    size_t len = type == KEYTYPE_STRING ? ValueLength(key) : 0;
    seen->len = (long long)len;
    if (byte >= len) return;
    const unsigned char *p = NULL;
    if (len > embed_max) {
        p = (const unsigned char *)StringDMA(key, &len, OPEN_READ);
        if (!p || byte >= len) {
            seen->status = EMQ_BIT_SLOW;
            return;
        }
    }
    int bit = p ? bit_at(p, offset) : getbit_call(ctx, argv);
    if (bit < 0) seen->status = EMQ_BIT_SLOW;
    seen->bit = bit < 0 ? 0 : bit;
}

/* bit_write reads the bit at offset of key, opened for writing, as SETBIT
 * reads it, and writes the value (bit 4 of plan) exactly when the plan (its
 * low four bits, a verdict.SetBitPlan: bit 2*previous+inside set) says so
 * for what it saw, with everything SETBIT does beside the data; *seen
 * receives what it saw and whether it wrote. */
static void bit_write(void *ctx, void **argv, void *key, long long offset, int plan, emq_bit_seen *seen) {
    int type = KeyType(key);
    if (type != KEYTYPE_EMPTY && type != KEYTYPE_STRING) {
        seen->status = EMQ_BIT_WRONGTYPE;
        return;
    }
    size_t byte = (size_t)(offset >> 3), len = 0;
    unsigned char *p = NULL;
    if (type == KEYTYPE_STRING) {
        p = (unsigned char *)StringDMA(key, &len, OPEN_WRITE);
        if (!p) {
            seen->status = EMQ_BIT_SLOW;
            return;
        }
    }
    int inside = byte < len;
    seen->len = (long long)len;
    seen->bit = inside ? bit_at(p, offset) : 0;
    if (!(plan >> (2 * seen->bit + inside) & 1)) return;
    if (!inside) p = StringTruncate(key, byte + 1) == EMQ_OK ? (unsigned char *)StringDMA(key, &len, OPEN_WRITE) : NULL;
    if (!p || byte >= len) {
        seen->status = EMQ_BIT_SLOW; /* cannot happen: the offset is at most 2^32-1 and the key a string */
        return;
    }
    unsigned char mask = (unsigned char)(1u << (7 - (offset & 7)));
    p[byte] = plan >> 4 & 1 ? (unsigned char)(p[byte] | mask) : (unsigned char)(p[byte] & ~mask);
    SignalModifiedKey(ctx, argv[1]);
    NotifyKeyspaceEvent(ctx, NOTIFY_STRING, "setbit", argv[1]);
    emq_replicate_verbatim((uintptr_t)ctx);
    seen->wrote = 1;
}

/* emq_bit is a Go handler's one host call on argv[1], the bit at offset
 * (argv[2] spells it): without write it reads as GETBIT does (bit_read),
 * with write (TRA.SETBIT, past the guard) as SETBIT does, writing as the
 * plan says (bit_write). io->seen receives what it saw and whether it
 * wrote. */
int emq_bit(uintptr_t ctxp, uintptr_t argvp, uintptr_t iop, long long offset, int write, int plan) {
    void *ctx = (void *)ctxp;
    void **argv = (void **)argvp;
    emq_bit_seen *seen = &((emq_io *)iop)->seen;
    memset(seen, 0, sizeof(*seen));
    if (offset >= SMALL_BIT_OFFSETS && !bit_bound(ctx, offset)) {
        seen->status = EMQ_BIT_SLOW;
        return seen->status;
    }
    void *key = OpenKey(ctx, argv[1], write ? OPEN_WRITE : OPEN_READ);
    if (write) {
        bit_write(ctx, argv, key, offset, plan, seen);
    } else {
        bit_read(ctx, argv, key, offset, seen);
    }
    CloseKey(key);
    return seen->status;
}

/* bit_offset parses a TRA offset as the handler does (grammar.BitOffset):
 * a canonical decimal (digits only, no sign, no leading zero but "0"
 * itself) in 0..2^32-1. Returns -1 for any other. */
static long long bit_offset(const char *p, size_t n) {
    long long v;
    return canon_ll(p, n, &v) && v >= 0 && v <= 4294967295LL ? v : -1;
}

/* bound_refusal answers a TRA.SETBIT whose offset is past the server's
 * bound as the handler does: with the refusal of the server's GETBIT of
 * argv[1] argv[2] (the family's text for WRONGTYPE). Returns 1, or 0 when
 * GETBIT did not refuse (the bound could not be read): the handler runs
 * then. */
static int bound_refusal(void *ctx, void **argv, const emq_cmd *cmd) {
    errno = 0;
    void *r = Call(ctx, "GETBIT", FORMAT_READ, &argv[1], (size_t)2);
    if (!r) return 0;
    size_t n = 0;
    const char *p = CallReplyType(r) == EMQ_REPLY_ERROR ? CallReplyStringPtr(r, &n) : NULL;
    char buf[256];
    int answered = p && n > 0 && n < sizeof(buf) && !memchr(p, 0, n);
    if (answered && n == sizeof(WRONGTYPE) - 1 && !memcmp(p, WRONGTYPE, n)) {
        ReplyWithError(ctx, cmd->setbit_wrongtype);
    } else if (answered) {
        memcpy(buf, p, n);
        buf[n] = 0;
        ReplyWithError(ctx, buf);
    }
    FreeCallReply(r);
    return answered;
}

/* setbit_answer answers TRA.SETBIT key offset value in C as the handler
 * (traSetBit) does, in its order: the offset, the value, the server's
 * bound, the write guard (a paused server reads as ReadBit does and
 * refuses a write), then the one bit call on the key opened for writing,
 * writing as the handler's plan for the value says. Returns 1 when it
 * replied, 0 for the handler to run (a host reply C cannot read). */
static int setbit_answer(void *ctx, void **argv, const emq_cmd *cmd) {
    size_t n;
    const char *p = StringPtrLen(argv[2], &n);
    long long offset = bit_offset(p, n);
    if (offset < 0) return ReplyWithError(ctx, cmd->setbit_offset), 1;
    p = StringPtrLen(argv[3], &n);
    if (n != 1 || (p[0] != '0' && p[0] != '1')) return ReplyWithError(ctx, cmd->setbit_bit), 1;
    int value = p[0] - '0';
    int plan = cmd->setbit_plans[value] | value << 4;
    if (offset >= SMALL_BIT_OFFSETS && !bit_bound(ctx, offset)) return bound_refusal(ctx, argv, cmd);
    int paused = AvoidReplicaTraffic() != 0;
    emq_bit_seen seen;
    memset(&seen, 0, sizeof(seen));
    void *key = OpenKey(ctx, argv[1], paused ? OPEN_READ : OPEN_WRITE);
    if (paused) {
        bit_read(ctx, argv, key, offset, &seen);
    } else {
        bit_write(ctx, argv, key, offset, plan, &seen);
    }
    CloseKey(key);
    switch (seen.status) {
    case EMQ_BIT_WRONGTYPE: ReplyWithError(ctx, cmd->setbit_wrongtype); return 1;
    case EMQ_BIT_OK: break;
    default: return 0;
    }
    if (paused && (plan >> (2 * seen.bit + ((size_t)(offset >> 3) < (size_t)seen.len)) & 1))
        return ReplyWithError(ctx, cmd->setbit_paused), 1;
    ReplyWithLongLong(ctx, seen.bit);
    return 1;
}

/* getbit_answer answers TRA.GETBIT key offset in C as the handler
 * (traGetBit) does, for a canonical offset below SMALL_BIT_OFFSETS on a
 * string or no key. Returns 1 when it replied, 0 for the handler to run. */
static int getbit_answer(void *ctx, void **argv) {
    arg o;
    o.p = StringPtrLen(argv[2], &o.n);
    long long offset = small_offset(&o);
    if (offset < 0) return 0;
    emq_bit_seen seen;
    memset(&seen, 0, sizeof(seen));
    void *key = OpenKey(ctx, argv[1], OPEN_READ);
    bit_read(ctx, argv, key, offset, &seen);
    CloseKey(key);
    if (seen.status != EMQ_BIT_OK) return 0;
    ReplyWithLongLong(ctx, seen.bit);
    return 1;
}

/* emq_preanswer answers a TRA call in the command's trampoline, without
 * entering Go (cmd->preanswer, EMQ_PRE_*; host.Preanswer says which
 * calls). Returns 1 when it replied, 0 for the Go handler to run, having
 * written nothing. */
int emq_preanswer(void *ctx, void **argv, int argc, const emq_cmd *cmd) {
    if (cmd->preanswer == EMQ_PRE_SETBIT) return argc == 4 && setbit_answer(ctx, argv, cmd);
    if (cmd->preanswer == EMQ_PRE_GETBIT) return argc == 3 && getbit_answer(ctx, argv);
    return 0;
}
