/* The TRA family's one replication call: RM_ReplicateVerbatim, which has the
 * server propagate the command line as the client sent it. No EMQ command
 * uses it (the adapter test keeps it to this file, verbatim.go and the TRA
 * handler): an EMQ write is replicated as its effects. */
#include "shim.h"

static int (*ReplicateVerbatim)(void *ctx);

int emq_verbatim_init(int (*get_api)(const char *, void *)) {
    return get_api("RedisModule_ReplicateVerbatim", (void *)&ReplicateVerbatim) == EMQ_OK ? EMQ_OK : EMQ_ERR;
}

void emq_replicate_verbatim(uintptr_t ctx) { ReplicateVerbatim((void *)ctx); }
