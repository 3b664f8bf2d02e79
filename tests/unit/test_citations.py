"""What users read cites papers by their authors and titles, never by paths outside the repository.

The papers live outside the repository (``papers/000`` … ``papers/004`` were the lead's shared
folder) and so does the design document (``DESIGN §8``): the README, the grammar reference, the
package's docstrings and messages, the examples and ``docs/`` cite a paper by its authors (the
titles are in the README's "Papers" list and in ``docs/analysts.md``) and the side-channel rule
by the README's section "No side channels". ``python tests/unit/test_citations.py --fix``
rewrites every old reference with :data:`CITATIONS` (after a merge brings new ones).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: where users read: the README, the grammar reference, the package, the examples, docs/
READ = ("README.md", "grammar", "provsql_dp", "examples", "docs")
OLD = re.compile(r"papers/00\d|DESIGN( §\d+|\.md)")
#: (old, new) in this order: ranges and lists first, then one paper, then the design document
CITATIONS = (
    (r"papers/000–002", "the Blowfish papers: Haney et al., Liu et al., He et al."),
    (r"papers/002, 000, 001", "He et al., Haney et al., Liu et al."),
    (r"papers/000, 001, 002", "Haney et al., Liu et al., He et al."),
    (r"papers/000", "Haney et al."),
    (r"papers/001", "Liu et al."),
    (r"papers/002", "He et al."),
    (r"papers/003", "Chen & Zhou"),
    (r"papers/004", "Fang & Chang"),
    (r"\s\(DESIGN §8\):", ":"),  # the README's own "No side channels" section
    (r" \(DESIGN §3\)", ""),
    (r"\(DESIGN §6\)", "(He et al.)"),
    (r"DESIGN §8", 'README, "No side channels"'),
)
#: the titles the README's "Papers" list gives for the names above
TITLES = {
    "Haney et al.": "Design of Policy-Aware Differentially Private Algorithms",
    "Liu et al.": "Catch a Blowfish Alive: A Demonstration of Policy-Aware Differential Privacy "
                  "for Interactive Data Exploration",
    "He et al.": "Blowfish Privacy: Tuning Privacy-Utility Trade-offs using Policies",
    "Chen & Zhou": "Recursive Mechanism: Towards Node Differential Privacy and Unrestricted Joins",
    "Fang & Chang": "Differential Privacy with δ-Neighbourhood for Spatial and Dynamic Datasets",
}


def files():
    for name in READ:
        p = REPO / name
        yield from ([p] if p.is_file() else sorted(
            f for f in p.rglob("*") if f.suffix in {".py", ".md", ".ebnf", ".sql", ".html",
                                                     ".js"} and f.is_file()))


def fix(text: str) -> str:
    """Every old reference rewritten.

    >>> fix("the general recursive mechanism of papers/003 §4.2 (DESIGN §8)")
    'the general recursive mechanism of Chen & Zhou §4.2 (README, "No side channels")'
    """
    for old, new in CITATIONS:
        text = re.sub(old, new, text)
    return text


def test_no_reference_to_paths_outside_the_repository():
    left = [f"{f.relative_to(REPO)}:{n}: {line.strip()[:90]}"
            for f in files() for n, line in enumerate(f.read_text().splitlines(), 1)
            if OLD.search(line)]
    assert not left, ("cite papers by authors (README, 'Papers'), not by path; run "
                      "python tests/unit/test_citations.py --fix\n" + "\n".join(left[:20]))


def test_every_cited_name_has_its_title_in_the_readme():
    readme = " ".join((REPO / "README.md").read_text().split())  # titles wrap across lines
    for name, title in TITLES.items():
        assert title in readme, f"the README's 'Papers' list lacks {title!r} ({name})"


def test_fix_rewrites_every_old_form():
    import doctest

    assert doctest.testmod(sys.modules[__name__]).failed == 0
    assert not OLD.search(fix("papers/000–002 papers/004's §7 (DESIGN §6) DESIGN §8"))


if __name__ == "__main__" and sys.argv[1:] == ["--fix"]:
    for f in files():
        text = f.read_text()
        if OLD.search(text):
            f.write_text(fix(text))
            print(f"rewrote {f.relative_to(REPO)}")
