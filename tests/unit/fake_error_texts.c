/* A stand-in for the toolkit's libcudart.so.13 whose error descriptions hold
 * every character a C string literal must escape, for
 * test_error_table_quoting: gen_error_table is run on it at build time. */
#include <stddef.h>

static const char *const names[] = {
    "cudaSuccess", "cudaErrorQuotes", "cudaErrorTrigraph", "cudaErrorControl", "cudaErrorHighBytes",
};
static const char *const strings[] = {
    "no error",
    "say \"hi\" to C:\\path\\",
    "what?\?= ?\?/ ?\? ?",
    "tab\there\nnew line\001" "7 digit after an escape",
    "caf\xc3\xa9 \x7f\xff end",
};

const char *cudaGetErrorName(int code)
{
    if (code >= 0 && (size_t)code < sizeof(names) / sizeof(names[0]))
        return names[code];
    return "unrecognized \"code\"";
}

const char *cudaGetErrorString(int code)
{
    if (code >= 0 && (size_t)code < sizeof(strings) / sizeof(strings[0]))
        return strings[code];
    return "unrecognized \\ code?\?!";
}
