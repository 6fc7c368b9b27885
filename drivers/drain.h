/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Draining a QP (drain.c): its markers, for qp.c's teardown and RESET,
 * and the timeout registration's waits share.
 */
#ifndef _IBPOST_DRAIN_H
#define _IBPOST_DRAIN_H

#include "qp_core.h"

int ibpost_drain_init(struct ibpost_qp *qp);
void ibpost_drain_cleanup(struct ibpost_qp *qp);
bool ibpost_drain(struct ibpost_qp *qp);
unsigned int ibpost_drain_timeout_ms(void);

#endif /* _IBPOST_DRAIN_H */
