/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KUnit API where the kernels the suites run on (6.1 and 6.12)
 * differ; drivers/ibpost_compat.h holds the module's own.
 */
#ifndef _IBPOST_KUNIT_COMPAT_H
#define _IBPOST_KUNIT_COMPAT_H

#include <linux/version.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

/* 6.1 calls a failing, aborting assertion KUNIT_ASSERT_FAILURE(). */
#ifndef KUNIT_FAIL_AND_ABORT
#define KUNIT_FAIL_AND_ABORT(test, fmt, ...) \
	KUNIT_ASSERT_FAILURE(test, fmt, ##__VA_ARGS__)
#endif

/*
 * 6.2 added IB_WR_FLUSH and IB_WR_ATOMIC_WRITE to enum ib_wr_opcode (the
 * uverbs values 14 and 15). ibpost accepts neither, on any kernel; on 6.1
 * the same values are unknown opcodes. The suites post them by value.
 */
#define IBPOST_TEST_WR_FLUSH		14
#define IBPOST_TEST_WR_ATOMIC_WRITE	15
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static_assert(IB_WR_FLUSH == IBPOST_TEST_WR_FLUSH);
static_assert(IB_WR_ATOMIC_WRITE == IBPOST_TEST_WR_ATOMIC_WRITE);
#endif

#endif /* _IBPOST_KUNIT_COMPAT_H */
