// SPDX-License-Identifier: GPL-2.0
/*
 * Posting: chains with exact IBA Vol. 1 section 11.4.1.1 semantics.
 *
 * Operation: a chain is checked WR by WR against the device, the QP's
 * state, its granted capacities, the registered MRs and the free slots
 * before the provider is called. Each valid WR claims a slot of the
 * queue's ring (the caller's wr_id is its context) and is copied into the
 * queue's stage, a small array of WR copies that carry ibpost's wr_cqe:
 * the provider copies what it needs into its own queue during the post
 * call (rxe, siw and the hardware drivers alike), so no copy outlives it.
 * The valid prefix is handed to the provider in one call, or, longer than
 * the stage, in batches of a stage each (the stage is then refilled from
 * the next WR on); the first invalid WR is returned in *bad_wr with the
 * reason, and nothing from it on is queued. Should the provider itself
 * refuse a WR, its bad_wr (one of the copies) is mapped back to the
 * caller's WR at the same position (the stage keeps the caller's WR of
 * each copy: no WR already given to the provider is read again, since it
 * may have completed and been freed by its owner), the slots from it on
 * are released, and no later batch is posted. The QP's state is never
 * changed by a failed post.
 *
 * Signaling: a send WR is posted signaled when the caller asks (or is
 * ibpost's own, or an iWARP READ), when signal_interval WRs went
 * unsignaled, and when slots run low: it takes the last free slot with
 * more than half the ring unsignaled behind the last signal. Unsignaled
 * WRs are reclaimed when a later signaled one completes (ring.c). The
 * interval never exceeds the depth (qp.c), so the unsignaled WRs behind
 * the last signaled one never fill the ring: a full ring always holds a
 * signaled WR, whose completion (once taken, for a consumer that fetches
 * its completions) makes room. A poster that keeps the ring full while
 * signaling every few WRs itself pays no completion of ibpost's. So the
 * ring can always drain, and the provider's send queue can never
 * overflow.
 *
 * ERR state: WRs posted while the QP is known to be in ERR are checked as
 * usual, then completed with IB_WC_WR_FLUSH_ERR by ibpost itself (from a
 * work item on ibpost_wq, never inside the post call; those of a DIRECT
 * queue with a callback from its consumer's next poll), whatever the
 * provider would do.
 *
 * Serialization: the queue's lock is held from the checks to the return of
 * the provider's post call, so ring order is the provider's queue order
 * even with concurrent posters. The post path holds it with interrupts
 * disabled rather than bottom halves: a provider that hands its work to a
 * softirq (rxe's tasklets in Linux 6.1) raises it inside the call, and
 * spin_unlock_bh() would run that work at once, inside this post, one WR
 * at a time. With interrupts disabled the softirq is raised as from any
 * process context and runs later, in ksoftirqd or at the next interrupt's
 * exit, over everything posted meanwhile, as it does for raw ib_post_send()
 * callers. The completion side takes the lock the same way, with
 * interrupts disabled; it never runs in hard interrupt context.
 *
 * Forced inlining: the post loop is built from the small helpers below,
 * and GCC left several of them out of line, each a call and a frame per
 * WR. Each __always_inline here names its group. Instructions per WR
 * inside the post call (IBPOST_BENCH_ICOUNT=1, Linux 6.12, 64 B
 * SEND/WRITE/READ; one-WR posts, then chains of 32) with one group left
 * to GCC, the others forced: the checks (SGE to MR, opcode table, chain
 * length) 694/666/697 and 346/353/392; the submission (begin, staged
 * batches, the provider call, trace, end) 771/740/774 and 331/336/378;
 * the staging (WR copies, slot claim) 705/686/716 and 364/373/410;
 * against 653/636/668 and 317/321/359 with all forced. A helper whose
 * forcing changed no code (GCC inlined it, or kept it out of line, on
 * its own) is plain static inline or static, the cold paths included.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include "post.h"
#include "mr_table.h"
#include "ibpost_trace.h"
#include "ring_post.h"
#include "dma_sync.h"
#include "srq.h"

#define IBPOST_SEND_FLAGS (IB_SEND_SIGNALED | IB_SEND_INLINE | \
			   IB_SEND_FENCE | IB_SEND_SOLICITED)

/* Size of the caller's WR structure for @opcode; 0 when not allowed. */
static size_t ibpost_send_wr_size(struct ibpost_qp *qp,
				  const struct ib_send_wr *wr, bool internal)
{
	if (qp->attr.qp_type == IB_QPT_UD) {
		if (wr->opcode == IB_WR_SEND || wr->opcode == IB_WR_SEND_WITH_IMM)
			return sizeof(struct ib_ud_wr);
		return 0;
	}
	/* iWARP (RFC 5040) carries no immediate data. */
	if (ibpost_dev_iwarp(qp->dev) && (wr->opcode == IB_WR_SEND_WITH_IMM ||
					  wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM))
		return 0;
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return sizeof(struct ib_send_wr);
	case IB_WR_SEND_WITH_INV:
		/* The memory management extensions' remote invalidation. */
		if (!(qp->dev->ibdev->attrs.device_cap_flags &
		      IB_DEVICE_MEM_MGT_EXTENSIONS))
			return 0;
		return sizeof(struct ib_send_wr);
	case IB_WR_LOCAL_INV:
		/* Keys are ibpost's: a consumer could revoke another's MR. */
		return internal ? sizeof(struct ib_send_wr) : 0;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		return sizeof(struct ib_rdma_wr);
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (qp->dev->ibdev->attrs.atomic_cap == IB_ATOMIC_NONE)
			return 0;
		return sizeof(struct ib_atomic_wr);
	case IB_WR_REG_MR:
		/* Remote access is granted through ibpost_reg_*() only. */
		return internal ? sizeof(struct ib_reg_wr) : 0;
	default:
		return 0;
	}
}

/*
 * Whether @qp's device takes inline data with @op: SENDs and WRITEs, but
 * on iWARP no SEND with invalidate (siw queues one, then fails to start
 * it: an error without bad_wr, the chain left queued).
 */
static bool ibpost_opcode_takes_inline(struct ibpost_qp *qp,
				       enum ib_wr_opcode op)
{
	if (op == IB_WR_SEND_WITH_INV)
		return !ibpost_dev_iwarp(qp->dev);
	return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM;
}

/*
 * The send flags the table check (below) takes; with IB_SEND_INLINE as
 * well, the inline check; the rest go the full way.
 */
#define IBPOST_SEND_FAST_FLAGS (IB_SEND_SIGNALED | IB_SEND_FENCE | \
				IB_SEND_SOLICITED)

/**
 * ibpost_send_fast_init - fill a QP's table of common send opcodes
 * @qp: the QP, its type, device and granted SGEs known
 *
 * The opcodes whose WR, without inline data, needs no check beyond its
 * SGE count, its flags and an sg_list: the SENDs and WRITEs of an RC QP,
 * and its READs where the device needs no sink (not iWARP). Each entry
 * is the SGE limit plus one (for a READ, max_sge_rd's too) and the size
 * of the WR's structure, both from the rules ibpost_send_check() applies,
 * so the table cannot grant what they would refuse; the opcodes that
 * take inline data are marked too (qp->send_fast_inline), and a WR of one
 * with inline data that fits max_inline_data passes without the full
 * check as well. A WR the table does not pass is checked in full, which
 * names the rule it breaks. Called once, before the QP is visible to any
 * poster.
 */
