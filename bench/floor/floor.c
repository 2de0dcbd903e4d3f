/* The floor of a native single-job verb: a minimal module whose commands
 * FLOOR.ADD, FLOOR.CLAIM and FLOOR.COMPLETE take EMQ.ADD's, EMQ.CLAIM's and
 * EMQ.COMPLETE's keys and arguments (one job a call) and make the same
 * changes to the dataset as the trafikey module makes for a plain job,
 * through the same module API calls its host makes (module/internal/host/
 * call.c, key_write and zpopmin):
 *
 *   - every key the verb reads or writes is opened once through the key
 *     API (OpenKey), the keys it only reads for their type or size too;
 *   - each HSET, HINCRBY, ZADD, ZREM and ZPOPMIN is made through the key
 *     API (HashGet, HashSet, ZsetAdd, ZsetRem, the zset range), its key
 *     signalled (SignalModifiedKey), its keyspace event fired
 *     (NotifyKeyspaceEvent) and the command replicated as its effect
 *     (Replicate, a vector of server strings), as the host does;
 *   - DEL, LPUSH and LSET go through RM_Call with the host's write format
 *     ("v!E"), as the host sends them.
 *
 * It reads only what its writes and its reply need (the sequence, the
 * head of pending, the claimed row's attempt and payload), checks nothing
 * (no fence, no ACL check of derived keys, no verdict: the lease token of
 * COMPLETE is not compared) and answers the verb's reply. It is measured
 * beside the module (module/floor_bench_test.go), never part of it.
 *
 * FLOOR.CHECKED.ADD, FLOOR.CHECKED.CLAIM and FLOOR.CHECKED.COMPLETE do the
 * same and two checks of the module's more, as its host makes them: the
 * fence, GET version through RM_Call in the host's read format ("vEW")
 * instead of the open of the version key, and the ACL check of the keys
 * the verb derives (rows, logs, turns, meta), with the caller's user
 * looked up by client id (module/internal/host/shim.c, emq_check_keys).
 * FLOOR.READ.ADD, FLOOR.READ.CLAIM and FLOOR.READ.COMPLETE make the checks
 * and, besides, the reads the module's verdict asks for in this case (the
 * meta and stats fields, the sets' sizes, the row's fields, the head of
 * pending, the job's score in active), each through the key API as the
 * host answers it (call.c, fast_read), the replies not kept: what remains
 * of a verb beyond them is the module's own work, from the call into Go to
 * the reply.
 *
 * The API is looked up by name at load, as the trafikey module's shim
 * does, so the file needs no header of the server's. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OK 0
#define ERR 1
#define APIVER 1
#define OPEN_READ (1 << 0)
#define OPEN_WRITE (1 << 1)
#define KEYTYPE_EMPTY 0
#define KEYTYPE_LIST 2
#define KEYTYPE_HASH 3
#define KEYTYPE_ZSET 5
#define HASH_NONE 0
#define NOTIFY_GENERIC (1 << 2)
#define NOTIFY_HASH (1 << 6)
#define NOTIFY_ZSET (1 << 7)
#define KEY_ACL_ACCESS (1 << 4) /* VALKEYMODULE_CMD_KEY_ACCESS */
#define KEY_ACL_UPDATE (1 << 5)
#define KEY_ACL_INSERT (1 << 6)
#define KEY_ACL_DELETE (1 << 7)
/* the trafikey module's options (module/internal/host/shim.h, EMQ_OPTIONS) */
#define MODULE_OPTIONS ((1 << 0) | (1 << 1) | (1 << 2) | (1 << 4) | (1 << 5))
#define PRIORITY_STRIDE 4398046511104.0 /* 1 << 42, protocol.PriorityStride */
#define MAX_PRIORITY 1000               /* protocol.MaxPriority */

typedef int (*cmdfunc)(void *ctx, void **argv, int argc);

