// SPDX-License-Identifier: GPL-2.0
/*
 * tsc-khz: the host's TSC rate in kHz, for the test guests' kernel
 * command line (tsc_early_khz=, scripts/lib/guests.sh). Under QEMU TCG a
 * guest's TSC is the host's, and a guest that measures it against its
 * PIT while the host is busy can fail ("tsc: Unable to calibrate against
 * PIT"), then fail to verify its APIC timer and hang at boot. Measured
 * here against CLOCK_MONOTONIC_RAW over three 50 ms windows, which a busy
 * host stretches but cannot skew; the median is printed.
 */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double ns_of(const struct timespec *t)
{
	return t->tv_sec * 1e9 + t->tv_nsec;
}

int main(void)
{
	struct timespec nap = { 0, 50000000 }, a, b;
	double khz[3], t;
	unsigned long long c0, c1;
	int i, j;

	for (i = 0; i < 3; i++) {
		clock_gettime(CLOCK_MONOTONIC_RAW, &a);
		c0 = __rdtsc();
		nanosleep(&nap, NULL);
		c1 = __rdtsc();
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		khz[i] = (c1 - c0) * 1e6 / (ns_of(&b) - ns_of(&a));
	}
	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++)
			if (khz[j] < khz[i]) {
				t = khz[i];
				khz[i] = khz[j];
				khz[j] = t;
			}
	printf("%.0f\n", khz[1]);
	return 0;
}