void ibpost_send_fast_init(struct ibpost_qp *qp)
{
	static const enum ib_wr_opcode ops[] = {
		IB_WR_RDMA_WRITE, IB_WR_RDMA_WRITE_WITH_IMM, IB_WR_SEND,
		IB_WR_SEND_WITH_IMM, IB_WR_SEND_WITH_INV, IB_WR_RDMA_READ,
	};
	struct ib_send_wr wr = {};
	u32 lim, i;

	/* Every opcode listed has an entry. */
	static_assert(IBPOST_FAST_OPS > IB_WR_RDMA_WRITE_WITH_IMM);
	static_assert(IBPOST_FAST_OPS > IB_WR_SEND_WITH_IMM);
	static_assert(IBPOST_FAST_OPS > IB_WR_RDMA_READ);
	static_assert(IBPOST_FAST_OPS > IB_WR_SEND_WITH_INV);
	static_assert(BITS_PER_TYPE(qp->send_fast_inline) >= IBPOST_FAST_OPS);
	memset(qp->send_fast, 0, sizeof(qp->send_fast));
	qp->send_fast_inline = 0;
	if (qp->attr.qp_type != IB_QPT_RC)
		return;
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		wr.opcode = ops[i];
		lim = qp->attr.max_send_sge;
		if (wr.opcode == IB_WR_RDMA_READ) {
			if (ibpost_dev_iwarp(qp->dev))
				continue;
			lim = min(lim, qp->dev->ibdev->attrs.max_sge_rd ?: lim);
		}
		qp->send_fast[wr.opcode].size =
			ibpost_send_wr_size(qp, &wr, false);
		if (!qp->send_fast[wr.opcode].size)
			continue;
		qp->send_fast[wr.opcode].sges = lim + 1;
		if (ibpost_opcode_takes_inline(qp, wr.opcode))
			qp->send_fast_inline |= BIT(wr.opcode);
	}
}

/*
 * Where the DMA ranges of the WR a post loop checks go, as
 * ibpost_next_uses() says for its uses.
 */
static struct ibpost_ring_dma *ibpost_next_dma(struct ibpost_queue *q,
					       u32 inuse)
{
	return inuse >= q->depth ? q->spare_dma :
	       ibpost_slot_dma(q, ibpost_slot_next(q));
}

/*
 * ibpost_sge_dma()'s work, when there is some: refused (-EPERM) when
 * @mr's mapping does not allow the WR's way; memory ibpost mapped handed
 * to the device and, written, recorded as the WR's @ndma-th range.
 * Return: the WR's ranges recorded now, or -EPERM. A count, not an
 * out-parameter: a local whose address the post loops took would cost
 * them the stack protector's canary.
 */
static int __ibpost_sge_dma(struct ibpost_queue *q, const struct ibpost_mr *mr,
			    const struct ib_sge *sge, int op, u32 inuse,
			    u8 ndma)
{
	bool writes = ibpost_wr_writes_local(op);
	struct ibpost_ring_dma *d;
	u64 addr;

	if (mr->dma_flags & (writes ? IBPOST_MR_NO_DEV_WRITE :
				      IBPOST_MR_NO_DEV_READ))
		return -EPERM;
	if (!(mr->dma_flags & IBPOST_MR_SYNC) ||
	    (!(mr->dma_flags & IBPOST_MR_NEED_SYNC) &&
	     !trace_ibpost_dma_sync_enabled()))
		return ndma;
	addr = sge->lkey == mr->lkey ? sge->addr :
	       mr->dma + (sge->addr - mr->iova);
	ibpost_dma_sync_dev(q->dma_dev, addr, sge->length, mr->dma_dir);
	if (writes) {
		d = &ibpost_next_dma(q, inuse)[ndma++];
		d->addr = addr;
		d->len = sge->length;
		d->dir = mr->dma_dir;
	}
	return ndma;
}

/*
 * The DMA side of the SGE @sge of @mr in a WR of opcode @op (or a receive,
 * IBPOST_OP_RECV), which reads local memory or writes it (a receive, a
 * READ, an atomic): refused (false) when @mr's mapping does not allow
 * that way; memory ibpost mapped is handed to the device now and, when
 * written, recorded as the WR's @*ndma-th range (in the DMA array of the
 * slot it claims, @inuse slots taken before it) for the CPU sync at its
 * end. An MR mapped both ways whose syncs do nothing (the mapping is
 * coherent with no bounce buffer, or the provider's DMA is virtual: rxe,
 * siw) costs one test, unless the ibpost_dma_sync event is traced: the
 * syncs, which then do nothing, are made to show where they happen.
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline bool ibpost_sge_dma(struct ibpost_queue *q,
					   const struct ibpost_mr *mr,
					   const struct ib_sge *sge, int op,
					   u32 inuse, u8 *ndma)
{
	int n;

	if (likely(!(READ_ONCE(mr->dma_flags) &
		     (IBPOST_MR_NEED_SYNC | IBPOST_MR_NO_DEV_WRITE |
		      IBPOST_MR_NO_DEV_READ))) &&
	    !trace_ibpost_dma_sync_enabled())
		return true;
	n = __ibpost_sge_dma(q, mr, sge, op, inuse, *ndma);
	if (n < 0)
		return false;
	*ndma = n;
	return true;
}

/*
 * A WR refused after its SGEs were handed to the device (ibpost_sge_dma()):
 * the ranges it would have written go back to the CPU.
 */
static void ibpost_dma_unwind(struct ibpost_queue *q, u32 inuse, u8 ndma)
{
	const struct ibpost_ring_dma *d;

	if (likely(!ndma))
		return;
	d = ibpost_next_dma(q, inuse);
	while (ndma--)
		ibpost_dma_sync_cpu(q->dma_dev, d[ndma].addr, d[ndma].len,
				    d[ndma].dir);
}

/* Name an SGE whose MR's DMA direction forbids the WR's use of it. */
static int ibpost_sge_wrong_way(const struct ib_sge *sge, int i, bool writes)
{
	pr_warn_ratelimited("post: SGE %d (addr %#llx len %u) is in an MR mapped for the device to %s only\n",
			    i, sge->addr, sge->length,
			    writes ? "read" : "write");
	return -EPERM;
}

/*
 * ibpost_sges_to_mrs()'s answer, in registers rather than through
 * out-parameters (a local whose address the post loops took would cost
 * them the stack protector's canary): @nuse, the MRs listed or an errno;
 * @nhit, the SGEs counted in the queue's hit; @ndma, the DMA ranges
 * recorded.
 */
struct ibpost_sge_counts {
	int nuse;
	u8 nhit;
	u8 ndma;
};

/*
 * Find (or take from @given) the MR of every SGE of a WR and count its
 * use: in the queue's hit, or listed in @uses with a user counted on each
 * (see mr.c); hand each to the device (ibpost_sge_dma(), its ranges
 * recorded). Return: the counts; @nuse -EINVAL for an SGE in no MR,
 * -EPERM for one its MR's DMA direction forbids (nothing counted,
 * nothing recorded).
 */
static struct ibpost_sge_counts
ibpost_sges_to_mrs(struct ibpost_queue *q, const struct ib_sge *sg,
		   int num_sge, struct ibpost_mr **given,
		   struct ibpost_ring_use **uses, int op, u32 inuse)
{
	struct ibpost_sge_counts c = { };
	struct ibpost_mr *mr;
	int i, err;
	bool hit;

