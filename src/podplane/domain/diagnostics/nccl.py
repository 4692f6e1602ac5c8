"""The NCCL all-reduce test: what bus bandwidth an instance type should reach, how an
`all_reduce_perf` table is read, how a slow node is found, and the verdict (pure).

Expected figure. nccl-tests defines `busbw = algbw * 2(n-1)/n` for all-reduce so that it
compares with the hardware's peak bandwidth whatever the rank count (NVIDIA/nccl-tests,
doc/PERFORMANCE.md, "Bus bandwidth"). Across nodes a ring's slowest link is the network, and
NCCL spreads its rings over every EFA interface of a node, so a node's peak is its network
bandwidth: the "Network bandwidth (Gbps)" column of the AWS EC2 accelerated computing
instance specifications (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html, "Network
specifications"), with its EFA interface count from the same table ("EFA" / "Maximum EFA
interfaces") and the EFA guide's supported instance types
(docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html). GB/s = Gbps / 8.

Pass threshold: the largest message's busbw must reach PASS_FRACTION (80%) of that ceiling.
Large all-reduces are bandwidth-bound, so a healthy EFA fabric comes close to line rate; 80%
leaves room for protocol overhead, and a node that lost one of p4d's four EFA interfaces
(a ring capped at 75%) or whose link runs at half speed falls below it. Without EFA NCCL uses
TCP sockets, which no AWS page gives a figure for: there a low result is a warning only.

The slow node: one all-reduce only says that the slowest link is slow. With three or more
nodes a second round runs all-reduces on pairs of neighbours in a ring of the chosen nodes
(a-b, b-c, c-a, ...), in batches of pairs that share no node. A node whose every pair is slow,
while some pair without it is fast, is the slow one. With two nodes the pair is the whole test,
so the verdict asks for a run with a third, healthy node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from podplane.domain.diagnostics.verdict import (
    Evidence,
    Finding,
    Status,
    SuggestedCall,
    Verdict,
    healthy,
)
from podplane.domain.names import NODE_PATTERN

PASS_FRACTION = 0.8
MIN_NODES, MAX_NODES = 2, 16
LOGS, NODE_ALLOC = "kubernetes:Pod logs (all_reduce_perf)", "kubernetes:Node allocatable"
HP_LIST = "hyperpod:ListClusterNodes"

# instance type (without "ml.") -> (network Gbps, EFA interfaces); AWS EC2 "Accelerated
# computing" network specifications and the EFA supported-instance list (module docstring).
# "Up to N Gbps" sizes are listed at N: a burst figure, not a sustained one.
NETWORK: dict[str, tuple[int, int]] = {
    "p4d.24xlarge": (400, 4), "p4de.24xlarge": (400, 4),
    "p5.48xlarge": (3200, 32), "p5e.48xlarge": (3200, 32), "p5en.48xlarge": (3200, 16),
    "p6-b200.48xlarge": (3200, 8),
    "g5.xlarge": (10, 0), "g5.2xlarge": (10, 0), "g5.4xlarge": (25, 0),
    "g5.8xlarge": (25, 1), "g5.12xlarge": (40, 1), "g5.16xlarge": (25, 1),
    "g5.24xlarge": (50, 1), "g5.48xlarge": (100, 1),
    "g6.xlarge": (10, 0), "g6.2xlarge": (10, 0), "g6.4xlarge": (25, 0),
    "g6.8xlarge": (25, 1), "g6.12xlarge": (40, 1), "g6.16xlarge": (25, 1),
    "g6.24xlarge": (50, 1), "g6.48xlarge": (100, 1),
    "g6e.12xlarge": (100, 1), "g6e.24xlarge": (200, 2), "g6e.48xlarge": (400, 4),
    # Trainium runs collectives through the Neuron runtime, not NCCL: listed so the refusal
    # can say why (no NVIDIA GPUs), never tested.
    "trn1.32xlarge": (800, 8), "trn1n.32xlarge": (1600, 16), "trn2.48xlarge": (3200, 16),
}


@dataclass(frozen=True)
class Expected:
    instance_type: str
    network_gbps: int
    efa: int
    busbw: float  # GB/s: the ceiling
    threshold: float  # GB/s: PASS_FRACTION of it

    @property
    def transport(self) -> str:
        return "EFA" if self.efa else "TCP sockets"


def expected(instance_type: str) -> Expected | None:
    """The ceiling for a type, None when AWS publishes no figure we hold."""
    found = NETWORK.get(instance_type.removeprefix("ml."))
    if found is None:
        return None
    gbps, efa = found
    return Expected(instance_type, gbps, efa, gbps / 8, round(gbps / 8 * PASS_FRACTION, 3))


# --- reading all_reduce_perf ----------------------------------------------------------------

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+([\d.]+)\s+([\d.]+)\s+"
                 r"([\d.]+)\s+(\S+)")
AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([\d.]+)")
NETWORK_LINE = re.compile(r"NCCL INFO Using network (\S+(?: \S+)?)")


@dataclass(frozen=True)
class Row:
    size: int  # bytes
    time_us: float
    algbw: float  # GB/s
    busbw: float  # GB/s


@dataclass(frozen=True)
class Measurement:
    rows: tuple[Row, ...]
    avg_busbw: float | None
    network: str | None  # as NCCL_DEBUG=INFO names it: "AWS Libfabric", "Socket", "IB"

    @property
    def busbw(self) -> float | None:
        """The largest message's busbw: the bandwidth-bound figure the ceiling compares with."""
        return max(self.rows, key=lambda r: r.size).busbw if self.rows else None

    def shape(self) -> dict[str, Any]:
        return {"busbw": self.busbw, "avg_busbw": self.avg_busbw, "network": self.network,
                "rows": [r.__dict__ for r in self.rows]}


