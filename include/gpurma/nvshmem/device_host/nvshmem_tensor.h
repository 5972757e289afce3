/*
 * device_host/nvshmem_tensor.h - NVSHMEM's tile API for CUDA C++: tensors
 * (a pointer and a rank-2 layout of shape and stride, each extent an int
 * or a compile-time ConstInt) and the tile collectives on them
 * (nvshmemx::tile_sum_allreduce, tile_allgather, at thread, warp,
 * warpgroup and block scope, and tile_collective_wait).
 *
 * NVSHMEM runs these on NVLink SHARP (its algorithms are all NVLS_*);
 * here every algorithm is the layer's load/store one: the group meets its
 * team, reads each member's tile (nvshmem_ptr, or a get where the member is
 * not mapped), writes its own dst, and meets the team again, so a call is
 * complete on return and tile_collective_wait only joins the group.
 * Members sum in team order, so every member gets the same bits. Whole
 * tiles only: start_coord and boundary must be empty types (a program
 * that passes real ones fails to compile, saying so).
 */
#ifndef GPURMA_NVSHMEM_DEVICE_HOST_NVSHMEM_TENSOR_H
#define GPURMA_NVSHMEM_DEVICE_HOST_NVSHMEM_TENSOR_H

#include "nvshmem.h"

#if !defined(__cplusplus) || !GPURMA_NVSHMEMI_CUDA
#error "nvshmem_tensor.h: NVSHMEM's tile API is CUDA C++ (compile with nvcc)"
#endif

#include <tuple>
#include <type_traits>

/* An extent known at compile time; converts to int where one is needed. */
template <int N> struct ConstInt {
    static constexpr int value = N;
    __host__ __device__ constexpr operator int() const { return N; }
};

namespace nvshmemx {

enum class tile_coll_algo_t { NVLS_ONE_SHOT_PUSH_NBI, NVLS_TWO_SHOT_PUSH_NBI };

/* A pair of extents (shape) or of element strides. */
template <typename A, typename B> struct Tuple {
    A v0;
    B v1;
};
template <typename A, typename B>
__host__ __device__ constexpr Tuple<A, B> make_shape(A a, B b) { return Tuple<A, B>{a, b}; }
template <typename A, typename B>
__host__ __device__ constexpr Tuple<A, B> make_stride(A a, B b) { return Tuple<A, B>{a, b}; }

/* get<I>(t), found by argument-dependent lookup beside std::get (which
 * <tuple> declares, so that get<0>(shape) parses as a template call). */
template <int I> struct TupleElement;
template <> struct TupleElement<0> {
    template <typename A, typename B>
    __host__ __device__ static constexpr A of(const Tuple<A, B> &t) { return t.v0; }
};
template <> struct TupleElement<1> {
    template <typename A, typename B>
    __host__ __device__ static constexpr B of(const Tuple<A, B> &t) { return t.v1; }
};
template <int I, typename A, typename B>
__host__ __device__ constexpr auto get(const Tuple<A, B> &t) -> decltype(TupleElement<I>::of(t))
{
    return TupleElement<I>::of(t);
}

template <typename Shape, typename Stride> struct Layout {
    typedef Shape  shape_type;
    typedef Stride stride_type;
    Shape  shape_;
    Stride stride_;
    __host__ __device__ constexpr Shape shape() const { return shape_; }
    __host__ __device__ constexpr Stride stride() const { return stride_; }
    __host__ __device__ constexpr int size() const { return (int)shape_.v0 * (int)shape_.v1; }
};
template <typename Shape, typename Stride>
__host__ __device__ constexpr Layout<Shape, Stride> make_layout(Shape s, Stride d)
{
    return Layout<Shape, Stride>{s, d};
}

template <typename T, typename L> class Tensor {
  public:
    typedef T value_type;
    typedef L layout_type;
    __host__ __device__ Tensor(T *data, L layout) : data_(data), layout_(layout) {}
    __host__ __device__ T *data() const { return data_; }
    __host__ __device__ L layout() const { return layout_; }
    __host__ __device__ typename L::shape_type shape() const { return layout_.shape(); }
    __host__ __device__ typename L::stride_type stride() const { return layout_.stride(); }
    __host__ __device__ int size() const { return layout_.size(); }
    /* Element offset of coordinate (i, j). */
    __host__ __device__ long offset(int i, int j) const
    {
        return (long)i * (long)(int)layout_.stride_.v0 + (long)j * (long)(int)layout_.stride_.v1;
    }

  private:
    T *data_;
    L  layout_;
};

} // namespace nvshmemx

/* ------------------------------------------------------------ the collectives */

enum { GPURMA_NVSHMEMI_WARPGROUP = 3 };

