/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring's tracepoints (TRACE_SYSTEM ibpost, as ibpost_trace.h's):
 * posts, refusals, completions, flushes and reclaims of the WRs of a
 * work queue (struct ibpost_queue), defined in ring_trace.c.
 *
 * Following one WR. Every WR ibpost queues has a completion id, printed
 * "dev.id=D cq.id=C cid=P" as xprtrdma prints its struct rpc_rdma_cid,
 * with the device added: C is the restrack id of the CQ of the WR's queue
 * (the send and the receive queue each have a CQ of their own), which is
 * only unique on its device, D that ib_device's index, P the
 * free-running ring position (u32) its slot was claimed at. A post event
 * (ibpost_post_send, ibpost_post_recv) prints the completion id of the
 * chain's first WR and how many were queued, "dev.id=D cq.id=C cid=P
 * posted=N": WR k of the chain (k < N) is cid P+k, modulo 2^32. Exactly
 * one later event with that same "dev.id=D cq.id=C cid=P+k" ends the WR:
 *
 *   ibpost_send_comp, ibpost_recv_comp   the provider's completion
 *                                        (success, error or flush)
 *   ibpost_send_flush, ibpost_recv_flush ibpost's own flush: the WR was
 *                                        posted in ERR (why=posted_in_err)
 *                                        or the provider did not return
 *                                        it before its QP was destroyed,
 *                                        reset or removed (not_returned)
 *   ibpost_send_reclaim                  an unsignaled send WR that
 *                                        succeeded: a later signaled one
 *                                        (its cid is named) completed
 *   ibpost_send_reclaim_drained          the same, shown by a marker:
 *                                        the drain's at destroy or
 *                                        RESET, or the one posted in ERR
 *
 * So ``grep -E 'dev\.id=0 cq\.id=3 cid=17 '`` finds WR 17's end, and its
 * post when it came first in its chain; otherwise its post is the
 * ibpost_post_* event of that dev.id and cq.id whose cid P and posted N
 * hold 17 in [P, P+N). The
 * post event is recorded under the queue's lock once the provider has
 * the chain, and every end event under the same lock, so a WR's post
 * always precedes its end in the trace. WRs a post refused have no
 * completion id (their positions go to the next post): their record is
 * ibpost_post_send_err or ibpost_post_recv_err, with the refused WR's
 * index in the chain (bad_wr), the errno and the rule it broke.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ibpost

#if !defined(_IBPOST_RING_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IBPOST_RING_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
/* <trace/misc/rdma.h> maps the cm events too: it needs their enums. */
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <trace/misc/rdma.h>
#include "ring.h"

/*
 * Enums printed by name; TRACE_DEFINE_ENUM() lets perf and trace-cmd
 * decode them too (their values differ between kernels: IB_WC_REG_MR).
 * WC statuses: rdma_show_wc_status() of <trace/misc/rdma.h>.
 */
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_SEND);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_CMP_AND_SWP);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_FETCH_AND_ADD);
TRACE_DEFINE_ENUM(IB_WR_BIND_MW);
TRACE_DEFINE_ENUM(IB_WR_LSO);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WR_MASKED_ATOMIC_CMP_AND_SWP);
TRACE_DEFINE_ENUM(IB_WR_MASKED_ATOMIC_FETCH_AND_ADD);
TRACE_DEFINE_ENUM(IB_WR_REG_MR);
TRACE_DEFINE_ENUM(IB_WR_REG_MR_INTEGRITY);

