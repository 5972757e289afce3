/*
 * shm.c - POSIX shared memory segments for host-backend windows.
 *
 * Names carry 128 random bits so that another user cannot guess and open a
 * segment in the short time before the owner unlinks it; segments are 0600
 * and created with O_EXCL. They start with the creator's pid, so that a
 * survivor can remove those of a rank killed before it unlinked them.
 * Space is reserved with posix_fallocate so that a full /dev/shm fails
 * here with a message instead of SIGBUS on first touch.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rma.h"

/* A rank maps the segments it creates (its own windows) at 2 MiB
 * boundaries, as the GPU's large allocations are: every rank's window then
 * starts at an address aligned alike, so that one offset is aligned on every rank up to that (the
 * NVSHMEM layer's nvshmem_align relies on it), and huge pages fit. */
#define SHM_MAP_ALIGN ((size_t)2 << 20)

static void *map_aligned(int fd, size_t len)
{
    size_t span = len + SHM_MAP_ALIGN;
    if (span < len)
        return MAP_FAILED;
    char *area = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED)
        return MAP_FAILED;
    char *at = (char *)(((uintptr_t)area + SHM_MAP_ALIGN - 1) & ~(uintptr_t)(SHM_MAP_ALIGN - 1));
    void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        munmap(area, span);
        return MAP_FAILED;
    }
    /* the reservation's slack before and after the mapping */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t end = (size_t)(at - area) + (len + page - 1) / page * page;
    if (at > area)
        munmap(area, (size_t)(at - area));
    if (end < span)
        munmap(area + end, span - end);
    return p;
}

static int random_name(char name[GPURMA_SHM_NAME_MAX])
{
    uint64_t r[2];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return gpurma_set_error(GPURMA_ERR_INTERNAL, "getrandom failed: %s", strerror(errno));
    snprintf(name, GPURMA_SHM_NAME_MAX, "/gpurma-%d-%016llx%016llx", (int)getpid(),
             (unsigned long long)r[0], (unsigned long long)r[1]);
    return GPURMA_SUCCESS;
}

int gpurma_shm_create(size_t len, char name[GPURMA_SHM_NAME_MAX], void **addr)
{
    int rc = random_name(name);
    if (rc)
        return rc;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "shm_open(%s): %s", name, strerror(errno));
    int err = posix_fallocate(fd, 0, (off_t)len);
    if (err) {
        close(fd);
        shm_unlink(name);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY,
                                "cannot reserve %zu bytes of shared memory in /dev/shm: %s", len,
                                strerror(err));
    }
    void *p = map_aligned(fd, len);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "mmap of %zu bytes: %s", len,
                                strerror(errno));
    }
    *addr = p;
    return GPURMA_SUCCESS;
}

int gpurma_shm_attach(const char *name, size_t len, void **addr)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return gpurma_set_error(GPURMA_ERR_TRANSPORT, "cannot open a peer's segment %s: %s", name,
                                strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || (size_t)st.st_size < len) {
        close(fd);
        return gpurma_set_error(GPURMA_ERR_TRANSPORT, "peer segment %s is smaller than %zu bytes",
                                name, len);
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "mmap of peer segment %s: %s", name,
                                strerror(errno));
    *addr = p;
    return GPURMA_SUCCESS;
}

void gpurma_shm_unlink(const char *name) { shm_unlink(name); }

void gpurma_shm_remove_of(pid_t pid)
{
    char prefix[32];
    int plen = snprintf(prefix, sizeof(prefix), "gpurma-%d-", (int)pid);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, (size_t)plen)) {
            char name[sizeof(e->d_name) + 1];
            snprintf(name, sizeof(name), "/%s", e->d_name);
            shm_unlink(name);
            GPURMA_INFO(GPURMA_SUB_MEM, "removed %s, left by a dead rank", name);
        }
    closedir(d);
}

void gpurma_shm_detach(void *addr, size_t len)
{
    if (addr)
        munmap(addr, len);
}
