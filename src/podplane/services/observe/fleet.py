"""A cluster's node table served from the observation cache: the HyperPod <-> Kubernetes <->
pods join is computed once per change of its inputs, and each page's JSON once per table, so
a thousand readers of an unchanged fleet cost one dictionary lookup each."""

from __future__ import annotations

import gzip
import hashlib
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import pydantic_core

from podplane.domain.effects import Effect
from podplane.domain.errors import CloudError
from podplane.services import scope
from podplane.services.cloud_access import Cloud, cloud_of
from podplane.services.context import Ctx
from podplane.services.groups.steps import CLUSTER_LABEL, instance_id
from podplane.services.nodes import views
from podplane.services.registry import service

Shape = dict[str, Any]
log = logging.getLogger("podplane.observe")
PAGES_KEPT = 64  # distinct (filter, page) bodies kept per table


@dataclass
class Page:
    body: bytes  # the JSON list, as the route sends it
    etag: str
    total: int  # nodes matching the filter, all pages
    next_cursor: str | None
    _gzipped: bytes | None = None

    @property
    def gzipped(self) -> bytes:
        """Compressed once per page, not once per reader (1,000 nodes: ~1 MB -> ~50 kB)."""
        if self._gzipped is None:
            self._gzipped = gzip.compress(self.body, compresslevel=5, mtime=0)
        return self._gzipped


@dataclass
class NodeTable:
    inputs: tuple[Any, ...]  # the cache's objects it was joined from (compared by identity)
    nodes: list[views.NodeView]
    pages: OrderedDict[tuple[Any, ...], Page] = field(default_factory=OrderedDict)

    def page(self, group: str | None, health: str | None, after: str | None,
             limit: int | None) -> Page:
        key = (group, health, after, limit)
        if (hit := self.pages.get(key)) is not None:
            return hit
        chosen, cursor = views.select(self.nodes, group=group, health=health, after=after,
                                      limit=limit)
        total = len(views.select(self.nodes, group=group, health=health)[0]) \
            if limit is not None or after is not None else len(chosen)
        body = pydantic_core.to_json(chosen)  # datetimes as the typed models write them
        etag = 'W/"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
        self.pages[key] = made = Page(body, etag, total, cursor)
        if len(self.pages) > PAGES_KEPT:
            self.pages.popitem(last=False)
        return made


_tables: dict[str, NodeTable] = {}


async def _inputs(cloud: Cloud, ref: scope.ClusterRef) -> tuple[Any, ...]:
    described = await scope.describe(cloud.aws.hyperpod, ref)
    summaries = await cloud.aws.hyperpod.list_cluster_nodes(ref.hyperpod)
    nodes: list[Shape] | None
    pods: list[Shape] | None
    try:
        kube = await cloud.kube_for(ref.eks)
        nodes = await kube.list("v1", "Node", labels={CLUSTER_LABEL: ref.hyperpod})
        pods = await kube.list("v1", "Pod")
    except CloudError as err:
        log.warning("nodes of %s without Kubernetes: %s", ref.name, err.message)
        nodes = pods = None
    return described, summaries, nodes, pods


async def node_table(ctx: Ctx, ref: scope.ClusterRef) -> NodeTable:
    inputs = await _inputs(cloud_of(ctx.app), ref)
    table = _tables.get(ref.hyperpod)
    if table is not None and len(table.inputs) == len(inputs) and \
            all(a is b for a, b in zip(table.inputs, inputs, strict=True)):
        return table
    described, summaries, nodes, pods = inputs
    kube = None if nodes is None else {instance_id(n): n for n in nodes}
    joined = views.join(summaries, kube, views.pods_by_node(pods or []),
                        described.get("NodeRecovery"))
    _tables[ref.hyperpod] = table = NodeTable(inputs, joined)
    return table


@service(Effect.READ, "node.page")
async def node_page(ctx: Ctx, cluster: str, group: str | None = None,
                    health: str | None = None, after: str | None = None,
                    limit: int | None = None) -> Page:
    """One page of a cluster's nodes as JSON with its ETag (see `NodeTable`)."""
    table = await node_table(ctx, await scope.cluster_ref(ctx, cluster))
    return table.page(group, health, after, limit)
