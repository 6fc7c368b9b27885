// SPDX-License-Identifier: GPL-2.0
/*
 * ibpost_bench calibration: the guest's memcpy and crc32 throughput, the
 * per-byte floor of Soft-RoCE. rxe copies each payload byte twice (into
 * the skb on send, out of it on receive) and runs crc32 over each packet
 * twice (the ICRC, computed and checked), so its bandwidth cannot exceed
 * 1 / (2 / memcpy + 2 / crc32).
 */
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "bench.h"

/* MiB/s times 100 for @bytes in @ns. */
static u64 bench_calib_rate(u64 bytes, u64 ns)
{
	return div64_u64(bytes * 100000, max_t(u64, ns, 1)) * 1000000 / SZ_1M;
}

int bench_calib(const struct bench_cfg *cfg, char *line, size_t len)
{
	u64 t0, copy_ns, crc_ns, bytes, copy, crc, floor;
	u32 i, sum = 0;
	u8 *src, *dst;

	src = kmalloc(cfg->size, GFP_KERNEL);
	dst = kmalloc(cfg->size, GFP_KERNEL);
	if (!src || !dst) {
		kfree(src);
		kfree(dst);
		return -ENOMEM;
	}
	memset(src, 0x5a, cfg->size);

	t0 = ktime_get_ns();
	for (i = 0; i < cfg->iters; i++) {
		memcpy(dst, src, cfg->size);
		src[i % cfg->size] = dst[(i * 7) % cfg->size] + 1;
	}
	copy_ns = ktime_get_ns() - t0;

	t0 = ktime_get_ns();
	for (i = 0; i < cfg->iters; i++)
		sum = crc32_le(sum, src, cfg->size);
	crc_ns = ktime_get_ns() - t0;

	bytes = (u64)cfg->size * cfg->iters;
	copy = bench_calib_rate(bytes, copy_ns);
	crc = bench_calib_rate(bytes, crc_ns);
	/* 1 / (2 / copy + 2 / crc), in MiB/s times 100 */
	floor = div64_u64(copy * crc, max_t(u64, 2 * (copy + crc), 1));
	scnprintf(line, len,
		  "mode=calib size=%u iters=%u memcpy_mib_per_s=%llu.%02llu crc32_mib_per_s=%llu.%02llu floor_mib_per_s=%llu.%02llu crc=%08x\n",
		  cfg->size, cfg->iters, div_u64(copy, 100), copy % 100,
		  div_u64(crc, 100), crc % 100, div_u64(floor, 100),
		  floor % 100, sum);
	kfree(src);
	kfree(dst);
	return 0;
}
