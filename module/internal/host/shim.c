/* Entry points, API lookup, command registration, key positions, the
 * per-command trampolines and reply emission.
 *
 * C owns everything the server calls directly, so that a command costs one
 * crossing into Go and a key-position request costs none. Host calls
 * (RM_Call, and the key API answering reads) live in call.c alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "_cgo_export.h"

typedef int (*emq_cmdfunc)(void *ctx, void **argv, int argc);

/* ---- the API functions this file uses, fetched by name at load ---- */
static int (*GetApi)(const char *name, void *out);
static int (*CreateCommand)(void *ctx, const char *name, emq_cmdfunc f, const char *flags, int first, int last, int step);
static void *(*GetCommand)(void *ctx, const char *name);
static int (*SetCommandInfo)(void *cmd, const void *info);
static void (*SetModuleAttribs)(void *ctx, const char *name, int ver, int apiver);
static void (*SetModuleOptions)(void *ctx, int options);
static int (*GetModuleOptionsAll)(void);
static int (*IsModuleNameBusy)(const char *name);
static const char *(*StringPtrLen)(const void *s, size_t *n);
static void *(*CreateString)(void *ctx, const char *p, size_t n);
static void (*FreeString)(void *ctx, void *s);
static int (*ReplyWithError)(void *ctx, const char *err);
static int (*ReplyWithLongLong)(void *ctx, long long v);
static int (*ReplyWithStringBuffer)(void *ctx, const char *p, size_t n);
static int (*ReplyWithString)(void *ctx, void *s);
static int (*ReplyWithNull)(void *ctx);
static int (*ReplyWithArray)(void *ctx, long n);
static int (*AvoidReplicaTraffic)(void);
static long long (*CachedMicroseconds)(void);
static int (*IsKeysPositionRequest)(void *ctx);
static void (*KeyAtPosWithFlags)(void *ctx, int pos, int flags);
static unsigned long long (*GetClientId)(void *ctx);
static void *(*GetClientUserNameById)(void *ctx, uint64_t id);
static int (*GetContextFlags)(void *ctx);
static void *(*GetModuleUserFromUserName)(void *name);
static int (*ACLCheckKeyPermissions)(void *user, void *key, int flags);
static int (*FreeModuleUser)(void *user);
static int (*ACLCheckCommandPermissions)(void *user, void **argv, int argc);
static void (*Log)(void *ctx, const char *level, const char *fmt, ...);
static void *(*GetDetachedThreadSafeContext)(void *ctx);
static void (*FreeThreadSafeContext)(void *ctx);
static void *(*BlockClientOnKeysWithFlags)(void *ctx, emq_cmdfunc reply, emq_cmdfunc timeout,
                                           void (*free_privdata)(void *, void *), long long timeout_ms,
                                           void **keys, int numkeys, void *privdata, int flags);
static void *(*GetBlockedClientPrivateData)(void *ctx);
static void (*SignalKeyAsReady)(void *ctx, void *key);
static int (*GetClientInfoById)(void *ci, uint64_t id);

/* ValkeyModuleClientInfoV1, as the module API lays it out. */
typedef struct {
    uint64_t version;
    uint64_t flags;
    uint64_t id;
    char addr[46];
    uint16_t port;
    uint16_t db;
} emq_client_info;

#define EMQ_CLIENTINFO_FLAG_PUBSUB (1 << 1)

#define CTX_FLAGS_LUA (1 << 0) /* VALKEYMODULE_CTX_FLAGS_LUA */

