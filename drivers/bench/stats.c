// SPDX-License-Identifier: GPL-2.0
/*
 * Figures, in integer arithmetic only: rates from counts and nanoseconds,
 * and the median, 99th percentile and minimum of latency samples.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math.h>
#include <linux/math64.h>
#include <linux/sort.h>
#include <linux/time64.h>
#include "bench.h"

/* Keep a * 100 * NSEC_PER_SEC inside 64 bits. */
#define BENCH_BYTES_MAX	(U64_MAX / (100ULL * NSEC_PER_SEC))

/* @count events in @elapsed_ns, per second (count <= 2^34). */
u64 bench_per_second(u64 count, u64 elapsed_ns)
{
	return div64_u64(count * NSEC_PER_SEC, elapsed_ns ?: 1);
}

/*
 * @bytes in @elapsed_ns, in MiB (2^20 bytes) per second times 100. Both
 * terms lose their low bits together when the product would overflow,
 * which changes nothing visible at that scale.
 */
u64 bench_mib_x100(u64 bytes, u64 elapsed_ns)
{
	while (bytes > BENCH_BYTES_MAX) {
		bytes >>= 1;
		elapsed_ns >>= 1;
	}
	return div64_u64(bytes * 100 * NSEC_PER_SEC, elapsed_ns ?: 1) >> 20;
}

static int bench_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/**
 * bench_lat_stats - one-way latency figures from round-trip samples
 * @rtt: @n round trips in ns; sorted in place
 * @n: at least 1
 * @res: gets median_ns, p99_ns (nearest rank) and min_ns, each half the
 *       round trip
 *
 * Context: Process context; may take a while for millions of samples.
 */
void bench_lat_stats(u32 *rtt, u32 n, struct bench_result *res)
{
	u64 median;
	u32 p99;

	sort(rtt, n, sizeof(*rtt), bench_cmp_u32, NULL);
	if (n % 2)
		median = rtt[n / 2];
	else
		median = ((u64)rtt[n / 2 - 1] + rtt[n / 2]) / 2;
	/* n <= BENCH_MAX_ITERS: n * 99 fits in 32 bits. */
	p99 = DIV_ROUND_UP(n * 99, 100) - 1;
	res->median_ns = median / 2;
	res->p99_ns = rtt[p99] / 2;
	res->min_ns = rtt[0] / 2;
}
