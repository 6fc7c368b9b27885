/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DMA sync tracepoint (TRACE_SYSTEM ibpost): one event per sync ibpost
 * makes for memory it mapped, for the device before a WR that reads or
 * writes it is posted, for the CPU before the context of a WR that wrote
 * it is handed back. On providers that use virtual DMA (rxe, siw) the
 * sync itself does nothing; the event still shows where it happens, and
 * the test suites count it. Exported in test builds, so that a test module
 * may attach.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ibpost

#if !defined(_IBPOST_DMA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IBPOST_DMA_TRACE_H

#include <linux/dma-direction.h>
#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

TRACE_DEFINE_ENUM(DMA_BIDIRECTIONAL);
TRACE_DEFINE_ENUM(DMA_TO_DEVICE);
TRACE_DEFINE_ENUM(DMA_FROM_DEVICE);

TRACE_EVENT(ibpost_dma_sync,
	TP_PROTO(const struct ib_device *ibdev, u64 addr, u32 len, int dir,
		 bool for_cpu),
	TP_ARGS(ibdev, addr, len, dir, for_cpu),
	TP_STRUCT__entry(
		__field(u32, dev_id)
		__field(u64, addr)
		__field(u32, len)
		__field(int, dir)
		__field(bool, for_cpu)
	),
	TP_fast_assign(
		__entry->dev_id = ibdev->index;
		__entry->addr = addr;
		__entry->len = len;
		__entry->dir = dir;
		__entry->for_cpu = for_cpu;
	),
	TP_printk("dev.id=%u addr=%#llx len=%u dir=%s for=%s",
		  __entry->dev_id, __entry->addr, __entry->len,
		  __print_symbolic(__entry->dir,
				   { DMA_BIDIRECTIONAL, "BIDIRECTIONAL" },
				   { DMA_TO_DEVICE, "TO_DEVICE" },
				   { DMA_FROM_DEVICE, "FROM_DEVICE" }),
		  __entry->for_cpu ? "cpu" : "device")
);

#endif /* _IBPOST_DMA_TRACE_H */

/* Built out of tree: define_trace.h finds this file through -I. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dma_trace
#include <trace/define_trace.h>