static int (*GetApi)(const char *name, void *out);
static int (*Init)(void *ctx, const char *name, int ver, int apiver);
static int (*CreateCommand)(void *ctx, const char *name, cmdfunc f, const char *flags, int first, int last, int step);
static void *(*GetCommand)(void *ctx, const char *name);
static int (*SetCommandInfo)(void *cmd, const void *info);
static void (*SetModuleOptions)(void *ctx, int options);
static int (*GetModuleOptionsAll)(void);
static long long (*CachedMicroseconds)(void);
static void *(*CreateString)(void *ctx, const char *p, size_t n);
static void *(*CreateStringFromLongLong)(void *ctx, long long v);
static void (*FreeString)(void *ctx, void *s);
static const char *(*StringPtrLen)(const void *s, size_t *n);
static void *(*OpenKey)(void *ctx, void *name, int mode);
static void (*CloseKey)(void *key);
static int (*KeyType)(void *key);
static size_t (*ValueLength)(void *key);
static int (*HashGet)(void *key, int flags, ...);
static int (*HashSet)(void *key, int flags, ...);
static int (*ZsetAdd)(void *key, double score, void *ele, int *flags);
static int (*ZsetRem)(void *key, void *ele, int *deleted);
static int (*ZsetFirstInScoreRange)(void *key, double min, double max, int minex, int maxex);
static void *(*ZsetRangeCurrentElement)(void *key, double *score);
static void (*ZsetRangeStop)(void *key);
static int (*SignalModifiedKey)(void *ctx, void *keyname);
static void (*SignalKeyAsReady)(void *ctx, void *key);
static int (*NotifyKeyspaceEvent)(void *ctx, int type, const char *event, void *key);
static int (*Replicate)(void *ctx, const char *cmd, const char *fmt, ...);
static void *(*Call)(void *ctx, const char *cmd, const char *fmt, ...);
static void (*FreeCallReply)(void *r);
static int (*ReplyWithArray)(void *ctx, long n);
static int (*ReplyWithLongLong)(void *ctx, long long v);
static int (*ReplyWithString)(void *ctx, void *s);
static int (*ReplyWithStringBuffer)(void *ctx, const char *p, size_t n);
static int (*ReplyWithError)(void *ctx, const char *err);
static int (*WrongArity)(void *ctx);
static unsigned long long (*GetClientId)(void *ctx);
static void *(*GetClientUserNameById)(void *ctx, uint64_t id);
static void *(*GetModuleUserFromUserName)(void *name);
static int (*ACLCheckKeyPermissions)(void *user, void *key, int flags);
static int (*FreeModuleUser)(void *user);
static int (*KeyExists)(void *ctx, void *name);
static int (*ZsetScore)(void *key, void *member, double *score);

/* The field names and constant values, made once, as the host keeps the
 * names of its program (call.c, intern). */
static void *s_keep_done, *s_keep_done_max, *s_events_max, *s_jobfields, *s_rowopts, *s_paused, *s_rate_max,
    *s_rate_window, *s_turn, *s_pturn, *s_lanewait, *s_lanesets, *s_uniq;
static void *s_seq, *s_added, *s_completed, *s_data, *s_att, *s_max, *s_prio, *s_bo, *s_at, *s_state, *s_active,
    *s_zero, *s_one;

/* ---- the writes, as the host's key_write makes them ---- */

/* touch opens a key the verb only reads (its type, its size): the open and
 * the lookup, nothing read. */
static void touch(void *ctx, void *name) {
    void *key = OpenKey(ctx, name, OPEN_READ);
    KeyType(key);
    CloseKey(key);
}

/* The levels of the floor: the writes alone, with the checks, with the
 * checks and the verdict's reads. */
enum { WRITES, CHECKED, READS };

/* hmget reads n fields of hash name as HMGET does through the key API. */
static void hmget(void *ctx, void *name, void **fields, int n) {
    void *key = OpenKey(ctx, name, OPEN_READ);
    if (KeyType(key) == KEYTYPE_HASH) {
        for (int i = 0; i < n; i++) {
            void *v = NULL;
            HashGet(key, HASH_NONE, fields[i], &v, NULL);
            if (v) FreeString(ctx, v);
        }
    }
    CloseKey(key);
}

/* card reads the size of name, as ZCARD and LLEN do through the key API. */
static void card(void *ctx, void *name) {
    void *key = OpenKey(ctx, name, OPEN_READ);
    KeyType(key);
    if (key) ValueLength(key);
    CloseKey(key);
}

/* head reads the first member of zset name, as ZRANGE name 0 0 does
 * through the key API. */