	for (i = 0; i < num_sge; i++) {
		if (given)
			mr = ibpost_mr_pin(q, given[i], &hit);
		else
			mr = ibpost_mr_find(q, &sg[i], op, &hit);
		if (!mr) {
			pr_warn_ratelimited("post: SGE %d (addr %#llx len %u lkey %#x) is not inside a live MR of this device\n",
					    i, sg[i].addr, sg[i].length,
					    sg[i].lkey);
			err = -EINVAL;
			goto out_put;
		}
		if (hit)
			c.nhit++;
		else
			uses[c.nuse++] = &mr->use;
		/* The hit's MR has no DMA work (ibpost_mr_adopt()). */
		if ((!hit || trace_ibpost_dma_sync_enabled()) &&
		    !ibpost_sge_dma(q, mr, &sg[i], op, inuse, &c.ndma)) {
			err = ibpost_sge_wrong_way(&sg[i], i,
						   ibpost_wr_writes_local(op));
			goto out_put;
		}
	}
	return c;

out_put:
	ibpost_ring_uses_put(q, uses, c.nuse, c.nhit);
	ibpost_dma_unwind(q, inuse, c.ndma);
	return (struct ibpost_sge_counts){ .nuse = err };
}

/*
 * The MR of a WR's one SGE @sge (@given: the seed operations' MR; @op: the
 * WR's opcode, or IBPOST_OP_RECV), its
 * use counted (*@hit: in the queue's hit), as ibpost_sges_to_mrs() finds
 * it; NULL, with nothing counted, when there is none.
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline struct ibpost_mr *
ibpost_one_sge_mr(struct ibpost_queue *q, const struct ib_sge *sge,
		  struct ibpost_mr **given, int op, bool *hit)
{
	return given ? ibpost_mr_pin(q, given[0], hit) :
		       ibpost_mr_find(q, sge, op, hit);
}

/*
 * The use array of the WR a post loop checks, @inuse slots being taken
 * with the post's WRs before it: the array of the slot it will claim, or
 * the spare one when none is left (an invalid WR is -EINVAL even then).
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline struct ibpost_ring_use **
ibpost_next_uses(struct ibpost_queue *q, u32 inuse)
{
	return inuse >= q->depth ? q->spare_uses :
	       ibpost_slot_uses(q, ibpost_slot_next(q));
}

/*
 * A WR of several SGEs, every one in the queue's hit while it has users
 * (a WR gathering pieces of one buffer): counted in the hit at once, as
 * ibpost_mr_find() and ibpost_mr_pin() would count each, the hit's MR
 * read once. Return: whether they were; else nothing was counted.
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline bool ibpost_sges_in_hit(struct ibpost_queue *q,
					       const struct ib_sge *sg,
					       int num_sge,
					       struct ibpost_mr **given)
{
	const struct ibpost_mr *mr;
	int i;

	lockdep_assert_held(&q->lock);
	if (!q->hit_users)
		return false;
	mr = ibpost_use_mr(q->hit);
	for (i = 0; i < num_sge; i++)
		if (given ? given[i] != mr : !ibpost_mr_covers(mr, &sg[i]))
			return false;
	q->hit_users += num_sge;
	return true;
}

/*
 * Release the use of @mr a one-SGE WR counted (@hit: in the queue's hit)
 * before its MR's DMA direction refused it. Out of line: the array of one
 * use is a local whose address would cost the post loops the stack
 * protector's canary.
 */
static noinline void ibpost_one_use_put(struct ibpost_queue *q,
					struct ibpost_mr *mr, bool hit)
{
	struct ibpost_ring_use *use = &mr->use;

	ibpost_ring_uses_put(q, &use, !hit, hit);
}

/*
 * ibpost_sges_to_mrs() with its common cases inline: one SGE found
 * (ibpost_one_sge_mr(), the queue's hit without a call) and handed to the
 * device, the use array (ibpost_next_uses(), @inuse) looked at only when
 * the hit is not it; and several SGEs all in the hit
 * (ibpost_sges_in_hit()). A WR whose one SGE is in no MR, or in one whose
 * DMA direction forbids it, is refused by ibpost_sges_to_mrs(), which
 * looks again and names it.
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline int __ibpost_wr_mrs(struct ibpost_queue *q,
					   const struct ib_sge *sg, int num_sge,
					   struct ibpost_mr **given, u32 inuse,
					   u8 *nhit, int op, u8 *ndma)
{
	struct ibpost_sge_counts c;
	struct ibpost_mr *mr;
	bool hit;

	*ndma = 0;
	if (num_sge == 1) {
		mr = ibpost_one_sge_mr(q, sg, given, op, &hit);
		/* The hit's MR has no DMA work (ibpost_mr_adopt()). */
		if (mr && hit && likely(!trace_ibpost_dma_sync_enabled())) {
			*nhit = 1;
			return 0;
		}
		if (mr && ibpost_sge_dma(q, mr, sg, op, inuse, ndma)) {
			*nhit = hit;
			if (hit)
				return 0;
			ibpost_next_uses(q, inuse)[0] = &mr->use;
			return 1;
		}
		if (mr)
			ibpost_one_use_put(q, mr, hit);
	}
	/* The hit's MR has no DMA work (ibpost_mr_adopt()). */
	if (num_sge > 1 && likely(!trace_ibpost_dma_sync_enabled()) &&
	    ibpost_sges_in_hit(q, sg, num_sge, given)) {
		*nhit = num_sge;
		return 0;
	}
	c = ibpost_sges_to_mrs(q, sg, num_sge, given,
			       ibpost_next_uses(q, inuse), op, inuse);
	*nhit = c.nhit;
	*ndma = c.ndma;
	return c.nuse;
}

/*
 * The same in a chain's loop, which keeps a copy of the queue's hit in
 * @snap (NULL: none; the one-WR copies and the seed operations, which
 * name their MRs, have none): a one-SGE WR in it is counted there with
 * nothing else read, and @snap is taken again after any other that
 * found the hit changed (struct ibpost_hit_snap).
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline int ibpost_wr_mrs(struct ibpost_queue *q,
					 const struct ib_sge *sg, int num_sge,
					 struct ibpost_mr **given, u32 inuse,
					 u8 *nhit, int op, u8 *ndma,
					 struct ibpost_hit_snap *snap)
{
	int n;

	/* The hit's MR has no DMA work (ibpost_mr_adopt()). */
	if (snap && !given && num_sge == 1 &&
	    ibpost_hit_snap_covers(q, snap, sg) &&
	    likely(!trace_ibpost_dma_sync_enabled())) {
		q->hit_users++;
		*nhit = 1;
		*ndma = 0;
		return 0;
	}
	n = __ibpost_wr_mrs(q, sg, num_sge, given, inuse, nhit, op, ndma);
	if (snap && !given && (!snap->hit || q->hit != snap->hit))
		ibpost_hit_snap_take(snap, q);
	return n;
}

/*
 * The rule an SGE check's error broke: an SGE in no MR (-EINVAL), or in
 * one whose DMA direction forbids it (-EPERM, refused with -EINVAL).
 */
static int ibpost_sge_rule(int err, enum ibpost_rule *rule)
{
	if (err == -EPERM) {
		*rule = IBPOST_RULE_DMA_DIRECTION;
		return -EINVAL;
	}
	*rule = IBPOST_RULE_SGE_OUTSIDE_MR;
	return err;
}

/*
 * A READ or atomic needs an initiator depth: with none, rxe never sends
 * it (its send queue stalls behind it) and siw fails its send queue after
 * queuing the whole chain, so it is refused before the provider. In ERR
 * it goes to the flush like any WR (q->lock held: the state is stable).
 */
static enum ibpost_rule ibpost_ord_check(struct ibpost_qp *qp)
{
	if (READ_ONCE(qp->ord) || qp->rqp.state == IB_QPS_ERR)
		return IBPOST_RULE_NONE;
	pr_warn_ratelimited("post_send: a READ or atomic on qp %u, whose initiator depth (max_rd_atomic, the connection's ORD) is 0\n",
			    qp->rqp.qpn);
	return IBPOST_RULE_NO_ORD;
}

