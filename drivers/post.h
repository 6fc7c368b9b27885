/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The posting layer: the entry points of the post path (post.c) that
 * the QP and MR code call.
 */
#ifndef _IBPOST_POST_H
#define _IBPOST_POST_H

#include <rdma/ib_verbs.h>
#include "qp_core.h"

/* post.c */
int ibpost_post_send_mrs(struct ibpost_qp *qp, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad_wr,
			 struct ibpost_mr **mrs, struct ibpost_sync *sync);
int ibpost_post_recv_mrs(struct ibpost_qp *qp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr,
			 struct ibpost_mr **mrs);
void ibpost_send_fast_init(struct ibpost_qp *qp);

#endif /* _IBPOST_POST_H */
