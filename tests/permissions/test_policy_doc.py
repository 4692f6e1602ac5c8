"""docs/aws-permissions.md holds exactly the policy podplane needs: every AWS action the code
can call is in it, and nothing it lists is left uncalled (except the actions AWS checks without
a call of ours, each with its reason)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import botocore.session

from podplane.domain.aws_policy import IMPLIED, MLFLOW_REST, POLICY, policy_actions
from tests.permissions.aws_calls import S3_ACTIONS, calls_in, product_actions

DOC = Path(__file__).resolve().parents[2] / "docs" / "aws-permissions.md"
# IAM quotas: a customer managed policy holds at most 6,144 characters (whitespace excluded)
MANAGED_POLICY_MAX = 6144
PERMISSION_ONLY = {"iam:PassRole"}  # an IAM action with no API operation of its own


def doc_policy() -> dict[str, Any]:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1, "the doc has exactly one JSON policy block"
    return dict(json.loads(blocks[0]))


def test_the_doc_shows_the_policy_doctor_simulates() -> None:
    assert doc_policy() == POLICY


def test_every_action_the_code_calls_is_granted() -> None:
    called = product_actions()
    missing = {a: sorted(where) for a, where in called.items() if a not in policy_actions()}
    assert missing == {}, f"add these to {DOC.name} and aws_policy.POLICY: {missing}"


def test_nothing_is_granted_that_the_code_never_needs() -> None:
    called = set(product_actions())
    unused = policy_actions() - called - set(IMPLIED)
    assert unused == set(), f"no code calls these; drop them or say why in IMPLIED: {unused}"
    assert set(IMPLIED) <= policy_actions()
    assert set(IMPLIED).isdisjoint(called), "a called action is not 'implied'"


def test_every_granted_action_is_a_real_one() -> None:
    session = botocore.session.get_session()
    by_prefix: dict[str, set[str]] = {}
    for service in session.get_available_services():
        model = session.get_service_model(service)
        by_prefix.setdefault(model.signing_name, set()).update(model.operation_names)
    by_prefix["s3"] |= set(S3_ACTIONS.values())
    unknown = [a for a in policy_actions() - PERMISSION_ONLY - MLFLOW_REST
               if a.split(":")[1] not in by_prefix.get(a.split(":")[0], set())]
    assert unknown == []


def test_it_fits_one_managed_policy_and_cites_its_sources() -> None:
    assert len(json.dumps(POLICY, separators=(",", ":"))) <= MANAGED_POLICY_MAX
    text = DOC.read_text()
    for page in ("list_amazonec2", "list_amazonelastickubernetesservice",
                 "list_awsidentityandaccessmanagementiam", "list_amazons3",
                 "list_amazonsagemaker", "list_servicequotas",
                 "list_awssecuritytokenservice"):
        assert f"service-authorization/latest/reference/{page}.html" in text, page


def test_the_collector_sees_each_kind_of_call(tmp_path: Path) -> None:
    """The collector itself can fail: each call shape it must recognise, in a module."""
    src = tmp_path / "probe.py"
    src.write_text(
        "async def f(aws, ec2, op):\n"
        "    await aws.call('iam', 'get_role', RoleName='x')\n"
        "    await aws.maybe('s3', 'list_objects_v2', Bucket='b')\n"
        "    await ec2.call('describe_vpcs')\n"
        "    await ec2.call(op)\n"
        "    for op in ('list_service_quotas', 'list_aws_default_service_quotas'):\n"
        "        await aws.call('service-quotas', op, ServiceCode='sagemaker')\n"
        "    _ = 'create_nat_gateway'\n"
        "    await self._anonymous.call('s3', 'get_object', Bucket='public', Key='k')\n")
    assert calls_in(src) == {("iam", "get_role"), ("s3", "list_objects_v2"),
                             ("ec2", "describe_vpcs"), ("ec2", "create_nat_gateway"),
                             ("service-quotas", "list_service_quotas"),
                             ("service-quotas", "list_aws_default_service_quotas")}
