/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attributes of an RC connection made by hand, RESET -> INIT -> RTR ->
 * RTS, defined once for the three that make one: ibpost's loopback pairs
 * (ibpost_qp_connect_loopback()), the benchmark's raw verbs side (which
 * must not post through ibpost, so this header holds only constants and
 * static inline functions) and the KUnit suites' hand-connected pairs.
 * Each helper fills a struct ib_qp_attr for one transition and returns
 * the ib_modify_qp() mask of what it filled; a caller may change a field
 * it fills (the tests shorten retry_cnt) before the call.
 *
 * Reads and atomics in flight: IBPOST_RC_RD_ATOMIC, clamped by the
 * device's limits. One number serves both directions, the initiator depth
 * (max_rd_atomic, at most attrs.max_qp_init_rd_atom) and the responder
 * resources (max_dest_rd_atomic, at most attrs.max_qp_rd_atom), so that a
 * pair on one device never initiates more than its peer can answer.
 */
#ifndef _IBPOST_RC_H
#define _IBPOST_RC_H

#include <linux/minmax.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

/* READs and atomics in flight per QP, before the device's limits. */
#define IBPOST_RC_RD_ATOMIC	8
/* RNR NAK timer code 12: 0.64 ms before the peer's retry. */
#define IBPOST_RC_MIN_RNR_TIMER	12
/* Local ACK timeout code 14: 4.096 us * 2^14, about 67 ms. */
#define IBPOST_RC_TIMEOUT	14
/*
 * Bounded on every provider: rxe treats retry_cnt 7 as "retry forever"
 * (rxe_comp.c, COMPST_ERROR_RETRY), so a dead peer would hold the WRs
 * until the QP is destroyed.
 */
#define IBPOST_RC_RETRY_CNT	6
/* RNR retries: 7 is "retry forever", a receiver without a WR stalls. */
#define IBPOST_RC_RNR_RETRY	7
/* Both sides start at PSN 0. */
#define IBPOST_RC_PSN		0

/**
 * ibpost_rc_rd_atomic - READs and atomics in flight on an RC QP
 * @ibdev: the QP's device
 *
 * Context: Any context.
 * Return: IBPOST_RC_RD_ATOMIC, or less where the device's initiator depth
 * or responder resources are smaller.
 */
static inline u8 ibpost_rc_rd_atomic(const struct ib_device *ibdev)
{
	return min3(IBPOST_RC_RD_ATOMIC, ibdev->attrs.max_qp_init_rd_atom,
		    ibdev->attrs.max_qp_rd_atom);
}

/**
 * ibpost_rc_init_attr - the attributes of RESET -> INIT
 * @qa: filled (all else zeroed)
 * @port: the port the QP is bound to
 * @access: the remote access flags the QP allows
 *
 * Context: Any context.
 * Return: the ib_modify_qp() attribute mask.
 */
static inline int ibpost_rc_init_attr(struct ib_qp_attr *qa, u32 port,
				      int access)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_state = IB_QPS_INIT;
	qa->pkey_index = 0;
	qa->port_num = port;
	qa->qp_access_flags = access;
	return IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
	       IB_QP_ACCESS_FLAGS;
}

/**
 * ibpost_rc_rtr_attr - the attributes of INIT -> RTR
 * @qa: filled (all else zeroed)
 * @ibdev: the QP's device, for its limits
 * @mtu: the path MTU (the port's active MTU)
 * @dest_qpn: the peer QP's number
 * @av: the address vector of the peer
 *
 * Context: Any context.
 * Return: the ib_modify_qp() attribute mask.
 */
static inline int ibpost_rc_rtr_attr(struct ib_qp_attr *qa,
				     const struct ib_device *ibdev,
				     enum ib_mtu mtu, u32 dest_qpn,
				     const struct rdma_ah_attr *av)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_state = IB_QPS_RTR;
	qa->path_mtu = mtu;
	qa->dest_qp_num = dest_qpn;
	qa->rq_psn = IBPOST_RC_PSN;
	qa->max_dest_rd_atomic = ibpost_rc_rd_atomic(ibdev);
	qa->min_rnr_timer = IBPOST_RC_MIN_RNR_TIMER;
	qa->ah_attr = *av;
	return IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
	       IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
}

/**
 * ibpost_rc_rts_attr - the attributes of RTR -> RTS
 * @qa: filled (all else zeroed)
 * @ibdev: the QP's device, for its limits
 *
 * Context: Any context.
 * Return: the ib_modify_qp() attribute mask.
 */
static inline int ibpost_rc_rts_attr(struct ib_qp_attr *qa,
				     const struct ib_device *ibdev)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_state = IB_QPS_RTS;
	qa->timeout = IBPOST_RC_TIMEOUT;
	qa->retry_cnt = IBPOST_RC_RETRY_CNT;
	qa->rnr_retry = IBPOST_RC_RNR_RETRY;
	qa->sq_psn = IBPOST_RC_PSN;
	qa->max_rd_atomic = ibpost_rc_rd_atomic(ibdev);
	return IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
	       IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC;
}

#endif /* _IBPOST_RC_H */
