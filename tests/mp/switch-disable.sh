#!/bin/sh
# switch-disable.sh - test_switch with GPURMA_DISABLE_SWITCH=1 (set by the
# program before init, on its argument "disable"): the switch is emulated
# and its query and refusals name GPURMA_DISABLE_SWITCH, first in the
# refusal order even with NCCL_NVLS_ENABLE=0 and NVSHMEM_DISABLE_NVLS=1 set.
GPURMA_TEST_RANKS=${GPURMA_TEST_RANKS:-"1 3"}
export GPURMA_TEST_RANKS
exec sh "$top_srcdir/tests/mp/run-mp.sh" "$top_builddir/tests/mp/test_switch.mp" disable