/*
 * A READ's sink SGEs: at most the device's max_sge_rd (0: no limit of its
 * own), and on iWARP exactly one, the tagged READ response's target.
 * Return: the rule @wr breaks, or IBPOST_RULE_NONE.
 */
static enum ibpost_rule ibpost_read_check(struct ibpost_qp *qp,
					  const struct ib_send_wr *wr)
{
	u32 max = qp->dev->ibdev->attrs.max_sge_rd ?: U32_MAX;
	enum ibpost_rule rule = ibpost_ord_check(qp);

	if (rule)
		return rule;
	if (wr->num_sge > max) {
		pr_warn_ratelimited("post_send: a READ takes at most %u SGEs on %s (max_sge_rd), not %d\n",
				    max, qp->dev->name, wr->num_sge);
		return IBPOST_RULE_READ_SGES;
	}
	if (ibpost_dev_iwarp(qp->dev) && wr->num_sge != 1) {
		pr_warn_ratelimited("post_send: an iWARP READ needs one sink SGE, not %d\n",
				    wr->num_sge);
		return IBPOST_RULE_READ_SGES;
	}
	/* siw cannot fence a READ: it would stop its send queue for good. */
	if (ibpost_dev_iwarp(qp->dev) && (wr->send_flags & IB_SEND_FENCE)) {
		pr_warn_ratelimited("post_send: an iWARP READ cannot be fenced\n");
		return IBPOST_RULE_READ_FENCED;
	}
	/* Never split (one context, one READ): one sink registration. */
	if (qp->sinks.ring && wr->sg_list[0].length > qp->sinks.max_len) {
		pr_warn_ratelimited("post_send: an iWARP READ of %u bytes exceeds the %u one sink registration maps\n",
				    wr->sg_list[0].length, qp->sinks.max_len);
		return IBPOST_RULE_READ_TOO_LONG;
	}
	return IBPOST_RULE_NONE;
}

/*
 * Check @wr, whose WR structure has @size bytes (0: an opcode not valid
 * for the QP, ibpost_send_wr_size()), against the QP, the device and the
 * opcode's needs. Return: the rule @wr breaks (its post fails with
 * -EINVAL), or IBPOST_RULE_NONE.
 */
static enum ibpost_rule __ibpost_send_check(struct ibpost_qp *qp,
					    const struct ib_send_wr *wr,
					    size_t size)
{
	enum ibpost_rule rule;
	u64 total;

	if (!size) {
		pr_warn_ratelimited("post_send: opcode %u is not valid for this %s QP on %s\n",
				    wr->opcode,
				    qp->attr.qp_type == IB_QPT_UD ? "UD" : "RC",
				    qp->dev->name);
		return IBPOST_RULE_BAD_OPCODE;
	}
	if (wr->send_flags & ~IBPOST_SEND_FLAGS) {
		pr_warn_ratelimited("post_send: unsupported send_flags %#x\n",
				    wr->send_flags);
		return IBPOST_RULE_BAD_FLAGS;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->attr.max_send_sge) {
		pr_warn_ratelimited("post_send: num_sge %d exceeds the granted %u\n",
				    wr->num_sge, qp->attr.max_send_sge);
		return IBPOST_RULE_TOO_MANY_SGES;
	}
	if (wr->num_sge && !wr->sg_list) {
		pr_warn_ratelimited("post_send: num_sge %d without an sg_list\n",
				    wr->num_sge);
		return IBPOST_RULE_NO_SG_LIST;
	}
	if (wr->send_flags & IB_SEND_INLINE) {
		if (!ibpost_opcode_takes_inline(qp, wr->opcode)) {
			pr_warn_ratelimited("post_send: opcode %u cannot carry inline data on %s\n",
					    wr->opcode, qp->dev->name);
			return IBPOST_RULE_INLINE_OPCODE;
		}
		total = ibpost_sge_total(wr);
		if (total > qp->attr.max_inline_data) {
			pr_warn_ratelimited("post_send: %llu inline bytes exceed the granted %u\n",
					    total, qp->attr.max_inline_data);
			return IBPOST_RULE_INLINE_TOO_LONG;
		}
	}
	if (wr->opcode == IB_WR_RDMA_READ) {
		rule = ibpost_read_check(qp, wr);
		if (rule)
			return rule;
	}
	if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		rule = ibpost_ord_check(qp);
		if (rule)
			return rule;
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8 ||
		    !IS_ALIGNED(wr->sg_list[0].addr, 8) ||
		    !IS_ALIGNED(atomic_wr(wr)->remote_addr, 8)) {
			pr_warn_ratelimited("post_send: an atomic needs one 8-byte, 8-aligned SGE and an aligned remote address\n");
			return IBPOST_RULE_ATOMIC_MALFORMED;
		}
	}
	if (qp->attr.qp_type == IB_QPT_UD && !ud_wr(wr)->ah) {
		pr_warn_ratelimited("post_send: a UD send needs an address handle\n");
		return IBPOST_RULE_UD_NO_AH;
	}
	if (qp->attr.qp_type == IB_QPT_UD &&
	    ud_wr(wr)->ah->device != qp->dev->ibdev) {
		pr_warn_ratelimited("post_send: the address handle belongs to another device\n");
		return IBPOST_RULE_AH_OTHER_DEVICE;
	}
	return IBPOST_RULE_NONE;
}

/*
 * The full check of @wr (an @internal WR may use ibpost's own opcodes),
 * its answer in registers rather than through an out-parameter (a local
 * whose address the post loops took would cost them the stack
 * protector's canary): the rule @wr breaks, or none and the size of its
 * WR structure, to copy.
 */
struct ibpost_send_checked {
	enum ibpost_rule rule;
	u32 size;
};

static noinline struct ibpost_send_checked
ibpost_send_check(struct ibpost_qp *qp, const struct ib_send_wr *wr,
		  bool internal)
{
	size_t size = ibpost_send_wr_size(qp, wr, internal);

	return (struct ibpost_send_checked){
		.rule = __ibpost_send_check(qp, wr, size),
		.size = size,
	};
}

/* A WR of an ib_cqe mode QP whose context is no usable ib_cqe. */
static enum ibpost_rule ibpost_not_a_cqe(const char *op)
{
	pr_warn_ratelimited("%s: ib_cqe mode: the WR's wr_cqe is NULL or has no done callback\n",
			    op);
	return IBPOST_RULE_NOT_A_CQE;
}

/*
 * Whether @qp's table (ibpost_send_fast_init()) passes @wr: a common SEND,
 * WRITE or READ passes in a few loads and compares; any other WR, and one
 * the table does not pass, is checked in full (ibpost_send_check()),
 * unless it carries inline data ibpost_send_inline_passes() passes.
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline bool ibpost_send_table_passes(struct ibpost_qp *qp,
						     const struct ib_send_wr *wr)
{
	u32 op = wr->opcode;

	return op < IBPOST_FAST_OPS &&
	       (u32)wr->num_sge < qp->send_fast[op].sges &&
	       !(wr->send_flags & ~IBPOST_SEND_FAST_FLAGS) &&
	       (wr->sg_list || !wr->num_sge) &&
	       (op != IB_WR_RDMA_READ || READ_ONCE(qp->ord));
}

/*
 * The same for a WR with inline data, which the table above does not
 * pass: its opcode takes inline data on the QP (qp->send_fast_inline)
 * and its bytes fit the granted max_inline_data, as the full check would
 * have them (a READ never takes inline data).
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline bool ibpost_send_inline_passes(struct ibpost_qp *qp,
						      const struct ib_send_wr *wr)
{
	u32 op = wr->opcode;

	return op < IBPOST_FAST_OPS && (qp->send_fast_inline & BIT(op)) &&
	       (u32)wr->num_sge < qp->send_fast[op].sges &&
	       !(wr->send_flags & ~(IBPOST_SEND_FAST_FLAGS | IB_SEND_INLINE)) &&
	       (wr->sg_list || !wr->num_sge) &&
	       ibpost_sge_total(wr) <= qp->attr.max_inline_data;
}

/*
 * ibpost_send_check(), for a WR the table (or, with inline data, the
 * inline check) passes without it.
 * Forced inline: the checks group (see the head of this file).
 */