static void head(void *ctx, void *name) {
    void *key = OpenKey(ctx, name, OPEN_READ);
    if (KeyType(key) == KEYTYPE_ZSET && ValueLength(key) > 0 &&
        ZsetFirstInScoreRange(key, -INFINITY, INFINITY, 0, 0) == OK) {
        double score;
        void *m = ZsetRangeCurrentElement(key, &score);
        size_t n = 0;
        if (m) {
            StringPtrLen(m, &n);
            FreeString(ctx, m);
        }
        ZsetRangeStop(key);
    }
    CloseKey(key);
}

/* score reads member's score in zset name, as ZSCORE does through the key
 * API. */
static void score(void *ctx, void *name, void *member) {
    void *key = OpenKey(ctx, name, OPEN_READ);
    double d;
    if (KeyType(key) == KEYTYPE_ZSET) ZsetScore(key, member, &d);
    CloseKey(key);
}

/* fence is the verb's look at the version key: an open of it, or from
 * level CHECKED on the host's read of it, GET through RM_Call. */
static void fence(void *ctx, void *version, int level) {
    if (level == WRITES) {
        touch(ctx, version);
        return;
    }
    void *r = Call(ctx, "GET", "vEW", &version, (size_t)1);
    if (r) FreeCallReply(r);
}

/* acl is, from level CHECKED on, the host's ACL check of n derived keys: the
 * caller's user by client id, each key against it. It returns ERR when one
 * is denied. */
static int acl(void *ctx, int level, void **keys, int n, int flags) {
    if (level == WRITES) return OK;
    unsigned long long id = GetClientId(ctx);
    if (id == 0) return OK;
    void *name = GetClientUserNameById(ctx, id);
    if (!name) return OK;
    void *user = GetModuleUserFromUserName(name);
    FreeString(ctx, name);
    if (!user) return ERR;
    int denied = 0;
    for (int i = 0; i < n && !denied; i++) denied = ACLCheckKeyPermissions(user, keys[i], flags) != OK;
    FreeModuleUser(user);
    return denied ? ERR : OK;
}

/* hincrby is HINCRBY key field by (by a small positive count): the value
 * read, the sum stored as a new string, the key signalled, the event, the
 * command replicated. It returns the sum, or -1 for a key or value of
 * another kind. */
static long long hincrby(void *ctx, void *name, void *field, void *by_s, long long by) {
    void *key = OpenKey(ctx, name, OPEN_WRITE);
    int type = KeyType(key);
    if (type != KEYTYPE_EMPTY && type != KEYTYPE_HASH) {
        CloseKey(key);
        return -1;
    }
    long long value = 0;
    void *old = NULL;
    if (type == KEYTYPE_HASH) HashGet(key, HASH_NONE, field, &old, NULL);
    if (old) {
        size_t n = 0;
        const char *p = StringPtrLen(old, &n);
        for (size_t i = 0; i < n; i++) {
            if (p[i] < '0' || p[i] > '9') {
                value = -1;
                break;
            }
            value = value * 10 + (p[i] - '0');
        }
        FreeString(ctx, old);
        if (value < 0) {
            CloseKey(key);
            return -1;
        }
    }
    value += by;
    void *v = CreateStringFromLongLong(ctx, value);
    HashSet(key, HASH_NONE, field, v, NULL);
    CloseKey(key);
    FreeString(ctx, v);
    SignalModifiedKey(ctx, name);
    NotifyKeyspaceEvent(ctx, NOTIFY_HASH, "hincrby", name);
    void *sv[3] = {name, field, by_s};
    Replicate(ctx, "HINCRBY", "v", sv, (size_t)3);
    return value;
}

/* hset is HSET name f1 v1 … of n pairs (sv: name, then the pairs) into key,
 * already open for writing and a hash or empty: the fields set, the key
 * closed, signalled, the event, the command replicated. */
static void hset(void *ctx, void *key, void **sv, int pairs) {
    for (int i = 0; i < pairs; i++) HashSet(key, HASH_NONE, sv[1 + 2 * i], sv[2 + 2 * i], NULL);
    CloseKey(key);
    SignalModifiedKey(ctx, sv[0]);
    NotifyKeyspaceEvent(ctx, NOTIFY_HASH, "hset", sv[0]);
    Replicate(ctx, "HSET", "v", sv, (size_t)(1 + 2 * pairs));
}

