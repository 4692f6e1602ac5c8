"""The skills (skills/*/SKILL.md) are playbooks agents follow, so they are held to the MCP
catalogue: front matter with a name (its folder) and a description; every tool a skill calls
exists with the argument names it shows; every state-changing tool it names is presented as
something to confirm with the user (in the same list item or paragraph)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from podplane.mcp.tools import BY_NAME

SKILLS = sorted((Path(__file__).parents[2] / "skills").glob("*/SKILL.md"))
SPAN = re.compile(r"`([^`]+)`")
CALL = re.compile(r"^([a-z]+(?:_[a-z]+)+)\s*\{(.*)\}$", re.DOTALL)
CONFIRM = re.compile(r"confirm|agree|approv|\bask\b|the user says yes", re.IGNORECASE)


def front_matter(text: str) -> dict[str, object]:
    assert text.startswith("---\n"), "no front matter"
    head, sep, _ = text[4:].partition("\n---\n")
    assert sep, "front matter not closed"
    found = yaml.safe_load(head)
    assert isinstance(found, dict)
    return found


def blocks(text: str) -> list[str]:
    """Paragraphs and list items (a list item runs until the next item or a blank line)."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        items = re.split(r"\n(?=\s*(?:[-*]|\d+\.)\s)", para)
        out.extend(items)
    return out


def calls(block: str) -> list[tuple[str, list[str]]]:
    """(tool, argument names) for each `tool {a, b?, c: 1, ...}` and each bare `tool`;
    an argument `dry_run: true` is kept as "dry_run=true" (a preview changes nothing)."""
    out = []
    for span in SPAN.findall(block):
        span = " ".join(span.split())
        if (m := CALL.match(span)) is not None:
            args = ["dry_run=true" if re.fullmatch(r"\s*dry_run:\s*true\s*", a) else
                    a.strip().split(":")[0].rstrip("?").strip() for a in _top_level(m[2])]
            out.append((m[1], [a for a in args if a and a != "..."]))
        elif span in BY_NAME:
            out.append((span, []))
    return out


def _top_level(text: str) -> list[str]:
    depth, piece, pieces = 0, "", []
    for ch in text:
        depth += ch in "[{(" and 1 or ch in "]})" and -1 or 0
        if ch == "," and depth == 0:
            pieces.append(piece)
            piece = ""
        else:
            piece += ch
    return [*pieces, piece]


def test_there_are_skills_and_each_names_tools() -> None:
    assert len(SKILLS) >= 6
    for skill in SKILLS:
        assert any(calls(b) for b in blocks(skill.read_text())), skill


@pytest.mark.parametrize("skill", SKILLS, ids=lambda p: p.parent.name)
def test_a_skill_uses_only_real_tools_and_confirms_every_change(skill: Path) -> None:
    assert lint(skill.read_text(), skill.parent.name) == []


def test_the_lint_finds_what_it_looks_for() -> None:
    bad = ("---\nname: bad\ndescription: A skill with every mistake this lint knows, one "
           "of each kind.\ntools: [node_reboot, node_fix]\n---\n\n"
           "1. `node_describe {cluster, node, verbose}` first.\n"
           "2. Then `node_reboot {cluster, node}` at once.\n"
           "3. `instance_group_add {cluster, dry_run: true}` shows the plan.\n"
           "4. `node_teleport {cluster}`.\n")
    assert lint(bad, "bad") == [
        "front matter names no tool 'node_fix'",
        "node_describe has no argument 'verbose'",
        "node_reboot (changes something) is not presented as a step to confirm: "
        "'2. Then `node_reboot {cluster, node}` at once.'",
        "no tool 'node_teleport'"]
    assert lint(bad.replace("name: bad", "name: other"), "bad")[0] == "name 'other' is not bad"


def lint(text: str, folder: str) -> list[str]:
    meta = front_matter(text)
    problems = [] if meta.get("name") == folder else [f"name {meta.get('name')!r} is not "
                                                      f"{folder}"]
    if not isinstance(meta.get("description"), str) or len(str(meta["description"])) < 40:
        problems.append("no description")
    problems += [f"front matter names no tool {t!r}" for t in meta.get("tools") or []
                 if t not in BY_NAME]
    for block in blocks(text.partition("\n---\n")[2]):
        for tool, args in calls(block):
            found = BY_NAME.get(tool)
            if found is None:
                problems.append(f"no tool {tool!r}")
                continue
            known = set(found.input_schema()["properties"]) | {"dry_run=true"}
            problems += [f"{tool} has no argument {a!r}" for a in args if a not in known]
            preview = "dry_run=true" in args and "dry_run" in known
            if found.effect.mutates and not preview and not CONFIRM.search(block):
                problems.append(f"{tool} (changes something) is not presented as a step to "
                                f"confirm: {block.strip()[:70]!r}")
    return problems