static __always_inline enum ibpost_rule
ibpost_send_check_fast(struct ibpost_qp *qp, const struct ib_send_wr *wr,
		       bool internal, size_t *size)
{
	struct ibpost_send_checked c;

	if (likely(ibpost_send_table_passes(qp, wr)) ||
	    ((wr->send_flags & IB_SEND_INLINE) &&
	     ibpost_send_inline_passes(qp, wr))) {
		*size = qp->send_fast[wr->opcode].size;
		return IBPOST_RULE_NONE;
	}
	c = ibpost_send_check(qp, wr, internal);
	*size = c.size;
	return c.rule;
}

/*
 * The checks before a chain's first WR, q->lock held.
 * Forced inline: the submission group (see the head of this file).
 */
static __always_inline void ibpost_post_begin(struct ibpost_ring_post *p,
					      struct ibpost_qp *qp,
					      const void *wr)
	__must_hold(&p->q->lock)
{
	/* One read of the state for both decisions below. */
	enum ib_qp_state state = READ_ONCE(qp->rqp.state);

	ibpost_ring_post_begin(p, wr);
	p->ret = __ibpost_state_check(qp, state, p->send);
	if (p->ret)
		p->rule = p->ret == -ENODEV ? IBPOST_RULE_DEVICE_GONE :
					      IBPOST_RULE_NOT_CONNECTED;
	/*
	 * One decision per post: a chain that found the QP in ERR is flushed
	 * by ibpost to its end. The state is written under the send queue's
	 * lock, so a receive chain can see it change under its own: ERR to
	 * RESET (where the provider refuses it) must not send it there.
	 */
	else
		p->synthetic = ibpost_ring_state_flushing(state, p->send);
}

/*
 * The tail both post loops share, the loop having stopped at the caller's
 * WR @stop: the ring's (ibpost_ring_post_end(), which releases q->lock),
 * then the caller's *@bad_wr (may be NULL). Return: 0 or why *@bad_wr
 * was refused.
 * Forced inline: the submission group (see the head of this file).
 */
static __always_inline int ibpost_post_end(struct ibpost_ring_post *p,
					   struct ibpost_qp *qp,
					   const void *stop,
					   const void **bad_wr)
	__releases(&p->q->lock)
{
	ibpost_ring_post_end(p, stop);
	/*
	 * Nothing of the caller's chain is read from here on. A vector
	 * seed operation still holds its scratch's lock (qp->seed[]) here.
	 */
	ibpost_hook_sleepable(IBPOST_HOOK_POST_UNLOCKED, qp);
	if (bad_wr)
		*bad_wr = p->ret ? p->bad : NULL;
	return p->ret;
}

/*
 * Stage the caller's send WR @wr, checked, in @slot, claimed, with a
 * UD Q_Key made the QP's and an iWARP READ's sink REG_MR (@sink) as its
 * prefix.
 * Forced inline: the staging group (see the head of this file).
 */
static __always_inline void ibpost_stage_send(struct ibpost_ring_post *p,
					      struct ibpost_qp *qp,
					      struct ibpost_slot *slot,
					      const struct ib_send_wr *wr,
					      size_t size, bool sink)
{
	union ibpost_send_copy *copy = ibpost_ring_stage_send(p, slot, wr,
							      size);

	/* IBA: a Q_Key with its high bit set means the QP's own. */
	if (qp->attr.qp_type == IB_QPT_UD &&
	    (copy->ud.remote_qkey & BIT(31)))
		copy->ud.remote_qkey = READ_ONCE(qp->attr.qkey);
	ibpost_ring_link_send(p, slot, copy, sink ?
			      ibpost_sink_attach(p->q, slot, &copy->send) :
			      NULL);
}

/*
 * The body of ibpost_post_send_mrs(), for a chain of one WR (@one: the
 * compiler drops the loop's batch steps) or of any length, and a third
 * copy that stages the fast registrations pending ahead of the first WR
 * (@frwr: a call and its arguments in the loop cost the others 37
 * instructions per WR in chains, 91 per one-WR post). Forced inline
 * so that each gets its own copy of the one source: with one copy, a
 * one-WR post took 712/681/715 instructions (IBPOST_BENCH_ICOUNT=1, 6.12,
 * SEND/WRITE/READ of 64 B; the seed operations 50 more), with two
 * 653/636/668; chains did not change.
 */
static __always_inline int __ibpost_post_send(struct ibpost_qp *qp,
					      const struct ib_send_wr *wr,
					      const struct ib_send_wr **bad_wr,
					      struct ibpost_mr **mrs,
					      struct ibpost_sync *sync,
					      const bool one, const bool frwr)
{
	struct ibpost_ring_post p;
	struct ibpost_queue *q = &qp->sq;
	struct ibpost_hit_snap snap = { .hit = NULL };
	const struct ib_send_wr *cur, *next;
	bool sink, faults, cqe;
	size_t size;
	u32 used, room, k;
	int nuse;
	u8 nhit, ndma;

	/*
	 * The one-WR copy sets @p field by field (an initializer clears it
	 * all first); the loop's copy keeps the initializer, after which GCC
	 * keeps the post's flags out of the loop's memory traffic.
	 */
	if (one)
		ibpost_ring_post_init(&p, &qp->rqp, q, true);
	else
		p = (struct ibpost_ring_post){ .rqp = &qp->rqp, .q = q,
					       .send = true };
	spin_lock_irqsave(&q->lock, p.flags);
	ibpost_queue_count_post(q, one);
	ibpost_post_begin(&p, qp, wr);
	used = q->head - q->tail;
	/* The slots the reserve leaves (frwr.c's invalidations). */
	room = ibpost_queue_room(q);
	/* Fast registrations pending go ahead of the first WR (frwr.c). */
	k = frwr ? ibpost_frwr_pending(&qp->frwr, q) : 0;
	/* ibpost's own WRs are never refused by fault injection. */
	faults = !sync && ibpost_fault_armed();
	/* ib_cqe mode, read once: ibpost's own WRs carry no ib_cqe. */
	cqe = !sync && q->cqe;
	for (cur = wr; cur && !p.ret; cur = next) {
		struct ibpost_slot *slot;

		p.rule = ibpost_send_check_fast(qp, cur, !!sync, &size);
		if (unlikely(cqe) && !p.rule &&
		    !ibpost_context_is_cqe(cur->wr_cqe))
			p.rule = ibpost_not_a_cqe("post_send");
		if (p.rule) {
			p.ret = -EINVAL;
			break;
		}
		nuse = 0;
		nhit = 0;
		ndma = 0;
		if (!(cur->send_flags & IB_SEND_INLINE)) {
			nuse = ibpost_wr_mrs(q, cur->sg_list, cur->num_sge,
					     mrs, used + p.n, &nhit,
					     cur->opcode, &ndma,
					     one ? NULL : &snap);
			if (nuse < 0) {
				p.ret = ibpost_sge_rule(nuse, &p.rule);
				break;
			}
		}
		if (used + p.n + k >= room) {
			ibpost_ring_uses_put(q, ibpost_next_uses(q, used + p.n),
					     nuse, nhit);
			ibpost_dma_unwind(q, used + p.n, ndma);
			trace_ibpost_slots_exhausted(q, used + p.n);
			p.ret = -ENOMEM;
			p.rule = IBPOST_RULE_NO_SLOT;
			break;
		}
		p.ret = ibpost_fault_check(faults);
		if (p.ret)
			p.rule = IBPOST_RULE_FAULT_INJECTED;
		/* In ERR nothing reaches the provider: no sink to register. */
		sink = ibpost_sink_wanted(&qp->sinks, cur) && !p.ret && !sync &&
		       qp->rqp.state != IB_QPS_ERR;
		if (sink) {
			p.ret = ibpost_sink_prepare(q, cur, k);
			if (p.ret)
				p.rule = IBPOST_RULE_READ_SINK;
		}
		if (p.ret) {
			ibpost_ring_uses_put(q,
					     ibpost_next_uses(q, used + p.n),
					     nuse, nhit);
			ibpost_dma_unwind(q, used + p.n, ndma);
			break;
		}

		/* Nothing refuses the WR from here on but the provider. */
		if (frwr && k) {
			ibpost_frwr_stage(&p, qp, cur, used, k, nuse, ndma);
			k = 0;
		}
		/*
		 * iWARP: a READ completes when its response is in, after the
		 * SENDs and WRITEs behind it that completed once sent; no
		 * later completion may reclaim it as done (nor reuse its
		 * sink), so every READ is signaled there.
		 */
		slot = ibpost_ring_send_claim(q, cur, sync,
					      qp->sinks.ring &&
					      cur->opcode == IB_WR_RDMA_READ,
					      used, p.n, room, nhit,
					      nuse | ndma);
		slot->nuse = nuse;
		slot->ndma = ndma;
		ibpost_stage_send(&p, qp, slot, cur, size, sink);
		/* Read before the provider may have it (and complete it). */
		next = one ? NULL : cur->next;
		p.n++;
		ibpost_ring_post_staged(&p, next);
	}
	return ibpost_post_end(&p, qp, cur, (const void **)bad_wr);
}