def parse(text: str) -> Measurement:
    """The out-of-place columns of each row (size count type redop root time algbw busbw
    #wrong), the "Avg bus bandwidth" line, and NCCL's transport line. Lines may carry a
    prefix (mpirun --tag-output, kubectl --prefix): only what follows it is read."""
    rows, avg, network = [], None, None
    for line in text.splitlines():
        body = re.sub(r"^\[[^\]]*\]<?\w*>?:?\s*", "", line)
        if (m := ROW.match(body)) is not None:
            rows.append(Row(int(m[1]), float(m[6]), float(m[7]), float(m[8])))
        elif (m := AVG.search(body)) is not None:
            avg = float(m[1])
        elif network is None and (m := NETWORK_LINE.search(body)) is not None:
            network = m[1]
    return Measurement(tuple(rows), avg, network)


def measurement_of(shape: dict[str, Any]) -> Measurement:
    rows = tuple(Row(**r) for r in shape.get("rows") or [])
    return Measurement(rows, shape.get("avg_busbw"), shape.get("network"))


# --- the second round: pairs ----------------------------------------------------------------

def ring_pairs(nodes: list[str]) -> list[tuple[str, str]]:
    """Neighbours in a ring of the nodes (a-b, b-c, c-a); none below three nodes."""
    if len(nodes) < 3:
        return []
    return [(nodes[i], nodes[(i + 1) % len(nodes)]) for i in range(len(nodes))]


