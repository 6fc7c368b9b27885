/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ibpost - fault injection for consumers' tests.
 *
 * Not part of the posting API (<rdma/ibpost.h>): a consumer's test module
 * includes this header to make ibpost refuse a chosen WR, so that it can
 * exercise its own error paths. The export is in namespace IBPOST, like
 * the rest of ibpost.
 */
#ifndef _RDMA_IBPOST_FAULT_H
#define _RDMA_IBPOST_FAULT_H

/**
 * DOC: Fault injection
 *
 * ibpost is a site of the kernel's fault-injection framework
 * (Documentation/fault-injection/fault-injection.rst) on kernels built with
 * ``CONFIG_FAULT_INJECTION``: every WR a post call accepts after ibpost's
 * own checks (send or receive, on any QP) asks should_fail() before it is
 * queued. A WR that should fail is refused with a chosen errno, as if the
 * provider had refused it, and the partial-post contract holds: the WRs
 * before it in its chain are queued and complete normally, ``*bad_wr``
 * names it, nothing after it is queued, the QP's state is unchanged.
 *
 * Root sets the framework's knobs in ``/sys/kernel/debug/ibpost/fail_ibpost/``
 * (``probability``, ``interval``, ``times``, ``space``, ``verbose``,
 * ``task-filter``, each WR spending 1 of ``space``) and ibpost's own
 * ``errno`` there; ``/proc/<pid>/fail-nth`` counts ibpost's WRs among the
 * task's fault sites. A test module arms the same attribute exactly with
 * ibpost_fault_inject(). On a kernel without ``CONFIG_FAULT_INJECTION``
 * (Debian's stock kernels) there is no directory, the post path has no
 * check, and ibpost_fault_inject() returns -EOPNOTSUPP.
 */
int ibpost_fault_inject(unsigned int nth, int err);

#endif /* _RDMA_IBPOST_FAULT_H */