/*
 * The copy that stages fast registrations. Out of line: inside
 * ibpost_post_send_mrs() with the two others, it cost their one-WR posts
 * 23 instructions more (IBPOST_BENCH_ICOUNT=1, 6.1, 64 B SEND/WRITE/READ).
 * The only copy with a stack protector canary: ibpost_frwr_stage() stages
 * through the post's address.
 */
static noinline int ibpost_post_send_frwr(struct ibpost_qp *qp,
					  const struct ib_send_wr *wr,
					  const struct ib_send_wr **bad_wr,
					  struct ibpost_mr **mrs)
{
	return __ibpost_post_send(qp, wr, bad_wr, mrs, NULL, false, true);
}

/*
 * For a client that posts WRs of its own with one consumer send WR behind
 * them, in one post call (rwop.c): the post's start, the QP's state
 * checked (ibpost_post_begin()).
 */
void ibpost_post_send_begin(struct ibpost_ring_post *p, struct ibpost_qp *qp)
	__must_hold(&p->q->lock)
{
	ibpost_queue_count_post(p->q, false);
	ibpost_post_begin(p, qp, NULL);
}

/*
 * The same: check the consumer's send WR @wr as the post loop does and
 * count the uses of its SGEs (in the next slot's arrays, @prep saying
 * where). Return: 0, or why @wr is refused (@p->ret, @p->rule set).
 */
int ibpost_send_prepare(struct ibpost_ring_post *p, struct ibpost_qp *qp,
			const struct ib_send_wr *wr,
			struct ibpost_send_prep *prep)
	__must_hold(&p->q->lock)
{
	struct ibpost_queue *q = p->q;
	struct ibpost_send_checked checked;
	u32 used = q->head - q->tail;
	int nuse = 0;

	prep->uses = ibpost_next_uses(q, used);
	prep->dma = ibpost_next_dma(q, used);
	prep->nhit = 0;
	prep->ndma = 0;
	checked = ibpost_send_check(qp, wr, false);
	p->rule = checked.rule;
	prep->size = checked.size;
	if (p->rule) {
		p->ret = -EINVAL;
		return p->ret;
	}
	if (!(wr->send_flags & IB_SEND_INLINE)) {
		nuse = ibpost_wr_mrs(q, wr->sg_list, wr->num_sge, NULL, used,
				     &prep->nhit, wr->opcode, &prep->ndma,
				     NULL);
		if (nuse < 0) {
			p->ret = ibpost_sge_rule(nuse, &p->rule);
			return p->ret;
		}
	}
	prep->nuse = nuse;
	return 0;
}

/* Undo ibpost_send_prepare(), the WR not staged. */
void ibpost_send_unprepare(struct ibpost_ring_post *p,
			   const struct ibpost_send_prep *prep)
	__must_hold(&p->q->lock)
{
	struct ibpost_queue *q = p->q;
	u8 i = prep->ndma;

	ibpost_ring_uses_put(q, prep->uses, prep->nuse, prep->nhit);
	while (i--)
		ibpost_dma_sync_cpu(q->dma_dev, prep->dma[i].addr,
				    prep->dma[i].len, prep->dma[i].dir);
}

/*
 * Stage the consumer's send WR @wr, prepared (@prep), in @slot, claimed
 * behind the client's own WRs: its uses and DMA ranges move to @slot.
 */
void ibpost_send_stage(struct ibpost_ring_post *p, struct ibpost_qp *qp,
		       struct ibpost_slot *slot, const struct ib_send_wr *wr,
		       const struct ibpost_send_prep *prep)
	__must_hold(&p->q->lock)
{
	struct ibpost_ring_use **uses = ibpost_slot_uses(p->q, slot);
	struct ibpost_ring_dma *dma = ibpost_slot_dma(p->q, slot);

	if (uses != prep->uses)
		memcpy(uses, prep->uses, prep->nuse * sizeof(*uses));
	if (dma != prep->dma)
		memcpy(dma, prep->dma, prep->ndma * sizeof(*dma));
	slot->nuse = prep->nuse;
	slot->nhit = prep->nhit;
	slot->ndma = prep->ndma;
	ibpost_stage_send(p, qp, slot, wr, prep->size, false);
}

/* The tail of such a post (ibpost_post_end()): releases q->lock. */
int ibpost_post_send_end(struct ibpost_ring_post *p, struct ibpost_qp *qp,
			 const void *stop)
	__releases(&p->q->lock)
{
	return ibpost_post_end(p, qp, stop, NULL);
}

/*
 * The dispatch of a send post to its copy of __ibpost_post_send().
 * Forced inline in both callers, so that ibpost_post_send_list()'s copies
 * know @mrs and @sync NULL: their tests and the seed operations' MR pins
 * drop out, 18 instructions per one-WR post and 8 per WR in chains of 32
 * (IBPOST_BENCH_ICOUNT=1, 6.1, 64 B SEND), for 11 KiB more module text.
 */
static __always_inline int ibpost_post_send_any(struct ibpost_qp *qp,
						const struct ib_send_wr *wr,
						const struct ib_send_wr **bad_wr,
						struct ibpost_mr **mrs,
						struct ibpost_sync *sync)
{
	/*
	 * Fast registrations pending (frwr.c): a copy of its own, so that
	 * the others carry none of their code. Read unlocked: a map made
	 * before this call by this thread is seen; one made meanwhile by
	 * another rides the next post.
	 */
	if (!sync && unlikely(READ_ONCE(qp->frwr.npending)))
		return ibpost_post_send_frwr(qp, wr, bad_wr, mrs);
	if (wr && !wr->next)
		return __ibpost_post_send(qp, wr, bad_wr, mrs, sync, true,
					  false);
	return __ibpost_post_send(qp, wr, bad_wr, mrs, sync, false, false);
}

