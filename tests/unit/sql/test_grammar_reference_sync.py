"""The productions rendered in ``grammar/README.md`` are those of ``grammar/provsql_dp.ebnf``.

The reference shows the grammar in ```` ```ebnf ```` blocks beside its prose; a production changed
in the EBNF file (``privacy_clause`` gaining ``accuracy_clause``, ``stream_stmt`` joining
``privacy_statement``) must change there too. Compared token by token, comments left out; a
prose special sequence (``? … ?``) may be shortened in the reference.
"""

from __future__ import annotations

import re
from pathlib import Path

GRAMMAR_DIR = Path(__file__).resolve().parents[3] / "grammar"


def _productions(text: str) -> dict[str, str]:
    text = re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S)
    text = re.sub(r"\?[^?]*\?", "?", text)  # prose: present, not compared word for word
    out = {}
    for m in re.finditer(r"^([a-z_]+)\s*=(.*?);[ \t]*$", text, flags=re.S | re.M):
        out[m.group(1)] = " ".join(m.group(2).split())
    return out


def test_the_reference_renders_the_grammar_file_s_productions():
    grammar = _productions((GRAMMAR_DIR / "provsql_dp.ebnf").read_text(encoding="utf-8"))
    readme = (GRAMMAR_DIR / "README.md").read_text(encoding="utf-8")
    shown = _productions("\n".join(re.findall(r"```ebnf\n(.*?)```", readme, flags=re.S)))
    assert len(shown) > 40, "the reference's ebnf blocks were not found"
    assert not set(shown) - set(grammar), f"the reference shows unknown productions {set(shown) - set(grammar)}"
    missing = sorted(set(grammar) - set(shown))
    assert not missing, f"grammar/README.md shows no production {missing}"
    differ = {k: (grammar[k], shown[k]) for k in grammar if grammar[k] != shown[k]}
    assert not differ, f"grammar/README.md renders these differently from provsql_dp.ebnf: {differ}"
