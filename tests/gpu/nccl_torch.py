"""nccl_torch.py - PyTorch's ProcessGroupNCCL on libgpurma_nccl, unchanged.

Run by tests/gpu/nccl-shim.sh with LD_PRELOAD=<build>/compat/nccl/.libs/libnccl.so.2
(torch finds NCCL through its RPATH; a preloaded library whose SONAME is
libnccl.so.2 takes its place, and NVIDIA's is never loaded):

    torchrun --nproc_per_node 2 tests/gpu/nccl_torch.py ops
        all_reduce, all_gather_into_tensor, reduce_scatter_tensor,
        all_to_all_single, send/recv, broadcast, new_group (ncclCommSplit:
        the default group is bound to its device), and an all_reduce
        captured in a CUDA graph and replayed; every result checked exactly.
        Both ranks may share GPU 0 (NCCL 2.28 itself refuses that).

    RANK=r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=p python nccl_torch.py kill
        rank 1 kills itself after one all_reduce; rank 0's next all_reduce
        must be reported by torch's watchdog (ncclCommGetAsyncError or the
        collective's timeout) instead of hanging. Prints WATCHDOG-REPORTED
        on rank 0 when torch raised or aborted.
"""
import datetime
import os
import signal
import sys
import time

import torch
import torch.distributed as dist


def fail(msg):
    print(f"FAIL rank {dist.get_rank()}: {msg}", flush=True)
    sys.exit(1)


CHECKS = [0]


def expect(name, got, want):
    CHECKS[0] += 1
    if not torch.equal(got, want):
        bad = (got != want).nonzero()
        fail(f"{name}: {bad.numel()} elements differ, first at {bad[0].tolist()}: "
             f"got {got.flatten()[0:4].tolist()} want {want.flatten()[0:4].tolist()}")


def device():
    # Every rank on GPU local_rank % count: with one GPU both share it.
    n = torch.cuda.device_count()
    d = int(os.environ.get("LOCAL_RANK", os.environ.get("RANK", "0"))) % n
    torch.cuda.set_device(d)
    return torch.device("cuda", d)


def values(rank, n, salt, dtype=torch.float32):
    g = torch.Generator().manual_seed(1000 * salt + rank)
    # small integers: sums are exact in every type
    return torch.randint(-8, 8, (n,), generator=g).to(dtype)


