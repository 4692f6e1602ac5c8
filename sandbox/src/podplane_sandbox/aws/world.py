"""The simulated account: clock, seeded randomness, ledger, faults, capacity and all emulator state.

Lifecycles are lazy: resources carry deadlines in virtual time, and `tick()` (called before every
request and by the node source) applies every transition whose deadline has passed. Same seed +
same calls + same clock steps -> same world.
"""

from __future__ import annotations

import base64
import random
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.faults import Faults
from podplane_sandbox.ledger import Ledger

ACCOUNT = "123456789012"
AZS = ("us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d")
AZ_IDS = {"us-west-2a": "usw2-az2", "us-west-2b": "usw2-az1", "us-west-2c": "usw2-az3",
          "us-west-2d": "usw2-az4"}


@dataclass
class KubeTarget:
    """Where EKS DescribeCluster points kubectl: each EKS cluster's own Kubernetes API.

    With the Kubernetes side running, `servers` (a KubeFleet) gives every ACTIVE cluster its
    own server; without it (an AWS-only sandbox) every cluster reports `endpoint`.
    """

    endpoint: str = "https://127.0.0.1:6443"
    ca_path: Path | None = None
    servers: Any = None  # ensure(cluster) -> (endpoint, CA PEM); forget(cluster)

    @property
    def ca_data(self) -> str:
        """base64 of the CA PEM, as EKS returns it; empty until the CA file exists."""
        if self.ca_path is None or not self.ca_path.exists():
            return ""
        return base64.b64encode(self.ca_path.read_bytes()).decode()

    def access(self, cluster: str) -> tuple[str, str]:
        """(endpoint, base64 CA) of an ACTIVE cluster."""
        if self.servers is None:
            return self.endpoint, self.ca_data
        endpoint, ca_pem = self.servers.ensure(cluster)
        return endpoint, base64.b64encode(ca_pem).decode()

    def cluster_active(self, cluster: str) -> None:
        if self.servers is not None:
            self.servers.ensure(cluster)

    def cluster_deleted(self, cluster: str) -> None:
        if self.servers is not None:
            self.servers.forget(cluster)


@dataclass
class World:
    clock: VirtualClock
    seed: int = 0
    region: str = "us-west-2"
    kube: KubeTarget = field(default_factory=KubeTarget)
    lock: threading.RLock = field(default_factory=threading.RLock)
    rng: random.Random = field(init=False)
    ledger: Ledger = field(default_factory=Ledger)
    faults: Faults = field(init=False)
    state: dict[str, Any] = field(default_factory=dict)  # per-service JSON-able state
    subnet_azs: Any = None  # callable(subnet_id) -> az | None (reads moto's EC2)
    # Lag mode: eventual consistency and slow deletes as AWS shows them (docs/sandbox.md,
    # "Rules and their sources"). On by default in tests and `podplane up`; off only to isolate.
    lag: bool = True

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.faults = Faults(self.rng)
        self._tickers: list[Any] = []

    def now(self) -> float:
        return self.clock.now()

    def arn(self, service: str, resource: str) -> str:
        return f"arn:aws:{service}:{self.region}:{ACCOUNT}:{resource}"

    def hex_id(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def instance_id(self) -> str:
        return "i-" + self.hex_id(17)

    def service_state(self, name: str) -> dict[str, Any]:
        return cast("dict[str, Any]", self.state.setdefault(name, {}))

    def on_tick(self, ticker: Any) -> None:
        self._tickers.append(ticker)

    def tick(self) -> None:
        with self.lock:
            now = self.now()
            for ticker in self._tickers:
                ticker(now)

    def record(self, service: str, action: str, target: str | None,
               client_token: str | None = None, **params: Any) -> None:
        self.ledger.record(self.now(), service, action, target, client_token, params)

    def check_common_faults(self, service: str, action: str) -> None:
        from podplane_sandbox.aws.errors import access_denied, throttled

        if self.faults.fire("throttling", service=service, action=action):
            raise throttled(service)
        if self.faults.fire("access_denied", service=service, action=action):
            raise access_denied(f"{service}:{action}")

    # persistence -----------------------------------------------------------------------
    def dump(self) -> dict[str, Any]:
        return {"now": self.now(), "seed": self.seed, "rng": _rng_state(self.rng),
                "ledger": self.ledger.entries, "faults": self.faults.items,
                "fault_next_id": self.faults.next_id, "state": self.state}

    def load(self, data: dict[str, Any]) -> None:
        self.clock.set_now(float(data["now"]))
        self.seed = int(data.get("seed", self.seed))
        if data.get("rng"):
            self.rng.setstate(_rng_restore(data["rng"]))
        self.ledger.entries = list(data.get("ledger", []))
        self.faults.items = list(data.get("faults", []))
        self.faults.next_id = int(data.get("fault_next_id", 1))
        self.state.clear()
        self.state.update(data.get("state", {}))

    def reset(self) -> None:
        self.rng.seed(self.seed)
        self.ledger.entries.clear()
        self.faults.items.clear()
        self.faults.next_id = 1
        self.state.clear()


def _rng_state(rng: random.Random) -> list[Any]:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _rng_restore(raw: list[Any]) -> tuple[Any, ...]:
    return (raw[0], tuple(raw[1]), raw[2])
