// SPDX-License-Identifier: GPL-2.0
/*
 * Latency: ping-pong between side A and side B, driven by one thread.
 *
 * WRITE: A RDMA-WRITEs run->size bytes into B's buffer, the last byte
 * carrying a sequence number; the thread polls that byte, then B writes
 * the same way back into A's buffer and the thread polls A's.
 * SEND: A sends; B's receive completion handler answers with a send of
 * its own (posting from completion handlers is allowed by both verbs and
 * ibpost); A's receive completion handler completes run->pong, which the
 * thread polls.
 *
 * Each round trip is timed with ktime; the figures are one-way (half the
 * round trip), as perftest's ib_write_lat reports them. Latency WRs are
 * signaled every BENCH_LAT_SIGNAL; a full send queue is waited out like
 * in the bandwidth engine.
 *
 * Polling: the thread waits in bench_spin() (core.c), which lets the
 * provider's pending softirq work run on this CPU, gives the CPU up now
 * and then, and gives up after BENCH_TIMEOUT.
 *
 * Poll modes (lat-*-poll): the CQs are IB_POLL_DIRECT and the poll loop
 * also reaps them on every turn, both sides (ib_process_cq_direct() on
 * the raw CQs, ibpost_poll() on the ibpost QPs), as a busy-polling ULP
 * does: WRITE still sees arrival in the last byte (as ib_write_lat), its
 * send completions are reaped there; SEND's receive completions are
 * found there, B's reply posted from B's, A's ending the round trip. A
 * full send queue is waited out in the same loop: nothing else polls.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include "bench.h"

/* Post side @s's latency WR, waiting for a send slot when there is none. */
static int bench_lat_post(struct bench_run *run, struct bench_side *s)
{
	struct bench_until u = { .txq = &s->txq, .need = 1 };
	int ret;

	for (;;) {
		u.snap = atomic_read(&s->txq.completions);
		ret = run->ops->post_lat(run, s);
		if (ret != -EAGAIN)
			return ret;
		if (run->poll)
			ret = bench_spin(run, &u);
		else
			ret = bench_txq_wait(run, &s->txq, u.snap);
		if (ret)
			return ret;
	}
}

/* Side @s writes @seq, as the last byte of its buffer, into the peer's. */
static int bench_lat_write_one(struct bench_run *run, struct bench_side *s,
			       u8 seq)
{
	struct bench_until u = { .seq = seq };
	u8 *last = (u8 *)s->src.cpu + run->size - 1;
	int ret;

	u.byte = (u8 *)s->peer->dst.cpu + run->size - 1;
	WRITE_ONCE(*last, seq);
	ret = bench_lat_post(run, s);
	return ret ?: bench_spin(run, &u);
}

static int bench_lat_write_rt(struct bench_run *run, u8 seq)
{
	return bench_lat_write_one(run, &run->a, seq) ?:
	       bench_lat_write_one(run, &run->b, seq);
}

static int bench_lat_send_rt(struct bench_run *run)
{
	struct bench_until u = {};

	return bench_lat_post(run, &run->a) ?: bench_spin(run, &u);
}

/* Each side's one WR: its src buffer to the peer's dst buffer. */
static void bench_lat_build(struct bench_run *run)
{
	struct bench_side *sides[] = { &run->a, &run->b };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sides); i++) {
		struct bench_side *s = sides[i];

		s->lat_wr.wr.opcode = run->opcode;
		s->lat_wr.wr.sg_list = &s->src.sge;
		s->lat_wr.wr.num_sge = 1;
		s->lat_wr.remote_addr = s->peer->dst.raddr;
		s->lat_wr.rkey = s->peer->dst.rkey;
	}
}

/**
 * bench_lat_rx - answer a latency receive
 * @s: the side that received
 *
 * B answers A's send with its own; A's receive ends the round trip.
 *
 * Context: The receive CQ's completion context (softirq, or the poll loop
 * of the poll modes).
 */
void bench_lat_rx(struct bench_side *s)
{
	struct bench_run *run = s->run;

	if (!run->lat)
		return;
	if (s == &run->a) {
		complete(&run->pong);
		return;
	}
	/* No waiting here: in ping-pong a full send queue is a bug. */
	if (run->ops->post_lat(run, s) == -EAGAIN)
		bench_fail(run, -ENOBUFS, "no send slot left for B's reply");
}

/**
 * bench_lat - run a latency measurement on a set-up pair
 * @run: the run
 * @res: filled with the figures
 *
 * Context: Process context; polls, sleeps when a send queue is full.
 * Return: 0, or the run's failure.
 */
int bench_lat(struct bench_run *run, struct bench_result *res)
{
	const struct bench_cfg *cfg = run->cfg;
	u32 total = cfg->warmup + cfg->iters, i;
	u64 t0, rtt;
	int ret;

	run->rtt = kvmalloc_array(cfg->iters, sizeof(*run->rtt), GFP_KERNEL);
	if (!run->rtt)
		return bench_fail(run, -ENOMEM, "allocating the samples");
	bench_lat_build(run);

	for (i = 0; i < total; i++) {
		t0 = ktime_get_ns();
		if (run->opcode == IB_WR_SEND)
			ret = bench_lat_send_rt(run);
		else
			ret = bench_lat_write_rt(run, (u8)(i + 1));
		rtt = ktime_get_ns() - t0;
		if (!ret)
			ret = bench_check(run);
		if (ret)
			return ret;
		if (i >= cfg->warmup)
			run->rtt[i - cfg->warmup] = min_t(u64, rtt, U32_MAX);
		cond_resched();
	}
	bench_lat_stats(run->rtt, cfg->iters, res);
	return 0;
}
