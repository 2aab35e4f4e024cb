/* Handlers of the stream attribute calls (proto/calls.def, "launch ex and
 * stream attributes (issue 14)"; docs/runtime-api.md). */
#include "dispatch.h"

#include "session.h"
#include "tandem_rpc.h"

static tdm_bstream_attr from_wire(const tdm_stream_attr *w)
{
    return (tdm_bstream_attr){ .id = w->id,
                               .base = w->base,
                               .num_bytes = w->num_bytes,
                               .hit_ratio = w->hit_ratio,
                               .hit_prop = w->hit_prop,
                               .miss_prop = w->miss_prop,
                               .value = w->value,
                               .value2 = w->value2 };
}

bool tdm_serve_STREAM_SET_ATTRIBUTE(void *ctx, void *args, void *res)
{
    tdm_stream_attr_args *a = args;
    tdm_bstream_attr attr = from_wire(&a->attr);

    *(int *)res = tdm_session_stream_set_attribute(ctx, a->stream, &attr);
    return true;
}

bool tdm_serve_STREAM_GET_ATTRIBUTE(void *ctx, void *args, void *res)
{
    tdm_stream_attr_args *a = args;
    tdm_stream_attr_res *r = res;
    tdm_bstream_attr attr = { .id = a->attr.id };

    r->err = tdm_session_stream_get_attribute(ctx, a->stream, &attr);
    r->attr = (tdm_stream_attr){ .id = attr.id,
                                 .base = attr.base,
                                 .num_bytes = attr.num_bytes,
                                 .hit_ratio = attr.hit_ratio,
                                 .hit_prop = attr.hit_prop,
                                 .miss_prop = attr.miss_prop,
                                 .value = attr.value,
                                 .value2 = attr.value2 };
    return true;
}
