/*
 * gpu_none.c - the GPU shim of a build without a GPU runtime (the build
 * selects it instead of gpu_cuda.c): no GPU is seen, so the host backend
 * runs, and anything that would need one reports GPURMA_ERR_UNSUPPORTED
 * (callers never get that far).
 */
#include "gpu.h"
#include "gpurma_internal.h"

int gpurma_gpu_count(void) { return 0; }
int gpurma_gpu_is_device_ptr(const void *p)
{
    (void)p;
    return 0;
}

static int no_gpu(void)
{
    return gpurma_set_error(GPURMA_ERR_UNSUPPORTED, "this libgpurma was built without CUDA");
}

int gpurma_gpu_use(int device)
{
    (void)device;
    return no_gpu();
}
int gpurma_gpu_win_open(int device, void *user_data, size_t size, uint32_t nsig, uint32_t ncnt,
                        int nranks, gpurma_gpu_win_t **out, gpurma_gpu_export_t *exp)
{
    (void)device, (void)user_data, (void)size, (void)nsig, (void)ncnt, (void)nranks, (void)exp;
    *out = NULL;
    return no_gpu();
}
int gpurma_gpu_win_map(gpurma_gpu_win_t *g, const gpurma_gpu_export_t *exp, int self,
                       char **data, gpurma_dev_signal_slot_t **signals)
{
    (void)g, (void)exp, (void)self, (void)data, (void)signals;
    return no_gpu();
}
int gpurma_gpu_win_publish(gpurma_gpu_win_t *g, const gpurma_dev_peer_t *peers, int n)
{
    (void)g, (void)peers, (void)n;
    return no_gpu();
}
void gpurma_gpu_win_close(gpurma_gpu_win_t *g) { (void)g; }
int gpurma_gpu_alloc_export(int device, const void *p, gpurma_gpu_alloc_t *out)
{
    (void)device, (void)p, (void)out;
    return no_gpu();
}
int gpurma_gpu_alloc_import(int device, const gpurma_gpu_alloc_t *a, char **base)
{
    (void)device, (void)a, (void)base;
    return no_gpu();
}
void gpurma_gpu_alloc_close(int device, const gpurma_gpu_alloc_t *a, char *base)
{
    (void)device, (void)a, (void)base;
}
int gpurma_gpu_capture_graph(void *stream, void **graph)
{
    (void)stream;
    *graph = NULL;
    return 0;
}
int gpurma_gpu_graph_on_destroy(void *graph, void (*release)(void *), void *arg)
{
    (void)graph;
    release(arg);
    return no_gpu();
}
int gpurma_gpu_copy(int device, void *dst, const void *src, size_t n)
{
    (void)device, (void)dst, (void)src, (void)n;
    return no_gpu();
}
int gpurma_gpu_signal(int device, gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                      uint64_t value)
{
    (void)device, (void)slot, (void)origin, (void)op, (void)value;
    return no_gpu();
}
int gpurma_gpu_atomic(int device, uint64_t *p, int kind, uint64_t value, uint64_t compare,
                      uint64_t *old)
{
    (void)device, (void)p, (void)kind, (void)value, (void)compare, (void)old;
    return no_gpu();
}
int gpurma_gpu_load_u64(int device, const uint64_t *p, uint64_t *value)
{
    (void)device, (void)p, (void)value;
    return no_gpu();
}
int gpurma_gpu_store_u64(int device, uint64_t *p, uint64_t value)
{
    (void)device, (void)p, (void)value;
    return no_gpu();
}
int gpurma_gpu_stream_begin(int device, void *stream)
{
    (void)device, (void)stream;
    return no_gpu();
}
int gpurma_gpu_stream_copy(void *stream, void *dst, const void *src, size_t n)
{
    (void)stream, (void)dst, (void)src, (void)n;
    return no_gpu();
}
int gpurma_gpu_stream_copy_2d(int device, void *stream, void *dst, size_t dpitch,
                              const void *src, size_t spitch, size_t width, size_t height,
                              int user_is_dst)
{
    (void)device, (void)stream, (void)dst, (void)dpitch, (void)src, (void)spitch, (void)width;
    (void)height, (void)user_is_dst;
    return no_gpu();
}
int gpurma_gpu_stream_put_signal(int device, void *stream, char *dst, const void *src, size_t n,
                                 gpurma_dev_signal_slot_t *slot, uint32_t origin, int op,
                                 uint64_t value)
{
    (void)device, (void)stream, (void)dst, (void)src, (void)n, (void)slot, (void)origin;
    (void)op, (void)value;
    return no_gpu();
}
int gpurma_gpu_stream_signal(void *stream, gpurma_dev_signal_slot_t *slot, uint32_t origin,
                             int op, uint64_t value)
{
    (void)stream, (void)slot, (void)origin, (void)op, (void)value;
    return no_gpu();
}
int gpurma_gpu_stream_put_value(void *stream, char *dst, uint64_t value, size_t bytes)
{
    (void)stream, (void)dst, (void)value, (void)bytes;
    return no_gpu();
}
int gpurma_gpu_stream_wait(void *stream, const gpurma_dev_win_t *w, uint32_t sig, int cmp,
                           uint64_t value)
{
    (void)stream, (void)w, (void)sig, (void)cmp, (void)value;
    return no_gpu();
}
int gpurma_gpu_stream_store_u64(void *stream, uint64_t *p, uint64_t value)
{
    (void)stream, (void)p, (void)value;
    return no_gpu();
}
int gpurma_gpu_stream_fence(void *stream)
{
    (void)stream;
    return no_gpu();
}
int gpurma_gpu_stream_barrier(void *stream, const gpurma_dev_win_t *w)
{
    (void)stream, (void)w;
    return no_gpu();
}
void gpurma_gpu_capture_relax(int *saved) { *saved = 0; }
void gpurma_gpu_capture_restore(int saved) { (void)saved; }


/* ------------------------------------------------ for the port engine */

void *gpurma_gpu_host_alloc(size_t len)
{
    (void)len;
    return NULL;
}
void gpurma_gpu_host_free(void *p) { (void)p; }
uint64_t *gpurma_gpu_alloc_u64(void) { return NULL; }
void gpurma_gpu_free(void *p) { (void)p; }
int gpurma_gpu_stream_create(int device, void **stream)
{
    (void)device, (void)stream;
    return no_gpu();
}
void gpurma_gpu_stream_destroy(void *stream) { (void)stream; }
int gpurma_gpu_stream_sync(void *stream)
{
    (void)stream;
    return no_gpu();
}
int gpurma_gpu_stream_copy_peer(void *stream, void *dst, const void *src, size_t n)
{
    (void)stream, (void)dst, (void)src, (void)n;
    return no_gpu();
}
int gpurma_gpu_pci_bus_id(int device, char *buf, size_t len)
{
    (void)device, (void)buf, (void)len;
    return -1;
}

int gpurma_gpu_stream_copy_3d(void *stream, void *dst, const size_t dst_pitch[2], const void *src,
                              const size_t src_pitch[2], size_t width, size_t height,
                              size_t depth)
{
    (void)stream, (void)dst, (void)dst_pitch, (void)src, (void)src_pitch, (void)width,
        (void)height, (void)depth;
    return no_gpu();
}
