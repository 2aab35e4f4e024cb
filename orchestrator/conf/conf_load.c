/* See conf_load.h. */
#include "conf_load.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tdm_conf_load(config_t *cfg, const char *path, char *err, size_t errlen)
{
    config_init(cfg);
    /* @include "x.conf" resolves beside the including file, as an operator
     * reading the file expects, not beside the process's working directory. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = '\0';
        config_set_include_dir(cfg, dir);
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    fclose(f);
    /* config_read_file, not config_read on the FILE: only then does libconfig record the file's
     * name in each setting, which tdm_conf_fail names ("?" otherwise). */
    int ok = config_read_file(cfg, path);
    if (ok != CONFIG_TRUE) {
        const char *file = config_error_file(cfg);
        snprintf(err, errlen, "%s:%d: %s", file ? file : path, config_error_line(cfg),
                 config_error_text(cfg));
        return -EINVAL;
    }
    return 0;
}

int tdm_conf_fail(char *err, size_t errlen, const config_setting_t *setting, const char *fmt, ...)
{
    const char *file = setting ? config_setting_source_file(setting) : NULL;
    int line = setting ? (int)config_setting_source_line(setting) : 0;
    int n = snprintf(err, errlen, "%s:%d: ", file ? file : "?", line);
    if (n < 0 || (size_t)n >= errlen)
        return -EINVAL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -EINVAL;
}