#define ibpost_show_wr_opcode(x)					\
	__print_symbolic(x,						\
		{ IB_WR_RDMA_WRITE, "RDMA_WRITE" },			\
		{ IB_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM" },	\
		{ IB_WR_SEND, "SEND" },					\
		{ IB_WR_SEND_WITH_IMM, "SEND_WITH_IMM" },		\
		{ IB_WR_RDMA_READ, "RDMA_READ" },			\
		{ IB_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" },	\
		{ IB_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" },	\
		{ IB_WR_BIND_MW, "BIND_MW" },				\
		{ IB_WR_LSO, "LSO" },					\
		{ IB_WR_SEND_WITH_INV, "SEND_WITH_INV" },		\
		{ IB_WR_RDMA_READ_WITH_INV, "RDMA_READ_WITH_INV" },	\
		{ IB_WR_LOCAL_INV, "LOCAL_INV" },			\
		{ IB_WR_MASKED_ATOMIC_CMP_AND_SWP, "MASKED_ATOMIC_CMP_AND_SWP" }, \
		{ IB_WR_MASKED_ATOMIC_FETCH_AND_ADD, "MASKED_ATOMIC_FETCH_AND_ADD" }, \
		{ IB_WR_REG_MR, "REG_MR" },				\
		{ IB_WR_REG_MR_INTEGRITY, "REG_MR_INTEGRITY" })

TRACE_DEFINE_ENUM(IB_WC_SEND);
TRACE_DEFINE_ENUM(IB_WC_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WC_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WC_COMP_SWAP);
TRACE_DEFINE_ENUM(IB_WC_FETCH_ADD);
TRACE_DEFINE_ENUM(IB_WC_BIND_MW);
TRACE_DEFINE_ENUM(IB_WC_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WC_LSO);
TRACE_DEFINE_ENUM(IB_WC_REG_MR);
TRACE_DEFINE_ENUM(IB_WC_MASKED_COMP_SWAP);
TRACE_DEFINE_ENUM(IB_WC_MASKED_FETCH_ADD);
TRACE_DEFINE_ENUM(IB_WC_RECV);
TRACE_DEFINE_ENUM(IB_WC_RECV_RDMA_WITH_IMM);

#define ibpost_show_wc_opcode(x)					\
	__print_symbolic(x,						\
		{ IB_WC_SEND, "SEND" },					\
		{ IB_WC_RDMA_WRITE, "RDMA_WRITE" },			\
		{ IB_WC_RDMA_READ, "RDMA_READ" },			\
		{ IB_WC_COMP_SWAP, "COMP_SWAP" },			\
		{ IB_WC_FETCH_ADD, "FETCH_ADD" },			\
		{ IB_WC_BIND_MW, "BIND_MW" },				\
		{ IB_WC_LOCAL_INV, "LOCAL_INV" },			\
		{ IB_WC_LSO, "LSO" },					\
		{ IB_WC_REG_MR, "REG_MR" },				\
		{ IB_WC_MASKED_COMP_SWAP, "MASKED_COMP_SWAP" },		\
		{ IB_WC_MASKED_FETCH_ADD, "MASKED_FETCH_ADD" },		\
		{ IB_WC_RECV, "RECV" },					\
		{ IB_WC_RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM" })

/* enum ibpost_rule (ibpost_base.h): the rules of a post's checks. */
TRACE_DEFINE_ENUM(IBPOST_RULE_NONE);
TRACE_DEFINE_ENUM(IBPOST_RULE_NOT_CONNECTED);
TRACE_DEFINE_ENUM(IBPOST_RULE_DEVICE_GONE);
TRACE_DEFINE_ENUM(IBPOST_RULE_BAD_OPCODE);
TRACE_DEFINE_ENUM(IBPOST_RULE_BAD_FLAGS);
TRACE_DEFINE_ENUM(IBPOST_RULE_TOO_MANY_SGES);
TRACE_DEFINE_ENUM(IBPOST_RULE_NO_SG_LIST);
TRACE_DEFINE_ENUM(IBPOST_RULE_INLINE_OPCODE);
TRACE_DEFINE_ENUM(IBPOST_RULE_INLINE_TOO_LONG);
TRACE_DEFINE_ENUM(IBPOST_RULE_READ_SGES);
TRACE_DEFINE_ENUM(IBPOST_RULE_READ_FENCED);
TRACE_DEFINE_ENUM(IBPOST_RULE_READ_TOO_LONG);
TRACE_DEFINE_ENUM(IBPOST_RULE_READ_SINK);
TRACE_DEFINE_ENUM(IBPOST_RULE_NO_ORD);
TRACE_DEFINE_ENUM(IBPOST_RULE_ATOMIC_MALFORMED);
TRACE_DEFINE_ENUM(IBPOST_RULE_UD_NO_AH);
TRACE_DEFINE_ENUM(IBPOST_RULE_AH_OTHER_DEVICE);
TRACE_DEFINE_ENUM(IBPOST_RULE_SGE_OUTSIDE_MR);
TRACE_DEFINE_ENUM(IBPOST_RULE_NO_SLOT);
TRACE_DEFINE_ENUM(IBPOST_RULE_FAULT_INJECTED);
TRACE_DEFINE_ENUM(IBPOST_RULE_PROVIDER);
TRACE_DEFINE_ENUM(IBPOST_RULE_NOT_A_CQE);
TRACE_DEFINE_ENUM(IBPOST_RULE_SRQ_QP);
TRACE_DEFINE_ENUM(IBPOST_RULE_DMA_DIRECTION);

#define ibpost_show_rule(x)						\
	__print_symbolic(x,						\
		{ IBPOST_RULE_NONE, "NONE" },				\
		{ IBPOST_RULE_NOT_CONNECTED, "NOT_CONNECTED" },		\
		{ IBPOST_RULE_DEVICE_GONE, "DEVICE_GONE" },		\
		{ IBPOST_RULE_BAD_OPCODE, "BAD_OPCODE" },		\
		{ IBPOST_RULE_BAD_FLAGS, "BAD_FLAGS" },			\
		{ IBPOST_RULE_TOO_MANY_SGES, "TOO_MANY_SGES" },		\
		{ IBPOST_RULE_NO_SG_LIST, "NO_SG_LIST" },		\
		{ IBPOST_RULE_INLINE_OPCODE, "INLINE_OPCODE" },		\
		{ IBPOST_RULE_INLINE_TOO_LONG, "INLINE_TOO_LONG" },	\
		{ IBPOST_RULE_READ_SGES, "READ_SGES" },			\
		{ IBPOST_RULE_READ_FENCED, "READ_FENCED" },		\
		{ IBPOST_RULE_READ_TOO_LONG, "READ_TOO_LONG" },		\
		{ IBPOST_RULE_READ_SINK, "READ_SINK" },			\
		{ IBPOST_RULE_NO_ORD, "NO_ORD" },			\
		{ IBPOST_RULE_ATOMIC_MALFORMED, "ATOMIC_MALFORMED" },	\
		{ IBPOST_RULE_UD_NO_AH, "UD_NO_AH" },			\
		{ IBPOST_RULE_AH_OTHER_DEVICE, "AH_OTHER_DEVICE" },	\
		{ IBPOST_RULE_SGE_OUTSIDE_MR, "SGE_OUTSIDE_MR" },	\
		{ IBPOST_RULE_NO_SLOT, "NO_SLOT" },			\
		{ IBPOST_RULE_FAULT_INJECTED, "FAULT_INJECTED" },	\
		{ IBPOST_RULE_PROVIDER, "PROVIDER" },			\
		{ IBPOST_RULE_NOT_A_CQE, "NOT_A_CQE" },		\
		{ IBPOST_RULE_SRQ_QP, "SRQ_QP" },			\
		{ IBPOST_RULE_DMA_DIRECTION, "DMA_DIRECTION" })

/* Posting */

DECLARE_EVENT_CLASS(ibpost_post_class,
	TP_PROTO(const struct ibpost_queue *q, u32 first, u32 chain,
		 u32 posted, int ret),
	TP_ARGS(q, first, chain, posted, ret),
	TP_STRUCT__entry(
		__field(u32, dev_id)
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, posted)
		__field(u32, qpn)
		__field(u32, chain)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->dev_id = q->dev_id;
		__entry->cq_id = q->cq_id;
		__entry->cid = first;
		__entry->posted = posted;
		__entry->qpn = q->rqp->qpn;
		__entry->chain = chain;
		__entry->ret = ret;
	),
	TP_printk("dev.id=%u cq.id=%u cid=%u posted=%u qpn=%u chain=%u ret=%d bad_wr=%d",
		  __entry->dev_id, __entry->cq_id, __entry->cid,
		  __entry->posted, __entry->qpn,
		  __entry->chain, __entry->ret,
		  __entry->ret ? (int)__entry->posted : -1)
);

#define DEFINE_IBPOST_POST_EVENT(name)					\
	DEFINE_EVENT(ibpost_post_class, name,				\
		TP_PROTO(const struct ibpost_queue *q, u32 first,	\
			 u32 chain, u32 posted, int ret),		\
		TP_ARGS(q, first, chain, posted, ret))

DEFINE_IBPOST_POST_EVENT(ibpost_post_send);
DEFINE_IBPOST_POST_EVENT(ibpost_post_recv);

DECLARE_EVENT_CLASS(ibpost_post_err_class,
	TP_PROTO(const struct ibpost_queue *q, u32 index, int err,
		 enum ibpost_rule rule, u32 opcode),
	TP_ARGS(q, index, err, rule, opcode),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, index)
		__field(int, err)
		__field(u32, rule)
		__field(u32, opcode)
	),
	TP_fast_assign(
		__entry->qpn = q->rqp->qpn;
		__entry->index = index;
		__entry->err = err;
		__entry->rule = rule;
		__entry->opcode = opcode;
	),
	TP_printk("qpn=%u bad_wr=%u ret=%d rule=%s opcode=%s",
		  __entry->qpn, __entry->index, __entry->err,
		  ibpost_show_rule(__entry->rule),
		  ibpost_show_wr_opcode(__entry->opcode))
);

DEFINE_EVENT(ibpost_post_err_class, ibpost_post_send_err,
	TP_PROTO(const struct ibpost_queue *q, u32 index, int err,
		 enum ibpost_rule rule, u32 opcode),
	TP_ARGS(q, index, err, rule, opcode));

/* A receive has no opcode. */
DEFINE_EVENT_PRINT(ibpost_post_err_class, ibpost_post_recv_err,
	TP_PROTO(const struct ibpost_queue *q, u32 index, int err,
		 enum ibpost_rule rule, u32 opcode),
	TP_ARGS(q, index, err, rule, opcode),
	TP_printk("qpn=%u bad_wr=%u ret=%d rule=%s",
		  __entry->qpn, __entry->index, __entry->err,
		  ibpost_show_rule(__entry->rule)));

DECLARE_EVENT_CLASS(ibpost_queue_class,
	TP_PROTO(const struct ibpost_queue *q, u32 used),
	TP_ARGS(q, used),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(bool, is_send)
		__field(u32, used)
		__field(u32, depth)
		__field(u32, interval)
	),
	TP_fast_assign(
		__entry->qpn = q->rqp->qpn;
		__entry->is_send = q->is_send;
		__entry->used = used;
		__entry->depth = q->depth;
		__entry->interval = q->signal_interval;
	),
	TP_printk("qpn=%u %s used=%u depth=%u signal_interval=%u",
		  __entry->qpn, __entry->is_send ? "sq" : "rq", __entry->used,
		  __entry->depth, __entry->interval)
);

