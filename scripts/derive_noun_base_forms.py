"""Write taxoforge/noun_base_forms.tsv from an installed WordNet 3.0 (see taxoforge.text).

    python scripts/derive_noun_base_forms.py [/usr/share/wordnet]

The table is derived, never edited by hand: rerun this after changing the rules in
taxoforge/text.py (tests/taxoforge/test_text.py checks that the shipped file is what this
script writes from Debian's wordnet-base package).
"""

from __future__ import annotations

import sys
from pathlib import Path

from taxoforge.text import BASE_FORM_TABLE, derive_noun_base_forms

HEADER = ("# word<TAB>noun base form: WordNet 3.0 noun vocabulary where the corpus-free rules of "
          "taxoforge/text.py differ from the base form of the word's morphy class.\n"
          "# Derived by scripts/derive_noun_base_forms.py from {src}; do not edit.\n")


def render(table: dict[str, str], src: str = "/usr/share/wordnet (Debian wordnet-base)") -> str:
    return HEADER.format(src=src) + "".join(f"{w}\t{b}\n" for w, b in sorted(table.items()))


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else Path("/usr/share/wordnet")
    out = Path(__file__).resolve().parents[1] / "taxoforge" / BASE_FORM_TABLE
    text = render(derive_noun_base_forms(src))
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    print(f"{out}: {text.count(chr(10)) - 2} words")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
