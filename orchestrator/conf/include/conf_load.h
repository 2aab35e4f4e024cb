/* Config files of the control plane (issue 17), read with libconfig.
 *
 * Every error a caller reports names the file, the line and what is wrong,
 * as "FILE:LINE: what"; these helpers build that text so that the format is
 * written once. */
#ifndef TANDEM_CONF_LOAD_H
#define TANDEM_CONF_LOAD_H

#include <libconfig.h>
#include <stddef.h>

/* Reads PATH into CFG (initialised here; the caller destroys it with
 * config_destroy, also on failure).  Relative @include paths resolve beside
 * PATH.  Returns 0, or -errno with ERR holding "PATH:LINE: reason" (or
 * "PATH: reason" when the file cannot be opened). */
int tdm_conf_load(config_t *cfg, const char *path, char *err, size_t errlen);

/* Formats "FILE:LINE: <fmt...>" for SETTING into ERR (the file is the one
 * the setting was read from, @include'd files included) and returns
 * -EINVAL, so that a check reads `return tdm_conf_fail(err, n, s, "...")`. */
int tdm_conf_fail(char *err, size_t errlen, const config_setting_t *setting,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