/* zadd is ZADD name score member: the member added, the key closed,
 * signalled, the event, the command replicated. */
static int zadd(void *ctx, void *name, long long score, void *member) {
    void *key = OpenKey(ctx, name, OPEN_WRITE);
    int type = KeyType(key);
    if (type != KEYTYPE_EMPTY && type != KEYTYPE_ZSET) {
        CloseKey(key);
        return ERR;
    }
    int flags = 0;
    ZsetAdd(key, (double)score, member, &flags);
    CloseKey(key);
    void *sc = CreateStringFromLongLong(ctx, score);
    SignalModifiedKey(ctx, name);
    NotifyKeyspaceEvent(ctx, NOTIFY_ZSET, "zadd", name);
    void *sv[3] = {name, sc, member};
    Replicate(ctx, "ZADD", "v", sv, (size_t)3);
    FreeString(ctx, sc);
    return OK;
}

/* call runs a write through RM_Call in the host's write format. */
static void call(void *ctx, const char *cmd, void **sv, size_t n) {
    void *r = Call(ctx, cmd, "v!E", sv, n);
    if (r) FreeCallReply(r);
}

/* derived is base (a queue's key prefix, emq:{q}:) followed by suffix and
 * id, as a new server string. */
static void *derived(void *ctx, void *base, const char *suffix, const char *id, size_t idn) {
    char buf[512];
    size_t bn = 0, sn = strlen(suffix);
    const char *b = StringPtrLen(base, &bn);
    if (bn + sn + idn > sizeof(buf)) return NULL;
    memcpy(buf, b, bn);
    memcpy(buf + bn, suffix, sn);
    memcpy(buf + bn + sn, id, idn);
    return CreateString(ctx, buf, bn + sn + idn);
}

static int is(void *s, const char *want) {
    size_t n = 0;
    const char *p = StringPtrLen(s, &n);
    return n == strlen(want) && memcmp(p, want, n) == 0;
}

static long long int_of(void *s) {
    size_t n = 0;
    const char *p = StringPtrLen(s, &n);
    long long v = 0;
    int neg = n > 0 && p[0] == '-';
    for (size_t i = neg; i < n; i++) v = v * 10 + (p[i] - '0');
    return neg ? -v : v;
}

/* ---- the commands ---- */

/* FLOOR.ADD 7 base version meta stats pending delayed signal 1 0 data prio
 * delay attempts backoff backoff_ms unique unique_ttl: one ready job, no
 * options. HINCRBY meta seq 1 (the new id), HSET row data att [max] [prio]
 * [bo] at, ZADD pending, HINCRBY stats added 1; when pending was empty, the
 * signal as the module gives it. Reply: [id]. */
