#!/bin/sh
# switch-disable.sh - test_switch once for each variable that refuses the
# switch's multicast path, set by the program before init on its argument:
#   disable  GPURMA_DISABLE_SWITCH=1, first in the refusal order even with
#            NCCL_NVLS_ENABLE=0 and NVSHMEM_DISABLE_NVLS=1 set
#   nccl     NCCL_NVLS_ENABLE=0
#   nvshmem  NVSHMEM_DISABLE_NVLS=1 (with NCCL_NVLS_ENABLE=1, which does not refuse)
# Each time the switch is emulated and its query and refusals name the variable.
GPURMA_TEST_RANKS=${GPURMA_TEST_RANKS:-"1 3"}
export GPURMA_TEST_RANKS
for mode in disable nccl nvshmem; do
    sh "$top_srcdir/tests/mp/run-mp.sh" "$top_builddir/tests/mp/test_switch.mp" $mode || exit $?
done
