/* Tandem's cudaGetErrorName/cudaGetErrorString answer exactly what the
 * toolkit's own libcudart.so.13 answers, for every code it knows and for
 * codes it does not.  The toolkit's library is loaded here again, at test
 * time, into a namespace of its own (dlmopen): it has the same soname as
 * Tandem's, which this test links. */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <limits.h>
#include <string.h>

typedef const char *(*error_text_fn)(int);

static error_text_fn native_name, native_string;

static void load_toolkit(void)
{
    void *lib = dlmopen(LM_ID_NEWLM, TOOLKIT_CUDART, RTLD_NOW | RTLD_LOCAL);

    cr_assert_not_null(lib, "dlmopen %s: %s", TOOLKIT_CUDART, dlerror());
    native_name = (error_text_fn)dlsym(lib, "cudaGetErrorName");
    native_string = (error_text_fn)dlsym(lib, "cudaGetErrorString");
    cr_assert(native_name && native_string, "the toolkit's libcudart lacks the error functions");
}

TestSuite(error_texts, .init = load_toolkit);

static void expect_native(int code)
{
    const char *name = cudaGetErrorName((cudaError_t)code);
    const char *string = cudaGetErrorString((cudaError_t)code);

    cr_expect_str_eq(name, native_name(code), "cudaGetErrorName(%d)", code);
    cr_expect_str_eq(string, native_string(code), "cudaGetErrorString(%d)", code);
}

/* Every code driver_types.h has ever used lies in 0..1100 or is 10000;
 * the range also covers the holes between them. */
Test(error_texts, every_code_as_the_toolkit)
{
    for (int code = -2; code <= 1100; code++)
        expect_native(code);
    for (int code = 9990; code <= 10010; code++)
        expect_native(code);
}

Test(error_texts, unknown_codes_as_the_toolkit)
{
    const int codes[] = { 12345, INT_MAX, INT_MIN, -1 };

    for (unsigned i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        expect_native(codes[i]);
}

/* Spelled out once, so a table that answered the names (the old fallback)
 * fails here even if the toolkit's library could not be compared. */
Test(error_texts, descriptions_not_names)
{
    cr_expect_str_eq(cudaGetErrorString(cudaErrorAssert), native_string(cudaErrorAssert));
    cr_expect_str_neq(cudaGetErrorString(cudaErrorAssert), "cudaErrorAssert");
    cr_expect_str_eq(cudaGetErrorName(cudaErrorAssert), "cudaErrorAssert");
    cr_expect_str_eq(cudaGetErrorString(cudaSuccess), "no error");
}
