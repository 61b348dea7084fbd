"""Data parallel over torch.distributed for harnesses that shard requests by rank (lm-evaluation-harness).

Launched by ``torchrun`` or ``accelerate launch``, each process reads its place from the environment they set
(``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``/``MASTER_PORT``) and joins one process group: gloo on the
CPU, NCCL on GPUs, rank r on ``cuda:LOCAL_RANK``. A rank that fails raises, and its launcher tears the group down.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from typing import Any, List, Optional

import torch


def rank_device(device: str, rank: int, local_rank: int, visible: int) -> str:
    """The GPU of a rank: ``cuda:LOCAL_RANK`` among the node's GPUs, or ``cuda:0`` where the launcher gives each rank
    one GPU of its own (``CUDA_VISIBLE_DEVICES`` per rank, so one visible whatever LOCAL_RANK says)."""
    if visible == 1:
        return "cuda:0"
    if local_rank >= visible:
        raise RuntimeError(f"rank {rank}: device={device} but LOCAL_RANK {local_rank} has no GPU ({visible} visible); "
                           f"launch at most {visible} processes per node, or give each rank one GPU")
    return f"cuda:{local_rank}"


class DataParallel:
    """This process's rank in the group (rank 0 of 1 without a launcher) and the collectives lm-eval calls."""

    def __init__(self, device: str) -> None:
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.device = device
        if self.world_size <= 1:
            return
        local_rank = int(os.environ.get("LOCAL_RANK", self.rank))
        if device.startswith("cuda"):
            self.device = rank_device(device, self.rank, local_rank, torch.cuda.device_count())
            torch.cuda.set_device(self.device)
        dist = torch.distributed
        if not dist.is_initialized():
            # As lm-eval's hf backend sets it through accelerate: ranks that finish early wait for the slowest at the
            # final gather, which may take hours on a long run.
            dist.init_process_group(backend="nccl" if self.device.startswith("cuda") else "gloo",
                                    timeout=timedelta(weeks=52))
        if dist.get_world_size() != self.world_size or dist.get_rank() != self.rank:
            raise RuntimeError(f"rank {self.rank}: the process group has rank {dist.get_rank()} of "
                               f"{dist.get_world_size()}, but WORLD_SIZE is {self.world_size}")
        print(f"prefix-scorer: rank {self.rank} of {self.world_size} on {self.device}", file=sys.stderr, flush=True)

    def all_gather(self, tensor: torch.Tensor) -> torch.Tensor:
        """Every rank's tensor, concatenated in rank order (0-d tensors stacked)."""
        if self.world_size <= 1:
            return tensor
        parts = [torch.empty_like(tensor) for _ in range(self.world_size)]
        torch.distributed.all_gather(parts, tensor.contiguous())
        return torch.stack(parts) if tensor.dim() == 0 else torch.cat(parts)

    def gather_object(self, obj: Any, dst: int = 0) -> Optional[List[Any]]:
        """Every rank's object on rank ``dst`` (None elsewhere)."""
        if self.world_size <= 1:
            return [obj]
        gathered = [None] * self.world_size if self.rank == dst else None
        torch.distributed.gather_object(obj, gathered, dst=dst)
        return gathered

    def barrier(self) -> None:
        if self.world_size > 1:
            torch.distributed.barrier()