static int add(void *ctx, void **argv, int argc, int level) {
    if (argc != 19) return WrongArity(ctx);
    void *base = argv[2], *meta = argv[4], *stats = argv[5], *pending = argv[6], *signal = argv[8];
    long long now = CachedMicroseconds() / 1000;
    fence(ctx, argv[3], level);
    touch(ctx, argv[7]); /* delayed */
    if (level == READS) {
        void *mf[6] = {s_seq, s_keep_done, s_keep_done_max, s_events_max, s_jobfields, s_rowopts};
        hmget(ctx, meta, mf, 6);
        hmget(ctx, stats, &s_added, 1);
        card(ctx, pending);
        card(ctx, argv[7]);
        card(ctx, signal);
    }
    long long id = hincrby(ctx, meta, s_seq, s_one, 1);
    if (id < 0) return ReplyWithError(ctx, "ERR meta");
    char ids[24];
    int idn = snprintf(ids, sizeof(ids), "%lld", id);
    void *ids_s = CreateString(ctx, ids, (size_t)idn);
    void *row = derived(ctx, base, "job:", ids, (size_t)idn);
    if (acl(ctx, level, &row, 1, KEY_ACL_ACCESS | KEY_ACL_INSERT) != OK) {
        FreeString(ctx, row);
        FreeString(ctx, ids_s);
        return ReplyWithError(ctx, "NOPERM row");
    }
    if (level == READS) KeyExists(ctx, row);
    void *key = OpenKey(ctx, row, OPEN_WRITE);
    if (KeyType(key) != KEYTYPE_EMPTY) {
        CloseKey(key);
        FreeString(ctx, row);
        FreeString(ctx, ids_s);
        return ReplyWithError(ctx, "ERR row exists");
    }
    /* the row: data att 0 [max] [prio] [bo] at, the defaults left out */
    char bo[64], at[24];
    void *bo_s = NULL;
    void *at_s = CreateString(ctx, at, (size_t)snprintf(at, sizeof(at), "%lld", now));
    void *sv[13] = {row, s_data, argv[11], s_att, s_zero};
    int pairs = 2;
    if (!is(argv[14], "3")) {
        sv[1 + 2 * pairs] = s_max;
        sv[2 + 2 * pairs++] = argv[14];
    }
    if (!is(argv[12], "0")) {
        sv[1 + 2 * pairs] = s_prio;
        sv[2 + 2 * pairs++] = argv[12];
    }
    if (!is(argv[15], "exponential") || !is(argv[16], "1000")) {
        size_t a = 0, b = 0;
        const char *ap = StringPtrLen(argv[15], &a), *bp = StringPtrLen(argv[16], &b);
        int n = snprintf(bo, sizeof(bo), "%.*s:%.*s", (int)a, ap, (int)b, bp);
        bo_s = CreateString(ctx, bo, (size_t)n < sizeof(bo) ? (size_t)n : sizeof(bo) - 1);
        sv[1 + 2 * pairs] = s_bo;
        sv[2 + 2 * pairs++] = bo_s;
    }
    sv[1 + 2 * pairs] = s_at;
    sv[2 + 2 * pairs++] = at_s;
    hset(ctx, key, sv, pairs);
    /* pending, and the signal when it was empty */
    void *pk = OpenKey(ctx, pending, OPEN_WRITE);
    size_t before = ValueLength(pk);
    CloseKey(pk);
    long long prio = int_of(argv[12]);
    zadd(ctx, pending, (long long)((MAX_PRIORITY - prio) * PRIORITY_STRIDE) + id, ids_s);
    hincrby(ctx, stats, s_added, s_one, 1);
    void *sk = OpenKey(ctx, signal, OPEN_READ);
    size_t held = KeyType(sk) == KEYTYPE_LIST ? ValueLength(sk) : 0;
    CloseKey(sk);
    if (before == 0) {
        SignalKeyAsReady(ctx, pending);
        void *push[3] = {signal, s_one, NULL};
        if (held == 0) {
            call(ctx, "LPUSH", push, 2);
        } else {
            void *set[3] = {signal, s_zero, s_one};
            call(ctx, "LSET", set, 3);
        }
    }
    ReplyWithArray(ctx, 1);
    ReplyWithString(ctx, ids_s);
    FreeString(ctx, at_s);
    if (bo_s) FreeString(ctx, bo_s);
    FreeString(ctx, row);
    FreeString(ctx, ids_s);
    return OK;
}

/* FLOOR.CLAIM 5 base version meta pending active lease 1: ZPOPMIN pending 1,
 * HSET row state active att <att+1>, ZADD active <now+lease> <id>. Reply:
 * [[id, data, att]], or [] when pending is empty. */
