// SPDX-License-Identifier: GPL-2.0
/*
 * pcprof - a QEMU TCG plugin that counts the guest kernel's instructions
 * per address, for the benchmark's instruction profile (scripts/ibpost.sh
 * bench with IBPOST_BENCH_PCPROF=1; scripts/pcprof/report.py reads it).
 *
 * Every instruction at a kernel address (0xffffffff80000000 and up:
 * the kernel's text and its modules') adds one to its own counter, an
 * inline add that TCG emits into the translated code. The guest marks
 * the windows to count with the instruction "xchg %bx,%bx" (66 87 db,
 * which nothing else in the kernel executes; ibpost_bench's pcprof=1
 * runs one before and one after each measured phase): the first of a
 * pair zeroes every counter, the second writes the counters that are
 * not zero to "<out>.<n>" as "address count" lines, n counting the
 * windows from 1. Counts are exact for one vCPU (the bench runs with
 * -smp 1 -icount for it): the adds are not atomic.
 *
 * Build: cc -O2 -shared -fPIC -fvisibility=hidden -o pcprof.so pcprof.c
 * Run:   qemu-system-x86_64 ... -plugin pcprof.so,out=/path/prefix
 *
 * Debian packages no qemu-plugin.h, so the few declarations of QEMU's
 * plugin API (version 1, QEMU 6.0 and later) it uses are written out
 * below, as that header gives them.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op,
						void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define KERNEL_START	0xffffffff80000000ull
#define HASH_BITS	20

struct counter {
	uint64_t addr;
	uint64_t count;
	struct counter *next;
};

static struct counter **table;
static const char *out = "pcprof";
static bool in_window;
static unsigned int windows;

static struct counter *counter_of(uint64_t addr)
{
	size_t h = (addr * 0x9e3779b97f4a7c15ull) >> (64 - HASH_BITS);
	struct counter *c;

	for (c = table[h]; c; c = c->next)
		if (c->addr == addr)
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	c->addr = addr;
	c->next = table[h];
	table[h] = c;
	return c;
}

static void for_each_counter(void (*fn)(struct counter *c, void *arg),
			     void *arg)
{
	struct counter *c;
	size_t h;

	for (h = 0; h < (size_t)1 << HASH_BITS; h++)
		for (c = table[h]; c; c = c->next)
			fn(c, arg);
}

static void zero(struct counter *c, void *arg)
{
	c->count = 0;
}

static void dump(struct counter *c, void *arg)
{
	if (c->count)
		fprintf(arg, "%" PRIx64 " %" PRIu64 "\n", c->addr, c->count);
}

/* The marker ran: open a window, or close it and write its counts. */
static void mark(unsigned int vcpu_index, void *userdata)
{
	char path[4096];
	FILE *f;

	if (!in_window) {
		for_each_counter(zero, NULL);
		in_window = true;
		return;
	}
	in_window = false;
	snprintf(path, sizeof(path), "%s.%u", out, ++windows);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	for_each_counter(dump, f);
	fclose(f);
}

static bool is_marker(struct qemu_plugin_insn *insn)
{
	static const unsigned char xchg_bx_bx[] = { 0x66, 0x87, 0xdb };

	return qemu_plugin_insn_size(insn) == sizeof(xchg_bx_bx) &&
	       !memcmp(qemu_plugin_insn_data(insn), xchg_bx_bx,
		       sizeof(xchg_bx_bx));
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t addr = qemu_plugin_insn_vaddr(insn);

		if (addr < KERNEL_START)
			continue;
		qemu_plugin_register_vcpu_insn_exec_inline(insn,
			QEMU_PLUGIN_INLINE_ADD_U64, &counter_of(addr)->count, 1);
		if (is_marker(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark,
				QEMU_PLUGIN_CB_NO_REGS, NULL);
	}
}

static void finished(qemu_plugin_id_t id, void *userdata)
{
	fprintf(stderr, "pcprof: %u windows written to %s.<n>\n", windows,
		out);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	table = calloc((size_t)1 << HASH_BITS, sizeof(*table));
	if (!table)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, finished, NULL);
	return 0;
}
