/*
 * uid_init.c - NVSHMEM's unique-id initialization without a launcher:
 * rank 0 makes the id with nvshmemx_get_uniqueid and hands it to the
 * others through a file (where a program would use MPI_Bcast or its own
 * channel); every process then calls nvshmemx_set_attr_uniqueid_args and
 * nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID) and runs a ring shift
 * with nvshmem_p. Started by uid.sh with NVT_RANK, NVT_NRANKS, NVT_UID_FILE.
 */
#include <time.h>
#include <unistd.h>

#include "nvtest.h"

static int env_int(const char *name)
{
    const char *v = getenv(name);
    if (!v) {
        fprintf(stderr, "FAIL uid_init: %s is not set\n", name);
        exit(1);
    }
    return atoi(v);
}

int main(void)
{
    nv_name = "uid_init";
    int rank = env_int("NVT_RANK"), nranks = env_int("NVT_NRANKS");
    const char *file = getenv("NVT_UID_FILE");
    if (!file)
        return 1;
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", file);
        if (nvshmemx_get_uniqueid(&id) != NVSHMEMX_SUCCESS) {
            fprintf(stderr, "FAIL uid_init: nvshmemx_get_uniqueid\n");
            return 1;
        }
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) || rename(tmp, file)) {
            fprintf(stderr, "FAIL uid_init: writing %s\n", file);
            return 1;
        }
    } else {
        FILE *f = NULL;
        for (int tries = 0; !f && tries < 3000; tries++) { /* 30 s */
            f = fopen(file, "rb");
            if (!f)
                usleep(10000);
        }
        if (!f || fread(&id, sizeof id, 1, f) != 1) {
            fprintf(stderr, "FAIL uid_init: rank %d could not read %s\n", rank, file);
            return 1;
        }
        fclose(f);
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    setenv("NVSHMEM_SYMMETRIC_SIZE", "8M", 0);
    if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr) != NVSHMEMX_SUCCESS ||
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != NVSHMEMX_SUCCESS) {
        fprintf(stderr, "FAIL uid_init: rank %d: init with the unique id\n", rank);
        return 1;
    }
    NV_ASSERT(nvshmemx_init_status() == NVSHMEM_STATUS_IS_INITIALIZED, "init status");
    int me = nvshmem_my_pe(), npes = nvshmem_n_pes();
    NV_ASSERT(me == rank && npes == nranks, "PE %d of %d, launched as %d of %d", me, npes, rank,
              nranks);
    long *slot = (long *)nvshmem_malloc(sizeof(long));
    long mine = (long)(nv_seed(21, me, 0) & 0x7fffffff);
    *slot = -1;
    nvshmem_barrier_all();
    nvshmem_long_p(slot, mine, (me + 1) % npes);
    nvshmem_barrier_all();
    long want = (long)(nv_seed(21, (me + npes - 1) % npes, 0) & 0x7fffffff);
    NV_ASSERT(*slot == want, "ring shift got %ld, want %ld", *slot, want);
    nvshmem_free(slot);
    nv_finish();
    return 0;
}
