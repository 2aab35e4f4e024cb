/* Libraries (issue 14): the kernels a library's image names.  The sim runs
 * no GPU code, so it reads them from the image itself (code_image.h): the
 * cubin's symbol table, PTX's .entry directives, the uncompressed code of a
 * fat binary.  Each is then looked up among the kernel twins as a
 * registered kernel is (sim_module_get_function). */
#include <stdlib.h>
#include <string.h>

#include "code_image.h"
#include "grow.h"
#include "sim_internal.h"

typedef struct name_list {
    char **v;
    uint32_t n;
    size_t cap;
} name_list;

static int add_name(const char *name, size_t len, void *arg)
{
    name_list *l = arg;
    char *copy;

    for (uint32_t i = 0; i < l->n; i++)          /* one per architecture in a fat binary */
        if (strlen(l->v[i]) == len && memcmp(l->v[i], name, len) == 0)
            return 0;
    if (tdm_grow((void **)&l->v, &l->cap, (size_t)l->n + 1, sizeof(*l->v), 16) != 0 || !(copy = strndup(name, len)))
        return cudaErrorMemoryAllocation;
    l->v[l->n++] = copy;
    return 0;
}

int sim_module_kernel_names(tdm_backend *b, tdm_bmodule *m, const void *image, size_t len, char ***names,
                            uint32_t *n)
{
    name_list l = { 0 };
    int err = tdm_code_image_kernels(image, len, add_name, &l);

    if (err) {
        for (uint32_t i = 0; i < l.n; i++)
            free(l.v[i]);
        free(l.v);
        return err;
    }
    *names = l.v;
    *n = l.n;
    return 0;
}
