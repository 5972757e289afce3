#!/bin/bash
# ucx-listen.sh - the port engine's UCX must not open listening sockets on
# every network interface of the host: with the uid bootstrap it listens
# only on the interface of the bootstrap's address (MASTER_ADDR, here
# 127.0.0.1), and GPURMA_UCX_NET_DEVICES overrides that.
#
# Two ranks act as two nodes (GPURMA_NODE_ID), so every peer is reached over
# UCX; while their ring runs (peer_death.c, nobody dies), the TCP sockets
# they listen on are read from /proc (nothing beyond bash and coreutils).
#
# Exit: 0 pass, 1 fail, 77 when UCX is not built in or the host has no
# interface besides loopback, 99 when the program cannot be built.
set -u
FL_NAME=ucx-listen
. "$(dirname "$0")/fault-lib.sh"
fl_init

PROG=$(fl_program tests/fault/peer_death) || exit 99
if [ "${HAVE_UCX:-yes}" = no ]; then
    echo "SKIP: built without UCX"
    exit 77
fi

# listen_addrs PID: local addresses (dotted or [v6]) of its listening TCP sockets
listen_addrs() {
    local pid=$1 inodes f
    inodes=$(for f in /proc/"$pid"/fd/*; do readlink "$f"; done 2>/dev/null |
        sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
    # /proc/net/tcp: sl local rem st ... inode (field 10); st 0A = LISTEN;
    # the local address is hex, least significant byte first.
    local h
    for h in $(awk -v want=" $inodes " '$4 == "0A" && index(want, " " $10 " ") {
        split($2, a, ":"); print a[1] }' /proc/net/tcp); do
        echo "$((16#${h:6:2})).$((16#${h:4:2})).$((16#${h:2:2})).$((16#${h:0:2}))"
    done
    awk -v want=" $inodes " '$4 == "0A" && index(want, " " $10 " ") { print "[v6]" }' \
        /proc/net/tcp6 2>/dev/null
}

# run NAME [VAR=VALUE...]: two ranks, collects their listening addresses
run() {
    local name=$1 r port token
    shift
    port=$(fl_free_port)
    token=$(fl_token)
    for r in 0 1; do
        env RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
            GPURMA_UID_TOKEN="$token" GPURMA_NODE_ID=node$r PD_MODE=none PD_ROUNDS=100000000 \
            PD_MAX_SECONDS=8 "$@" timeout -k 2 10 "$PROG" >"$FL_WORK/$name.$r" 2>&1 &
        FL_PIDS[r]=$!
    done
    # The ring runs once both print their pid and the window exists.
    local pids= tries
    for ((tries = 0; tries < 100; tries++)); do
        pids=$(sed -n 's/^peer_death: rank [0-9]*: pid \([0-9]*\)$/\1/p' "$FL_WORK/$name".[01])
        [ "$(echo "$pids" | wc -w)" = 2 ] && grep -q "ranks, bootstrap" "$FL_WORK/$name.0" && break
        sleep 0.1
    done
    sleep 0.3
    ADDRS=$(for p in $pids; do listen_addrs "$p"; done | sort -u | tr '\n' ' ')
    for r in 0 1; do
        kill "${FL_PIDS[r]}" 2>/dev/null
        wait "${FL_PIDS[r]}" 2>/dev/null
        FL_PIDS[r]=
    done
}

others=$(awk 'NR > 2 { sub(":", "", $1); if ($1 != "lo") print $1 }' /proc/net/dev | tr '\n' ' ')
run default
if [ -z "$ADDRS" ]; then
    fl_fail "the ranks listen on no TCP socket at all (did UCX start?)"
    fl_show "$FL_WORK"/default.*
elif [ "$ADDRS" = "127.0.0.1 " ]; then
    fl_ok "with MASTER_ADDR=127.0.0.1 UCX listens only on 127.0.0.1"
else
    fl_fail "with MASTER_ADDR=127.0.0.1 UCX listens on: $ADDRS"
fi

if [ -z "$others" ]; then
    echo "note: no interface besides lo: the override is not checked"
else
    run all GPURMA_UCX_NET_DEVICES=all
    case $ADDRS in
        *[0-9]*" "*[0-9]*) fl_ok "GPURMA_UCX_NET_DEVICES=all: UCX listens on $ADDRS" ;;
        *) fl_fail "GPURMA_UCX_NET_DEVICES=all should open more than loopback: $ADDRS" ;;
    esac
fi
fl_finish
