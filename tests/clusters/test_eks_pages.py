"""EKS list calls read every page: the real add-on catalogue is longer than one page, and a
default version missing from page one would make UpdateAddon fail (real-aws-behaviour.md #22)."""

from __future__ import annotations

from typing import Any

from podplane.cloud.aws.eks import EksAdapter


class PagedCaller:
    """Answers like EKS: `nextToken` until the last page."""

    def __init__(self, pages: list[dict[str, Any]]) -> None:
        self.pages, self.calls = pages, []  # type: ignore[var-annotated]

    async def call(self, service: str, operation: str, **params: Any) -> dict[str, Any]:
        self.calls.append(params)
        index = int(params.get("nextToken", 0))
        page = dict(self.pages[index])
        if index + 1 < len(self.pages):
            page["nextToken"] = str(index + 1)
        return page


async def test_describe_addon_versions_reads_every_page() -> None:
    caller = PagedCaller([{"addons": [{"addonName": "vpc-cni"}]},
                          {"addons": [{"addonName": "coredns"}]}])
    got = await EksAdapter(caller).describe_addon_versions(kubernetes_version="1.33")  # type: ignore[arg-type]
    assert [a["addonName"] for a in got] == ["vpc-cni", "coredns"]
    assert caller.calls[1] == {"kubernetesVersion": "1.33", "nextToken": "1"}


async def test_list_addons_and_associations_read_every_page() -> None:
    caller = PagedCaller([{"addons": ["a"]}, {"addons": ["b"]}, {"addons": ["c"]}])
    assert await EksAdapter(caller).list_addons("eks1") == ["a", "b", "c"]  # type: ignore[arg-type]
    caller = PagedCaller([{"associations": [{"associationId": "a-1"}]},
                          {"associations": [{"associationId": "a-2"}]}])
    listed = await EksAdapter(caller).list_pod_identity_associations("eks1")  # type: ignore[arg-type]
    assert [a["associationId"] for a in listed] == ["a-1", "a-2"]