def batches(pairs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    """Pairs grouped so that no node is in two pairs of a batch (a test takes every GPU)."""
    out: list[list[tuple[str, str]]] = []
    for pair in pairs:
        batch = next((b for b in out if not {n for p in b for n in p} & set(pair)), None)
        if batch is None:
            out.append([pair])
        else:
            batch.append(pair)
    return out


def slow_nodes(pairs: list[tuple[tuple[str, str], float | None]], threshold: float
               ) -> list[str]:
    """Nodes all of whose pairs are slow, while some pair without them is fast."""
    slow = {n for (a, b), bw in pairs for n in (a, b) if bw is None or bw < threshold}
    fast = {n for (a, b), bw in pairs for n in (a, b) if bw is not None and bw >= threshold}
    return sorted(slow - fast) if fast else []


# --- the verdict ----------------------------------------------------------------------------

@dataclass(frozen=True)
class NcclFacts:
    cluster: str
    nodes: tuple[str, ...]  # instance ids, as chosen
    instance_type: str
    efa_allocatable: dict[str, int]  # node -> vpc.amazonaws.com/efa the kubelet offers
    measured: Measurement
    pairs: tuple[tuple[tuple[str, str], float | None], ...] = ()
    notes: tuple[str, ...] = field(default=())


def diagnose(f: NcclFacts) -> Verdict:
    target = f"cluster/{f.cluster}/nccl/{','.join(f.nodes)}"
    want = expected(f.instance_type)
    busbw = f.measured.busbw
    if busbw is None:
        return Verdict(target, "The all-reduce printed no result rows.", (Finding(
            "no_result", Status.FAIL, "all_reduce_perf printed no size/busbw table.",
            "Read the test's logs in the operation's result.", (Evidence(LOGS, "no rows"),)),),
            notes=f.notes)
    figure = _figure(f, busbw, want)
    findings = _efa_findings(f, want) + _bandwidth_findings(f, busbw, want, figure)
    if not findings:
        return healthy(target, figure, *f.notes)
    slow = slow_nodes(list(f.pairs), want.threshold) if want else []
    return Verdict(target, _conclusion(findings, slow), tuple(findings),
                   _next(f, slow), notes=(figure, *f.notes))


def _figure(f: NcclFacts, busbw: float, want: Expected | None) -> str:
    if want is None:
        return f"busbw {busbw:.2f} GB/s; AWS publishes no network figure for {f.instance_type}."
    return (f"busbw {busbw:.2f} GB/s of an expected {want.busbw:.2f} GB/s "
            f"({want.network_gbps} Gbps, {want.efa} EFA on {f.instance_type}); pass at "
            f"{want.threshold:.2f} GB/s.")


def _efa_findings(f: NcclFacts, want: Expected | None) -> list[Finding]:
    if want is None or not want.efa:
        return []
    short = {n: c for n, c in f.efa_allocatable.items() if c < want.efa}
    return [Finding("efa_missing", Status.FAIL, f"Node {n} offers {c} of the {want.efa} EFA "
                    f"interfaces of {f.instance_type}.", "Reboot the node; if the count stays "
                    "low, replace it.", (Evidence(NODE_ALLOC, f"hyperpod-{n}: "
                                                  f"vpc.amazonaws.com/efa={c}"),))
            for n, c in sorted(short.items())]


def _bandwidth_findings(f: NcclFacts, busbw: float, want: Expected | None,
                        figure: str) -> list[Finding]:
    proof = [Evidence(LOGS, _row_text(f.measured))]
    if f.measured.network:
        proof.append(Evidence(LOGS, f"NCCL INFO Using network {f.measured.network}"))
    findings = []
    if want is not None and want.efa and f.measured.network and \
            "Libfabric" not in f.measured.network:
        findings.append(Finding("not_efa", Status.FAIL, f"NCCL used {f.measured.network}, "
                                "not EFA (AWS Libfabric).", "Use an image with the EFA "
                                "libfabric and aws-ofi-nccl, and request "
                                "vpc.amazonaws.com/efa.", tuple(proof)))
    if want is None or busbw >= want.threshold:
        return findings
    status = Status.FAIL if want.efa else Status.WARN
    fix = "" if want.efa else "Without EFA NCCL uses TCP sockets; no AWS figure applies."
    findings.append(Finding("bus_bandwidth", status, f"Bus bandwidth {busbw:.2f} GB/s is "
                            f"{busbw / want.busbw:.0%} of the expected {want.busbw:.2f} GB/s "
                            f"(pass: {PASS_FRACTION:.0%}).", fix or "See the pair results.",
                            tuple(proof + _pair_evidence(f))))
    return findings


def _row_text(m: Measurement) -> str:
    top = max(m.rows, key=lambda r: r.size)
    avg = f"; Avg bus bandwidth {m.avg_busbw:.2f} GB/s" if m.avg_busbw is not None else ""
    return (f"size {top.size} B: time {top.time_us:.1f} us, algbw {top.algbw:.2f} GB/s, "
            f"busbw {top.busbw:.2f} GB/s{avg}")


def _pair_evidence(f: NcclFacts) -> list[Evidence]:
    return [Evidence(LOGS, f"pair {a} + {b}: busbw " +
                     (f"{bw:.2f} GB/s" if bw is not None else "no result"))
            for (a, b), bw in f.pairs]


def _conclusion(findings: list[Finding], slow: list[str]) -> str:
    first = next(x for x in findings if x.status is not Status.OK)
    if slow:
        return f"{first.detail} The slow link is on node {', '.join(slow)}."
    return first.detail


def _next(f: NcclFacts, slow: list[str]) -> SuggestedCall:
    missing = sorted(n for n, c in f.efa_allocatable.items()
                     if (w := expected(f.instance_type)) and c < w.efa)
    suspect = (slow or missing)[:1]
    if suspect:
        return SuggestedCall("diagnose_node", {"cluster": f.cluster, "node": suspect[0]},
                             "None: reads the node's health, changes nothing.", mutates=False)
    if len(f.nodes) < 3:
        return SuggestedCall("node_list", {"cluster": f.cluster}, "None. Pick a third node "
                             "of the same type and run diagnose_nccl on all three to tell "
                             "which node is slow.", mutates=False)
    return SuggestedCall("node_list", {"cluster": f.cluster}, "None: every pair was slow, so "
                         "the fabric, not one node: compare with other nodes.", mutates=False)


# --- the request ----------------------------------------------------------------------------

NodeRef = Annotated[str, Field(pattern=NODE_PATTERN)]  # the pattern bounds its length


@dataclass(frozen=True, kw_only=True)
class NcclRequest:
    """Run an all-reduce test across these nodes (all of one GPU instance type)."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    nodes: Annotated[list[NodeRef], Field(
        min_length=MIN_NODES, max_length=MAX_NODES,
        description="Instance ids (i-...) or Node names, of one GPU type.")]
