// SPDX-License-Identifier: GPL-2.0
/*
 * What both backends share: the failure record, send completion
 * accounting and the bounded waits for it.
 *
 * Completion handlers run in softirq (IB_POLL_SOFTIRQ, for raw CQs and
 * for ibpost's alike): they only count, record and wake. The first
 * failure of a run (a completion status, a refused post, a timeout, a
 * signal, the device going away) is recorded once and stops the run;
 * what happens after bench_stop() (the flushes of teardown) is ignored.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include "bench.h"

/**
 * bench_fail - record a run's failure, unless one is already recorded
 * @run: the run
 * @err: negative errno
 * @why: what failed, for the message
 *
 * Context: Any context but hard IRQ.
 * Return: @err.
 */
int bench_fail(struct bench_run *run, int err, const char *why)
{
	spin_lock_bh(&run->lock);
	if (!run->err && !run->stopping) {
		run->why = why;
		WRITE_ONCE(run->err, err);
	}
	spin_unlock_bh(&run->lock);
	wake_up_all(&run->wq);
	return err;
}

/* A completion came back with an error status: the run fails with -EIO. */
void bench_fail_wc(struct bench_side *s, const struct ib_wc *wc, bool send)
{
	struct bench_run *run = s->run;

	spin_lock_bh(&run->lock);
	if (!run->err && !run->stopping) {
		run->wc_failed = true;
		run->wc_send = send;
		run->wc_side = s->name;
		run->wc_status = wc->status;
		WRITE_ONCE(run->err, -EIO);
	}
	spin_unlock_bh(&run->lock);
	wake_up_all(&run->wq);
}

/* Teardown begins: flushes are expected from here on. */
void bench_stop(struct bench_run *run)
{
	spin_lock_bh(&run->lock);
	WRITE_ONCE(run->stopping, true);
	spin_unlock_bh(&run->lock);
}

/* Between posts: has the run failed, or has the writer been signaled? */
int bench_check(struct bench_run *run)
{
	int err = READ_ONCE(run->err);

	if (err)
		return err;
	if (signal_pending(current))
		return bench_fail(run, -EINTR, "interrupted by a signal");
	return 0;
}

/**
 * bench_tx_done - account a send completion
 * @txq: the send queue
 * @c: raw: the slot's context; NULL for ibpost, which reclaims its slots
 * @wc: the completion
 *
 * Only signaled WRs come back on success; send queues complete in order,
 * so the slots of every WR up to @c's are free again.
 *
 * Context: The CQ's completion context (softirq), or process context for
 * ibpost's flushes.
 */
void bench_tx_done(struct bench_txq *txq, struct bench_wctx *c,
		   const struct ib_wc *wc)
{
	struct bench_run *run = txq->side->run;

	if (wc->status != IB_WC_SUCCESS) {
		bench_fail_wc(txq->side, wc, true);
		return;
	}
	if (c) {
		/* Pairs with the acquire in bench_txq_room(): slots are free. */
		smp_store_release(&txq->freed, c->seq);
	}
	WRITE_ONCE(txq->t_last, ktime_get_ns());
	/* t_last and freed before the count the waiters look at. */
	smp_mb__before_atomic();
	atomic_inc(&txq->completions);
	/* wq_has_sleeper() orders the count before the waiter check. */
	if (wq_has_sleeper(&run->wq))
		wake_up(&run->wq);
}

/**
 * bench_rx_ok - check a receive completion before acting on it
 * @s: the side it belongs to
 * @wc: the completion
 *
 * Context: The CQ's completion context.
 * Return: true when the receive succeeded and the run is not stopping:
 * the caller may answer it and repost.
 */
bool bench_rx_ok(struct bench_side *s, const struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS) {
		bench_fail_wc(s, wc, false);
		return false;
	}
	return !READ_ONCE(s->run->stopping);
}