static int claim(void *ctx, void **argv, int argc, int level) {
    if (argc != 9) return WrongArity(ctx);
    void *base = argv[2], *pending = argv[5], *active = argv[6];
    long long now = CachedMicroseconds() / 1000;
    fence(ctx, argv[3], level);
    touch(ctx, argv[4]); /* meta */
    void *turns = derived(ctx, base, "turns", "", 0);
    touch(ctx, turns);
    if (level == READS) {
        void *mf[9] = {s_paused, s_rate_max, s_rate_window, s_turn, s_pturn, s_lanewait, s_jobfields, s_rowopts, s_lanesets};
        hmget(ctx, argv[4], mf, 9);
        head(ctx, pending);
        card(ctx, active);
        card(ctx, turns);
    }
    /* ZPOPMIN pending 1 */
    void *key = OpenKey(ctx, pending, OPEN_WRITE);
    if (KeyType(key) != KEYTYPE_ZSET || ZsetFirstInScoreRange(key, -INFINITY, INFINITY, 0, 0) != OK) {
        CloseKey(key);
        FreeString(ctx, turns);
        return ReplyWithArray(ctx, 0);
    }
    double score;
    void *member = ZsetRangeCurrentElement(key, &score);
    ZsetRangeStop(key);
    if (!member) {
        CloseKey(key);
        FreeString(ctx, turns);
        return ReplyWithArray(ctx, 0);
    }
    ZsetRem(key, member, NULL);
    int emptied = KeyType(key) == KEYTYPE_EMPTY;
    CloseKey(key);
    NotifyKeyspaceEvent(ctx, NOTIFY_ZSET, "zpopmin", pending);
    if (emptied) NotifyKeyspaceEvent(ctx, NOTIFY_GENERIC, "del", pending);
    SignalModifiedKey(ctx, pending);
    void *pop[2] = {pending, s_one};
    Replicate(ctx, "ZPOPMIN", "v", pop, (size_t)2);
    /* the row: att and data read, state and att written */
    size_t idn = 0;
    const char *id = StringPtrLen(member, &idn);
    void *row = derived(ctx, base, "job:", id, idn);
    void *checks[2] = {turns, row};
    int allowed = acl(ctx, level, checks, 2, KEY_ACL_ACCESS | KEY_ACL_UPDATE) == OK;
    FreeString(ctx, turns);
    if (!allowed) {
        FreeString(ctx, row);
        FreeString(ctx, member);
        return ReplyWithError(ctx, "NOPERM row");
    }
    if (level == READS) {
        void *rf[2] = {s_att, s_data};
        hmget(ctx, row, rf, 2);
    }
    void *rk = OpenKey(ctx, row, OPEN_WRITE);
    void *att = NULL, *data = NULL;
    if (KeyType(rk) == KEYTYPE_HASH) HashGet(rk, HASH_NONE, s_att, &att, s_data, &data, NULL);
    long long attempt = (att ? int_of(att) : 0) + 1;
    void *att_s = CreateStringFromLongLong(ctx, attempt);
    void *sv[5] = {row, s_state, s_active, s_att, att_s};
    hset(ctx, rk, sv, 2);
    zadd(ctx, active, now + int_of(argv[7]), member);
    ReplyWithArray(ctx, 1);
    ReplyWithArray(ctx, 3);
    ReplyWithString(ctx, member);
    if (data) {
        ReplyWithString(ctx, data);
    } else {
        ReplyWithStringBuffer(ctx, "", 0);
    }
    ReplyWithLongLong(ctx, attempt);
    if (att) FreeString(ctx, att);
    if (data) FreeString(ctx, data);
    FreeString(ctx, att_s);
    FreeString(ctx, row);
    FreeString(ctx, member);
    return OK;
}

/* FLOOR.COMPLETE 4 base version stats active id token result: ZREM active
 * id, DEL row logs, HINCRBY stats completed 1. Reply: 1, or 0 when the job
 * was not active. */
