# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# guests.sh - the guests of scripts/ibpost.sh's test stages (sourced):
# the modules and the initramfs they boot, each stage's time limit, the
# single guest (rxe0, then siw0) and the two-host stage, with their
# checks and report lines.

# The kernel command line every test-kernel guest gets. That kernel has
# no ACPI, so no HPET or ACPI PM timer: its clocksource watchdog would
# judge TCG's TSC against jiffies, find it skewed, and leave the guest
# on a jiffies clock with low-resolution timers (every usleep_range() a
# tick). QEMU's TSC runs on the host's monotonic clock, one for all
# vCPUs: the guest may trust it. Its rate is given (tsc_early_khz=, the
# host's own, scripts/tsc/tsc-khz.c): a guest that measures it against
# its PIT while the host is busy (a build beside it) can fail to, then
# fail to verify its APIC timer, and hang at boot with no timer (seen on
# 6.1). Where it cannot be measured (no compiler, not x86), the guest
# measures it as before.
tsc_early_arg() {
	local bin khz
	[ "$(uname -m)" = x86_64 ] || return 0
	bin=$(mktemp) || return 0
	if cc -O2 -o "$bin" "$REPO/scripts/tsc/tsc-khz.c" 2> /dev/null; then
		khz=$("$bin")
		case $khz in
		[1-9][0-9][0-9][0-9][0-9]*) echo " tsc_early_khz=$khz" ;;
		esac
	fi
	rm -f "$bin"
}
TEST_CMDLINE="tsc=reliable$(tsc_early_arg)"

# How long a guest of a stage may run before it is killed and the run
# fails: about three times what the stage takes on the 2-core machine
# (Documentation/testing.rst), so one hung guest fails fast instead of
# eating CI's budget. IBPOST_VM_TIMEOUT overrides every stage's.
stage_timeout() {
	local t
	case $1 in
	single) t=1000 ;;	# 265 to 370 s
	xhost) t=300 ;;		# 51 to 87 s
	smoke) t=300 ;;		# 76 s
	stock) t=450 ;;		# the boot of 114 to 133 s with DKMS
	*) t=1800 ;;
	esac
	echo "${IBPOST_VM_TIMEOUT:-$t}"
}

# Build ibpost and its test modules against kernel tree $1 into $2/build
# (log in $2/build.log). The test run does not: its lint_build made them
# there just before, warning-free.
build_modules() {
	local kdir=$1 out=$2 b=$2/build
	mkdir -p "$b"
	rsync -a --delete --exclude=.git --exclude=out "$REPO/" "$b/"
	make -j"$(nproc)" -C "$b" KDIR="$kdir" W=1 modules > "$out/build.log" 2>&1 ||
		{ cat "$out/build.log" >&2; die "module build failed"; }
	make -j"$(nproc)" -C "$b" KDIR="$kdir" W=1 demo bench >> "$out/build.log" 2>&1 ||
		{ cat "$out/build.log" >&2; die "demo or bench build failed"; }
	if grep -E "warning:|error:" "$out/build.log" >&2; then
		die "the module build is not warning-free"
	fi
}