/**
 * ibpost_post_send_mrs - post a chain of send WRs (internal)
 * @qp: the QP
 * @wr: the chain, as for ibpost_post_send_list()
 * @bad_wr: as for ibpost_post_send_list(); may be NULL
 * @mrs: the MR of each SGE (@mrs[i] for sg_list[i]) of the chain's WRs,
 *       as the seed operations know them, pinned rather than looked up;
 *       NULL: each SGE's MR is looked up by its address and lkey
 * @sync: NULL for a consumer's chain; for ibpost's own WR (a memory
 *        registration or invalidation) its waiter, holding a reference
 *        the queued slot takes over: the WR may use ibpost's opcodes
 *        (IB_WR_REG_MR, IB_WR_LOCAL_INV), is always signaled, is never
 *        refused by fault injection, and its completion wakes @sync
 *        instead of reaching the consumer
 *
 * The backend of ibpost_post_send_list() and the seed operations. Takes
 * the send queue's lock with interrupts disabled (see the head of this
 * file) from the first check to the provider's return; the caller holds
 * no ibpost lock but, in a vector seed operation, its scratch's lock.
 *
 * Context: Any context but hard IRQ.
 * Return: as ibpost_post_send_list().
 */
int ibpost_post_send_mrs(struct ibpost_qp *qp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr,
			 struct ibpost_mr **mrs, struct ibpost_sync *sync)
{
	return ibpost_post_send_any(qp, wr, bad_wr, mrs, sync);
}

/*
 * ibpost_post_send_list()'s copies of __ibpost_post_send(), each a function
 * of its own: in one, the chain loop's register pressure spilled into the
 * one-WR copy (9 instructions more per one-WR post once the loop kept a
 * copy of the hit, IBPOST_BENCH_PCPROF=1, 6.1, 64 B WRITE).
 */
static noinline int ibpost_post_send_list_one(struct ibpost_qp *qp,
					      const struct ib_send_wr *wr,
					      const struct ib_send_wr **bad_wr)
{
	return __ibpost_post_send(qp, wr, bad_wr, NULL, NULL, true, false);
}

static noinline int ibpost_post_send_list_chain(struct ibpost_qp *qp,
						const struct ib_send_wr *wr,
						const struct ib_send_wr **bad_wr)
{
	return __ibpost_post_send(qp, wr, bad_wr, NULL, NULL, false, false);
}

/**
 * ibpost_post_send_list - post a chain of send WRs, exactly per IBA 11.4.1.1
 * @qp: the QP
 * @wr: the chain, as for ib_post_send(); each WR's wr_id is the context
 *      returned on completion; SGEs come from ibpost_mr_sge() (or an
 *      inline buffer's kernel address with IB_SEND_INLINE)
 * @bad_wr: set to the first WR not queued on failure, to NULL on success;
 *          may be NULL
 *
 * On failure the WRs before *@bad_wr are queued and will complete (or
 * flush), none from it on is, and the QP's state is unchanged; the caller
 * may fix the cause and repost from *@bad_wr. A success completion comes
 * back for each WR posted with IB_SEND_SIGNALED, an error or flush
 * completion for every WR that does not succeed.
 *
 * Context: Any context but hard IRQ.
 * Return: 0; -ENODEV when the device is gone; -ENOTCONN when the QP is not
 * in RTS (or ERR); -EINVAL for an opcode unknown or invalid for the QP or
 * device, too many SGEs, bad inline use, an SGE outside every registered
 * MR or in one mapped only for the device to write (DMA_FROM_DEVICE: no
 * source) or, for a READ or atomic, only to read, a malformed atomic, a
 * READ or atomic on a QP whose initiator depth (max_rd_atomic, on iWARP
 * the connection's ORD) is 0, or a UD send without AH; -ENOMEM when the
 * send queue has no free slot; or the provider's error.
 */
int ibpost_post_send_list(struct ibpost_qp *qp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	/* As ibpost_post_send_any(), each copy a function of its own. */
	if (unlikely(READ_ONCE(qp->frwr.npending)))
		return ibpost_post_send_frwr(qp, wr, bad_wr, NULL);
	if (wr && !wr->next)
		return ibpost_post_send_list_one(qp, wr, bad_wr);
	return ibpost_post_send_list_chain(qp, wr, bad_wr);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_send_list, IBPOST_NS);

/*
 * The receive loop of a post call on @p->q, a QP's receive queue or a
 * shared receive queue's, q->lock held and the post begun: check, claim
 * and stage each WR of @wr from the first (of at most @max_sge SGEs),
 * and hand full batches on, until a WR is refused (@p->ret) or, with
 * @one, after the first; @any: the SRQ's ring, claimed in any order.
 * Return: the WR it stopped at.
 * Forced inline: the body of both receive posts, as for the send side.
 */
static __always_inline const struct ib_recv_wr *
ibpost_recv_loop(struct ibpost_ring_post *p, const struct ib_recv_wr *wr,
		 u32 max_sge, struct ibpost_mr **mrs, const bool one,
		 const bool any)
	__must_hold(&p->q->lock)
{
	struct ibpost_queue *q = p->q;
	const struct ib_recv_wr *cur, *next;
	u32 used = any ? ibpost_queue_used(q) : q->head - q->tail;
	bool faults = ibpost_fault_armed();
	bool cqe = q->cqe;	/* ib_cqe mode, read once */
	struct ibpost_hit_snap snap = { .hit = NULL };
	int nuse;
	u8 nhit, ndma;

	for (cur = wr; cur && !p->ret; cur = next) {
		struct ibpost_slot *slot;

		if (cur->num_sge < 0 || cur->num_sge > max_sge) {
			pr_warn_ratelimited("post_recv: num_sge %d exceeds the granted %u\n",
					    cur->num_sge, max_sge);
			p->ret = -EINVAL;
			p->rule = IBPOST_RULE_TOO_MANY_SGES;
			break;
		}
		if (cur->num_sge && !cur->sg_list) {
			pr_warn_ratelimited("post_recv: num_sge %d without an sg_list\n",
					    cur->num_sge);
			p->ret = -EINVAL;
			p->rule = IBPOST_RULE_NO_SG_LIST;
			break;
		}
		if (unlikely(cqe) && !ibpost_context_is_cqe(cur->wr_cqe)) {
			p->ret = -EINVAL;
			p->rule = ibpost_not_a_cqe("post_recv");
			break;
		}
		nuse = ibpost_wr_mrs(q, cur->sg_list, cur->num_sge, mrs,
				     used + p->n, &nhit, IBPOST_OP_RECV,
				     &ndma, one ? NULL : &snap);
		if (nuse < 0) {
			p->ret = ibpost_sge_rule(nuse, &p->rule);
			break;
		}
		if (used + p->n >= q->depth) {
			ibpost_ring_uses_put(q, q->spare_uses, nuse, nhit);
			ibpost_dma_unwind(q, used + p->n, ndma);
			trace_ibpost_slots_exhausted(q, used + p->n);
			p->ret = -ENOMEM;
			p->rule = IBPOST_RULE_NO_SLOT;
			break;
		}
		p->ret = ibpost_fault_check(faults);
		if (p->ret) {
			ibpost_ring_uses_put(q,
					     ibpost_next_uses(q, used + p->n),
					     nuse, nhit);
			ibpost_dma_unwind(q, used + p->n, ndma);
			p->rule = IBPOST_RULE_FAULT_INJECTED;
			break;
		}
		slot = __ibpost_slot_claim(q, (void *)(uintptr_t)cur->wr_id,
					   true, true, any);
		slot->nuse = nuse;
		slot->nhit = nhit;
		slot->ndma = ndma;
		slot->sync = NULL;
		ibpost_ring_stage_recv(p, slot, cur);
		next = one ? NULL : cur->next;
		p->n++;
		ibpost_ring_post_staged(p, next);
	}
	return cur;
}

