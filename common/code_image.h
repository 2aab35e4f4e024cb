/* Device code images as cudaLibraryLoadData takes them (issue 14,
 * libraries): a fat binary, an ELF cubin, or NUL-terminated PTX text.
 * Only headers are read, and never past the length given. */
#ifndef TANDEM_COMMON_CODE_IMAGE_H
#define TANDEM_COMMON_CODE_IMAGE_H

#include <stddef.h>

typedef enum tdm_image_kind {
    TDM_IMAGE_INVALID,
    TDM_IMAGE_FATBIN,
    TDM_IMAGE_CUBIN,
    TDM_IMAGE_PTX,
} tdm_image_kind;

/* What the `len` bytes at image are: a fat binary whose first block fits,
 * an ELF whose header tables and sections fit, or PTX text whose NUL is the
 * last byte. */
tdm_image_kind tdm_code_image_kind(const void *image, size_t len);

/* The length of a cubin (ELF) or PTX image at code whose length nobody gave
 * (the guest's cudaLibraryLoadData): what its headers (its NUL) say, at most
 * limit; 0 if it is neither or does not fit. */
size_t tdm_code_image_length(const void *code, size_t limit);

/* Calls fn for every kernel (entry function) the image names: those of a
 * cubin's symbol table, a PTX text's .entry directives, and those of the
 * uncompressed cubins and PTX inside a fat binary (compressed ones are
 * skipped).  A name may come more than once (one per architecture).  Stops
 * at fn's first nonzero answer and returns it; 0 otherwise. */
int tdm_code_image_kernels(const void *image, size_t len, int (*fn)(const char *name, size_t n, void *arg),
                           void *arg);

#endif
