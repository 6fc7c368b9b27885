// SPDX-License-Identifier: GPL-2.0
/*
 * The DMA sync tracepoint's definition (declared in dma_trace.h; the sync
 * helpers that emit it are dma_sync.h's). Apart from trace.c, as
 * ring_trace.c.
 */
#define CREATE_TRACE_POINTS
#include "dma_trace.h"

/*
 * For ibpost's KUnit suites, which attach to it; the exports of a
 * tracepoint take no symbol namespace, so a build for stock kernels (no
 * KUnit) keeps them all in IBPOST's.
 */
#ifdef IBPOST_TEST_HOOKS
EXPORT_TRACEPOINT_SYMBOL_GPL(ibpost_dma_sync);
#endif
