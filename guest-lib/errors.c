
#include "error_table.h"
#include "guest.h"
#include "log.h"

static _Thread_local cudaError_t last_error = cudaSuccess;

cudaError_t tdm_ret(cudaError_t err)
{
    if (err != cudaSuccess) {
        last_error = err;
        tdm_logs_note(err); /* the program's error log (api_logs.c) */
    }
    return err;
}

cudaError_t tdm_unsupported(const char *name)
{
    tdm_log("%s is not supported by Tandem yet (returning cudaErrorNotSupported)", name);
    return tdm_ret(cudaErrorNotSupported);
}

/* An entry point Tandem does not carry, for the reason out_of_reach.tsv
 * gives (generated stubs, gen_unsupported.sh): the reason is in the line so
 * that a user need not look it up. */
cudaError_t tdm_not_carried(const char *name, const char *why)
{
    tdm_log("%s is not available through Tandem: %s (returning cudaErrorNotSupported)", name, why);
    return tdm_ret(cudaErrorNotSupported);
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;

    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return last_error;
}

/* The toolkit's own answers, table generated at build time (error_table.h). */
static const tdm_error_text *find_error_text(cudaError_t error)
{
    for (unsigned i = 0; i < tdm_error_text_count; i++)
        if (tdm_error_texts[i].code == (int)error)
            return &tdm_error_texts[i];
    return NULL;
}

const char *cudaGetErrorName(cudaError_t error)
{
    const tdm_error_text *t = find_error_text(error);

    return t ? t->name : tdm_error_unknown_name;
}

const char *cudaGetErrorString(cudaError_t error)
{
    const tdm_error_text *t = find_error_text(error);

    return t ? t->string : tdm_error_unknown_string;
}