def ops():
    dev = device()
    # device_id: eager init, and new_group by ncclCommSplit of the default
    # communicator (NOCOLOR on the ranks left out)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60), device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    for salt, n, dtype in [(1, 1, torch.float32), (2, 1027, torch.float32),
                           (3, 65541, torch.bfloat16), (4, 4097, torch.int64),
                           (5, 1 << 20, torch.float16)]:
        # all_reduce
        t = values(rank, n, salt, dtype).to(dev)
        dist.all_reduce(t)
        want = sum(values(r, n, salt, dtype).double() for r in range(world)).to(dtype)
        expect(f"all_reduce {dtype} x{n}", t.cpu(), want)
        # all_gather_into_tensor
        out = torch.full((world * n,), 99, dtype=dtype, device=dev)
        dist.all_gather_into_tensor(out, values(rank, n, salt + 10, dtype).to(dev))
        expect("all_gather_into_tensor", out.cpu(),
               torch.cat([values(r, n, salt + 10, dtype) for r in range(world)]))
        # reduce_scatter_tensor
        inp = torch.cat([values(rank * 100 + c, n, salt + 20, dtype) for c in range(world)])
        out = torch.full((n,), 99, dtype=dtype, device=dev)
        dist.reduce_scatter_tensor(out, inp.to(dev))
        want = sum(values(r * 100 + rank, n, salt + 20, dtype).double()
                   for r in range(world)).to(dtype)
        expect("reduce_scatter_tensor", out.cpu(), want)
        # all_to_all_single, equal and unequal splits
        inp = torch.cat([values(rank * 100 + c, n, salt + 30, dtype) for c in range(world)])
        out = torch.full((world * n,), 99, dtype=dtype, device=dev)
        dist.all_to_all_single(out, inp.to(dev))
        expect("all_to_all_single", out.cpu(),
               torch.cat([values(r * 100 + rank, n, salt + 30, dtype) for r in range(world)]))
        splits = [(rank + c) % 3 + 1 for c in range(world)]  # to peer c
        recv_splits = [(r + rank) % 3 + 1 for r in range(world)]
        inp = torch.cat([values(rank * 100 + c, splits[c], salt + 40, dtype)
                         for c in range(world)])
        out = torch.full((sum(recv_splits),), 99, dtype=dtype, device=dev)
        dist.all_to_all_single(out, inp.to(dev), recv_splits, splits)
        expect("all_to_all_single uneven", out.cpu(),
               torch.cat([values(r * 100 + rank, recv_splits[r], salt + 40, dtype)
                          for r in range(world)]))
        # broadcast from the last rank
        t = values(rank, n, salt + 50, dtype).to(dev)
        dist.broadcast(t, src=world - 1)
        expect("broadcast", t.cpu(), values(world - 1, n, salt + 50, dtype))
        # send/recv around the ring, posted both ways (torch batches them)
        right, left = (rank + 1) % world, (rank - 1) % world
        out = torch.full((n,), 99, dtype=dtype, device=dev)
        reqs = dist.batch_isend_irecv([
            dist.P2POp(dist.isend, values(rank, n, salt + 60, dtype).to(dev), right),
            dist.P2POp(dist.irecv, out, left)])
        for q in reqs:
            q.wait()
        expect("batch_isend_irecv", out.cpu(), values(left, n, salt + 60, dtype))
        if world == 2:  # plain send then recv on the pair
            if rank == 0:
                dist.send(values(0, n, salt + 70, dtype).to(dev), 1)
            else:
                out = torch.empty((n,), dtype=dtype, device=dev)
                dist.recv(out, 0)
                expect("send/recv", out.cpu(), values(0, n, salt + 70, dtype))
    # new_group: every rank, reversed; and a group of rank 0 alone
    g = dist.new_group(list(reversed(range(world))))
    t = torch.full((333,), float(rank + 1), device=dev)
    dist.all_reduce(t, group=g)
    expect("new_group all_reduce", t.cpu(), torch.full((333,), world * (world + 1) / 2))
    solo = dist.new_group([0])
    if rank == 0:
        t = torch.ones(7, device=dev)
        dist.all_reduce(t, group=solo)
        expect("solo group", t.cpu(), torch.ones(7))
    # an all_reduce captured in a CUDA graph, replayed with new inputs
    t = torch.zeros(4099, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):  # warm-up outside the capture
            dist.all_reduce(t)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(t)
    for it in range(20):
        t.copy_(values(rank, 4099, 500 + it))
        graph.replay()
        torch.cuda.synchronize()
        want = sum(values(r, 4099, 500 + it).double() for r in range(world)).float()
        expect(f"graph replay {it}", t.cpu(), want)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(f"PASS nccl_torch ops: {world} ranks, {CHECKS[0]} checked results, "
              f"torch {torch.__version__}, NCCL version torch sees "
              f"{torch.cuda.nccl.version()}", flush=True)


def kill():
    dev = device()
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=20))
    rank = dist.get_rank()
    t = torch.ones(1024, device=dev)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    if rank == 1:
        print("rank 1: killing myself", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(1)
    start = time.time()
    try:
        dist.all_reduce(t)
        torch.cuda.synchronize()
        # torch may report from its watchdog thread and end the process
        time.sleep(60)
        print(f"rank 0: no report after {time.time() - start:.0f} s", flush=True)
        sys.exit(1)
    except Exception as e:  # torch raised on this thread
        print(f"WATCHDOG-REPORTED after {time.time() - start:.1f} s: "
              f"{type(e).__name__}: {str(e)[:300]}", flush=True)
        os._exit(0)


if __name__ == "__main__":
    {"ops": ops, "kill": kill}[sys.argv[1] if len(sys.argv) > 1 else "ops"]()
