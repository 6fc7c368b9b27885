/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DMA ownership of the memory ibpost mapped: handed to the
 * device before a WR that uses it is posted (post.c), and back to the CPU
 * before the context of a WR that wrote it is handed back (the ring, from
 * the ranges a slot records, struct ibpost_ring_dma). Each sync emits
 * ibpost_dma_sync. For .c files only: a trace header included from a
 * header would be expanded inside another's CREATE_TRACE_POINTS.
 */
#ifndef _IBPOST_DMA_SYNC_H
#define _IBPOST_DMA_SYNC_H

#include <rdma/ib_verbs.h>
#include "dma_trace.h"

/* Hand [@addr, +@len), mapped for @ibdev in @dir, to the device. */
static inline void ibpost_dma_sync_dev(struct ib_device *ibdev, u64 addr,
				       u32 len, int dir)
{
	trace_ibpost_dma_sync(ibdev, addr, len, dir, false);
	ib_dma_sync_single_for_device(ibdev, addr, len, dir);
}

/* Hand it back to the CPU. */
static inline void ibpost_dma_sync_cpu(struct ib_device *ibdev, u64 addr,
				       u32 len, int dir)
{
	trace_ibpost_dma_sync(ibdev, addr, len, dir, true);
	ib_dma_sync_single_for_cpu(ibdev, addr, len, dir);
}

#endif /* _IBPOST_DMA_SYNC_H */
