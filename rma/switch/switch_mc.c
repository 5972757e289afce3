/*
 * switch_mc.c - the switch engine's hardware path: a CUDA multicast object
 * (NVLink SHARP) bound to the switch's range of every member's window.
 *
 * Reached only after gpurma_switch_refusal() allowed it (GPURMA_SWITCH=1,
 * and none of GPURMA_DISABLE_SWITCH, NCCL_NVLS_ENABLE=0,
 * NVSHMEM_DISABLE_NVLS), so no driver call happens unless the user opted
 * in. The driver is reached through gpu_driver.h's table: libgpurma never
 * links libcuda. Built with CUDA only (switch_mc_none.c otherwise).
 *
 * Setup, collective over the window's team:
 *   check   device window; CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED; the
 *           window memory must come from the VMM API (cuMemCreate): only
 *           such memory can be bound to a multicast object. Windows are
 *           cudaMalloc'd in this version, so this refuses today.
 *   create  team rank 0: cuMulticastCreate (size rounded to the
 *           granularity), exported as a POSIX file descriptor
 *   import  the others take the descriptor with pidfd_getfd (same node,
 *           ptrace permission as for CMA) and import it
 *   add     every member adds its GPU (all before any bind)
 *   bind    cuMulticastBindMem of the member's range; then the multicast
 *           object is mapped (cuMemAddressReserve, cuMemMap,
 *           cuMemSetAccess): that address is the kernels' dev.mc
 * Each phase ends with an exchange of statuses, so a failure anywhere
 * unwinds everywhere and every member returns the same status.
 *
 * NOT verified on hardware: it compiles, and its refusals are tested; it
 * has never run (the shared GPU machines must not use multicast).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "switch.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <cuda.h>
#include <cuda_runtime.h>

#include "gpu.h"
#include "gpu_driver.h"

struct gpurma_switch_mc {
    CUdevice                     dev;
    CUmemGenericAllocationHandle mem;    /* the window allocation, retained */
    CUmemGenericAllocationHandle mcobj;  /* the multicast object            */
    CUdeviceptr                  va;     /* its mapping                     */
    size_t                       size;   /* bound and mapped bytes          */
    size_t                       gran;
    size_t                       mem_off; /* the range in the allocation    */
    int                          have_mem, have_mc, added, bound, mapped;
    int                          fd;      /* exported or imported handle    */
};

/* The driver's entry points come from gpu_driver.h's table, resolved when
 * this path first needs them. */
#define RESOLVE(name) gpurma_driver_need(GPURMA_DRIVER_##name, "switch multicast")
static int drv_error(CUresult r, const char *what)
{
    return gpurma_set_error(GPURMA_ERR_GPU, "switch multicast: %s failed (CUresult %d)", what,
                            (int)r);
}

int gpurma_switch_mc_check(struct gpurma_switch_s *sw)
{
    struct gpurma_win_s *w = sw->win;
    if (!w->gpu)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch multicast: the window is in host memory (host "
                                "backend); multicast needs a window in GPU memory");
    int rc = RESOLVE(cuDeviceGet);
    if (!rc)
        rc = RESOLVE(cuDeviceGetAttribute);
    if (rc)
        return rc;
    CUdevice dev;
    CUresult r = gpurma_driver.cuDeviceGet(&dev, w->gpu->device);
    if (r != CUDA_SUCCESS)
        return drv_error(r, "cuDeviceGet");
    int mc = 0;
    r = gpurma_driver.cuDeviceGetAttribute(&mc, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev);
    if (r != CUDA_SUCCESS || !mc)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch multicast: GPU %d reports no multicast support "
                                "(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0)",
                                w->gpu->device);
    if ((rc = RESOLVE(cuMemRetainAllocationHandle)) || (rc = RESOLVE(cuMemRelease)) ||
        (rc = RESOLVE(cuMemGetAddressRange)))
        return rc;
    struct gpurma_switch_mc *m = calloc(1, sizeof(*m));
    if (!m)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "switch multicast: out of memory");
    m->dev = dev;
    m->fd = -1;
    sw->mc = m;
    char *at = w->peers[w->rank].base + sw->offset;
    /* Only VMM allocations have a generic allocation handle to bind. */
    r = gpurma_driver.cuMemRetainAllocationHandle(&m->mem, at);
    if (r != CUDA_SUCCESS)
        return gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                "switch multicast: the window's GPU memory is not VMM-backed "
                                "(it comes from cudaMalloc; binding to a multicast object needs "
                                "cuMemCreate memory, which windows do not use in this version)");
    m->have_mem = 1;
    CUdeviceptr base = 0;
    size_t len = 0;
    r = gpurma_driver.cuMemGetAddressRange(&base, &len, (CUdeviceptr)(uintptr_t)at);
    if (r != CUDA_SUCCESS)
        return drv_error(r, "cuMemGetAddressRange");
    m->mem_off = (size_t)((CUdeviceptr)(uintptr_t)at - base);
    return GPURMA_SUCCESS;
}

/* The first failure of any member (or the exchange's own), everywhere. */
static int agree(struct gpurma_switch_s *sw, int rc)
{
    struct gpurma_win_s *w = sw->win;
    int32_t mine = rc, *all = calloc((size_t)w->size, sizeof(*all));
    if (!all)
        return gpurma_set_error(GPURMA_ERR_NO_MEMORY, "switch multicast: out of memory");
    int xrc = w->team->sync->allgather(w->team, &mine, all, sizeof(mine));
    for (int i = 0; !xrc && i < w->size; i++)
        if (all[i] && !rc)
            rc = gpurma_set_error(all[i], "switch multicast: team rank %d failed its setup", i);
    free(all);
    return xrc ? xrc : rc;
}

