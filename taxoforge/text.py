"""Text normalisation shared by label linking and prediction mapping (SPEC §3).

``normalise_text`` is the one normal form used everywhere a name is compared with
another name: Unicode NFKC, casefold, dashes to spaces, every other punctuation
character removed, whitespace collapsed.

>>> normalise_text("  Pied-billed   Grebe! ")
'pied billed grebe'
>>> normalise_text("Esox Americanus")
'esox americanus'
>>> normalise_text("St. John's-wort")
'st johns wort'
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalise_text"]

# Every Unicode dash (Pd) plus the underscore WordNet uses between lemma words.
_DASHES = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Pd") + "_"
_DASH_TABLE = str.maketrans({ch: " " for ch in _DASHES})
# Punctuation (P*) and symbols (S*) other than dashes are deleted.
_PUNCT_TABLE = str.maketrans(
    {
        chr(c): None
        for c in range(0x110000)
        if unicodedata.category(chr(c))[0] in "PS" and chr(c) not in _DASHES
    }
)
_WS = re.compile(r"\s+")


def normalise_text(text: str | None) -> str:
    """Return the normal form of ``text`` (SPEC §3); ``None`` becomes ``""``."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = text.translate(_DASH_TABLE).translate(_PUNCT_TABLE)
    return _WS.sub(" ", text).strip()
