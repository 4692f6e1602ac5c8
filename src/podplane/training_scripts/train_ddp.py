"""podplane's `pytorch-ddp` recipe: DistributedDataParallel training of a small regression
network, launched by `hyperpodrun` (or `torchrun`) on every node of the job.

The launcher starts one process per GPU and hands each its place through the environment
(RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT: torch.distributed.run, which the
HyperPod elastic agent extends); `init_process_group` reads them. Data: tensors `x` and `y` from
`<data>/train.pt` when that file exists, else a seeded synthetic task, so the recipe runs as a
smoke test of the GPUs, NCCL and EFA before real data is in place. Rank 0 saves checkpoints
every `--save-steps` steps and the final model; each file is written in one sequential pass,
as Mountpoint for S3 (the /checkpoints and /outputs mounts) requires (awslabs/mountpoint-s3
doc/SEMANTICS.md: no overwrite, no rename, sequential writes only).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

FEATURES = 32
LOG_EVERY = 10


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="podplane pytorch-ddp recipe: DDP training")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8, help="per process")
    parser.add_argument("--data", default="/data/train")
    parser.add_argument("--save-steps", type=int, default=100)
    parser.add_argument("--checkpoint-dir", default="/checkpoints")
    parser.add_argument("--output-dir", default="/outputs")
    parser.add_argument("--samples", type=int, default=8192, help="synthetic samples")
    return parser.parse_args(argv)


def dataset(path: str, samples: int) -> Any:
    """`<path>/train.pt` ({"x": [N, 32], "y": [N, 1]}) when present, else y = x·w + noise."""
    given = Path(path) / "train.pt"
    if given.is_file():
        tensors = torch.load(given, weights_only=True)
        return TensorDataset(tensors["x"].float(), tensors["y"].float())
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(samples, FEATURES, generator=generator)
    w = torch.randn(FEATURES, 1, generator=generator)
    y = x @ w + 0.1 * torch.randn(samples, 1, generator=generator)
    return TensorDataset(x, y)


def save(obj: Any, path: Path) -> None:
    """torch.save into memory, then one sequential write of a new file."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    print(f"[rank {rank}] initializing process group (backend={dist.get_backend()}, "
          f"world_size={world})", flush=True)
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    model = nn.Sequential(nn.Linear(FEATURES, 128), nn.ReLU(), nn.Linear(128, 1)).to(device)
    ddp = DistributedDataParallel(model, device_ids=[local] if cuda else None)
    data = dataset(args.data, args.samples)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, drop_last=True)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=args.lr)
    step, started, loss = 0, time.time(), torch.zeros(())
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a different shuffle each epoch, the same on every rank
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = nn.functional.mse_loss(ddp(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces the gradients here
            optimizer.step()
            step += 1
            if step % LOG_EVERY == 0:
                rate = step * args.batch_size / max(time.time() - started, 1e-6)
                print(f"[rank {rank}] step {step} | loss {loss.item():.4f} | throughput "
                      f"{rate:.1f} samples/s | lr {args.lr:.1e}", flush=True)
            if rank == 0 and step % args.save_steps == 0:
                save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                      "step": step, "epoch": epoch},
                     Path(args.checkpoint_dir) / f"checkpoint-{step}" / "state.pt")
    if rank == 0:
        out = Path(args.output_dir)
        save(model.state_dict(), out / "model.pt")
        results = {"steps": step, "epochs": args.epochs, "world_size": world,
                   "final_loss": float(loss.item()), "seconds": time.time() - started}
        (out / "train_results.json").write_text(json.dumps(results, indent=2))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
