"""What a failed or restarted worker's last log lines say (pure): the signatures of the faults
that kill distributed training, each quoted as evidence with its pod and node.

The signatures, each from its source:
- `xid`: the NVIDIA driver's kernel message `NVRM: Xid (PCI:<bus>): <code>, ...` (NVIDIA "Xid
  Errors" documentation; AWS's GPU health checks parse the same format:
  awslabs/awsome-distributed-training 4.validation_and_observability/2.gpu-cluster-healthcheck/
  checks/0-nvidia-smi-check.sh). A GPU fault of the node: its repair is the node's.
- `nccl_timeout`: PyTorch's ProcessGroupNCCL watchdog, "Watchdog caught collective operation
  timeout" (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp): a collective waited past
  `init_process_group(timeout=)` because some rank never joined it.
- `nccl_error`: PyTorch's "NCCL error in: <file>:<line>, <NCCL's error string>"
  (torch/csrc/distributed/c10d/NCCLUtils.hpp, C10D_NCCL_CHECK) and NCCL's own `NCCL WARN`
  lines (NCCL's debug.cc).
- `cuda_oom`: PyTorch's caching allocator, "CUDA out of memory. Tried to allocate ..."
  (c10/cuda/CUDACachingAllocator.cpp): GPU memory, not the container's (that is OOMKilled).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from podplane.domain.diagnostics.verdict import Evidence, Finding, Status

SOURCE = "pod log"
TAIL_LINES = 200  # per pod: the end of a run is where it died
PODS_READ = 8  # failed or restarted pods whose log is read, at most
QUOTED = 2  # lines quoted per pod and signature
LINE_CHARS = 400
XID = re.compile(r"NVRM: Xid \(PCI:[0-9A-Fa-f:.]+\): (\d+)")
PATTERNS = (
    ("xid", XID),
    ("nccl_timeout", re.compile(r"Watchdog caught collective operation timeout")),
    ("nccl_error", re.compile(r"NCCL error in: |NCCL WARN ")),
    ("cuda_oom", re.compile(r"CUDA out of memory")),
)
# NVIDIA's Xid catalogue, the codes AWS's health check treats as needing the node restarted
# or the GPU reset (0-nvidia-smi-check.sh, "Resolution Bucket" of NVIDIA's catalogue).
XID_MEANING = {48: "uncorrectable ECC (double bit) error", 63: "ECC page retirement",
               64: "ECC page retirement failure", 74: "NVLink error",
               79: "GPU has fallen off the bus", 94: "contained ECC error",
               95: "uncontained ECC error", 119: "GSP timeout", 120: "GSP error"}


@dataclass(frozen=True)
class PodLog:
    """The tail of one container's log, or why it could not be read."""

    pod: str
    node: str | None
    container: str
    previous: bool  # the run before the current one (the container restarted)
    lines: tuple[str, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Hit:
    check: str
    log: PodLog
    lines: tuple[str, ...]

    @property
    def where(self) -> str:
        run = " (previous run)" if self.log.previous else ""
        return f"pod {self.log.pod}{run} on node {self.log.node or '?'}"


def hits(logs: tuple[PodLog, ...]) -> list[Hit]:
    """Each signature found in each log, with the lines that show it."""
    out = []
    for log in logs:
        for check, pattern in PATTERNS:
            found = [line for line in log.lines if pattern.search(line)]
            if found:
                out.append(Hit(check, log, tuple(x[:LINE_CHARS] for x in found[:QUOTED])))
    return out


def xid_codes(hit: Hit) -> list[int]:
    return sorted({int(m.group(1)) for line in hit.lines if (m := XID.search(line))})


def findings(found: list[Hit]) -> list[Finding]:
    """One finding per signature, every pod that shows it quoted as evidence."""
    out = []
    for check, _ in PATTERNS:
        mine = [h for h in found if h.check == check]
        if not mine:
            continue
        proof = tuple(Evidence(SOURCE, f"{h.where}: {line}") for h in mine for line in h.lines)
        where = ", ".join(dict.fromkeys(h.where for h in mine))
        out.append(_finding(check, mine, where, proof))
    return out


def _finding(check: str, mine: list[Hit], where: str, proof: tuple[Evidence, ...]) -> Finding:
    if check == "xid":
        codes = sorted({c for h in mine for c in xid_codes(h)})
        said = ", ".join(f"Xid {c} ({XID_MEANING.get(c, 'see NVIDIA Xid catalogue')})"
                         for c in codes)
        nodes = ", ".join(dict.fromkeys(h.log.node or "?" for h in mine))
        return Finding("xid", Status.FAIL, f"the GPU driver reported {said} on node {nodes} "
                       f"({where}).", "A GPU fault of the node, not of the job: diagnose the "
                       "node (diagnose_node), reboot it; replace it if the Xid comes back "
                       "(a replace loses instance storage). Then resubmit.", proof)
    if check == "nccl_timeout":
        return Finding("nccl_timeout", Status.FAIL, f"an NCCL collective timed out in the "
                       f"PyTorch watchdog ({where}): a rank stopped taking part.",
                       "Look for a rank that died or hung first; with no GPU fault, test the "
                       "links between the job's nodes once they are idle (diagnose_nccl).",
                       proof)
    if check == "nccl_error":
        return Finding("nccl_error", Status.FAIL, f"NCCL failed ({where}).", "Check the EFA "
                       "interfaces and NCCL settings of the job's nodes (diagnose_nccl).", proof)
    return Finding("cuda_oom", Status.FAIL, f"the GPU ran out of memory ({where}).",
                   "Lower the per-GPU batch size or sequence length, or shard more (FSDP, "
                   "activation checkpointing); PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
                   "helps when memory is fragmented.", proof)


def unread(logs: tuple[PodLog, ...]) -> list[str]:
    """Notes for the logs that could not be read (a diagnosis without them goes on)."""
    return [f"The log of pod {log.pod} could not be read: {log.error}" for log in logs
            if log.error]
