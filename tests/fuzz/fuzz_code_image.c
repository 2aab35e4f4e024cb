/* The fat-binary parsers.  The server's (common/code_image.c) reads the
 * device code a guest sends to cuModuleLoadData or cudaLibraryLoadData: what
 * kind of image it is, how long, and, on the sim backend, every kernel name
 * in it, down into a fat binary's ELF and PTX entries.  The guest's
 * (guest-lib/fatbin.c) sizes the blocks nvcc embedded in a program.  The
 * input is the image, in a buffer of exactly its size, so that a read past
 * its end is seen. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code_image.h"
#include "fatbin.h"

/* Touches every byte of the name, so a name that runs past the image is a
 * read AddressSanitizer sees. */
static int kernel(const char *name, size_t n, void *arg)
{
    size_t *sum = arg;

    for (size_t i = 0; i < n; i++)
        *sum += (unsigned char)name[i];
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t sum = 0;

    (void)tdm_code_image_kind(data, size);
    if (tdm_code_image_length(data, size) > size)
        abort();
    (void)tdm_code_image_kernels(data, size, kernel, &sum);
    /* The sizes the guest sends: never more than it was allowed to read. */
    if (tdm_fatbin_block_size(data, size) > size || tdm_fatbin_image_size(data, size) > size)
        abort();
    return 0;
}