#define DEFINE_IBPOST_QUEUE_EVENT(name)					\
	DEFINE_EVENT(ibpost_queue_class, name,				\
		TP_PROTO(const struct ibpost_queue *q, u32 used),	\
		TP_ARGS(q, used))

DEFINE_IBPOST_QUEUE_EVENT(ibpost_forced_signal);
DEFINE_IBPOST_QUEUE_EVENT(ibpost_slots_exhausted);

/* Completions: each ends one WR, by its "cq.id=%u cid=%u" */

DECLARE_EVENT_CLASS(ibpost_comp_class,
	TP_PROTO(const struct ibpost_queue *q, const struct ibpost_slot *slot,
		 const struct ib_wc *wc, bool shown),
	TP_ARGS(q, slot, wc, shown),
	TP_STRUCT__entry(
		__field(u32, dev_id)
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qpn)
		__field(const void *, context)
		__field(u32, status)
		__field(u32, opcode)
		__field(u32, byte_len)
		__field(u32, vendor_err)
		__field(bool, shown)
	),
	TP_fast_assign(
		__entry->dev_id = q->dev_id;
		__entry->cq_id = q->cq_id;
		__entry->cid = slot->pos;
		__entry->qpn = q->rqp->qpn;
		__entry->context = slot->context;
		__entry->status = wc->status;
		__entry->opcode = wc->opcode;
		__entry->byte_len = wc->byte_len;
		__entry->vendor_err = wc->vendor_err;
		__entry->shown = shown;
	),
	TP_printk("dev.id=%u cq.id=%u cid=%u qpn=%u ctx=%p status=%s (%u) opcode=%s byte_len=%u vendor_err=%#x %s",
		  __entry->dev_id, __entry->cq_id, __entry->cid,
		  __entry->qpn, __entry->context,
		  rdma_show_wc_status(__entry->status), __entry->status,
		  ibpost_show_wc_opcode(__entry->opcode), __entry->byte_len,
		  __entry->vendor_err,
		  __entry->shown ? "returned" : "internal")
);

