/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ibpost (TRACE_SYSTEM ibpost):
 *
 *   echo 1 > /sys/kernel/tracing/events/ibpost/enable
 *
 * QPs are named by their QP number and CQs by their restrack id, the
 * "lqpn" and "cqn" columns of ``rdma resource show qp`` and ``cq``.
 * Contexts are printed as hashed pointers, the same for a post and its
 * completion.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ibpost

#if !defined(_IBPOST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IBPOST_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cm.h>
#include <trace/misc/rdma.h>
#include "ibpost_internal.h"

/* Names are copied into fixed arrays: no __string(), whose API 6.10 changed. */
#define IBPOST_TRACE_NAME_MAX	64

#define ibpost_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

DECLARE_EVENT_CLASS(ibpost_dev_class,
	TP_PROTO(const struct ib_device *ibdev),
	TP_ARGS(ibdev),
	TP_STRUCT__entry(
		__array(char, name, IB_DEVICE_NAME_MAX)
		__field(u32, index)
	),
	TP_fast_assign(
		strscpy(__entry->name, dev_name(&ibdev->dev),
			IB_DEVICE_NAME_MAX);
		__entry->index = ibdev->index;
	),
	TP_printk("dev=%s index=%u", __entry->name, __entry->index)
);

DEFINE_EVENT(ibpost_dev_class, ibpost_dev_add,
	TP_PROTO(const struct ib_device *ibdev), TP_ARGS(ibdev));
DEFINE_EVENT(ibpost_dev_class, ibpost_dev_remove,
	TP_PROTO(const struct ib_device *ibdev), TP_ARGS(ibdev));

DECLARE_EVENT_CLASS(ibpost_client_class,
	TP_PROTO(const char *name),
	TP_ARGS(name),
	TP_STRUCT__entry(
		__array(char, name, IBPOST_TRACE_NAME_MAX)
	),
	TP_fast_assign(
		strscpy(__entry->name, name, IBPOST_TRACE_NAME_MAX);
	),
	TP_printk("client=%s", __entry->name)
);

DEFINE_EVENT(ibpost_client_class, ibpost_client_register,
	TP_PROTO(const char *name), TP_ARGS(name));
DEFINE_EVENT(ibpost_client_class, ibpost_client_unregister,
	TP_PROTO(const char *name), TP_ARGS(name));

DECLARE_EVENT_CLASS(ibpost_qp_class,
	TP_PROTO(const struct ibpost_qp *qp),
	TP_ARGS(qp),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__array(char, caller, IBPOST_TRACE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, scq)
		__field(u32, rcq)
		__field(u32, type)
		__field(u32, sq_depth)
		__field(u32, rq_depth)
	),
	TP_fast_assign(
		strscpy(__entry->dev, qp->dev->name, IB_DEVICE_NAME_MAX);
		strscpy(__entry->caller, qp->caller, IBPOST_TRACE_NAME_MAX);
		__entry->qpn = qp->qpn;
		__entry->scq = qp->sq.cq_id;
		__entry->rcq = qp->rq.cq_id;
		__entry->type = qp->attr.qp_type;
		__entry->sq_depth = qp->sq.depth;
		__entry->rq_depth = qp->rq.depth;
	),
	TP_printk("dev=%s qpn=%u type=%s scq.id=%u rcq.id=%u sq=%u rq=%u caller=%s",
		  __entry->dev, __entry->qpn,
		  __entry->type == IB_QPT_UD ? "UD" : "RC", __entry->scq,
		  __entry->rcq, __entry->sq_depth, __entry->rq_depth,
		  __entry->caller)
);

DEFINE_EVENT(ibpost_qp_class, ibpost_qp_create,
	TP_PROTO(const struct ibpost_qp *qp), TP_ARGS(qp));
DEFINE_EVENT(ibpost_qp_class, ibpost_qp_destroy,
	TP_PROTO(const struct ibpost_qp *qp), TP_ARGS(qp));