/* ---- command info, laid out as the module API documents it ---- */
typedef struct {
    const char *notes;
    uint64_t flags;
    int begin_search_type;
    union {
        struct { int pos; } index;
        struct { const char *keyword; int startfrom; } keyword;
    } bs;
    int find_keys_type;
    union {
        struct { int lastkey, keystep, limit; } range;
        struct { int keynumidx, firstkey, keystep; } keynum;
    } fk;
} keyspec;
typedef struct { const char *since, *changes; } history_entry;
typedef struct {
    const char *name; int type; int key_spec_index; const char *token; const char *summary;
    const char *since; int flags; const char *deprecated_since; void *subargs; const char *display_text;
} command_arg;
typedef struct { int version; size_t sizeof_historyentry, sizeof_keyspec, sizeof_arg; } info_version;
typedef struct {
    const info_version *version;
    const char *summary, *complexity, *since;
    history_entry *history;
    const char *tips;
    int arity;
    keyspec *key_specs;
    command_arg *args;
} command_info;
static const info_version INFO_VERSION = {1, sizeof(history_entry), sizeof(keyspec), sizeof(command_arg)};
enum { BS_INDEX = 2 };
enum { FK_RANGE = 2, FK_KEYNUM = 3 };

/* ---- module state ---- */
static emq_table table;   /* the loaded module's commands, read by the trampolines */
static emq_table loading; /* a load in progress: a refused second load must not touch table */
static void *log_ctx; /* a detached context: logs carry the module's name */
static int module_options; /* the options declared at load */
int emq_module_options(void) { return module_options; }
static int depth;
static emq_io ios[EMQ_MAX_DEPTH];
static const char *internal_error = "ERR EMQ internal error"; /* replaced by Go's text at load */

void emq_log(const char *level, const char *msg) {
    if (Log) Log(log_ctx, level, "%s", msg);
}

