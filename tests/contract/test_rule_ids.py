"""Every rule id the product cites is named in the rules docs (docs/rules/*.md), and,
where the consolidated rules are beside the clone (``../shared/rules``, as in CI), is a
rule that exists there.

A refusal, an explanation or a comment that cites ``JS-7.4`` sends its reader to the
docs: an id they do not name leaves the reader with nothing to read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What ships: the server, the replay tool, the clients, the contract, the benches.
CODE = ("domain", "server", "replay", "clients", "protos/totem", "bench")
SUFFIXES = {".py", ".js", ".mjs", ".ts", ".proto"}
#: A rule id: a game's prefix, a section, optional sub-points, an optional letter (JS-4.2a).
RULE_ID = re.compile(r"\b(JS|TR|VI)-\d+(?:\.\d+)*[a-z]?\b")
DOCS = {"JS": "jungle_speed.md", "TR": "tribes.md", "VI": "village.md"}
SHARED = {"JS": "JUNGLE_SPEED.md", "TR": "TRIBES.md", "VI": "VILLAGE.md"}
SHARED_RULES = ROOT.parent / "shared" / "rules"


def ids_in(text: str) -> set[str]:
    return {m.group(0) for m in RULE_ID.finditer(text)}


def cited(roots: Iterable[str] = CODE) -> dict[str, set[str]]:
    """Each rule id cited in the code, with the files citing it."""
    found: dict[str, set[str]] = {}
    for root in roots:
        for path in sorted((ROOT / root).rglob("*")):
            if path.suffix not in SUFFIXES or "node_modules" in path.parts:
                continue
            for rule in ids_in(path.read_text(encoding="utf-8", errors="replace")):
                found.setdefault(rule, set()).add(str(path.relative_to(ROOT)))
    return found


def named_in(folder: Path, files: dict[str, str]) -> dict[str, set[str]]:
    """The ids each game's page names, by prefix."""
    return {
        prefix: ids_in((folder / name).read_text(encoding="utf-8"))
        for prefix, name in files.items()
    }


def missing(citations: dict[str, set[str]], named: dict[str, set[str]]) -> dict[str, list[str]]:
    return {
        rule: sorted(files)
        for rule, files in sorted(citations.items())
        if rule not in named[rule.split("-")[0]]
    }


def test_the_scan_finds_the_ids_the_code_cites() -> None:
    """The scan is not empty by mistake: ids known to be cited are found where they are."""
    citations = cited()
    assert "domain/village/match.py" in citations["VI-7.9"]
    assert "domain/jungle_speed/match.py" in citations["JS-7.4"]
    assert "protos/totem/v1/jungle_speed.proto" in citations["JS-1.4"]
    assert any(rule.startswith("TR-") for rule in citations)
    assert ids_in("(JS-4.2a, TR-8.1; VI-1 … VI-7) XJS-1.1") == {
        "JS-4.2a",
        "TR-8.1",
        "VI-1",
        "VI-7",
    }


def test_every_rule_the_code_cites_is_named_in_the_rules_docs() -> None:
    named = named_in(ROOT / "docs" / "rules", DOCS)
    assert missing(cited(), named) == {}, "name these ids in docs/rules/<game>.md"


def test_an_id_the_docs_lack_is_reported() -> None:
    named = {"JS": {"JS-1.1"}, "TR": set(), "VI": set()}
    assert missing({"JS-1.1": {"a.py"}, "JS-10": {"b.py"}}, named) == {"JS-10": ["b.py"]}


@pytest.mark.skipif(
    not SHARED_RULES.is_dir(), reason="the consolidated rules are not beside the clone"
)
def test_every_rule_cited_or_documented_exists_in_the_consolidated_rules() -> None:
    """The reference decides the ids: none is cited or documented that it lacks."""
    named = named_in(SHARED_RULES, SHARED)
    documented = named_in(ROOT / "docs" / "rules", DOCS)
    citations = cited()
    for prefix, ids in documented.items():
        for rule in ids:
            citations.setdefault(rule, set()).add(f"docs/rules/{DOCS[prefix]}")
    assert missing(citations, named) == {}
