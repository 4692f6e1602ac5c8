"""Write podplane's IAM policy (podplane.domain.aws_policy.POLICY, the policy of
docs/aws-permissions.md) into the CloudFormation template's ControlPlanePolicy, between its
BEGIN/END markers, so the deployed role can never drift from the policy the code is checked
against (tests/deploy/test_policy_sync.py runs `--check`).

Usage: python deploy/render_policy.py [--check] [TEMPLATE]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

TEMPLATE = Path(__file__).resolve().parent / "cloudformation" / "podplane.yaml"
BEGIN = "# BEGIN generated from podplane.domain.aws_policy.POLICY by deploy/render_policy.py"
END = "# END generated"


def policy_block(policy: dict[str, Any], indent: str) -> str:
    body = yaml.safe_dump({"PolicyDocument": policy}, sort_keys=False, width=100)
    return "".join(f"{indent}{line}\n" for line in body.splitlines())


def render(text: str, policy: dict[str, Any]) -> str:
    """The template with the lines between the markers replaced by `policy`."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise ValueError(f"the template needs one '{BEGIN}' line before one '{END}' line")
    begin = lines[starts[0]]
    indent = begin[: len(begin) - len(begin.lstrip())]
    return "".join(lines[: starts[0] + 1]) + policy_block(policy, indent) + "".join(
        lines[ends[0]:])


def main(argv: list[str]) -> int:
    from podplane.domain.aws_policy import POLICY

    check = "--check" in argv
    paths = [a for a in argv if a != "--check"]
    template = Path(paths[0]) if paths else TEMPLATE
    text = template.read_text()
    rendered = render(text, POLICY)
    if check:
        if rendered != text:
            print(f"{template}: its policy differs from aws_policy.POLICY; run "
                  "python deploy/render_policy.py", file=sys.stderr)
            return 1
        return 0
    template.write_text(rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
