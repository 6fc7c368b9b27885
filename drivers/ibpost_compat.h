/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few places where the kernels ibpost supports (6.1 to 6.12, see
 * Documentation/kernels.rst) differ in an API ibpost uses. Each entry
 * names the release that changed it; nothing else in the tree tests a
 * kernel version.
 */
#ifndef _IBPOST_COMPAT_H
#define _IBPOST_COMPAT_H

#include <linux/version.h>

/*
 * 6.10 dropped __assign_str()'s source argument: the source is the one
 * given to __string() in TP_STRUCT__entry.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define ibpost_assign_str(dst, src) __assign_str(dst)
#else
#define ibpost_assign_str(dst, src) __assign_str(dst, src)
#endif

#endif /* _IBPOST_COMPAT_H */