/* This thread's place in its group, and the group's size. */
__device__ __forceinline__ void gpurma_nvshmemi_tile_group(int scope, unsigned *tid, unsigned *n)
{
    unsigned t = gpurma_sh_block_tid();
    *tid = scope == GPURMA_NVSHMEMI_THREAD      ? 0u
           : scope == GPURMA_NVSHMEMI_WARP      ? t % 32u
           : scope == GPURMA_NVSHMEMI_WARPGROUP ? t % 128u
                                                : t;
    *n = scope == GPURMA_NVSHMEMI_THREAD      ? 1u
         : scope == GPURMA_NVSHMEMI_WARP      ? 32u
         : scope == GPURMA_NVSHMEMI_WARPGROUP ? 128u
                                              : gpurma_sh_block_threads();
}

/* The group meets; a warpgroup (four aligned warps) on a named barrier of
 * its own, since the rest of the block may not be calling. */
__device__ __forceinline__ void gpurma_nvshmemi_tile_group_sync(int scope)
{
    if (scope == GPURMA_NVSHMEMI_WARPGROUP)
        asm volatile("bar.sync %0, 128;" ::"r"(1u + gpurma_sh_block_tid() / 128u) : "memory");
    else if (scope != GPURMA_NVSHMEMI_THREAD)
        gpurma_nvshmemi__group_sync(scope);
}

/* The group meets the team: every member's src is ready (or, after, read). */
__device__ __forceinline__ void gpurma_nvshmemi_tile_team_sync(const char *call,
                                                               nvshmem_team_t team, int scope)
{
    unsigned tid, n;
    gpurma_nvshmemi_tile_group(scope, &tid, &n);
    gpurma_nvshmemi_tile_group_sync(scope);
    if (tid == 0)
        gpurma_nvshmemi__team_sync(call, team, 0);
    gpurma_nvshmemi_tile_group_sync(scope);
}

/* The unit's copy of a team this PE is in, or the call fails. */
__device__ __forceinline__ gpurma_nvshmemi_team_t gpurma_nvshmemi_tile_team(const char *call,
                                                                             nvshmem_team_t team)
{
    gpurma_nvshmemi__devpath(call);
    if (team < 0 || team >= GPURMA_NVSHMEMI_MAX_TEAMS || gpurma_nvshmemi_st.teams[team].size <= 0 ||
        gpurma_nvshmemi_st.teams[team].my_pe < 0 ||
        (gpurma_nvshmemi_st.teams[team].size > 1 && gpurma_nvshmemi_st.teams[team].stride <= 0))
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              "invalid team, this PE is not in it, or its PEs are not strided");
    return gpurma_nvshmemi_st.teams[team];
}

/* Member pe's element at local address at. */
template <typename T>
__device__ __forceinline__ T gpurma_nvshmemi_tile_load(const char *call, const T *at, int pe)
{
    const T *p = (const T *)gpurma_nvshmemi__ptr(at, pe);
    if (p)
        return *(const volatile T *)p;
    T v;
    gpurma_nvshmemi__get(call, &v, at, sizeof(T), pe, 0);
    return v;
}

template <typename T> __device__ __forceinline__ T gpurma_nvshmemi_tile_add(T a, T b)
{
    return a + b;
}
template <> __device__ __forceinline__ half gpurma_nvshmemi_tile_add(half a, half b)
{
    return __float2half(__half2float(a) + __half2float(b));
}
template <>
__device__ __forceinline__ __nv_bfloat16 gpurma_nvshmemi_tile_add(__nv_bfloat16 a, __nv_bfloat16 b)
{
    return __float2bfloat16(__bfloat162float(a) + __bfloat162float(b));
}

template <typename src_t, typename dst_t, typename tuple_t>
__device__ int gpurma_nvshmemi_tile_allreduce(const char *call, nvshmem_team_t team, src_t src,
                                              dst_t dst, int scope)
{
    static_assert(std::is_empty<tuple_t>::value,
                  "gpurma's tile collectives take whole tiles: start_coord and boundary must be "
                  "empty");
    typedef typename src_t::value_type T;
    gpurma_nvshmemi_team_t t = gpurma_nvshmemi_tile_team(call, team);
    int rows = (int)src.shape().v0, cols = (int)src.shape().v1;
    if (rows != (int)dst.shape().v0 || cols != (int)dst.shape().v1)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG, "src and dst tiles differ in shape");
    unsigned tid, n;
    gpurma_nvshmemi_tile_group(scope, &tid, &n);
    gpurma_nvshmemi_tile_team_sync(call, team, scope);
    for (long e = tid; e < (long)rows * cols; e += n) {
        int i = (int)(e % rows), j = (int)(e / rows);
        const T *at = src.data() + src.offset(i, j);
        T acc = gpurma_nvshmemi_tile_load(call, at, t.start);
        for (int m = 1; m < t.size; m++)
            acc = gpurma_nvshmemi_tile_add(acc, gpurma_nvshmemi_tile_load(call, at,
                                                                          t.start + m * t.stride));
        dst.data()[dst.offset(i, j)] = acc;
    }
    gpurma_nvshmemi_tile_team_sync(call, team, scope);
    return 0;
}