static int complete(void *ctx, void **argv, int argc, int level) {
    if (argc != 9) return WrongArity(ctx);
    void *base = argv[2], *stats = argv[4], *active = argv[5], *id = argv[6];
    size_t idn = 0;
    const char *idp = StringPtrLen(id, &idn);
    void *row = derived(ctx, base, "job:", idp, idn);
    char buf[520];
    void *logs = NULL;
    if (idn + 6 <= sizeof(buf)) {
        memcpy(buf, idp, idn);
        memcpy(buf + idn, ":logs", 6);
        logs = derived(ctx, base, "job:", buf, idn + 5);
    }
    void *meta = derived(ctx, base, "meta", "", 0);
    void *checks[2] = {row, logs};
    int allowed = logs && acl(ctx, level, checks, 2, KEY_ACL_ACCESS | KEY_ACL_DELETE) == OK &&
                  acl(ctx, level, &meta, 1, KEY_ACL_ACCESS) == OK;
    if (!allowed) {
        FreeString(ctx, meta);
        if (logs) FreeString(ctx, logs);
        FreeString(ctx, row);
        return ReplyWithError(ctx, "NOPERM row");
    }
    fence(ctx, argv[3], level);
    touch(ctx, meta);
    touch(ctx, row);
    if (level == READS) {
        void *rf[2] = {s_att, s_uniq};
        hmget(ctx, row, rf, 2);
        score(ctx, active, id);
        hmget(ctx, stats, &s_completed, 1);
        hmget(ctx, meta, &s_rowopts, 1);
    }
    FreeString(ctx, meta);
    /* ZREM active id */
    void *key = OpenKey(ctx, active, OPEN_WRITE);
    int deleted = 0;
    if (KeyType(key) == KEYTYPE_ZSET) ZsetRem(key, id, &deleted);
    int emptied = KeyType(key) == KEYTYPE_EMPTY;
    CloseKey(key);
    if (!deleted) {
        FreeString(ctx, logs);
        FreeString(ctx, row);
        return ReplyWithLongLong(ctx, 0);
    }
    NotifyKeyspaceEvent(ctx, NOTIFY_ZSET, "zrem", active);
    if (emptied) NotifyKeyspaceEvent(ctx, NOTIFY_GENERIC, "del", active);
    SignalModifiedKey(ctx, active);
    void *rem[2] = {active, id};
    Replicate(ctx, "ZREM", "v", rem, (size_t)2);
    /* DEL row logs, through RM_Call as the host sends it */
    void *del[2] = {row, logs};
    call(ctx, "DEL", del, 2);
    hincrby(ctx, stats, s_completed, s_one, 1);
    FreeString(ctx, logs);
    FreeString(ctx, row);
    return ReplyWithLongLong(ctx, 1);
}

static int floor_add(void *ctx, void **argv, int argc) { return add(ctx, argv, argc, WRITES); }
static int floor_claim(void *ctx, void **argv, int argc) { return claim(ctx, argv, argc, WRITES); }
static int floor_complete(void *ctx, void **argv, int argc) { return complete(ctx, argv, argc, WRITES); }
static int checked_add(void *ctx, void **argv, int argc) { return add(ctx, argv, argc, CHECKED); }
static int checked_claim(void *ctx, void **argv, int argc) { return claim(ctx, argv, argc, CHECKED); }
static int checked_complete(void *ctx, void **argv, int argc) { return complete(ctx, argv, argc, CHECKED); }
static int read_add(void *ctx, void **argv, int argc) { return add(ctx, argv, argc, READS); }
static int read_claim(void *ctx, void **argv, int argc) { return claim(ctx, argv, argc, READS); }
static int read_complete(void *ctx, void **argv, int argc) { return complete(ctx, argv, argc, READS); }

/* ---- load ---- */

/* The command info the trafikey module registers: arity and an EVAL-style
 * key-spec (numkeys at argv[1], the keys after it), laid out as the module
 * API documents it (module/internal/host/shim.c). */
typedef struct {
    const char *notes;
    uint64_t flags;
    int begin_search_type;
    union {
        struct {
            int pos;
        } index;
        struct {
            const char *keyword;
            int startfrom;
        } keyword;
    } bs;
    int find_keys_type;
    union {
        struct {
            int lastkey, keystep, limit;
        } range;
        struct {
            int keynumidx, firstkey, keystep;
        } keynum;
    } fk;
} keyspec;
typedef struct {
    const char *since, *changes;
} history_entry;
typedef struct {
    const char *name;
    int type;
    int key_spec_index;
    const char *token;
    const char *summary;
    const char *since;
    int flags;
    const char *deprecated_since;
    void *subargs;
    const char *display_text;
} command_arg;
typedef struct {
    int version;
    size_t sizeof_historyentry, sizeof_keyspec, sizeof_arg;
} info_version;
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
#define KSPEC_BS_INDEX 1
#define KSPEC_FK_KEYNUM 2
#define KEY_RW (1ULL << 1)
#define KEY_ACCESS (1ULL << 4)
#define KEY_UPDATE (1ULL << 5)

