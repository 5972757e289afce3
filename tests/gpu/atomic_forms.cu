/*
 * atomic_forms.cu - which instruction a loop of 64-bit adds whose results
 * are dropped becomes, and what each form costs, from one thread into a
 * word on the peer GPU (GPU 1 when there are two, else this GPU's own
 * memory). Issue 17's fetch_add pattern (NVSHMEM's shmem_atomic_latency)
 * is such a loop: NVSHMEM takes 0.09 us an add on 2x H100/H200, gpurma's
 * native and layer paths 0.17-1.0 us (2026-11-26). The forms:
 *
 *   builtin             atomicAdd_system on a kernel-argument pointer
 *   builtin+fence.sc    the same, with fence.sc.sys after the loop (as a
 *                       quiet ends the perftest's kernel)
 *   builtin+acq_rel     the same, with fence.acq_rel.sys after the loop
 *   generic+fence.sc    the pointer loaded from memory (a window's peer
 *                       table), with fence.sc.sys after the loop
 *   red asm+fence.sc    red.relaxed.sys.global, fence.sc.sys after
 *   fetch used          each result summed (the reply awaited): the
 *                       round-trip reference
 *
 * Each loop has a rarely taken branch to an out-of-line call, as the
 * library's paths do (the FIFO path). Every row checks that the word
 * holds exactly the number of adds; the exit status is 1 when one does
 * not. cuobjdump -sass on this program shows the instruction of each.
 *
 *   atomic_forms [--adds N]     (default 20000)
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

typedef unsigned long long U;

#define CK(x)                                                                                 \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "atomic_forms: %s: %s\n", #x, cudaGetErrorString(e_));            \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

struct Target {
    U *word;  /* where the adds go */
    int fast; /* 1: the path the loop takes */
    U *other; /* the out-of-line path's word */
};

__device__ __noinline__ int af_other_path(U *other, U *prev)
{
    *prev = atomicAdd(other, 1ull);
    return 0;
}

__device__ __forceinline__ U af_red(U *p)
{
    asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(1ull) : "memory");
    return 0;
}

#define AF_LOOP(ADD)                                                                          \
    int rc = 0;                                                                               \
    U dropped = 0;                                                                            \
    for (unsigned i = 0; i < n && !rc; i++) {                                                 \
        if (t.fast)                                                                           \
            dropped = ADD;                                                                    \
        else                                                                                  \
            rc = af_other_path(t.other, &dropped);                                            \
    }                                                                                         \
    (void)dropped

__global__ void k_builtin(Target t, unsigned n, int *rcout)
{
    AF_LOOP(atomicAdd_system(t.word, 1ull));
    *rcout = rc;
}
__global__ void k_builtin_sc(Target t, unsigned n, int *rcout)
{
    AF_LOOP(atomicAdd_system(t.word, 1ull));
    asm volatile("fence.sc.sys;" ::: "memory");
    *rcout = rc;
}
__global__ void k_builtin_acqrel(Target t, unsigned n, int *rcout)
{
    AF_LOOP(atomicAdd_system(t.word, 1ull));
    asm volatile("fence.acq_rel.sys;" ::: "memory");
    *rcout = rc;
}
__global__ void k_generic_sc(const Target *tp, unsigned n, int *rcout)
{
    const Target t = *tp;
    AF_LOOP(atomicAdd_system(t.word, 1ull));
    asm volatile("fence.sc.sys;" ::: "memory");
    *rcout = rc;
}
__global__ void k_red_sc(Target t, unsigned n, int *rcout)
{
    AF_LOOP(af_red(t.word));
    asm volatile("fence.sc.sys;" ::: "memory");
    *rcout = rc;
}
__global__ void k_fetch_used(Target t, unsigned n, int *rcout)
{
    U sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += atomicAdd_system(t.word, 1ull);
    *rcout = sum == (U)n * (n - 1) / 2 ? 0 : 1;
}

int main(int argc, char **argv)
{
    unsigned adds = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--adds") && i + 1 < argc) {
            adds = (unsigned)strtoul(argv[++i], NULL, 0);
        } else {
            printf("usage: atomic_forms [--adds N]\n"
                   "  N back-to-back 64-bit adds from one thread into the peer GPU's word,\n"
                   "  in each instruction form; us per add and an exact check per row\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    if (adds < 2) {
        fprintf(stderr, "atomic_forms: --adds must be at least 2\n");
        return 2;
    }
    int ngpu = 0;
    if (cudaGetDeviceCount(&ngpu) != cudaSuccess || ngpu < 1) {
        printf("atomic_forms: no GPU, skipped\n");
        return 77;
    }
    const int peer = ngpu > 1 ? 1 : 0;
    U *word, *other;
    int *rc;
    Target *tp;
    CK(cudaSetDevice(peer));
    CK(cudaMalloc(&word, sizeof(U)));
    CK(cudaSetDevice(0));
    if (peer) {
        int can = 0;
        CK(cudaDeviceCanAccessPeer(&can, 0, peer));
        if (!can) {
            printf("atomic_forms: GPU 0 cannot reach GPU %d, skipped\n", peer);
            return 77;
        }
        CK(cudaDeviceEnablePeerAccess(peer, 0));
    }
    CK(cudaMalloc(&other, sizeof(U)));
    CK(cudaMalloc(&rc, sizeof(int)));
    CK(cudaMalloc(&tp, sizeof(Target)));
    const Target t = {word, 1, other};
    CK(cudaMemcpy(tp, &t, sizeof t, cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    static const char *const names[] = {"builtin",          "builtin+fence.sc", "builtin+acq_rel",
                                        "generic+fence.sc", "red asm+fence.sc", "fetch used"};
    const int forms = (int)(sizeof(names) / sizeof(names[0]));
    printf("# atomic_forms: %u adds from one thread of GPU 0 into GPU %d's memory\n", adds, peer);
    printf("%-20s %12s  %s\n", "form", "us per add", "check");
    int failed = 0;
    for (int f = 0; f < forms; f++) {
        float ms = 0;
        for (int rep = 0; rep < 2; rep++) { /* the first run loads the kernel */
            CK(cudaMemset(word, 0, sizeof(U)));
            CK(cudaMemset(rc, 0xff, sizeof(int)));
            CK(cudaDeviceSynchronize());
            CK(cudaEventRecord(a));
            switch (f) {
            case 0: k_builtin<<<1, 1>>>(t, adds, rc); break;
            case 1: k_builtin_sc<<<1, 1>>>(t, adds, rc); break;
            case 2: k_builtin_acqrel<<<1, 1>>>(t, adds, rc); break;
            case 3: k_generic_sc<<<1, 1>>>(tp, adds, rc); break;
            case 4: k_red_sc<<<1, 1>>>(t, adds, rc); break;
            default: k_fetch_used<<<1, 1>>>(t, adds, rc); break;
            }
            CK(cudaGetLastError());
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            CK(cudaEventElapsedTime(&ms, a, b));
        }
        U got = 0;
        int krc = -1;
        CK(cudaMemcpy(&got, word, sizeof got, cudaMemcpyDefault));
        CK(cudaMemcpy(&krc, rc, sizeof krc, cudaMemcpyDeviceToHost));
        const int ok = got == (U)adds && krc == 0;
        failed |= !ok;
        printf("%-20s %12.4f  %s (word %llu of %u)\n", names[f], ms * 1e3 / adds,
               ok ? "ok" : "WRONG", got, adds);
    }
    return failed;
}
