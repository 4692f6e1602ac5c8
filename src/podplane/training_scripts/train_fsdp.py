"""podplane's `pytorch-fsdp` recipe: FullyShardedDataParallel training of a Hugging Face causal
language model, launched by `hyperpodrun` (or `torchrun`) on every node of the job (the shape
of AWS's FSDP test case, awslabs/awsome-distributed-training 3.test_cases/pytorch/FSDP).

The model is read from `--model` (a directory under /models, or a Hugging Face id) with
transformers. Each transformer block (the model's `_no_split_modules` classes, as Hugging Face
accelerate wraps them) is its own FSDP unit, so tied embeddings stay in the root unit; the
sharding strategy is `--sharding_strategy`. Data: token ids from `<dataset>/tokens.pt` (a LongTensor
[N, seq]) when that file exists, else seeded random tokens, so the recipe runs as a smoke test
of the GPUs, NCCL and EFA before real data is in place. Rank 0 gathers the full state dict and
saves it every `--checkpoint_freq` steps and at the end, each file in one sequential write
(Mountpoint for S3, awslabs/mountpoint-s3 doc/SEMANTICS.md: no overwrite, no rename).
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, ShardingStrategy, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoModelForCausalLM

STRATEGIES = {"full": ShardingStrategy.FULL_SHARD, "hybrid": ShardingStrategy.HYBRID_SHARD,
              "shard_grad_op": ShardingStrategy.SHARD_GRAD_OP,
              "no_shard": ShardingStrategy.NO_SHARD}
LOG_EVERY = 10


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="podplane pytorch-fsdp recipe: FSDP training")
    parser.add_argument("--model", required=True)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train_batch_size", type=int, default=8, help="per process")
    parser.add_argument("--dataset", default="/data/train")
    parser.add_argument("--sharding_strategy", choices=sorted(STRATEGIES), default="full")
    parser.add_argument("--checkpoint_freq", type=int, default=100)
    parser.add_argument("--checkpoint_dir", default="/checkpoints")
    parser.add_argument("--output_dir", default="/outputs")
    parser.add_argument("--seq_len", type=int, default=512)
    parser.add_argument("--samples", type=int, default=2048, help="synthetic sequences")
    return parser.parse_args(argv)


def dataset(path: str, vocab: int, seq_len: int, samples: int) -> Any:
    given = Path(path) / "tokens.pt"
    if given.is_file():
        return TensorDataset(torch.load(given, weights_only=True).long())
    generator = torch.Generator().manual_seed(0)
    return TensorDataset(torch.randint(0, vocab, (samples, seq_len), generator=generator))


def save(obj: Any, path: Path) -> None:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())


def block_classes(model: Any) -> set[type]:
    """The model's transformer block classes (e.g. Qwen2DecoderLayer)."""
    names = set(getattr(model, "_no_split_modules", None) or ())
    return {type(m) for m in model.modules() if type(m).__name__ in names}


def full_state(model: Any) -> Any:
    """Every rank takes part; rank 0 gets the whole (CPU) state dict, the others an empty one."""
    config = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, config):
        return model.state_dict()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    print(f"[rank {rank}] initializing process group (backend={dist.get_backend()}, "
          f"world_size={world})", flush=True)
    dtype = torch.bfloat16 if cuda else torch.float32
    base = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=dtype)
    wrap = functools.partial(transformer_auto_wrap_policy,
                             transformer_layer_cls=block_classes(base))
    model = FSDP(base, auto_wrap_policy=wrap, use_orig_params=True,
                 sharding_strategy=STRATEGIES[args.sharding_strategy],
                 device_id=device if cuda else None)
    data = dataset(args.dataset, base.config.vocab_size, args.seq_len, args.samples)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=args.train_batch_size, sampler=sampler,
                        drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    step, started, loss = 0, time.time(), torch.zeros(())
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for (tokens,) in loader:
            tokens = tokens.to(device, non_blocking=True)
            loss = model(input_ids=tokens, labels=tokens).loss  # next-token cross-entropy
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            if step % LOG_EVERY == 0:
                rate = step * args.train_batch_size * args.seq_len / max(
                    time.time() - started, 1e-6)
                print(f"[rank {rank}] step {step} | loss {loss.item():.4f} | throughput "
                      f"{rate:.1f} tokens/s | lr {args.lr:.1e}", flush=True)
            if step % args.checkpoint_freq == 0:
                state = full_state(model)
                if rank == 0:
                    save({"model": state, "step": step, "epoch": epoch},
                         Path(args.checkpoint_dir) / f"checkpoint-{step}" / "model.pt")
    state = full_state(model)
    if rank == 0:
        out = Path(args.output_dir)
        save(state, out / "model.pt")
        results = {"steps": step, "epochs": args.epochs, "world_size": world,
                   "sharding_strategy": args.sharding_strategy,
                   "final_loss": float(loss.item()), "seconds": time.time() - started}
        (out / "train_results.json").write_text(json.dumps(results, indent=2))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
