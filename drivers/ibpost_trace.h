/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ibpost (TRACE_SYSTEM ibpost):
 *
 *   echo 1 > /sys/kernel/tracing/events/ibpost/enable
 *
 * QPs are named by their QP number and CQs by their restrack id, the
 * "lqpn" and "cqn" columns of ``rdma resource show qp`` and ``cq``; both
 * are a device's own, and ibpost_qp_create names the device of a QP and
 * its CQs' ids. Contexts are printed as hashed pointers, the same for a
 * post and its completion.
 *
 * This header has the events of devices, consumers, QPs, drains and
 * MRs; ring_trace.h those of posted WRs, and how to follow one.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ibpost

#if !defined(_IBPOST_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IBPOST_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include "qp_core.h"
#include "mr_table.h"

/* Names are copied into fixed arrays: no __string(), whose API 6.10 changed. */
#define IBPOST_TRACE_NAME_MAX	64

/*
 * Enums printed by name; TRACE_DEFINE_ENUM() lets perf and trace-cmd
 * decode them too. The QP class's type test first.
 */
TRACE_DEFINE_ENUM(IB_QPT_UD);

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

#define ibpost_show_qp_state(x)						\
	__print_symbolic(x,						\
		{ IB_QPS_RESET, "RESET" },				\
		{ IB_QPS_INIT, "INIT" },				\
		{ IB_QPS_RTR, "RTR" },					\
		{ IB_QPS_RTS, "RTS" },					\
		{ IB_QPS_SQD, "SQD" },					\
		{ IB_QPS_SQE, "SQE" },					\
		{ IB_QPS_ERR, "ERR" })

TRACE_DEFINE_ENUM(IB_ACCESS_LOCAL_WRITE);
TRACE_DEFINE_ENUM(IB_ACCESS_REMOTE_WRITE);
TRACE_DEFINE_ENUM(IB_ACCESS_REMOTE_READ);

#define ibpost_show_access(x)						\
	__print_flags(x, "|",						\
		{ IB_ACCESS_LOCAL_WRITE, "LOCAL_WRITE" },		\
		{ IB_ACCESS_REMOTE_WRITE, "REMOTE_WRITE" },		\
		{ IB_ACCESS_REMOTE_READ, "REMOTE_READ" })

/* Devices, consumers, QPs */

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

#define DEFINE_IBPOST_DEV_EVENT(name)					\
	DEFINE_EVENT(ibpost_dev_class, name,				\
		TP_PROTO(const struct ib_device *ibdev),		\
		TP_ARGS(ibdev))

DEFINE_IBPOST_DEV_EVENT(ibpost_dev_add);
DEFINE_IBPOST_DEV_EVENT(ibpost_dev_remove);

DECLARE_EVENT_CLASS(ibpost_client_class,
	TP_PROTO(const char *client),
	TP_ARGS(client),
	TP_STRUCT__entry(
		__array(char, name, IBPOST_TRACE_NAME_MAX)
	),
	TP_fast_assign(
		strscpy(__entry->name, client, IBPOST_TRACE_NAME_MAX);
	),
	TP_printk("client=%s", __entry->name)
);

#define DEFINE_IBPOST_CLIENT_EVENT(name)				\
	DEFINE_EVENT(ibpost_client_class, name,				\
		TP_PROTO(const char *client),				\
		TP_ARGS(client))

DEFINE_IBPOST_CLIENT_EVENT(ibpost_client_register);
DEFINE_IBPOST_CLIENT_EVENT(ibpost_client_unregister);

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
		__entry->qpn = qp->rqp.qpn;
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

#define DEFINE_IBPOST_QP_EVENT(name)					\
	DEFINE_EVENT(ibpost_qp_class, name,				\
		TP_PROTO(const struct ibpost_qp *qp),			\
		TP_ARGS(qp))

DEFINE_IBPOST_QP_EVENT(ibpost_qp_create);
DEFINE_IBPOST_QP_EVENT(ibpost_qp_destroy);

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
		__entry->qpn = qp->rqp.qpn;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("qpn=%u %s -> %s", __entry->qpn,
		  ibpost_show_qp_state(__entry->old),
		  ibpost_show_qp_state(__entry->new))
);

TRACE_EVENT(ibpost_drain_start,
	TP_PROTO(const struct ibpost_qp *qp),
	TP_ARGS(qp),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, sq_used)
		__field(u32, rq_used)
	),
	TP_fast_assign(
		__entry->qpn = qp->rqp.qpn;
		__entry->sq_used = READ_ONCE(qp->sq.head) -
				   READ_ONCE(qp->sq.tail);
		__entry->rq_used = READ_ONCE(qp->rq.head) -
				   READ_ONCE(qp->rq.tail);
	),
	TP_printk("qpn=%u sq_used=%u rq_used=%u", __entry->qpn,
		  __entry->sq_used, __entry->rq_used)
);

TRACE_EVENT(ibpost_drain_end,
	TP_PROTO(const struct ibpost_qp *qp, int sq, int rq),
	TP_ARGS(qp, sq, rq),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(int, sq)
		__field(int, rq)
	),
	TP_fast_assign(
		__entry->qpn = qp->rqp.qpn;
		__entry->sq = sq;
		__entry->rq = rq;
	),
	TP_printk("qpn=%u sq=%s (%d) rq=%s (%d)", __entry->qpn,
		  __entry->sq == 0 ? "drained" :
		  __entry->sq == -ETIMEDOUT ? "timeout" : "failed",
		  __entry->sq,
		  __entry->rq == 0 ? "drained" :
		  __entry->rq == -ETIMEDOUT ? "timeout" : "failed",
		  __entry->rq)
);

/* Memory registration */

DECLARE_EVENT_CLASS(ibpost_mr_class,
	TP_PROTO(const struct ibpost_mr *mr, u32 qpn, u32 rkey, int ret),
	TP_ARGS(mr, qpn, rkey, ret),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(const void *, mr)
		__field(u64, len)
		__field(u32, access)
		__field(u32, lkey)
		__field(u32, rkey)
		__field(u32, qpn)
		__field(int, ret)
	),
	TP_fast_assign(
		strscpy(__entry->dev, mr->dev->name, IB_DEVICE_NAME_MAX);
		__entry->mr = mr;
		__entry->len = mr->len;
		__entry->access = mr->access;
		__entry->lkey = mr->lkey;
		__entry->rkey = rkey;
		__entry->qpn = qpn;
		__entry->ret = ret;
	),
	TP_printk("dev=%s mr=%p len=%llu access=%s lkey=%#x rkey=%#x qpn=%u ret=%d",
		  __entry->dev, __entry->mr, __entry->len,
		  ibpost_show_access(__entry->access), __entry->lkey,
		  __entry->rkey, __entry->qpn, __entry->ret)
);

#define DEFINE_IBPOST_MR_EVENT(name)					\
	DEFINE_EVENT(ibpost_mr_class, name,				\
		TP_PROTO(const struct ibpost_mr *mr, u32 qpn, u32 rkey,	\
			 int ret),					\
		TP_ARGS(mr, qpn, rkey, ret))

DEFINE_IBPOST_MR_EVENT(ibpost_mr_reg);
DEFINE_IBPOST_MR_EVENT(ibpost_mr_invalidate);
DEFINE_IBPOST_MR_EVENT(ibpost_mr_dereg);

#endif /* _IBPOST_TRACE_H */

/* Built out of tree: define_trace.h finds this file through -I. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ibpost_trace
#include <trace/define_trace.h>