/* Raw: send queue slots the poster may still fill. */
u32 bench_txq_room(struct bench_txq *txq)
{
	/* Pairs with the release in bench_tx_done(). */
	u32 freed = smp_load_acquire(&txq->freed);

	return txq->depth - (txq->posted - freed);
}

/* Raw: the context of the @i-th WR from now on, ready to post. */
struct ib_cqe *bench_txq_next(struct bench_txq *txq, u32 i)
{
	u32 seq = txq->posted + i;
	struct bench_wctx *c = &txq->ctx[seq % txq->depth];

	c->seq = seq + 1;
	return &c->cqe;
}

static bool bench_txq_moved(struct bench_run *run, struct bench_txq *txq,
			    u32 snap)
{
	return (u32)atomic_read(&txq->completions) != snap ||
	       READ_ONCE(run->err);
}

/**
 * bench_txq_wait - wait for a send completion beyond @snap
 * @run: the run
 * @txq: the send queue
 * @snap: its completion count when the post that found it full began
 *
 * Context: Process context; sleeps (interruptibly).
 * Return: 0; the run's failure; -ETIMEDOUT after BENCH_TIMEOUT without a
 * completion; -EINTR on a signal.
 */
int bench_txq_wait(struct bench_run *run, struct bench_txq *txq, u32 snap)
{
	long left;

	left = wait_event_interruptible_timeout(run->wq,
						bench_txq_moved(run, txq, snap),
						BENCH_TIMEOUT);
	if (READ_ONCE(run->err))
		return READ_ONCE(run->err);
	if (left < 0)
		return bench_fail(run, -EINTR, "interrupted by a signal");
	if (!left)
		return bench_fail(run, -ETIMEDOUT,
				  "no send completion within 30 s");
	return 0;
}

/* Wait until @need signaled WRs completed on @txq since it counted @start. */
int bench_txq_wait_count(struct bench_run *run, struct bench_txq *txq,
			 u32 start, u32 need)
{
	u32 seen;
	int ret;

	for (;;) {
		seen = atomic_read(&txq->completions);
		if (seen - start >= need)
			break;
		ret = bench_txq_wait(run, txq, seen);
		if (ret)
			return ret;
	}
	/* Pairs with the barrier in bench_tx_done(): t_last is the last. */
	smp_rmb();
	return 0;
}

/* How many WRs of a chain precede @bad (0 when the provider gave none). */
u32 bench_chain_index(const struct ib_send_wr *first,
		      const struct ib_send_wr *bad)
{
	u32 n = 0;

	if (!bad)
		return 0;
	for (; first && first != bad; first = first->next)
		n++;
	return n;
}

/**
 * bench_bufs_init - a run's buffers, then the receives that keep it fed
 * @run: the run
 * @buf_init: the backend's buffer set-up; @remote asks for peer access
 * @post_recv: the backend's receive post, one per call
 * @what: the post call's name, for the failure message
 *
 * Context: Process context; may sleep.
 * Return: 0, or the run's failure.
 */
int bench_bufs_init(struct bench_run *run,
		    int (*buf_init)(struct bench_run *run, struct bench_side *s,
				    struct bench_buf *b, bool remote),
		    int (*post_recv)(struct bench_run *run,
				     struct bench_side *s),
		    const char *what)
{
	struct bench_side *sides[] = { &run->a, &run->b };
	bool remote = run->opcode != IB_WR_SEND;
	unsigned int i;
	u32 n;
	int ret;

	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		struct bench_side *s = sides[i];

		if (bench_need_src(run, s)) {
			ret = buf_init(run, s, &s->src, false);
			if (ret)
				return ret;
		}
		if (bench_need_dst(run, s)) {
			ret = buf_init(run, s, &s->dst, remote);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		struct bench_side *s = sides[i];

		if (!bench_need_recv(run, s))
			continue;
		for (n = 0; n < s->rq_depth; n++) {
			ret = post_recv(run, s);
			if (ret)
				return bench_fail(run, ret, what);
		}
	}
	return 0;
}
