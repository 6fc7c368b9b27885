/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the suites need where the kernels they run on (6.1 and 6.12)
 * differ. The module's one difference, the spelling of its symbol
 * namespace, is IBPOST_NS in include/rdma/ibpost.h.
 */
#ifndef _IBPOST_KUNIT_COMPAT_H
#define _IBPOST_KUNIT_COMPAT_H

#include <kunit/test.h>

/* 6.1 calls a failing, aborting assertion KUNIT_ASSERT_FAILURE(). */
#ifndef KUNIT_FAIL_AND_ABORT
#define KUNIT_FAIL_AND_ABORT(test, fmt, ...) \
	KUNIT_ASSERT_FAILURE(test, fmt, ##__VA_ARGS__)
#endif

/*
 * 6.2 added IB_WR_FLUSH and IB_WR_ATOMIC_WRITE to enum ib_wr_opcode, as
 * the uverbs values IB_UVERBS_WR_FLUSH (14) and IB_UVERBS_WR_ATOMIC_WRITE
 * (15). ibpost accepts neither, on any kernel; on 6.1 the same values are
 * unknown opcodes. The suites post them by value.
 */
#define IBPOST_TEST_WR_FLUSH		14
#define IBPOST_TEST_WR_ATOMIC_WRITE	15

#endif /* _IBPOST_KUNIT_COMPAT_H */
