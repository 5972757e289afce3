/*
 * test_graphreg_decide.c - graph registration's decision (coll/
 * graphreg_wire.h: gr_decide), which every member of a team draws from
 * the same wires and which must therefore depend on nothing else: zero-copy
 * only when every member can, each needed side fitting its buffer on
 * every member, a reduce's optional recv dropped (not the call) where one
 * member lacks it, any member that stays (in place) keeping everyone on
 * the scratch path, and sizes and offsets near SIZE_MAX refused rather
 * than wrapped. Team sizes 1 to 32, the bad member at every position.
 * Plain C, no GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphreg_wire.h"

static int failures, checks;

#define EXPECT(cond, ...)                                                    \
    do {                                                                     \
        checks++;                                                            \
        if (!(cond)) {                                                       \
            if (failures++ < 20) {                                           \
                fprintf(stderr, "test_graphreg_decide: " __VA_ARGS__);       \
                fputc('\n', stderr);                                         \
            }                                                                \
        }                                                                    \
    } while (0)

#define MAXN 32

/* Every member's sides: a 1 MiB allocation each, the buffer at a member-
 * dependent offset, room for `need` bytes after it. */
static void good(gr_wire_t *w, int n, size_t need)
{
    memset(w, 0, sizeof(*w) * (size_t)n);
    for (int p = 0; p < n; p++)
        for (int k = 0; k < 2; k++) {
            w[p].alloc[k].len = need + 4096 + (uint64_t)p * 512;
            w[p].alloc[k].id = 1000 + (uint64_t)p * 2 + (uint64_t)k;
            w[p].off[k] = (uint64_t)p * 512 + (uint64_t)k * 64;
            w[p].ok[k] = 1;
        }
}

static void one(int n, int bad, const char *what, void (*spoil)(gr_wire_t *, size_t),
                size_t sbytes, size_t rbytes, int ropt, int want_go, int want_s, int want_r)
{
    const size_t need = 1 << 20;
    gr_wire_t w[MAXN];
    good(w, n, need);
    if (spoil)
        spoil(&w[bad], need);
    int s = -1, r = -1;
    int go = gr_decide(w, n, sbytes, rbytes, ropt, &s, &r);
    EXPECT(go == want_go && s == want_s && r == want_r,
           "%s, %d members, member %d: go %d send %d recv %d, want %d %d %d", what, n, bad, go, s,
           r, want_go, want_s, want_r);
}

static void stays(gr_wire_t *w, size_t need) { (void)need, w->stay = 1; }
static void no_send(gr_wire_t *w, size_t need) { (void)need, w->ok[0] = 0; }
static void no_recv(gr_wire_t *w, size_t need) { (void)need, w->ok[1] = 0; }
/* the send one byte too short for the call */
static void short_send(gr_wire_t *w, size_t need) { w->off[0] = w->alloc[0].len - need + 1; }
/* an offset past the allocation's end, and one near SIZE_MAX */
static void off_past(gr_wire_t *w, size_t need) { (void)need, w->off[1] = w->alloc[1].len + 1; }
static void off_huge(gr_wire_t *w, size_t need) { (void)need, w->off[0] = UINT64_MAX - 7; }
/* an allocation that claims the whole address space, the buffer 8 bytes
 * before its end: offset + need wraps to a small number, which a check
 * written as off + need <= len would let through */
static void len_wraps(gr_wire_t *w, size_t need)
{
    (void)need;
    w->alloc[1].len = UINT64_MAX;
    w->off[1] = UINT64_MAX - 7;
}

int main(void)
{
    const size_t mib = 1 << 20;
    for (int n = 1; n <= MAXN; n++) {
        /* everything fits: both sides used, whichever are needed */
        one(n, 0, "all fit, both sides", NULL, mib, mib, 0, 1, 1, 1);
        one(n, 0, "all fit, recv only (allgather)", NULL, 0, mib, 0, 1, 0, 1);
        one(n, 0, "all fit, send only (reduce-scatter)", NULL, mib, 0, 0, 1, 1, 0);
        one(n, 0, "all fit, reduce", NULL, mib, mib, 1, 1, 1, 1);
        one(n, 0, "exactly the allocation's end", NULL, mib + 4096, 0, 0, 1, 1, 0);
        for (int bad = 0; bad < n; bad++) {
            one(n, bad, "one member stays", stays, mib, mib, 0, 0, 0, 0);
            one(n, bad, "one member stays, reduce", stays, mib, mib, 1, 0, 0, 0);
            one(n, bad, "one send unshareable", no_send, mib, mib, 0, 0, 0, 0);
            one(n, bad, "one send unshareable, not needed", no_send, 0, mib, 0, 1, 0, 1);
            one(n, bad, "one recv unshareable", no_recv, mib, mib, 0, 0, 0, 0);
            one(n, bad, "one recv unshareable, reduce", no_recv, mib, mib, 1, 1, 1, 0);
            one(n, bad, "one send too short", short_send, mib, mib, 0, 0, 0, 0);
            one(n, bad, "one recv offset past the end", off_past, mib, mib, 0, 0, 0, 0);
            one(n, bad, "one recv offset past the end, reduce", off_past, mib, mib, 1, 1, 1, 0);
            one(n, bad, "one send offset near SIZE_MAX", off_huge, mib, mib, 0, 0, 0, 0);
            one(n, bad, "one recv that would wrap", len_wraps, mib, mib, 0, 0, 0, 0);
            one(n, bad, "a call of SIZE_MAX bytes", NULL, SIZE_MAX, 0, 0, 0, 0, 0);
        }
    }
    printf("%s test_graphreg_decide: %d checks, %d failed\n", failures ? "FAIL" : "PASS", checks,
           failures);
    return failures ? 1 : 0;
}
