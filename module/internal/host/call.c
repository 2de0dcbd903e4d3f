/* The call adapter, C half: the only code that sends commands to the server.
 *
 * Two formats and no other: "vE" for reads (nothing replicates) and "v!E" for
 * writes (the server replicates each write as its effect, several of one
 * command wrapped in MULTI/EXEC). 'v' passes the arguments as a vector, 'E'
 * returns a refusal before execution as an error reply. The calls run in RESP2.
 *
 * A write spreads the 'v' of its format: each argument it copies goes as a
 * fresh buffer ('b'), each run of the others as a vector. The server then
 * holds the only reference to a copied argument, as it does to a script's
 * arguments, so SET stores an integer string int-encoded as a script's SET
 * does (it re-encodes only an unshared value).
 *
 * emq_exec is the one entry point; call.go is the Go half and the only Go
 * code that reaches it. */
#include <errno.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "shim.h"

static const char FORMAT_READ[] = "vE";
static const char FORMAT_WRITE[] = "v!E";

static void *(*Call)(void *ctx, const char *cmd, const char *fmt, ...);
static int (*CallReplyType)(void *r);
static const char *(*CallReplyStringPtr)(void *r, size_t *n);
static long long (*CallReplyInteger)(void *r);
static size_t (*CallReplyLength)(void *r);
static void *(*CallReplyArrayElement)(void *r, size_t i);
static void (*FreeCallReply)(void *r);
static void *(*CreateString)(void *ctx, const char *p, size_t n);
static void (*FreeString)(void *ctx, void *s);
static const char *(*StringPtrLen)(const void *s, size_t *n);
static int (*GetContextFlags)(void *ctx);

#define CTX_FLAGS_LUA (1 << 0) /* VALKEYMODULE_CTX_FLAGS_LUA */

/* A write copies every argument into a fresh buffer but a long one of the
 * command's own (a payload is not copied; the server stores a string longer
 * than OBJ_ENCODING_EMBSTR_SIZE_LIMIT raw whether shared or not), as far as
 * WRITE_SPECS specifiers reach: the arguments past them go as one vector. */
#define FRESH_REF_MAX 44
#define WRITE_SPECS 16

#define STACK_ARGS 32

#define GET(fn) if (get_api("RedisModule_" #fn, (void *)&fn) != EMQ_OK) return EMQ_ERR;

