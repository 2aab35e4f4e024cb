/* The procedure table in C, and the rules every row of calls.def must
 * keep.  A row that breaks one fails the build here, with the row's name in
 * the message; a row that lacks a column fails as a macro called with too
 * few arguments; two rows with one number fail as duplicate case labels. */
#include "calls.h"

#include <string.h>

#ifndef TDM_CALLS_DEF
#define TDM_CALLS_DEF "calls.def"    /* the build-failure tests point this at a broken copy */
#endif

#define RULE(cond, NAME, why) _Static_assert(cond, "calls.def row " #NAME ": " why);

#define TDM_CALL(NAME, NUM, MODE, ARG, RES, STREAM, IDLE, PROGRESS, EFFECT, RESOURCE, MIRROR)                  \
    RULE(TDM_##NAME == NUM, NAME, "its number differs from the one rpcgen read (tandem.x includes calls.def)")  \
    RULE((TDM_CALL_C_MODE(MODE) == TDM_CALL_ONEWAY) == (NUM >= TDM_FIRST_ONEWAY_PROC), NAME,                   \
         "one-way calls, and only they, are numbered from TDM_FIRST_ONEWAY_PROC")                                 \
    RULE(TDM_CALL_C_MODE(MODE) == TDM_CALL_SYNC || __builtin_types_compatible_p(RES, tdm_void), NAME,             \
         "a one-way call has no result (RES tdm_void)")                                                           \
    RULE(TDM_CALL_C_MODE(MODE) == TDM_CALL_SYNC || TDM_CALL_C_ENUM(PROGRESS) == TDM_PROGRESS_HIDDEN, NAME,        \
         "a one-way call has no reply, so it shows no progress")                                                  \
    RULE(TDM_CALL_C_ENUM(IDLE) == TDM_IDLE_NEVER || TDM_CALL_C_MODE(MODE) == TDM_CALL_SYNC, NAME,                 \
         "only a reply can prove the session idle")                                                               \
    RULE(TDM_CALL_C_ENUM(IDLE) < TDM_IDLE_LEGACY_STREAM || TDM_CALL_C_STREAM(STREAM, ARG) != TDM_STREAM_NONE,    \
         NAME, "an idleness proof that depends on the stream needs the STREAM column")                            \
    RULE((TDM_CALL_C_ENUM(EFFECT) == TDM_EFFECT_NONE) == (TDM_CALL_C_ENUM(RESOURCE) == TDM_RES_NONE), NAME,      \
         "EFFECT and RESOURCE go together: a call creates or releases a resource, or neither")                    \
    RULE(TDM_CALL_C_ENUM(EFFECT) != TDM_EFFECT_RELEASES || TDM_CALL_C_MODE(MODE) == TDM_CALL_SYNC, NAME,         \
         "a release is synchronous (the guest empties its journal before it)")                                   \
    RULE(TDM_CALL_C_MIRROR(MIRROR) != TDM_MIRROR_REPLAY || TDM_CALL_C_MODE(MODE) == TDM_CALL_ONEWAY, NAME,       \
         "only one-way calls are journaled for replay")                                                           \
    RULE(TDM_CALL_C_MODE(MODE) == TDM_CALL_SYNC || TDM_CALL_C_STREAM(STREAM, ARG) == TDM_STREAM_NONE ||          \
             TDM_CALL_C_MIRROR(MIRROR) == TDM_MIRROR_REPLAY || TDM_CALL_C_MIRROR(MIRROR) == TDM_MIRROR_UNPROTECT,  \
         NAME, "one-way work on a stream is replayable (MIRROR_REPLAY) or ends protection (MIRROR_UNPROTECT)") \
    RULE(TDM_CALL_C_MIRROR(MIRROR) != TDM_MIRROR_ON_FEED || TDM_CALL_C_ENUM(EFFECT) != TDM_EFFECT_NONE, NAME,    \
         "the feed carries what creates or releases a resource")
#include TDM_CALLS_DEF
#undef TDM_CALL

const tdm_call_info tdm_calls[] = {
#define TDM_CALL(NAME, NUM, MODE, ARG, RES, STREAM, IDLE, PROGRESS, EFFECT, RESOURCE, MIRROR)                  \
    {                                                                                                            \
        .name = "TDM_" #NAME,                                                                                    \
        .proc = NUM,                                                                                             \
        .mode = TDM_CALL_C_MODE(MODE),                                                                           \
        .xargs = TDM_CALL_C_XARGS(ARG),                                                                          \
        .xres = TDM_CALL_C_XRES(MODE, RES),                                                                      \
        .args_size = sizeof(ARG),                                                                                \
        .res_size = TDM_CALL_C_RES_SIZE(MODE, RES),                                                              \
        .stream_offset = TDM_CALL_C_STREAM(STREAM, ARG),                                                         \
        .idle = TDM_CALL_C_ENUM(IDLE),                                                                           \
        .progress = TDM_CALL_C_ENUM(PROGRESS),                                                                   \
        .effect = TDM_CALL_C_ENUM(EFFECT),                                                                       \
        .resource = TDM_CALL_C_ENUM(RESOURCE),                                                                   \
        .mirror = TDM_CALL_C_MIRROR(MIRROR),                                                                     \
        .feed_msg = TDM_CALL_C_FEED_MSG(MIRROR),                                                                 \
    },
#include TDM_CALLS_DEF
#undef TDM_CALL
};

const size_t tdm_ncalls = sizeof(tdm_calls) / sizeof(tdm_calls[0]);

/* Row indexes by procedure number, as a switch: a number used twice is a
 * duplicate case label, which fails the build. */
enum {
#define TDM_CALL(NAME, ...) ROW_##NAME,
#include TDM_CALLS_DEF
#undef TDM_CALL
};

const tdm_call_info *tdm_call_find(uint32_t proc)
{
    switch (proc) {
#define TDM_CALL(NAME, NUM, ...) \
    case NUM:                    \
        return &tdm_calls[ROW_##NAME];
#include TDM_CALLS_DEF
#undef TDM_CALL
    default:
        return NULL;
    }
}

bool tdm_call_stream(const tdm_call_info *c, const void *args, uint64_t *stream)
{
    tdm_handle h;

    if (!c || !args || c->stream_offset == TDM_STREAM_NONE)
        return false;
    /* Handles are XDR unsigned hypers: uint64_t in C, wherever they sit. */
    memcpy(&h, (const char *)args + (c->stream_offset == TDM_STREAM_SELF ? 0 : c->stream_offset), sizeof(h));
    *stream = h;
    return true;
}

const char *tdm_call_idle_name(tdm_call_idle v)
{
    static const char *const n[] = { "never", "always", "legacy stream", "only stream" };
    return (unsigned)v < sizeof(n) / sizeof(n[0]) ? n[v] : "?";
}

const char *tdm_call_effect_name(tdm_call_effect v)
{
    static const char *const n[] = { "", "creates", "releases" };
    return (unsigned)v < sizeof(n) / sizeof(n[0]) ? n[v] : "?";
}

const char *tdm_call_resource_name(tdm_call_resource v)
{
    static const char *const n[] = { "", "memory", "pinned host memory", "stream", "event", "module", "session",
                                         "array", "texture or surface object", "graph", "memory pool",
                                         "mapped host memory" };
    return (unsigned)v < sizeof(n) / sizeof(n[0]) ? n[v] : "?";
}

const char *tdm_call_mirror_name(tdm_call_mirror v)
{
    static const char *const n[] = { "none", "replayed", "control", "registered again", "feed", "ends protection" };
    return (unsigned)v < sizeof(n) / sizeof(n[0]) ? n[v] : "?";
}

/* ---- device output (issue 14) ---- */
bool tdm_call_carries_output_flag(const tdm_call_info *c)
{
    return c && c->mode == TDM_CALL_SYNC && c->res_size >= sizeof(int) && c->mirror != TDM_MIRROR_CONTROL &&
           c->proc != TDM_OUTPUT_FETCH;
}
