// SPDX-License-Identifier: GPL-2.0
/*
 * Bandwidth: side A streams WRs at side B's buffer (SEND into B's posted
 * receives, RDMA WRITE into it, RDMA READ from it), the same way in every
 * mode; only the backend's post call differs.
 *
 * A phase (warmup, then the measurement) posts its WRs in chains of
 * run->chain, signals every run->signal-th and its last, and ends when
 * the last one has completed, so the next phase starts on empty queues.
 * When the send queue is full the poster sleeps until a signaled WR
 * completes; with the interval clamped to the queue depth, a full queue
 * always holds one.
 *
 * Timing (as perftest): from just before the measurement's first post
 * call to its last completion; post_ns adds up only the post calls.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "bench.h"

/* The chain array: A's buffer to B's, one SGE each. */
static int bench_bw_build(struct bench_run *run)
{
	u32 i;

	run->wrs = kcalloc(run->chain, sizeof(*run->wrs), GFP_KERNEL);
	if (!run->wrs)
		return bench_fail(run, -ENOMEM, "allocating the WR array");
	for (i = 0; i < run->chain; i++) {
		struct ib_rdma_wr *wr = &run->wrs[i];

		wr->wr.opcode = run->opcode;
		wr->wr.sg_list = &run->a.src.sge;
		wr->wr.num_sge = 1;
		wr->remote_addr = run->b.dst.raddr;
		wr->rkey = run->b.dst.rkey;
	}
	return 0;
}

/* Post @total WRs and wait until the last of them has completed. */
static int bench_bw_phase(struct bench_run *run, u32 total)
{
	struct bench_txq *txq = &run->a.txq;
	u32 start = atomic_read(&txq->completions);
	u32 idx = 0, left = 0, queued, snap;
	bool fresh;
	int ret;

	run->phase_len = total;
	while (idx < total) {
		fresh = !left;
		if (fresh)
			left = min(run->chain, total - idx);
		/* Taken before the post: a completion during it counts. */
		snap = atomic_read(&txq->completions);
		/*
		 * bh=1: the provider's deferred work (rxe's tasklets) runs
		 * after the post call, for every mode alike, not inside it.
		 */
		if (run->cfg->bh)
			local_bh_disable();
		ret = run->ops->post_bw(run, idx, left, fresh, &queued);
		if (run->cfg->bh)
			local_bh_enable();
		idx += queued;
		left -= queued;
		if (ret == -EAGAIN)
			ret = bench_txq_wait(run, txq, snap);
		if (!ret)
			ret = bench_check(run);
		if (ret)
			return ret;
		cond_resched();
	}
	return bench_txq_wait_count(run, txq, start,
				    DIV_ROUND_UP(total, run->signal));
}

/**
 * bench_bw - run a bandwidth measurement on a set-up pair
 * @run: the run
 * @res: filled with the figures
 *
 * Context: Process context; sleeps.
 * Return: 0, or the run's failure.
 */
int bench_bw(struct bench_run *run, struct bench_result *res)
{
	const struct bench_cfg *cfg = run->cfg;
	u64 t0, t_last, elapsed;
	int ret;

	ret = bench_bw_build(run);
	if (ret)
		return ret;
	if (cfg->warmup) {
		ret = bench_bw_phase(run, cfg->warmup);
		if (ret)
			return ret;
	}

	run->post_ns = 0;
	t0 = ktime_get_ns();
	ret = bench_bw_phase(run, cfg->iters);
	if (ret)
		return ret;
	t_last = READ_ONCE(run->a.txq.t_last);
	elapsed = t_last > t0 ? t_last - t0 : 1;

	res->chain = run->chain;
	res->signal = run->signal;
	res->elapsed_ns = elapsed;
	res->msgs_per_s = bench_per_second(cfg->iters, elapsed);
	res->mib_x100 = bench_mib_x100((u64)cfg->size * cfg->iters, elapsed);
	res->post_ns = div_u64(run->post_ns, cfg->iters);
	return 0;
}