# Pack the guest's initramfs for kernel build $1 with the modules built in
# $2/build (with userspace verbs and perftest when $3 is "perftest"; $3
# "kunit" insists on the KUnit module); prints its path.
make_initramfs() {
	local bdir=$1 out=$2 root=$2/initramfs kver t
	rm -rf "$root"
	guest_userspace "$root" "$REPO/scripts/guest-init.sh" \
		"$REPO/scripts/guest" >&2
	kver=$(ls "$bdir/modroot/lib/modules")
	cp -a "$bdir/modroot/lib/modules/$kver" "$root/lib/modules/"
	cp "$out"/build/*.ko "$root/ibpost/"
	cp "$out"/build/drivers/demo/*.ko "$out"/build/drivers/bench/*.ko \
		"$root/ibpost/"
	if [ -e "$out/build/ibpost_kunit.ko" ]; then
		count_suites "$out/build/ibpost_kunit.ko" > "$root/ibpost/nsuites"
	fi
	if [ "${3:-}" = kunit ] && [ ! -s "$root/ibpost/nsuites" ]; then
		die "no KUnit module was built against $bdir"
	fi
	# The benchmark's guest side: the bench proper, or its smoke run.
	cp "$REPO/scripts/bench-guest.sh" "$root/ibpost/bench.sh"
	if [ "${3:-}" = perftest ]; then
		for t in ib_send_bw ib_write_bw ib_read_bw ib_write_lat \
			ib_send_lat; do
			copy_with_libs "/usr/bin/$t" "$root" >&2
		done
		# The rxe provider is dlopen()ed by libibverbs.
		mkdir -p "$root/etc/libibverbs.d"
		cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"
		copy_with_libs "$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so)" \
			"$root" >&2
	fi
	echo "${IBPOST_KUNIT_ARGS:-}" > "$root/ibpost/kunit_args"
	pack_initramfs "$root" "$out/initramfs.cpio.gz"
	echo "$out/initramfs.cpio.gz"
}

# How many suites a KUnit module holds: its .kunit_test_suites section
# is an array of pointers.
count_suites() {
	local size
	size=$(objdump -h "$1" | awk '$2 == ".kunit_test_suites" { print $3 }')
	[ -n "$size" ] || die "no .kunit_test_suites section in $1"
	echo $(( 0x$size / 8 ))
}

# The reliability figures of console $1 (Documentation/reliability.rst);
# $2 is the kernel series, $3 "suites tests passed".
figures() {
	local console=$1 series=$2
	set -- $3
	# The kernel messages of console $1, without their timestamps.
	s() { sed 's/\r$//; s/^\[ *[0-9.]*\] //' "$1"; }
	echo "run:              $(date -u +%Y-%m-%d), Linux $series test kernel, 2 vCPUs, $1 suites, $3 of $2 cases passed"
	echo "chains fuzzed:    $(s "$console" | awk '/^ibpost_fuzz: [0-9]+ chains/{n+=$2} END{print n+0}')" \
		"(seed $(s "$console" | sed -n 's/^ibpost_fuzz: seed \([0-9a-fx]*\) half 1$/\1/p'))"
	echo "WRs concurrently: $(s "$console" | awk '/^ibpost_stress: /{n+=$2; l+=$NF} END{print n" posted by 4 threads + receiver, contexts lost " l}')"
	echo "removal cycles:   $(s "$console" | grep -c '^ibpost-removal: cycle .* posted')" \
		"($(s "$console" | awk '/^ibpost-removal: cycle/{p+=$6; r+=$8} END{print p" contexts posted, " p-r " lost"}'))"
	echo "faults injected:  $(s "$console" | grep -c 'fail_ibpost: refusing a WR')"
	echo "kernel reports:   $(grep -cE "$REPORTS" "$console")"
}

# The single guest: every KUnit suite and the device scenarios on rxe0
# (mode "test"), or all of them again on siw0 (mode "test-siw"), on the
# kernel built in $1 (source $2), initramfs $3, results in $4, series $5,
# mode $6. Appends its line to the report; fails when a suite is missing,
# a case does not pass (a skip included, but for an iWARP reason on
# siw0), or the log is not clean.
single_run() {
	local bdir=$1 src=$2 initrd=$3 out=$4 series=$5 mode=${6:-test}
	local console r fail=0 expected t base=$4/kunit iwarp= stage
	t=$(date +%s)
	console=$out/console-$mode.log
	stage="single guest"
	if [ "$mode" = test-siw ]; then
		base=$out/kunit-siw iwarp=iwarp stage="siw guest"
	fi
	boot_guest "$bdir/arch/x86/boot/bzImage" "$initrd" "$mode" "$console" \
		"$(stage_timeout single)" "$TEST_CMDLINE ${BOOT_APPEND:-}" ||
		fail=1
	r=$(ktap_parse "$console" "$src" "$base" $iwarp) || fail=1
	set -- $r
	expected=$(cat "$out/initramfs/ibpost/nsuites" 2>/dev/null) || expected=
	[ -n "$expected" ] || die "no suite count in $out/initramfs/ibpost/nsuites"
	# The guest adds its device scenarios as a suite of its own.
	expected=$((expected + 1))
	if [ "$1" != "$expected" ]; then
		log "$1 suites ran, the modules hold $expected"
		fail=1
	fi
	if [ "$2" = 0 ] || [ "$2" != $(($3 + $4)) ]; then
		log "$3 of $2 cases passed, $4 skipped for iWARP"
		fail=1
	fi
	if [ -z "$QUICK" ]; then
		expect_check "$EXPECTED" "$series" "$mode" "$1" "$2" "$4" \
			"$base-skips.txt" || fail=1
	fi
	check_log "$console" || fail=1
	if [ "$mode" = test ]; then
		figures "$console" "$series" "$r" > "$out/reliability-figures.txt"
		cat "$out/reliability-figures.txt" >&2
	elif [ -s "$base-skips.txt" ]; then
		log "skipped on siw0 (case: reason):"
		cat "$base-skips.txt" >&2
	fi
	ktap_why "$base" "$console"
	report "$REPORT" "$series" "$stage" "$1 of $expected suites, $3 of $2 cases passed${iwarp:+, $4 skipped (iWARP)}$(ktap_failed "$base")" $fail "$t"
	return $fail
}

# Boot guests A and B of the two-host stage (kernel build $1, initramfs
# $2, consoles in $3, mode suffix $4) linked by a point-to-point UDP socket
# netdev on 127.0.0.1 ports $5 (A) and $5 + 1 (B): each guest sends to
# the other's port and listens on its own there, nothing else. Fails when
# either guest does (timed out, or QEMU could not start).
xhost_boot_pair() {
	local bdir=$1 initrd=$2 out=$3 sfx=$4 port=$5 pa pb fail=0
	log "two-host stage: guests A and B linked through 127.0.0.1:$port/$((port + 1)) (UDP)"
	# virtio-net uses MSI-X (the test kernel has no ACPI to route INTx).
	boot_guest "$bdir/arch/x86/boot/bzImage" "$initrd" "xhost-a$sfx" \
		"$out/console-xhost$sfx-a.log" "$(stage_timeout xhost)" "$TEST_CMDLINE" \
		-netdev "socket,id=link,udp=127.0.0.1:$((port + 1)),localaddr=127.0.0.1:$port" \
		-device virtio-net-pci,netdev=link,mac=52:54:00:77:00:01 &
	pa=$!
	boot_guest "$bdir/arch/x86/boot/bzImage" "$initrd" "xhost-b$sfx" \
		"$out/console-xhost$sfx-b.log" "$(stage_timeout xhost)" "$TEST_CMDLINE" \
		-netdev "socket,id=link,udp=127.0.0.1:$port,localaddr=127.0.0.1:$((port + 1))" \
		-device virtio-net-pci,netdev=link,mac=52:54:00:77:00:02 &
	pb=$!
	wait $pb || fail=1
	wait $pa || fail=1
	return $fail
}

# The two-host stage: guests A and B, each with one virtio-net NIC joined
# to the other's by a QEMU socket netdev on 127.0.0.1 only, and rxe0 on
# it. A serves (ibpost_xhost_server), B runs the ibpost_xhost KUnit suite
# against it through rdma_cm. Kernel build $1, source $2, initramfs $3,
# results in $4, series $5; $6 "siw" puts siw0 on the NIC instead of
# rxe0 (cases that cannot apply to iWARP are then skips with a reason).
xhost_run() {
	local bdir=$1 src=$2 initrd=$3 out=$4 series=$5 prov=${6:-} port
	local fail=0 g r summary="" t sfx="" iwarp="" stage="two guests" rerun=""
	[ "$prov" = siw ] && sfx=-siw iwarp=iwarp stage="two guests siw"
	t=$(date +%s)
	# Below the host's ephemeral range (32768 and up, ip_local_port_range):
	# no resolver or other client socket of the host takes these ports
	# between two runs of this stage. Eight per run: two stages (the
	# siw one 4 up), each two ports and two for a second boot.
	port=$(( 20000 + ($$ % 1500) * 8 + ${#sfx} ))
	xhost_boot_pair "$bdir" "$initrd" "$out" "$sfx" "$port" || fail=1
	# B pinged A for 180 s without an answer: the guests' link never
	# came up (a 6.1 siw stage of CI once, cause not recorded), so no
	# ibpost case ran against A. The stage runs once more on other ports,
	# after what A printed; any other failure stands, and so does a
	# kernel report in either first console.
	if grep -q "10.77.0.1 answered after 180 pings" \
		"$out/console-xhost$sfx-b.log" 2> /dev/null; then
		log "guest B never reached guest A; A's console ended with:"
		tail -n 15 "$out/console-xhost$sfx-a.log" >&2
		log "the two guests run once more, on the next ports"
		for g in a b; do
			mv "$out/console-xhost$sfx-$g.log" \
				"$out/console-xhost$sfx-$g-first.log"
		done
		rerun="; ran twice, the first time B never reached A"
		fail=0
		for g in a b; do
			if grep -nE "$REPORTS" "$out/console-xhost$sfx-$g-first.log" >&2; then
				log "the first boot's kernel log of guest $g holds the reports above"
				fail=1
			fi
		done
		xhost_boot_pair "$bdir" "$initrd" "$out" "$sfx" $((port + 2)) ||
			fail=1
	fi
	for g in a b; do
		log "kunit.py parse (guest $g):"
		r=$(ktap_parse "$out/console-xhost$sfx-$g.log" "$src" \
			"$out/kunit-xhost$sfx-$g" $iwarp) || fail=1
		set -- $r
		[ "$1" = 1 ] && [ "$2" -gt 0 ] && [ "$2" = $(($3 + $4)) ] ||
			{ log "guest $g: $1 suites, $3 of $2 cases passed"; fail=1; }
		expect_check "$EXPECTED" "$series" "xhost$sfx-$g" "$1" "$2" "$4" \
			"$out/kunit-xhost$sfx-$g-skips.txt" || fail=1
		ktap_why "$out/kunit-xhost$sfx-$g" "$out/console-xhost$sfx-$g.log"
		summary="$summary${summary:+, }$g $3/$2${iwarp:+ ($4 skipped)}$(ktap_failed "$out/kunit-xhost$sfx-$g")"
		check_log "$out/console-xhost$sfx-$g.log" || fail=1
	done
	grep -q "ibpost_xhost_server" "$out/kunit-xhost$sfx-a-guest.txt" &&
		grep -q "ibpost_xhost " "$out/kunit-xhost$sfx-b-module.txt" ||
		{ log "a two-host suite did not run"; fail=1; }
	[ -s "$out/kunit-xhost$sfx-b-skips.txt" ] &&
		cat "$out/kunit-xhost$sfx-b-skips.txt" >&2
	report "$REPORT" "$series" "$stage" "cases passed: $summary$rerun" $fail "$t"
	return $fail
}