int emq_call_init(int (*get_api)(const char *, void *)) {
    GET(Call) GET(CallReplyType) GET(CallReplyStringPtr) GET(CallReplyInteger) GET(CallReplyLength)
    GET(CallReplyArrayElement) GET(FreeCallReply) GET(CreateString) GET(FreeString) GET(StringPtrLen)
    GET(GetContextFlags)
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

/* Encodes a reply tree. An array at level EMQ_MAX_REPLY_DEPTH (a fifth nested
 * array) is cut off as TOODEEP, so the recursion is bounded; types outside
 * RESP2 are written as their bare type byte and refused by the Go decoder. */
static void encode(emq_io *io, void *r, int level) {
    int t = CallReplyType(r);
    if (t == EMQ_REPLY_ARRAY && level >= EMQ_MAX_REPLY_DEPTH) {
        put_u8(io, EMQ_NODE_TOODEEP);
        return;
    }
    if (t == EMQ_REPLY_STRING || t == EMQ_REPLY_ERROR) {
        size_t n = 0;
        const char *p = CallReplyStringPtr(r, &n);
        if (!p) n = 0;
        put_str(io, (unsigned)t, p, n);
        return;
    }
    put_u8(io, (unsigned)t & 0xff);
    if (t == EMQ_REPLY_INTEGER) {
        put_i64(io, CallReplyInteger(r));
    } else if (t == EMQ_REPLY_ARRAY) {
        size_t n = CallReplyLength(r);
        put_u32(io, n);
        for (size_t i = 0; i < n; i++) encode(io, CallReplyArrayElement(r, i), level + 1);
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

/* One host-command argument: bytes in the request (ref -1), or the command's
 * own argument argv[ref], passed on without a copy. */
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
 * every argument; *made is how many strings it made there, to release. */
static void *write_call(const exec_env *e, const char *name, const arg *a, uint32_t nargs, void **sv,
                        unsigned char *own, size_t *made) {
    spec sp[WRITE_SPECS];
    char fmt[WRITE_SPECS + sizeof(FORMAT_WRITE)];
    int ns = 0;
    size_t nv = 0;
    for (uint32_t i = 0; i < nargs; i++) {
        int last = ns >= WRITE_SPECS - 1; /* the last specifier takes the rest */
        if (!last && (a[i].ref < 0 || a[i].n <= FRESH_REF_MAX)) {
            fmt[ns] = 'b';
            sp[ns++] = (spec){a[i].p, a[i].n};
            continue;
        }
        int o;
        sv[nv] = arg_string(e, &a[i], &o);
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
    return Call(e->ctx, name, fmt, S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7), S(8), S(9), S(10), S(11), S(12),
                S(13), S(14), S(15));
#undef S
}

/* call runs one command through RM_Call and encodes its reply. Returns 1 when
 * the reply is an error or the call failed. */
static int call(const exec_env *e, const char *name, const arg *a, uint32_t nargs, int write) {
    emq_io *io = e->io;
    void *stack_sv[STACK_ARGS];
    unsigned char stack_own[STACK_ARGS];
    void **sv = nargs <= STACK_ARGS ? stack_sv : malloc(sizeof(void *) * nargs);
    unsigned char *own = nargs <= STACK_ARGS ? stack_own : malloc(nargs);
    if (!sv || !own) { /* cannot build the arguments: report as a failed call */
        if (sv != stack_sv) free(sv);
        if (own != stack_own) free(own);
        put_u8(io, EMQ_NODE_CALLFAIL);
        put_i64(io, ENOMEM);
        return 1;
    }
    size_t nv = 0; /* strings made for the call, to release after it */
    void *r = NULL;
    int err = ESPIPE;
    if (!script_in_script(e->ctx, name)) {
        if (write) {
            r = write_call(e, name, a, nargs, sv, own, &nv);
            err = errno;
        } else {
            for (; nv < nargs; nv++) {
                int o;
                sv[nv] = arg_string(e, &a[nv], &o);
                own[nv] = (unsigned char)o;
            }
            errno = 0;
            r = Call(e->ctx, name, FORMAT_READ, sv, nv);
            err = errno;
        }
    }
    for (size_t i = 0; i < nv; i++)
        if (own[i]) FreeString(e->ctx, sv[i]);
    if (sv != stack_sv) free(sv);
    if (own != stack_own) free(own);
    if (!r) {
        put_u8(io, EMQ_NODE_CALLFAIL);
        put_i64(io, err);
        return 1;
    }
    int failed = CallReplyType(r) == EMQ_REPLY_ERROR;
    encode(io, r, 0);
    FreeCallReply(r);
    return failed;
}

static uint32_t rd32(const unsigned char **p) { uint32_t v; memcpy(&v, *p, 4); *p += 4; return v; }

/* emq_exec runs the host commands encoded in io->req and encodes their replies
 * into io->out. Request: uint32 command count; per command uint32 argument
 * count, uint32 name length, the name and a NUL, then per argument a kind byte
 * (0: uint32 length and bytes; 1: uint32 index into the command's own argv,
 * passed without a copy). With stop_on_error it stops after the first error
 * reply or failed call. Returns how many commands ran. */
int emq_exec(uintptr_t ctxp, uintptr_t argvp, int argc, uintptr_t iop, int write, int stop_on_error) {
    exec_env e = {(void *)ctxp, (void **)argvp, (emq_io *)iop};
    emq_io *io = e.io;
    const unsigned char *p = io->req.p;
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
            }
        }
        int failed = call(&e, name, a, nargs, write);
        if (a != stack_a) free(a);
        io->ncalls++;
        if (failed && stop_on_error) break;
    }
    return io->ncalls;
}
