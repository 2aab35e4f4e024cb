/* SPDX-License-Identifier: MIT */
/*
 * tandem_compat.h - the few types and helpers the portable decision logic
 * needs, mapped onto the kernel or onto libc.  The same policy sources are
 * compiled into the kernel module and into the user-space Criterion tests;
 * this header is the only place that knows which one it is.
 */
#ifndef TANDEM_COMPAT_H
#define TANDEM_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#endif

#define TANDEM_SZ_4K ((u64)4096)
#define TANDEM_SZ_2M ((u64)2 * 1024 * 1024)

#endif /* TANDEM_COMPAT_H */