/* Member m's tile goes to block m of dst along the dimension dst is team
 * size times longer in (columns when both are). */
template <typename src_t, typename dst_t, typename tuple_t>
__device__ int gpurma_nvshmemi_tile_allgather(const char *call, nvshmem_team_t team, src_t src,
                                              dst_t dst, int scope)
{
    static_assert(std::is_empty<tuple_t>::value,
                  "gpurma's tile collectives take whole tiles: start_coord and boundary must be "
                  "empty");
    typedef typename src_t::value_type T;
    gpurma_nvshmemi_team_t t = gpurma_nvshmemi_tile_team(call, team);
    int rows = (int)src.shape().v0, cols = (int)src.shape().v1;
    int by_cols = (int)dst.shape().v0 == rows && (long)(int)dst.shape().v1 == (long)cols * t.size;
    int by_rows = (long)(int)dst.shape().v0 == (long)rows * t.size && (int)dst.shape().v1 == cols;
    if (!by_cols && !by_rows)
        gpurma_nvshmemi__fail(call, GPURMA_ERR_INVALID_ARG,
                              "dst is not the team's src tiles side by side");
    unsigned tid, n;
    gpurma_nvshmemi_tile_group(scope, &tid, &n);
    gpurma_nvshmemi_tile_team_sync(call, team, scope);
    long per = (long)rows * cols;
    for (long e = tid; e < per * t.size; e += n) {
        int m = (int)(e / per), i = (int)(e % per % rows), j = (int)(e % per / rows);
        T v = gpurma_nvshmemi_tile_load(call, src.data() + src.offset(i, j),
                                        t.start + m * t.stride);
        dst.data()[by_cols ? dst.offset(i, j + m * cols) : dst.offset(i + m * rows, j)] = v;
    }
    gpurma_nvshmemi_tile_team_sync(call, team, scope);
    return 0;
}

namespace nvshmemx {

#define GPURMA_NVSHMEMI_TILE_SCOPE(SUFFIX, SCOPE)                                           \
    template <typename src_t, typename dst_t, typename tuple_t, tile_coll_algo_t algo>      \
    __device__ int tile_sum_allreduce##SUFFIX(nvshmem_team_t team, src_t src, dst_t dst,    \
                                              tuple_t start_coord, tuple_t boundary,        \
                                              int root, uint64_t flag)                      \
    {                                                                                       \
        (void)start_coord, (void)boundary, (void)root, (void)flag;                          \
        return gpurma_nvshmemi_tile_allreduce<src_t, dst_t, tuple_t>(                       \
            "nvshmemx::tile_sum_allreduce" #SUFFIX, team, src, dst, SCOPE);                 \
    }                                                                                       \
    template <typename src_t, typename dst_t, typename tuple_t, tile_coll_algo_t algo>      \
    __device__ int tile_allgather##SUFFIX(nvshmem_team_t team, src_t src, dst_t dst,        \
                                          tuple_t start_coord, tuple_t boundary,            \
                                          uint64_t flag)                                    \
    {                                                                                       \
        (void)start_coord, (void)boundary, (void)flag;                                      \
        return gpurma_nvshmemi_tile_allgather<src_t, dst_t, tuple_t>(                       \
            "nvshmemx::tile_allgather" #SUFFIX, team, src, dst, SCOPE);                     \
    }                                                                                       \
    /* The calls above complete before they return. */                                     \
    template <tile_coll_algo_t algo>                                                        \
    __device__ int tile_collective_wait##SUFFIX(nvshmem_team_t team, uint64_t flag)         \
    {                                                                                       \
        (void)team, (void)flag;                                                             \
        gpurma_nvshmemi_tile_group_sync(SCOPE);                                             \
        return 0;                                                                           \
    }
GPURMA_NVSHMEMI_TILE_SCOPE(, GPURMA_NVSHMEMI_THREAD)
GPURMA_NVSHMEMI_TILE_SCOPE(_warp, GPURMA_NVSHMEMI_WARP)
GPURMA_NVSHMEMI_TILE_SCOPE(_warpgroup, GPURMA_NVSHMEMI_WARPGROUP)
GPURMA_NVSHMEMI_TILE_SCOPE(_block, GPURMA_NVSHMEMI_BLOCK)
#undef GPURMA_NVSHMEMI_TILE_SCOPE

} // namespace nvshmemx

#endif
