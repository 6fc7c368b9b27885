# SPDX-License-Identifier: GPL-2.0
#
# make                  build ibpost.ko (and the KUnit module when the
#                       kernel has CONFIG_KUNIT) for the running kernel
# make KDIR=<tree>      build against another kernel tree
# make demo             build the demo ULP against ibpost's Module.symvers
# make bench            build the benchmark ULP the same way
# make install          modules_install for the kernel in KDIR

# The running kernel's build tree; where it has none (a container, a
# sandbox), the newest installed Debian linux-headers-*-amd64.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		    $(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
PWD := $(shell pwd)

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(PWD) modules

demo: modules
	$(MAKE) -C $(KDIR) M=$(PWD)/drivers/demo \
		KBUILD_EXTRA_SYMBOLS=$(PWD)/Module.symvers modules

bench: modules
	$(MAKE) -C $(KDIR) M=$(PWD)/drivers/bench \
		KBUILD_EXTRA_SYMBOLS=$(PWD)/Module.symvers modules

# Debian's headers carry no System.map, so Kbuild skips depmod: run it.
install: modules
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install
	depmod -a $(shell cat $(KDIR)/include/config/kernel.release)

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean
	$(MAKE) -C $(KDIR) M=$(PWD)/drivers/demo clean
	$(if $(wildcard drivers/bench),$(MAKE) -C $(KDIR) M=$(PWD)/drivers/bench clean)

.PHONY: all modules demo bench install clean