#define DEFINE_IBPOST_COMP_EVENT(name)					\
	DEFINE_EVENT(ibpost_comp_class, name,				\
		TP_PROTO(const struct ibpost_queue *q,			\
			 const struct ibpost_slot *slot,		\
			 const struct ib_wc *wc, bool shown),		\
		TP_ARGS(q, slot, wc, shown))

DEFINE_IBPOST_COMP_EVENT(ibpost_send_comp);
DEFINE_IBPOST_COMP_EVENT(ibpost_recv_comp);

DECLARE_EVENT_CLASS(ibpost_flush_class,
	TP_PROTO(const struct ibpost_queue *q, const struct ibpost_slot *slot,
		 bool shown),
	TP_ARGS(q, slot, shown),
	TP_STRUCT__entry(
		__field(u32, dev_id)
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qpn)
		__field(const void *, context)
		__field(bool, synthetic)
		__field(bool, shown)
	),
	TP_fast_assign(
		__entry->dev_id = q->dev_id;
		__entry->cq_id = q->cq_id;
		__entry->cid = slot->pos;
		__entry->qpn = q->rqp->qpn;
		__entry->context = slot->context;
		__entry->synthetic = slot->synthetic;
		__entry->shown = shown;
	),
	TP_printk("dev.id=%u cq.id=%u cid=%u qpn=%u ctx=%p status=WR_FLUSH_ERR why=%s %s",
		  __entry->dev_id, __entry->cq_id, __entry->cid,
		  __entry->qpn, __entry->context,
		  __entry->synthetic ? "posted_in_err" : "not_returned",
		  __entry->shown ? "returned" : "internal")
);

