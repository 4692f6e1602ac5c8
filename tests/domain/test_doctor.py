"""Pure parts of `podplane doctor`: whose policies to simulate, what to simulate, verdicts."""

from __future__ import annotations

from podplane.domain.aws_policy import POLICY, policy_actions, probes
from podplane.domain.doctor import Finding, Status, iam_principal, quota_finding, worst


def test_the_iam_entity_behind_a_caller() -> None:
    assert iam_principal("arn:aws:sts::111122223333:assumed-role/ops/alice") == ("role", "ops")
    assert iam_principal("arn:aws:iam::111122223333:user/team/bob") == ("user", "bob")
    assert iam_principal("arn:aws:iam::111122223333:root") is None


def test_probes_try_every_granted_action_on_the_granted_shape() -> None:
    found = probes("111122223333", "eu-west-1", "aws-cn")
    assert {a for p in found for a in p.actions} == policy_actions()
    roles = next(p for p in found if p.statement == "OwnRoles")
    assert roles.resources == (
        "arn:aws-cn:iam::111122223333:role/podplane-doctor",
        "arn:aws-cn:iam::111122223333:role/SageMakerHyperPodInference-podplane-doctor")
    passes = [p.context for p in found if p.statement == "PassOwnRoles"]
    assert (("iam:PassedToService", "sagemaker.amazonaws.com"),) in passes and len(passes) == 3
    eks = next(p for p in found if p.statement == "Eks")
    assert eks.resources[0] == "arn:aws-cn:eks:eu-west-1:111122223333:cluster/doctor"
    assert len(POLICY["Statement"]) == len({p.statement for p in found})


def test_quota_verdicts_count_what_is_in_use() -> None:
    assert quota_finding("ml.p5.48xlarge", 2, 4, 2, "applied").status is Status.OK
    tight = quota_finding("ml.p5.48xlarge", 3, 4, 2, "applied")
    assert tight.status is Status.FAIL and "to at least 5" in tight.fix
    assert quota_finding("ml.x", 1, None, 0, "applied").status is Status.WARN


def test_the_worst_finding_decides() -> None:
    ok, warn = Finding("a", Status.OK, ""), Finding("b", Status.WARN, "")
    assert worst([ok]) is Status.OK and worst([ok, warn]) is Status.WARN
    assert worst([warn, Finding("c", Status.FAIL, "")]) is Status.FAIL
