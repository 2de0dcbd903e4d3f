/* The call adapter, C half: the only code that invokes RM_Call.
 *
 * Two formats and no other: "vE" for reads (nothing replicates) and "v!E" for
 * writes (the server replicates each write as its effect, several of one
 * command wrapped in MULTI/EXEC). 'v' passes the arguments as a vector, 'E'
 * returns a refusal before execution as an error reply. The calls run in RESP2.
 * call.go is the Go half and the only Go code that reaches emq_exec. */
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
static int (*GetContextFlags)(void *ctx);

#define CTX_FLAGS_LUA (1 << 0) /* VALKEYMODULE_CTX_FLAGS_LUA */

#define GET(fn) if (get_api("RedisModule_" #fn, (void *)&fn) != EMQ_OK) return EMQ_ERR;

int emq_call_init(int (*get_api)(const char *, void *)) {
    GET(Call) GET(CallReplyType) GET(CallReplyStringPtr) GET(CallReplyInteger) GET(CallReplyLength)
    GET(CallReplyArrayElement) GET(FreeCallReply) GET(CreateString) GET(FreeString) GET(GetContextFlags)
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

/* Encodes a reply tree. An array at level EMQ_MAX_REPLY_DEPTH (a fifth nested
 * array) is cut off as TOODEEP, so the recursion is bounded; types outside
 * RESP2 are written as their bare type byte and refused by the Go decoder. */
static void encode(emq_io *io, void *r, int level) {
    int t = CallReplyType(r);
    if (t == EMQ_REPLY_ARRAY && level >= EMQ_MAX_REPLY_DEPTH) {
        put_u8(io, EMQ_NODE_TOODEEP);
        return;
    }
    put_u8(io, (unsigned)t & 0xff);
    if (t == EMQ_REPLY_STRING || t == EMQ_REPLY_ERROR) {
        size_t n = 0;
        const char *p = CallReplyStringPtr(r, &n);
        if (!p) n = 0;
        put_u32(io, n);
        put(io, p, n);
    } else if (t == EMQ_REPLY_INTEGER) {
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

static uint32_t rd32(const unsigned char **p) { uint32_t v; memcpy(&v, *p, 4); *p += 4; return v; }

#define STACK_ARGS 32

/* emq_exec runs the host commands encoded in io->req and encodes their replies
 * into io->out. Request: uint32 command count; per command uint32 argument
 * count, uint32 name length, the name and a NUL, then per argument a kind byte
 * (0: uint32 length and bytes; 1: uint32 index into the command's own argv,
 * passed without a copy). With stop_on_error it stops after the first error
 * reply or failed call. Returns how many commands ran. */
int emq_exec(uintptr_t ctxp, uintptr_t argvp, int argc, uintptr_t iop, int write, int stop_on_error) {
    void *ctx = (void *)ctxp;
    void **argv = (void **)argvp;
    emq_io *io = (emq_io *)iop;
    const char *format = write ? FORMAT_WRITE : FORMAT_READ;
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
        void *stack_sv[STACK_ARGS];
        unsigned char stack_own[STACK_ARGS];
        void **sv = nargs <= STACK_ARGS ? stack_sv : malloc(sizeof(void *) * nargs);
        unsigned char *own = nargs <= STACK_ARGS ? stack_own : malloc(nargs);
        if (!sv || !own) { /* cannot build the arguments: report as a failed call */
            if (sv != stack_sv) free(sv);
            if (own != stack_own) free(own);
            put_u8(io, EMQ_NODE_CALLFAIL);
            put_i64(io, ENOMEM);
            io->ncalls++;
            break;
        }
        for (uint32_t i = 0; i < nargs; i++) {
            unsigned kind = *p++;
            uint32_t v = rd32(&p);
            if (kind == 1) { /* Go checked the index; an empty string keeps a bug harmless */
                own[i] = (int)v >= argc;
                sv[i] = own[i] ? CreateString(ctx, "", 0) : argv[v];
            } else {
                sv[i] = CreateString(ctx, (const char *)p, v);
                own[i] = 1;
                p += v;
            }
        }
        void *r = NULL;
        int err = ESPIPE;
        if (!script_in_script(ctx, name)) {
            errno = 0;
            r = Call(ctx, name, format, sv, (size_t)nargs);
            err = errno;
        }
        for (uint32_t i = 0; i < nargs; i++)
            if (own[i]) FreeString(ctx, sv[i]);
        if (sv != stack_sv) free(sv);
        if (own != stack_own) free(own);
        io->ncalls++;
        int failed;
        if (!r) {
            put_u8(io, EMQ_NODE_CALLFAIL);
            put_i64(io, err);
            failed = 1;
        } else {
            failed = CallReplyType(r) == EMQ_REPLY_ERROR;
            encode(io, r, 0);
            FreeCallReply(r);
        }
        if (failed && stop_on_error) break;
    }
    return io->ncalls;
}
