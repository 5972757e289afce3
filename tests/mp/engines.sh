#!/bin/sh
# engines.sh MODE [PART] - the multi-process suite again, through another engine:
#   port    GPURMA_ENGINE=port: the proxy with its memcpy transport, one node,
#           peers spread over two proxy contexts (GPURMA_PORT_CONTEXTS=2)
#   nodes   the ranks split over two "nodes": the proxy with UCX
#   switch  GPURMA_ENGINE=switch: the switch engine, one node, through the
#           mem engine's mappings (multicast stays off: the host backend
#           and the default environment refuse it)
# Ranks 2 and 4 only (each rank has a proxy thread, and CI has 2 cores);
# atomics, one proxy round trip each, at 2 ranks only across nodes. With
# GPURMA_TEST_QUICK set (make check MP_QUICK=1: CI's sanitizer half), 4 only:
# its peers are spread over both proxy contexts and, across nodes, some
# are on this node and some on the other. GPURMA_ENGINE_RANKS, when set,
# names the rank counts instead (CI's plain half: 2, so that the two halves
# together run both counts once).
# PART 1 or 2: every other program of the suite, starting with the first or
# the second, without the programs named in $ALONE; PART a list of program
# names: those (the nodes mode takes three Automake tests to stay well
# inside CI's time per test under the sanitizers: test_accumulate, one UCX
# round trip per element-wise atomic, and test_coll take as long as the
# rest together). engines-port.sh,
# engines-nodes.sh, engines-nodes-2.sh, engines-nodes-3.sh and
# engines-switch.sh call it.
here=$(cd "$(dirname "$0")" && pwd)
build=${top_builddir:-.}
mode=${1:?usage: engines.sh port|nodes|switch [1|2]}
part=${2:-}
alone=${ALONE:-}
if test $mode = nodes && test "${HAVE_UCX:-yes}" = no; then
    echo "SKIP: no UCX in this build"
    exit 77
fi
# GPURMA_ENGINES_NO_SWITCH set (CI's sanitizer half): the switch mode skips.
# Its point-to-point calls are the mem engine's code (switch_engine.c), which
# the suite runs directly; the plain half runs the mode.
if test $mode = switch && test -n "${GPURMA_ENGINES_NO_SWITCH:-}"; then
    echo "SKIP: GPURMA_ENGINES_NO_SWITCH is set"
    exit 77
fi
engine_ranks="2 4"
test -n "${GPURMA_TEST_QUICK:-}" && engine_ranks=4
test -n "${GPURMA_ENGINE_RANKS:-}" && engine_ranks=$GPURMA_ENGINE_RANKS
status=0
index=0
for mode in $mode; do
    for prog in "$build"/tests/mp/test_*.mp; do
        test -x "$prog" || continue
        name=$(basename "$prog" .mp)
        case $part in
        1 | 2)
            case " $alone " in *" $name "*) continue ;; esac
            index=$((index + 1))
            test $((index % 2)) = $((part % 2)) || continue ;;
        "") ;;
        *) case " $part " in *" $name "*) ;; *) continue ;; esac ;;
        esac
        if test $mode = port; then
            GPURMA_ENGINE=port GPURMA_PORT_CONTEXTS=2 GPURMA_TEST_RANKS="$engine_ranks" "$here/run-mp.sh" "$prog" >"$build/tests/mp/engines-$mode-$name.log" 2>&1
        elif test $mode = switch; then
            GPURMA_ENGINE=switch GPURMA_TEST_RANKS="$engine_ranks" "$here/run-mp.sh" "$prog" >"$build/tests/mp/engines-$mode-$name.log" 2>&1
        else
            ranks=$engine_ranks
            test $name = test_atomics && ranks=2
            GPURMA_TEST_NODES=2 GPURMA_TEST_RANKS="$ranks" "$here/run-mp.sh" "$prog" >"$build/tests/mp/engines-$mode-$name.log" 2>&1
        fi
        rc=$?
        case $rc in
            0) echo "ok: $name ($mode)" ;;
            77) echo "skip: $name ($mode)" ;;
            *) echo "FAIL: $name ($mode), see tests/mp/engines-$mode-$name.log"
               tail -5 "$build/tests/mp/engines-$mode-$name.log"
               status=1 ;;
        esac
    done
done
exit $status
