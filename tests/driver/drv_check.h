/* What the Driver API check programs of tests/driver/ share: a result's name as the driver
 * gives it, a line of it, yes or no, and a call that must succeed (else the program says which
 * and exits 1, which its integration test reports with the output). */
#ifndef TANDEM_TESTS_DRV_CHECK_H
#define TANDEM_TESTS_DRV_CHECK_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static inline const char *name(CUresult r)
{
    const char *s = NULL;

    return cuGetErrorName(r, &s) == CUDA_SUCCESS && s ? s : "(unknown CUresult)";
}

static inline void say(const char *what, CUresult r)
{
    printf("%s: %s\n", what, name(r));
}

static inline const char *yes(int b)
{
    return b ? "yes" : "no";
}

#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                                      \
            printf("%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, name(r_));                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

#endif