static int command(void *ctx, const char *name, cmdfunc f, const char *flags, int arity) {
    if (CreateCommand(ctx, name, f, flags, 0, 0, 0) != OK) return ERR;
    void *cmd = GetCommand(ctx, name);
    keyspec ks[2];
    memset(ks, 0, sizeof(ks));
    ks[0].flags = KEY_RW | KEY_ACCESS | KEY_UPDATE;
    ks[0].begin_search_type = KSPEC_BS_INDEX;
    ks[0].bs.index.pos = 1;
    ks[0].find_keys_type = KSPEC_FK_KEYNUM;
    ks[0].fk.keynum.keynumidx = 0;
    ks[0].fk.keynum.firstkey = 1;
    ks[0].fk.keynum.keystep = 1;
    command_info info;
    memset(&info, 0, sizeof(info));
    info.version = &INFO_VERSION;
    info.arity = arity;
    info.key_specs = ks;
    return cmd && SetCommandInfo(cmd, &info) == OK ? OK : ERR;
}

#define GET(fn)                                                   \
    if (GetApi("RedisModule_" #fn, (void *)&fn) != OK) return ERR;

int RedisModule_OnLoad(void *ctx, void **argv, int argc) {
    (void)argv;
    (void)argc;
    GetApi = (int (*)(const char *, void *))((void **)ctx)[0];
    if (GetApi("RedisModule_SetModuleAttribs", (void *)&Init) != OK) return ERR;
    GET(CreateCommand) GET(GetCommand) GET(SetCommandInfo) GET(SetModuleOptions) GET(CachedMicroseconds)
    GET(CreateString) GET(CreateStringFromLongLong) GET(FreeString) GET(StringPtrLen) GET(OpenKey) GET(CloseKey)
    GET(KeyType) GET(ValueLength) GET(HashGet) GET(HashSet) GET(ZsetAdd) GET(ZsetRem) GET(ZsetFirstInScoreRange)
    GET(ZsetRangeCurrentElement) GET(ZsetRangeStop) GET(SignalModifiedKey) GET(SignalKeyAsReady)
    GET(NotifyKeyspaceEvent) GET(Replicate) GET(Call) GET(FreeCallReply) GET(ReplyWithArray) GET(ReplyWithLongLong)
    GET(ReplyWithString) GET(ReplyWithStringBuffer) GET(ReplyWithError) GET(WrongArity) GET(GetClientId)
    GET(GetClientUserNameById) GET(GetModuleUserFromUserName) GET(ACLCheckKeyPermissions) GET(FreeModuleUser)
    GET(KeyExists) GET(ZsetScore)
    Init(ctx, "floor", 1, APIVER);
    if (GetApi("RedisModule_GetModuleOptionsAll", (void *)&GetModuleOptionsAll) != OK) GetModuleOptionsAll = NULL;
    int known = GetModuleOptionsAll ? GetModuleOptionsAll() : (1 << 3) - 1;
    SetModuleOptions(ctx, MODULE_OPTIONS & known);
#define S(var, text) var = CreateString(NULL, text, sizeof(text) - 1);
    S(s_seq, "seq") S(s_added, "added") S(s_completed, "completed") S(s_data, "data") S(s_att, "att")
    S(s_max, "max") S(s_prio, "prio") S(s_bo, "bo") S(s_at, "at") S(s_state, "state") S(s_active, "active")
    S(s_zero, "0") S(s_one, "1") S(s_keep_done, "keep_done") S(s_keep_done_max, "keep_done_max")
    S(s_events_max, "events_max") S(s_jobfields, "jobfields") S(s_rowopts, "rowopts") S(s_paused, "paused")
    S(s_rate_max, "rate_max") S(s_rate_window, "rate_window") S(s_turn, "turn") S(s_pturn, "pturn")
    S(s_lanewait, "lanewait") S(s_lanesets, "lanesets") S(s_uniq, "uniq")
#undef S
    if (command(ctx, "FLOOR.ADD", floor_add, "write deny-oom", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.CLAIM", floor_claim, "write", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.COMPLETE", floor_complete, "write", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.CHECKED.ADD", checked_add, "write deny-oom", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.CHECKED.CLAIM", checked_claim, "write", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.CHECKED.COMPLETE", checked_complete, "write", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.READ.ADD", read_add, "write deny-oom", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.READ.CLAIM", read_claim, "write", -2) != OK) return ERR;
    if (command(ctx, "FLOOR.READ.COMPLETE", read_complete, "write", -2) != OK) return ERR;
    return OK;
}
