/* gen_error_table writes whatever bytes the library answers as C string
 * literals that compile back to exactly those bytes: quotes, backslashes,
 * trigraph sequences (the table is compiled with -trigraphs here), control
 * characters, an escape followed by a digit, bytes above 0x7e.  The table
 * under test was generated at build time from fake_error_texts. */
#include <criterion/criterion.h>
#include <dlfcn.h>

#include "error_table.h"

typedef const char *(*error_text_fn)(int);

Test(error_table_quoting, literals_round_trip)
{
    void *lib = dlopen(FAKE_ERROR_TEXTS, RTLD_NOW | RTLD_LOCAL);

    cr_assert_not_null(lib, "dlopen: %s", dlerror());
    error_text_fn name = (error_text_fn)dlsym(lib, "cudaGetErrorName");
    error_text_fn string = (error_text_fn)dlsym(lib, "cudaGetErrorString");

    cr_assert(name && string);
    cr_assert_eq(tdm_error_text_count, 5);
    for (unsigned i = 0; i < tdm_error_text_count; i++) {
        cr_expect_eq(tdm_error_texts[i].code, (int)i);
        cr_expect_str_eq(tdm_error_texts[i].name, name((int)i));
        cr_expect_str_eq(tdm_error_texts[i].string, string((int)i));
    }
    cr_expect_str_eq(tdm_error_unknown_name, name(5));
    cr_expect_str_eq(tdm_error_unknown_string, string(5));
}
