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
 * call to its last completion; post_ns adds up the backends' post steps:
 * the post call with the making of its WRs (flags, links) and, for raw,
 * its send-slot accounting, which ibpost does inside its call.
 *
 * Poll modes (raw-poll, chain-poll, seed-poll): the CQs are
 * IB_POLL_DIRECT and the poster reaps both sides' after each post call,
 * as a busy-polling ULP does, and spins on them (bench_spin()) where it
 * would sleep.
 *
 * A poster (struct bench_poster) keeps one thread's place in its phase;
 * a bandwidth run has one, the scaling engine (scale.c) one per thread
 * and pair it drives, stepped with bench_bw_step().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include "bench.h"

/**
 * bench_sges - cut a buffer's SGE in run->cfg->sges consecutive pieces
 * @run: the run (cfg->sges <= cfg->size, checked with the command)
 * @whole: the buffer's one SGE, run->size bytes
 * @sge: the pieces, in order (bench_piece())
 */
void bench_sges(const struct bench_run *run, const struct ib_sge *whole,
		struct ib_sge *sge)
{
	u32 i;

	for (i = 0; i < run->cfg->sges; i++) {
		sge[i].addr = whole->addr +
			      bench_piece(run, i, &sge[i].length);
		sge[i].lkey = whole->lkey;
	}
}

/**
 * bench_poster_init - a poster's chain array: A's buffer to B's
 * @run: the pair it posts on, set up
 * @p: the poster, zeroed; its array is freed with kfree(@p->wrs)
 *
 * Context: Process context; may sleep.
 * Return: 0, or the run's failure.
 */
int bench_poster_init(struct bench_run *run, struct bench_poster *p)
{
	u32 i;

	p->wrs = kcalloc(run->chain, sizeof(*p->wrs), GFP_KERNEL);
	if (!p->wrs)
		return bench_fail(run, -ENOMEM, "allocating the WR array");
	/* Inline data is copied from the CPU's address, no key needed. */
	p->isge.addr = (uintptr_t)run->a.src.cpu;
	p->isge.length = run->size;
	bench_sges(run, &run->a.src.sge, p->msge);
	for (i = 0; i < run->chain; i++) {
		struct ib_rdma_wr *wr = &p->wrs[i];

		wr->wr.opcode = run->opcode;
		wr->wr.sg_list = run->cfg->inl ? &p->isge :
				 run->cfg->sges > 1 ? p->msge : &run->a.src.sge;
		wr->wr.num_sge = run->cfg->sges;
		wr->remote_addr = run->b.dst.raddr;
		wr->rkey = run->b.dst.rkey;
	}
	return 0;
}

/* A phase of @total WRs begins. */
void bench_bw_start(struct bench_poster *p, u32 total)
{
	p->phase_len = total;
	p->idx = 0;
	p->left = 0;
	p->post_ns = 0;
}

/**
 * bench_bw_step - one post call of a poster's phase
 * @run: the pair
 * @p: the poster, its phase not over (@p->idx < @p->phase_len)
 *
 * Posts a new chain of up to run->chain WRs, or what is left of the last
 * one.
 *
 * Context: Process context.
 * Return: 0 when the WRs were queued; -EAGAIN when the send queue was
 * full (@p->snap is the completion count to wait beyond); or the run's
 * failure.
 */
int bench_bw_step(struct bench_run *run, struct bench_poster *p)
{
	struct bench_txq *txq = &run->a.txq;
	bool fresh = !p->left;
	u32 queued;
	int ret;

	if (fresh)
		p->left = min(run->chain, p->phase_len - p->idx);
	/* Taken before the post: a completion during it counts. */
	p->snap = atomic_read(&txq->completions);
	/*
	 * bh=1: the provider's deferred work (rxe's tasklets) runs after the
	 * post call, for every mode alike, not inside it.
	 */
	if (run->cfg->bh)
		local_bh_disable();
	ret = run->ops->post_bw(run, p, p->left, fresh, &queued);
	if (run->cfg->bh)
		local_bh_enable();
	p->idx += queued;
	p->left -= queued;
	return ret;
}

static bool pcprof;
module_param(pcprof, bool, 0444);
MODULE_PARM_DESC(pcprof, "mark each measured bandwidth phase for QEMU's pcprof plugin (scripts/pcprof)");

/**
 * bench_pcprof_mark - open or close a window of the instruction profile
 *
 * With pcprof=1, runs "xchg %bx,%bx", which changes nothing and which the
 * pcprof plugin watches for (scripts/pcprof/pcprof.c): one before and one
 * after each measured phase, so that its counts cover the phase only.
 *
 * Context: Any context.
 */
void bench_pcprof_mark(void)
{
#ifdef CONFIG_X86
	if (pcprof)
		asm volatile("xchg %%bx, %%bx" ::: "memory");
#endif
}

/*
 * Wait until @need signaled WRs completed on @txq since its count was
 * @snap: spinning in the poll modes (nothing else reaps their CQs),
 * asleep in the others.
 */
static int bench_bw_wait(struct bench_run *run, struct bench_txq *txq,
			 u32 snap, u32 need)
{
	struct bench_until u = { .txq = txq, .snap = snap, .need = need };

	if (run->poll)
		return bench_spin(run, &u);
	return bench_txq_wait_count(run, txq, snap, need);
}

/* Post @total WRs and wait until the last of them has completed. */
static int bench_bw_phase(struct bench_run *run, u32 total)
{
	struct bench_poster *p = &run->post;
	struct bench_txq *txq = &run->a.txq;
	u32 start = atomic_read(&txq->completions);
	int ret;

	bench_bw_start(p, total);
	while (p->idx < total) {
		ret = bench_bw_step(run, p);
		if (ret == -EAGAIN)
			ret = bench_bw_wait(run, txq, p->snap, 1);
		else if (!ret && run->poll)
			ret = run->ops->poll(run);
		if (!ret)
			ret = bench_check(run);
		if (ret)
			return ret;
		cond_resched();
	}
	return bench_bw_wait(run, txq, start, DIV_ROUND_UP(total, run->signal));
}

/**
 * bench_bw_figures - a bandwidth result from what was measured
 * @res: filled with rates and the average post-call time
 * @size: bytes per WR
 * @wrs: WRs measured
 * @elapsed_ns: first post to last completion
 * @post_ns: time spent inside post calls, all posters together
 *
 * Context: Any context.
 */
void bench_bw_figures(struct bench_result *res, u32 size, u64 wrs,
		      u64 elapsed_ns, u64 post_ns)
{
	res->wrs = wrs;
	res->elapsed_ns = elapsed_ns;
	res->msgs_per_s = bench_per_second(wrs, elapsed_ns);
	res->mib_x100 = bench_mib_x100(size * wrs, elapsed_ns);
	res->post_ns = div64_u64(post_ns, wrs ?: 1);
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
	u64 t0, t_last;
	int ret;

	ret = bench_poster_init(run, &run->post);
	if (ret)
		return ret;
	if (cfg->warmup) {
		ret = bench_bw_phase(run, cfg->warmup);
		if (ret)
			return ret;
	}

	bench_pcprof_mark();
	t0 = ktime_get_ns();
	ret = bench_bw_phase(run, cfg->iters);
	bench_pcprof_mark();
	if (ret)
		return ret;
	t_last = READ_ONCE(run->a.txq.t_last);

	res->chain = run->chain;
	res->signal = run->signal;
	bench_bw_figures(res, cfg->size, cfg->iters,
			 t_last > t0 ? t_last - t0 : 1, run->post.post_ns);
	return 0;
}
