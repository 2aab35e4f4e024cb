/* The backends this server was built with, looked up by name
 * (--backend cuda|sim).  Declared in backend.h with the contract. */
#include <string.h>

#include "backend.h"

const tdm_backend_ops *tdm_backend_find(const char *name)
{
    static const tdm_backend_ops *const all[] = { &tdm_backend_cuda_ops, &tdm_backend_sim_ops };

    for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}
