#ifndef TANDEM_GUEST_ERROR_NAMES_H
#define TANDEM_GUEST_ERROR_NAMES_H

typedef struct tdm_error_name {
    int code;
    const char *name;
} tdm_error_name;

extern const tdm_error_name tdm_error_names[];
extern const unsigned tdm_error_name_count;

#endif
