// SPDX-License-Identifier: GPL-2.0
/*
 * Destroy: the teardown of a loopback pair whose receive queues are full,
 * as a ULP's connection goes away (nvme-rdma, xprtrdma and SMB-Direct keep
 * a receive posted for every credit they grant): each side's receive
 * queue holds every receive it was granted, none consumed, and the
 * teardown hands each back, flushed, exactly once. Raw verbs drain both
 * QPs (ib_drain_qp()), then free the QPs, CQs and buffers; ibpost
 * destroys both QPs (ibpost_qp_destroy()), then frees the buffers.
 *
 * Timed from just before the teardown to its end, every context counted
 * back (bench_pair_teardown()); the figures are that time and the
 * receives it flushed. Nothing is sent: in loopback a posted send
 * completes within microseconds, and keeping sends outstanding would need
 * a stalled peer, whose retransmissions would weigh on the time.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include "bench.h"

/* Side @s holds every receive it was granted and none has come back. */
static int bench_destroy_full(struct bench_run *run, struct bench_side *s)
{
	u32 recv = atomic_read(&s->ctxs.recv);
	u32 back = atomic_read(&s->ctxs.back_recv);

	if (recv == s->rq_depth && !back)
		return 0;
	pr_warn("QP %c before the teardown: %u receives posted of %u, %u back\n",
		s->name, recv, s->rq_depth, back);
	return bench_fail(run, -EIO, "a receive queue not full before the teardown");
}

/**
 * bench_destroy - time the teardown of a set-up pair with full receive queues
 * @run: the run, set up (receives posted on both sides); torn down here
 * @res: filled with the teardown's time and the receives it flushed
 *
 * Context: Process context; sleeps.
 * Return: 0, or the run's failure (the pair is torn down either way).
 */
int bench_destroy(struct bench_run *run, struct bench_result *res)
{
	u32 flushed;
	u64 t0, t1;
	int ret, ret2;

	ret = bench_destroy_full(run, &run->a) ?:
	      bench_destroy_full(run, &run->b);
	t0 = ktime_get_ns();
	ret2 = bench_pair_teardown(run);
	t1 = ktime_get_ns();
	if (ret || ret2)
		return ret ?: ret2;
	flushed = atomic_read(&run->a.ctxs.back_recv) +
		  atomic_read(&run->b.ctxs.back_recv);
	res->wrs = flushed;
	res->elapsed_ns = t1 - t0;
	return 0;
}