#define DEFINE_IBPOST_FLUSH_EVENT(name)					\
	DEFINE_EVENT(ibpost_flush_class, name,				\
		TP_PROTO(const struct ibpost_queue *q,			\
			 const struct ibpost_slot *slot, bool shown),	\
		TP_ARGS(q, slot, shown))

DEFINE_IBPOST_FLUSH_EVENT(ibpost_send_flush);
DEFINE_IBPOST_FLUSH_EVENT(ibpost_recv_flush);

DECLARE_EVENT_CLASS(ibpost_reclaim_class,
	TP_PROTO(const struct ibpost_queue *q, const struct ibpost_slot *slot,
		 u32 by),
	TP_ARGS(q, slot, by),
	TP_STRUCT__entry(
		__field(u32, dev_id)
		__field(u32, cq_id)
		__field(u32, cid)
		__field(u32, qpn)
		__field(const void *, context)
		__field(u32, by)
	),
	TP_fast_assign(
		__entry->dev_id = q->dev_id;
		__entry->cq_id = q->cq_id;
		__entry->cid = slot->pos;
		__entry->qpn = q->rqp->qpn;
		__entry->context = slot->context;
		__entry->by = by;
	),
	TP_printk("dev.id=%u cq.id=%u cid=%u qpn=%u ctx=%p status=SUCCESS unsignaled, before cid=%u",
		  __entry->dev_id, __entry->cq_id, __entry->cid,
		  __entry->qpn, __entry->context,
		  __entry->by)
);

/* @by: the cid of the signaled WR whose completion reclaims this one. */
DEFINE_EVENT(ibpost_reclaim_class, ibpost_send_reclaim,
	TP_PROTO(const struct ibpost_queue *q, const struct ibpost_slot *slot,
		 u32 by),
	TP_ARGS(q, slot, by));

/*
 * @by: the ring position after the last WR posted, where the marker (the
 * drain's, or the reclaim marker posted in ERR) is.
 */
DEFINE_EVENT_PRINT(ibpost_reclaim_class, ibpost_send_reclaim_drained,
	TP_PROTO(const struct ibpost_queue *q, const struct ibpost_slot *slot,
		 u32 by),
	TP_ARGS(q, slot, by),
	TP_printk("dev.id=%u cq.id=%u cid=%u qpn=%u ctx=%p status=SUCCESS unsignaled, before a marker",
		  __entry->dev_id, __entry->cq_id, __entry->cid, __entry->qpn,
		  __entry->context));

#endif /* _IBPOST_RING_TRACE_H */

/* Built out of tree: define_trace.h finds this file through -I. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ring_trace
#include <trace/define_trace.h>