/* The same for ibpost_post_recv_mrs(). */
static __always_inline int __ibpost_post_recv(struct ibpost_qp *qp,
					      const struct ib_recv_wr *wr,
					      const struct ib_recv_wr **bad_wr,
					      struct ibpost_mr **mrs,
					      const bool one)
{
	struct ibpost_ring_post p;
	const struct ib_recv_wr *stop;

	/* As for the send side (__ibpost_post_send()). */
	if (one)
		ibpost_ring_post_init(&p, &qp->rqp, &qp->rq, false);
	else
		p = (struct ibpost_ring_post){ .rqp = &qp->rqp, .q = &qp->rq,
					       .send = false };
	spin_lock_irqsave(&p.q->lock, p.flags);
	ibpost_queue_count_post(p.q, one);
	ibpost_post_begin(&p, qp, wr);
	/* A property of the QP: before its state, after its device. */
	if (unlikely(qp->attr.srq) && p.ret != -ENODEV) {
		pr_warn_ratelimited("post_recv: qp %u takes its receives from a shared receive queue: post them there\n",
				    qp->rqp.qpn);
		p.ret = -EINVAL;
		p.rule = IBPOST_RULE_SRQ_QP;
	}
	stop = ibpost_recv_loop(&p, wr, qp->attr.max_recv_sge, mrs, one, false);
	return ibpost_post_end(&p, qp, stop, (const void **)bad_wr);
}

/**
 * ibpost_post_recv_mrs - post a chain of receive WRs (internal)
 * @qp: the QP
 * @wr: the chain, as for ibpost_post_recv_list()
 * @bad_wr: as for ibpost_post_recv_list(); may be NULL
 * @mrs: the MR of each SGE (@mrs[i] for sg_list[i]) of the chain's WRs,
 *       as the seed operations know them, pinned rather than looked up;
 *       NULL: each SGE's MR is looked up by its address and lkey
 *
 * The backend of ibpost_post_recv_list() and the seed operations. Takes
 * the receive queue's lock with interrupts disabled (see the head of this
 * file) from the first check to the provider's return; the caller holds
 * no ibpost lock but, in a vector seed operation, its scratch's lock.
 *
 * Context: Any context but hard IRQ.
 * Return: as ibpost_post_recv_list().
 */
int ibpost_post_recv_mrs(struct ibpost_qp *qp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr,
			 struct ibpost_mr **mrs)
{
	if (wr && !wr->next)
		return __ibpost_post_recv(qp, wr, bad_wr, mrs, true);
	return __ibpost_post_recv(qp, wr, bad_wr, mrs, false);
}

/**
 * ibpost_post_srq_recv_mrs - post a chain of receive WRs to an SRQ (internal)
 * @srq: the SRQ
 * @wr: the chain, as for ibpost_post_srq_recv_list()
 * @bad_wr: as for ibpost_post_srq_recv_list(); may be NULL
 * @mrs: as for ibpost_post_recv_mrs()
 *
 * The backend of ibpost_post_srq_recv_list() and ibpost_post_srq_recv():
 * the receive loop of a QP's post, on the SRQ's ring, whose WRs go to the
 * provider's SRQ. An SRQ has no state: it takes WRs until torn down.
 *
 * Context: Any context but hard IRQ.
 * Return: as ibpost_post_srq_recv_list().
 */
int ibpost_post_srq_recv_mrs(struct ibpost_srq *srq,
			     const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad_wr,
			     struct ibpost_mr **mrs)
{
	struct ibpost_ring_post p = { .rqp = &srq->rqp, .q = &srq->rq,
				      .send = false };
	const struct ib_recv_wr *stop;

	spin_lock_irqsave(&p.q->lock, p.flags);
	ibpost_ring_post_begin(&p, wr);
	if (unlikely(srq->rqp.dead ||
		     test_bit(IBPOST_DEV_REMOVING, &srq->dev->flags))) {
		p.ret = -ENODEV;
		p.rule = IBPOST_RULE_DEVICE_GONE;
	}
	stop = ibpost_recv_loop(&p, wr, srq->attr.max_sge, mrs, false, true);
	ibpost_ring_post_end(&p, stop);
	if (bad_wr)
		*bad_wr = p.ret ? p.bad : NULL;
	return p.ret;
}

/**
 * ibpost_post_srq_recv_list - post a chain of receive WRs to a shared
 *                             receive queue, exactly per IBA 11.4.1.1
 * @srq: the SRQ
 * @wr: the chain; each WR's wr_id is the context returned on completion
 *      (in ib_cqe mode its wr_cqe); SGEs come from ibpost_mr_sge()
 * @bad_wr: set to the first WR not queued on failure, to NULL on success;
 *          may be NULL
 *
 * As ibpost_post_recv_list(): on failure the WRs before *@bad_wr are
 * queued, none from it on is. Each context comes back exactly once,
 * through the SRQ's callback with the QP that took it, or flushed with
 * no QP when the SRQ is destroyed or its device removed.
 *
 * Context: Any context but hard IRQ.
 * Return: 0; -ENODEV when the SRQ is torn down or its device gone;
 * -EINVAL for a NULL @srq, too many SGEs, an SGE outside every registered
 * MR of the SRQ's device or in one mapped DMA_TO_DEVICE only, or, in
 * ib_cqe mode, a context that is no ib_cqe; -ENOMEM when the SRQ has no
 * free slot; or the provider's error.
 */
int ibpost_post_srq_recv_list(struct ibpost_srq *srq,
			      const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	if (unlikely(!srq)) {
		if (bad_wr)
			*bad_wr = wr;
		return -EINVAL;
	}
	return ibpost_post_srq_recv_mrs(srq, wr, bad_wr, NULL);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_srq_recv_list, IBPOST_NS);

/**
 * ibpost_post_recv_list - post a chain of receive WRs, exactly per IBA 11.4.1.1
 * @qp: the QP
 * @wr: the chain; each WR's wr_id is the context returned on completion;
 *      SGEs come from ibpost_mr_sge()
 * @bad_wr: set to the first WR not queued on failure, to NULL on success;
 *          may be NULL
 *
 * Receives may be posted from INIT on (IBA); on failure the WRs before
 * *@bad_wr are queued, none from it on is, and the QP's state is
 * unchanged. Every receive's context comes back exactly once.
 *
 * Context: Any context but hard IRQ.
 * Return: 0; -ENODEV when the device is gone; -ENOTCONN when the QP is in
 * RESET; -EINVAL for too many SGEs, an SGE outside every registered MR
 * or in one mapped DMA_TO_DEVICE only, or a QP that takes its receives
 * from an SRQ;
 * -ENOMEM when the receive queue has no free slot; or the provider's
 * error.
 */
int ibpost_post_recv_list(struct ibpost_qp *qp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	return ibpost_post_recv_mrs(qp, wr, bad_wr, NULL);
}
EXPORT_SYMBOL_NS_GPL(ibpost_post_recv_list, IBPOST_NS);