int emq_buf_reserve(uintptr_t bufp, size_t need) {
    emq_buf *b = (emq_buf *)bufp;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* ---- key positions ---- */

/* emq_numkeys parses a numkeys argument strictly: decimal digits only, no
 * sign, no leading zero except "0" itself, and at most argc-2 (the keys must
 * be present). Returns the count, or -1 when the server should see no keys. */
int emq_numkeys(uintptr_t pp, size_t n, int argc) {
    const char *p = (const char *)pp;
    if (n == 0 || n > 9 || (p[0] == '0' && n > 1)) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    if (v > (long)argc - 2) return -1;
    return (int)v;
}

/* Answers a key-position request (getkeys-api) without entering Go: the keys
 * are argv[2 .. 2+numkeys), as the EVAL-style key-spec says. */
static void declare_keys(void *ctx, void **argv, int argc, int kind) {
    if (argc < 2) return;
    size_t n;
    const char *p = StringPtrLen(argv[1], &n);
    int nk = emq_numkeys((uintptr_t)p, n, argc);
    int flags = kind == EMQ_KEYS_WRITE ? (int)(EMQ_KEY_RW | EMQ_KEY_ACCESS | EMQ_KEY_UPDATE)
                                       : (int)(EMQ_KEY_RO | EMQ_KEY_ACCESS);
    for (int i = 0; i < nk; i++) KeyAtPosWithFlags(ctx, 2 + i, flags);
}

/* ---- caller ACL for keys outside the key-spec ---- */

/* emq_check_keys checks every key of the buffer (uint32 count, then uint32
 * length and bytes per key) against the calling client's ACL user. Returns 0
 * when all are allowed, 1 when one is denied.
 *
 * The user is looked up by client id: GetCurrentUserName dereferences the
 * client's user without a check and crashes 8.0 for a client without one. A
 * client with no user (the primary link, AOF loading) or one the server does
 * not list (a module's RM_Call client) is the server itself and is allowed;
 * inside a script the client is unlisted too but the caller is a user we
 * cannot see, so derived keys are refused there (fail closed). */
/* caller_user is the calling client's ACL user, for the checks below: *user
 * is NULL and the result 0 when the caller is the server itself (allowed),
 * the result 1 when nothing is allowed (inside a script, or a deleted user).
 * The user is looked up by client id: GetCurrentUserName dereferences the
 * client's user without a check and crashes 8.0 for a client without one. A
 * client with no user (the primary link, AOF loading) or one the server does
 * not list (a module's RM_Call client) is the server itself and is allowed;
 * inside a script the client is unlisted too but the caller is a user we
 * cannot see, so the caller is refused there (fail closed). */
static int caller_user(void *ctx, void **user) {
    *user = NULL;
    unsigned long long id = GetClientId(ctx);
    if (id == 0) return 0;
    errno = 0;
    void *name = GetClientUserNameById(ctx, id);
    if (!name) {
        if (errno == ENOENT && (GetContextFlags(ctx) & CTX_FLAGS_LUA)) return 1;
        return 0;
    }
    *user = GetModuleUserFromUserName(name);
    FreeString(ctx, name);
    return *user ? 0 : 1; /* a deleted user: allow nothing */
}

/* emq_check_keys checks every key of the buffer (uint32 count, then uint32
 * length and bytes per key) against the calling client's ACL user
 * (caller_user). Returns 0 when all are allowed, 1 when one is denied. */
int emq_check_keys(uintptr_t ctxp, uintptr_t bufp, int flags) {
    void *ctx = (void *)ctxp;
    const emq_buf *b = (const emq_buf *)bufp;
    void *user;
    if (caller_user(ctx, &user)) return 1;
    if (!user) return 0;
    const unsigned char *p = b->p, *end = b->p + b->len;
    uint32_t count;
    memcpy(&count, p, 4);
    p += 4;
    int denied = 0;
    for (uint32_t i = 0; i < count && !denied && p + 4 <= end; i++) {
        uint32_t n;
        memcpy(&n, p, 4);
        p += 4;
        void *key = CreateString(ctx, (const char *)p, n);
        p += n;
        denied = ACLCheckKeyPermissions(user, key, flags) != EMQ_OK;
        FreeString(ctx, key);
    }
    FreeModuleUser(user);
    return denied;
}

/* emq_check_command checks a command (the buffer as emq_check_keys', the
 * name first, at most 8 arguments in all) against the calling client's ACL
 * user (caller_user): its command, key and channel permissions, as a
 * script's redis.acl_check_cmd does. Returns 0 when allowed, 1 when
 * denied. */
int emq_check_command(uintptr_t ctxp, uintptr_t bufp) {
    void *ctx = (void *)ctxp;
    const emq_buf *b = (const emq_buf *)bufp;
    void *user;
    if (caller_user(ctx, &user)) return 1;
    if (!user) return 0;
    const unsigned char *p = b->p, *end = b->p + b->len;
    uint32_t count;
    memcpy(&count, p, 4);
    p += 4;
    void *argv[8];
    int argc = 0;
    for (uint32_t i = 0; i < count && argc < 8 && p + 4 <= end; i++) {
        uint32_t n;
        memcpy(&n, p, 4);
        p += 4;
        argv[argc++] = CreateString(ctx, (const char *)p, n);
        p += n;
    }
    int denied = argc == 0 || argc < (int)count || ACLCheckCommandPermissions(user, argv, argc) != EMQ_OK;
    for (int i = 0; i < argc; i++) FreeString(ctx, argv[i]);
    FreeModuleUser(user);
    return denied;
}

int emq_context_flags(uintptr_t ctx) { return GetContextFlags((void *)ctx); }

/* emq_client_subscribed reports whether the calling client is subscribed to
 * a channel (a RESP3 client may run any command so). 0 for the server
 * itself. */
int emq_client_subscribed(uintptr_t ctxp) {
    unsigned long long id = GetClientId((void *)ctxp);
    if (id == 0) return 0;
    emq_client_info ci = {.version = 1};
    if (GetClientInfoById(&ci, id) != EMQ_OK) return 0;
    return (ci.flags & EMQ_CLIENTINFO_FLAG_PUBSUB) != 0;
}

/* ---- blocking commands ----
 *
 * A handler that finds nothing to answer may ask to block its client on one
 * key (emq_io.block_ms > 0, the key in emq_io.block) and reply nothing. The
 * trampoline then blocks the client with RM_BlockClientOnKeysWithFlags
 * (UNBLOCK_DELETED: it is served when the key is signalled whether the key
 * exists or not). Each time the key is signalled ready the server calls
 * blocked_reply, which runs the same handler again on the client's
 * arguments (a rerun, emqRerun): a reply ends the block; a handler that asks
 * to block again found nothing, and the client stays blocked
 * (VALKEYMODULE_ERR). At the timeout, or CLIENT UNBLOCK … TIMEOUT, the client
 * gets the empty array (blocked_timeout), nothing run, nothing written. The
 * private data is the command's index plus one, not memory: there is nothing
 * for a free callback to free when a blocked client disconnects. */

static int run(void *ctx, void **argv, int argc, int id, int rerun);

static int blocked_reply(void *ctx, void **argv, int argc) {
    int id = (int)(intptr_t)GetBlockedClientPrivateData(ctx) - 1;
    if (id < 0 || id >= table.ncmds) {
        ReplyWithError(ctx, internal_error);
        return EMQ_OK; /* answered: the block ends */
    }
    return run(ctx, argv, argc, id, 1);
}

static int blocked_timeout(void *ctx, void **argv, int argc) {
    (void)argv;
    (void)argc;
    return ReplyWithArray(ctx, 0);
}

/* Signals every key of emq_io.ready as ready for the clients blocked on it:
 * cheap when none is (the server returns at once). */
static void signal_ready(void *ctx, emq_io *io) {
    const unsigned char *p = io->ready.p, *end = io->ready.p + io->ready.len;
    while (p + 4 <= end) {
        uint32_t n;
        memcpy(&n, p, 4);
        p += 4;
        if (p + n > end) break;
        void *key = CreateString(ctx, (const char *)p, n);
        SignalKeyAsReady(ctx, key);
        FreeString(ctx, key);
        p += n;
    }
    io->ready.len = 0;
}

/* Blocks the client on emq_io.block for emq_io.block_ms. */
static void block_client(void *ctx, emq_io *io, int id) {
    void *key = CreateString(ctx, (const char *)io->block.p, io->block.len);
    BlockClientOnKeysWithFlags(ctx, blocked_reply, blocked_timeout, NULL, io->block_ms, &key, 1,
                               (void *)(intptr_t)(id + 1), EMQ_BLOCK_UNBLOCK_DELETED);
    FreeString(ctx, key);
}

/* ---- the reply a Go handler built ---- */

static uint32_t rd32(const unsigned char **p) { uint32_t v; memcpy(&v, *p, 4); *p += 4; return v; }

/* kept_string returns the server string of io's kept list that holds the
 * n bytes at p, or NULL. The search starts at *from, where the one before
 * ended: a reply names its kept strings in the order they were read. */
static void *kept_string(const emq_io *io, const char *p, size_t n, size_t *from) {
    for (size_t j = 0; j < io->nkeep; j++) {
        size_t i = (*from + j) % io->nkeep;
        uintptr_t k = (uintptr_t)io->keep[i];
        size_t kn = 0;
        if (k & 1 || StringPtrLen((void *)k, &kn) != p || kn != n) continue; /* a call reply, or another string */
        *from = i + 1;
        return (void *)k;
    }
    return NULL;
}

/* Emits the reply stream: a flat pre-order walk, so nested arrays need no
 * recursion. Go validated the stream (one complete value); the bounds checks
 * only keep a bug from reading past the buffer. */
static void emit(void *ctx, const emq_buf *rep, const emq_io *io) {
    const unsigned char *p = rep->p, *end = rep->p + rep->len;
    size_t from = 0; /* where kept_string looks first */
    if (rep->len == 0) {
        ReplyWithError(ctx, internal_error);
        return;
    }
    while (p < end) {
        unsigned char tag = *p++;
        if (tag == EMQ_R_NULL) {
            ReplyWithNull(ctx);
            continue;
        }
        if (tag == EMQ_R_INT) {
            if (p + 8 > end) return;
            long long v;
            memcpy(&v, p, 8);
            p += 8;
            ReplyWithLongLong(ctx, v);
            continue;
        }
        if (p + 4 > end) return;
        uint32_t n = rd32(&p);
        switch (tag) {
        case EMQ_R_ARRAY: ReplyWithArray(ctx, (long)n); break;
        case EMQ_R_BULK:
            if (p + n > end) return;
            ReplyWithStringBuffer(ctx, (const char *)p, n);
            p += n;
            break;
        case EMQ_R_REF: { /* bytes of a server string kept until the command ends */
            if (p + 8 > end) return;
            uint64_t addr;
            memcpy(&addr, p, 8);
            p += 8;
            const char *b = (const char *)(uintptr_t)addr;
            void *str = n >= EMQ_REF_REPLY_MIN ? kept_string(io, b, n, &from) : NULL;
            if (str) ReplyWithString(ctx, str);
            else ReplyWithStringBuffer(ctx, b, n);
            break;
        }
        case EMQ_R_ERROR: /* NUL-terminated; ReplyWithError adds the '-' and takes no format */
            if (p + n + 1 > end) return;
            ReplyWithError(ctx, (const char *)p);
            p += n + 1;
            break;
        default: return;
        }
    }
}

/* ---- trampolines: one per command id, one crossing into Go per command ---- */

/* Scratch larger than this is freed after the command that grew it: one big
 * payload must not pin memory the server's used_memory does not see. */
#define KEEP_BYTES (1 << 20)

static void shrink(emq_buf *b) {
    if (b->cap <= KEEP_BYTES) return;
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

#define STACK_ARGS 32

static int dispatch(void *ctx, void **argv, int argc, int id) {
    int keys = table.cmds[id].keys;
    if ((keys == EMQ_KEYS_READ || keys == EMQ_KEYS_WRITE) && IsKeysPositionRequest(ctx)) {
        declare_keys(ctx, argv, argc, keys);
        return EMQ_OK;
    }
    return run(ctx, argv, argc, id, 0);
}

/* Runs command id's handler and emits its reply, or blocks the client when
 * the handler asked to (see "blocking commands"). A rerun returns EMQ_ERR
 * when the handler asks to block again: the client stays blocked. */
static int run(void *ctx, void **argv, int argc, int id, int rerun) {
    if (depth >= EMQ_MAX_DEPTH) {
        emq_log("warning", "module commands nested too deep");
        return ReplyWithError(ctx, internal_error);
    }
    emq_io *io = &ios[depth];
    /* a TRA call C answers as its handler would, replying itself */
    if (!rerun && table.cmds[id].preanswer != EMQ_PRE_NONE && emq_preanswer(ctx, argv, argc, &table.cmds[id])) return EMQ_OK;
    emq_arg stack_args[STACK_ARGS];
    emq_arg *args = argc <= STACK_ARGS ? stack_args : malloc(sizeof(emq_arg) * (size_t)argc);
    if (!args) return ReplyWithError(ctx, internal_error);
    for (int i = 0; i < argc; i++) args[i].p = StringPtrLen(argv[i], &args[i].n);
    emq_frame f = {ctx, argv, args, argc, id, depth, CachedMicroseconds(), io, AvoidReplicaTraffic() != 0, rerun};
    io->rep.len = 0;
    io->ready.len = 0;
    io->block_ms = 0;
    depth++;
    if (rerun) emqRerun(&f);
    else emqDispatch(&f);
    depth--;
    if (io->ready.len) signal_ready(ctx, io);
    int rc = EMQ_OK;
    if (io->block_ms <= 0) emit(ctx, &io->rep, io);
    else if (rerun) rc = EMQ_ERR; /* still nothing: stay blocked */
    else block_client(ctx, io, id);
    io->block_ms = 0;
    emq_release(ctx, io);
    shrink(&io->req);
    shrink(&io->out);
    shrink(&io->rep);
    shrink(&io->keys);
    shrink(&io->ready);
    shrink(&io->block);
    if (args != stack_args) free(args);
    return rc;
}

/* The id is computed, not pasted: a pasted t10 would dispatch id 10 (and t07
 * is octal), while it is the trampoline of id 8. */
#define T(n, k) static int t##n##k(void *c, void **v, int a) { return dispatch(c, v, a, 8 * (n) + (k)); }
#define T8(n) T(n, 0) T(n, 1) T(n, 2) T(n, 3) T(n, 4) T(n, 5) T(n, 6) T(n, 7)
T8(0) T8(1) T8(2) T8(3) T8(4) T8(5) T8(6) T8(7)
#define R8(n) t##n##0, t##n##1, t##n##2, t##n##3, t##n##4, t##n##5, t##n##6, t##n##7
static const emq_cmdfunc trampolines[EMQ_MAX_COMMANDS] = {R8(0), R8(1), R8(2), R8(3), R8(4), R8(5), R8(6), R8(7)};

/* ---- load ---- */

static int register_command(void *ctx, int id) {
    const emq_cmd *c = &table.cmds[id];
    int first = c->keys == EMQ_KEYS_FIRST_READ || c->keys == EMQ_KEYS_FIRST_WRITE;
    if (CreateCommand(ctx, c->name, trampolines[id], c->flags, first, first, first) != EMQ_OK) {
        Log(ctx, "warning", "cannot create command %s", c->name);
        return EMQ_ERR;
    }
    void *cmd = GetCommand(ctx, c->name);
    /* EVAL-style key-spec: numkeys at argv[1], the keys right after it. */
    keyspec ks[2];
    memset(ks, 0, sizeof(ks));
    int writes = c->keys == EMQ_KEYS_WRITE || c->keys == EMQ_KEYS_FIRST_WRITE;
    ks[0].flags = writes ? EMQ_KEY_RW | EMQ_KEY_ACCESS | EMQ_KEY_UPDATE : EMQ_KEY_RO | EMQ_KEY_ACCESS;
    ks[0].begin_search_type = BS_INDEX;
    ks[0].bs.index.pos = 1;
    if (first) {
        /* One key at argv[1], as SETBIT declares it (TRA family). */
        ks[0].find_keys_type = FK_RANGE;
        ks[0].fk.range.lastkey = 0;
        ks[0].fk.range.keystep = 1;
        ks[0].fk.range.limit = 0;
    } else {
        ks[0].find_keys_type = FK_KEYNUM;
        ks[0].fk.keynum.keynumidx = 0;
        ks[0].fk.keynum.firstkey = 1;
        ks[0].fk.keynum.keystep = 1;
    }
    command_info info;
    memset(&info, 0, sizeof(info));
    info.version = &INFO_VERSION;
    info.summary = c->summary;
    info.arity = c->arity;
    info.key_specs = c->keys != EMQ_KEYS_NONE ? ks : NULL;
    if (!cmd || SetCommandInfo(cmd, &info) != EMQ_OK) {
        Log(ctx, "warning", "cannot set the command info of %s (errno %d)", c->name, errno);
        return EMQ_ERR;
    }
    return EMQ_OK;
}

#define GET(fn) if (GetApi("RedisModule_" #fn, (void *)&fn) != EMQ_OK) { missing = #fn; goto fail; }

static int onload(void *ctx, void **argv, int argc) {
    const char *missing = NULL;
    GetApi = (int (*)(const char *, void *))((void **)ctx)[0];
    GET(Log) GET(CreateCommand) GET(GetCommand) GET(SetCommandInfo) GET(SetModuleAttribs) GET(SetModuleOptions)
    GET(IsModuleNameBusy) GET(StringPtrLen) GET(CreateString) GET(FreeString)
    GET(ReplyWithError) GET(ReplyWithLongLong) GET(ReplyWithStringBuffer) GET(ReplyWithString) GET(ReplyWithNull)
    GET(ReplyWithArray) GET(AvoidReplicaTraffic) GET(CachedMicroseconds) GET(IsKeysPositionRequest)
    GET(KeyAtPosWithFlags) GET(GetClientId) GET(GetClientUserNameById) GET(GetContextFlags)
    GET(GetModuleUserFromUserName) GET(ACLCheckKeyPermissions) GET(FreeModuleUser)
    GET(ACLCheckCommandPermissions)
    GET(GetDetachedThreadSafeContext) GET(FreeThreadSafeContext)
    GET(BlockClientOnKeysWithFlags) GET(GetBlockedClientPrivateData) GET(SignalKeyAsReady)
    GET(GetClientInfoById)
    if (emq_call_init(GetApi, ctx) != EMQ_OK) { missing = "Call and the CallReply functions"; goto fail; }
    if (emq_verbatim_init(GetApi) != EMQ_OK) { missing = "the verbatim replication of the TRA family"; goto fail; }

    memset(&loading, 0, sizeof(loading));
    if (emqModule(&loading) != 0) {
        Log(ctx, "warning", "trafikey: %s", loading.err);
        return EMQ_ERR;
    }
    if (IsModuleNameBusy(loading.name)) {
        Log(ctx, "warning", "trafikey: a module named %s is already loaded", loading.name);
        return EMQ_ERR;
    }
    /* Named first, so that every log line from here on carries the name. */
    SetModuleAttribs(ctx, loading.name, loading.version, 1);
    /* the options this server knows; one without the query (before 7.2)
     * knows those of 7.0 */
    if (GetApi("RedisModule_GetModuleOptionsAll", (void *)&GetModuleOptionsAll) != EMQ_OK) GetModuleOptionsAll = NULL;
    int known = GetModuleOptionsAll ? GetModuleOptionsAll() : (1 << 3) - 1;
    module_options = EMQ_OPTIONS & known;
    SetModuleOptions(ctx, module_options);
    log_ctx = GetDetachedThreadSafeContext(ctx);

    /* Go parses the module arguments and hands back the command table. */
    emq_arg stack_args[STACK_ARGS];
    int n = argc < STACK_ARGS ? argc : STACK_ARGS;
    for (int i = 0; i < n; i++) stack_args[i].p = StringPtrLen(argv[i], &stack_args[i].n);
    if (argc > STACK_ARGS) {
        snprintf(loading.err, sizeof(loading.err), "too many module arguments (%d)", argc);
    } else if (emqLoad(stack_args, n, &loading) != 0 && loading.err[0] == 0) {
        snprintf(loading.err, sizeof(loading.err), "the module could not start");
    }
    if (loading.err[0] == 0) {
        table = loading;
        internal_error = table.internal_error;
    }
    int ok = loading.err[0] == 0;
    if (!ok) Log(ctx, "warning", "%s", loading.err);
    for (int i = 0; ok && i < table.ncmds; i++) ok = register_command(ctx, i) == EMQ_OK;
    if (!ok) {
        /* The server frees the module after a failed load: drop the context
         * that refers to it (the library itself stays mapped, nodelete). */
        FreeThreadSafeContext(log_ctx);
        log_ctx = NULL;
        return EMQ_ERR;
    }
    return EMQ_OK;
fail:
    if (Log) Log(ctx, "warning", "trafikey: the server lacks the module API function %s", missing);
    else fprintf(stderr, "trafikey: the server lacks the module API function %s\n", missing);
    return EMQ_ERR;
}

int ValkeyModule_OnLoad(void *ctx, void **argv, int argc) { return onload(ctx, argv, argc); }
int RedisModule_OnLoad(void *ctx, void **argv, int argc) { return onload(ctx, argv, argc); }

/* The Go runtime cannot be stopped, and its threads run code of this library:
 * refuse MODULE UNLOAD. (The linker marks the library nodelete for the same
 * reason, so a failed load leaves it mapped.) */
static int onunload(void *ctx) {
    Log(ctx, "warning", "cannot be unloaded (the Go runtime cannot stop); restart the server instead");
    return EMQ_ERR;
}
int ValkeyModule_OnUnload(void *ctx) { return onunload(ctx); }
int RedisModule_OnUnload(void *ctx) { return onunload(ctx); }
