#ifndef TANDEM_GUEST_ERROR_TABLE_H
#define TANDEM_GUEST_ERROR_TABLE_H

/* What the toolkit's own libcudart.so.13 answers for each cudaError_t code
 * (cudaGetErrorName, cudaGetErrorString), generated at build time by
 * gen_error_table.c so that programs printing errors print what they would
 * natively. */
typedef struct tdm_error_text {
    int code;
    const char *name;
    const char *string;
} tdm_error_text;

extern const tdm_error_text tdm_error_texts[];
extern const unsigned tdm_error_text_count;
/* Both functions' answer for a code the toolkit does not know. */
extern const char tdm_error_unknown_name[];
extern const char tdm_error_unknown_string[];

#endif