typedef struct {
    int32_t rc, pid, fd, pad;
} mc_wire_t;

/* A descriptor of process pid, duplicated into this one. */
static int take_fd(pid_t pid, int fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return -1;
    int mine = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
    close(pfd);
    return mine;
#else
    (void)pid, (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

int gpurma_switch_mc_setup(struct gpurma_switch_s *sw)
{
    struct gpurma_win_s *w = sw->win;
    struct gpurma_switch_mc *m = sw->mc;
    int rc = GPURMA_SUCCESS;
    /* This path uses every entry of the table; they are looked up, not
     * called, until each phase below runs. */
    for (int c = 0; !rc && c < GPURMA_DRIVER_NUM_CALLS; c++)
        rc = gpurma_driver_need((gpurma_driver_call_t)c, "switch multicast");
    CUmulticastObjectProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.numDevices = (unsigned)w->size;
    prop.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop.size = sw->bytes;
    if (!rc && !m)
        rc = gpurma_set_error(GPURMA_ERR_INTERNAL, "switch multicast: checks did not run");
    CUresult r;
    if (!rc && (r = gpurma_driver.cuMulticastGetGranularity(&m->gran, &prop, CU_MULTICAST_GRANULARITY_MINIMUM)))
        rc = drv_error(r, "cuMulticastGetGranularity");
    if (!rc && (!sw->bytes || sw->bytes % m->gran || m->mem_off % m->gran))
        rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                              "switch multicast: the range (%zu bytes at %zu in its allocation) "
                              "is not aligned to the multicast granularity %zu",
                              sw->bytes, m->mem_off, m->gran);
    if (!rc)
        m->size = prop.size = sw->bytes;
    /* create and export (rank 0) */
    mc_wire_t mine = {0, (int32_t)getpid(), -1, 0};
    if (!rc && w->rank == 0) {
        if ((r = gpurma_driver.cuMulticastCreate(&m->mcobj, &prop)))
            rc = drv_error(r, "cuMulticastCreate");
        else
            m->have_mc = 1;
        if (!rc && (r = gpurma_driver.cuMemExportToShareableHandle(&m->fd, m->mcobj,
                                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)))
            rc = drv_error(r, "cuMemExportToShareableHandle");
        mine.fd = m->fd;
    }
    mine.rc = rc;
    mc_wire_t *all = calloc((size_t)w->size, sizeof(*all));
    int xrc = all ? w->team->sync->allgather(w->team, &mine, all, sizeof(mine))
                  : gpurma_set_error(GPURMA_ERR_NO_MEMORY, "switch multicast: out of memory");
    if (xrc) {
        free(all);
        return xrc;
    }
    for (int i = 0; i < w->size && !rc; i++)
        if (all[i].rc)
            rc = gpurma_set_error(all[i].rc, "switch multicast: team rank %d failed its setup", i);
    /* import (the others), then every member adds its GPU */
    if (!rc && w->rank != 0) {
        m->fd = take_fd(all[0].pid, all[0].fd);
        if (m->fd < 0)
            rc = gpurma_set_error(GPURMA_ERR_UNSUPPORTED,
                                  "switch multicast: cannot take team rank 0's handle "
                                  "(pidfd_getfd: %s)", strerror(errno));
        else if ((r = gpurma_driver.cuMemImportFromShareableHandle(&m->mcobj, (void *)(uintptr_t)m->fd,
                                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)))
            rc = drv_error(r, "cuMemImportFromShareableHandle");
        else
            m->have_mc = 1;
    }
    free(all);
    if (!rc && (r = gpurma_driver.cuMulticastAddDevice(m->mcobj, m->dev)))
        rc = drv_error(r, "cuMulticastAddDevice");
    else if (!rc)
        m->added = 1;
    rc = agree(sw, rc); /* every GPU added before anyone binds */
    if (!rc && (r = gpurma_driver.cuMulticastBindMem(m->mcobj, 0, m->mem, m->mem_off, m->size, 0)))
        rc = drv_error(r, "cuMulticastBindMem");
    else if (!rc)
        m->bound = 1;
    if (!rc && (r = gpurma_driver.cuMemAddressReserve(&m->va, m->size, m->gran, 0, 0)))
        rc = drv_error(r, "cuMemAddressReserve");
    if (!rc && (r = gpurma_driver.cuMemMap(m->va, m->size, 0, m->mcobj, 0))) {
        rc = drv_error(r, "cuMemMap");
    } else if (!rc) {
        m->mapped = 1;
        CUmemAccessDesc ad;
        memset(&ad, 0, sizeof(ad));
        ad.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        ad.location.id = (int)m->dev;
        ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if ((r = gpurma_driver.cuMemSetAccess(m->va, m->size, &ad, 1)))
            rc = drv_error(r, "cuMemSetAccess");
    }
    rc = agree(sw, rc);
    if (rc)
        return rc; /* the caller releases (gpurma_switch_mc_release) */
    sw->dev.mc = (char *)(uintptr_t)m->va;
    return GPURMA_SUCCESS;
}

void gpurma_switch_mc_release(struct gpurma_switch_s *sw)
{
    struct gpurma_switch_mc *m = sw->mc;
    if (!m)
        return;
    sw->dev.mc = NULL;
    if (m->mapped)
        gpurma_driver.cuMemUnmap(m->va, m->size);
    if (m->va)
        gpurma_driver.cuMemAddressFree(m->va, m->size);
    if (m->bound)
        gpurma_driver.cuMulticastUnbind(m->mcobj, m->dev, 0, m->size);
    if (m->have_mc)
        gpurma_driver.cuMemRelease(m->mcobj);
    if (m->have_mem)
        gpurma_driver.cuMemRelease(m->mem);
    if (m->fd >= 0)
        close(m->fd);
    free(m);
    sw->mc = NULL;
}
