/* Prints docs/calls.md, the table of remoted calls, from the procedure
 * table itself: the docs say what calls.def says, and a test compares the
 * committed page with this program's output (scripts/update-calls-doc.sh). */
#include <stdio.h>

#include "calls.h"

static const char *stream_name(const tdm_call_info *c)
{
    if (c->stream_offset == TDM_STREAM_NONE)
        return "";
    return c->stream_offset == TDM_STREAM_SELF ? "the argument" : "`stream`";
}

int main(void)
{
    puts("# Remoted calls\n");
    puts("Generated from `proto/calls.def` by `tandem-calls-doc` (`scripts/update-calls-doc.sh`);");
    puts("a test fails when this page and the table differ. Columns are explained at the top of");
    puts("`proto/calls.def`; [architecture.md](architecture.md#adding-a-remoted-call) says how to add a call.\n");
    printf("%zu calls: ", tdm_ncalls);
    size_t oneway = 0;
    for (size_t i = 0; i < tdm_ncalls; i++)
        oneway += tdm_calls[i].mode == TDM_CALL_ONEWAY;
    printf("%zu synchronous, %zu one-way.\n\n", tdm_ncalls - oneway, oneway);
    puts("| call | # | mode | stream | reply proves idle | reply shows progress | resource | standby gets it by |");
    puts("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (size_t i = 0; i < tdm_ncalls; i++) {
        const tdm_call_info *c = &tdm_calls[i];
        char res[64] = "", mirror[64];

        if (c->effect != TDM_EFFECT_NONE)
            snprintf(res, sizeof(res), "%s %s", tdm_call_effect_name(c->effect), tdm_call_resource_name(c->resource));
        if (c->mirror == TDM_MIRROR_ON_FEED)
            snprintf(mirror, sizeof(mirror), "feed `TDM_M_%s`", c->feed_msg);
        else
            snprintf(mirror, sizeof(mirror), "%s", tdm_call_mirror_name(c->mirror));
        printf("| `%s` | %u | %s | %s | %s | %s | %s | %s |\n", c->name, c->proc,
               c->mode == TDM_CALL_ONEWAY ? "one-way" : "sync", stream_name(c),
               c->idle == TDM_IDLE_NEVER ? "" : tdm_call_idle_name(c->idle),
               c->mode == TDM_CALL_ONEWAY ? "" : c->progress == TDM_PROGRESS_SHOWN ? "yes" : "no", res, mirror);
    }
    return 0;
}