TRACE_EVENT(ibpost_qp_state,
	TP_PROTO(const struct ibpost_qp *qp, enum ib_qp_state old,
		 enum ib_qp_state new),
	TP_ARGS(qp, old, new),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, old)
		__field(u32, new)
	),
	TP_fast_assign(
		__entry->qpn = qp->qpn;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("qpn=%u %s -> %s", __entry->qpn,
		  ibpost_show_qp_state(__entry->old),
		  ibpost_show_qp_state(__entry->new))
);

DECLARE_EVENT_CLASS(ibpost_post_class,
	TP_PROTO(const struct ibpost_qp *qp, u32 chain, u32 posted, int ret),
	TP_ARGS(qp, chain, posted, ret),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, chain)
		__field(u32, posted)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->qpn = qp->qpn;
		__entry->chain = chain;
		__entry->posted = posted;
		__entry->ret = ret;
	),
	TP_printk("qpn=%u chain=%u posted=%u ret=%d bad_wr=%d", __entry->qpn,
		  __entry->chain, __entry->posted, __entry->ret,
		  __entry->ret ? (int)__entry->posted : -1)
);

DEFINE_EVENT(ibpost_post_class, ibpost_post_send,
	TP_PROTO(const struct ibpost_qp *qp, u32 chain, u32 posted, int ret),
	TP_ARGS(qp, chain, posted, ret));
DEFINE_EVENT(ibpost_post_class, ibpost_post_recv,
	TP_PROTO(const struct ibpost_qp *qp, u32 chain, u32 posted, int ret),
	TP_ARGS(qp, chain, posted, ret));

DECLARE_EVENT_CLASS(ibpost_comp_class,
	TP_PROTO(const struct ibpost_queue *q, const struct ib_wc *wc,
		 const void *context, bool shown),
	TP_ARGS(q, wc, context, shown),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u32, qpn)
		__field(const void *, context)
		__field(u32, status)
		__field(u32, opcode)
		__field(u32, byte_len)
		__field(u32, vendor_err)
		__field(bool, shown)
	),
	TP_fast_assign(
		__entry->cq_id = q->cq_id;
		__entry->qpn = q->qp->qpn;
		__entry->context = context;
		__entry->status = wc->status;
		__entry->opcode = wc->opcode;
		__entry->byte_len = wc->byte_len;
		__entry->vendor_err = wc->vendor_err;
		__entry->shown = shown;
	),
	TP_printk("cq.id=%u qpn=%u ctx=%p status=%s (%u) opcode=%u byte_len=%u vendor_err=%#x %s",
		  __entry->cq_id, __entry->qpn, __entry->context,
		  rdma_show_wc_status(__entry->status), __entry->status,
		  __entry->opcode, __entry->byte_len, __entry->vendor_err,
		  __entry->shown ? "returned" : "internal")
);

DEFINE_EVENT(ibpost_comp_class, ibpost_send_comp,
	TP_PROTO(const struct ibpost_queue *q, const struct ib_wc *wc,
		 const void *context, bool shown),
	TP_ARGS(q, wc, context, shown));
DEFINE_EVENT(ibpost_comp_class, ibpost_recv_comp,
	TP_PROTO(const struct ibpost_queue *q, const struct ib_wc *wc,
		 const void *context, bool shown),
	TP_ARGS(q, wc, context, shown));

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
		__entry->qpn = q->qp->qpn;
		__entry->is_send = q->is_send;
		__entry->used = used;
		__entry->depth = q->depth;
		__entry->interval = q->signal_interval;
	),
	TP_printk("qpn=%u %s used=%u depth=%u signal_interval=%u",
		  __entry->qpn, __entry->is_send ? "sq" : "rq", __entry->used,
		  __entry->depth, __entry->interval)
);

DEFINE_EVENT(ibpost_queue_class, ibpost_forced_signal,
	TP_PROTO(const struct ibpost_queue *q, u32 used), TP_ARGS(q, used));
DEFINE_EVENT(ibpost_queue_class, ibpost_slots_exhausted,
	TP_PROTO(const struct ibpost_queue *q, u32 used), TP_ARGS(q, used));

#endif /* _IBPOST_TRACE_H */

/* Built out of tree: define_trace.h finds this file through -I. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ibpost_trace
#include <trace/define_trace.h>
