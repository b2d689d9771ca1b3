"""From a model's raw text to the answer that gets mapped and scored (SPEC §4).

The raw text is always kept; :func:`parse_answer` derives the answer:

1. **Templates** are stripped, repeatedly, from the front: ``A: <answer>``, ``Answer:``,
   ``The answer is: …``, ``Final answer:``, ``ASSISTANT:``; a trailing full stop and
   surrounding quotes go too. A ``<answer>`` … ``</answer>`` wrapper is unwrapped.
2. **Multiple choice.** The options are read from the question (``A) Esox lucius, B) …``,
   ``(a) …``, ``A. …`` one per line, ``Options: A: …``). An answer that starts with a
   letter marker (``B)``, ``(b)``, ``b``, ``B.``, ``B:``, ``option B``) is resolved against
   them: if the text after the letter names an option, that option wins (flag
   ``mc_letter_text_conflict`` when it is not the letter's option); otherwise the letter's
   option is the answer. A bare letter that is not among the options makes the row
   unparseable; one followed by text keeps the text (flag ``mc_letter_not_an_option``).
   Without options, a letter stays text (flag ``mc_letter_without_options``).
3. **Abstentions** ("I cannot tell", "sorry", "I don't know", "unknown", empty answers) are
   detected on the normalised answer. A hedge followed by a guess ("I'm not sure, but it
   looks like a heron") is *not* an abstention: the guess is scored.

>>> parse_answer("The answer is: D) Gambusia affinis.",
...              "Options: A) Esox lucius, B) Notropis atherinoides, C) Cottus bairdii, D) Gambusia affinis.").answer
'Gambusia affinis'
>>> parse_answer("A: a golden retriever").answer
'a golden retriever'
>>> parse_answer("Sorry, I cannot tell from this image.").abstained
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from taxoforge.text import normalise_text

__all__ = ["ParsedAnswer", "parse_answer", "parse_options", "is_abstention", "UnparseableAnswer"]


class UnparseableAnswer(ValueError):
    """The text cannot be turned into an answer (e.g. a letter that is not an option)."""


@dataclass
class ParsedAnswer:
    raw: str
    answer: str
    abstained: bool = False
    option_letter: str | None = None
    flags: list[str] = field(default_factory=list)


_TEMPLATE_PREFIXES = re.compile(
    r"""^\s*(?:
        (?:assistant|gpt|model|response|output)\s*:
      | (?:so\s*,?\s*|therefore\s*,?\s*|thus\s*,?\s*)?(?:the\s+)?(?:final\s+|correct\s+|best\s+)?answer\s+is\s*:?
      | (?:final\s+|correct\s+)?answer\s*:
      | a\s*:(?!\S)
      | a\s*:
    )\s*""",
    re.IGNORECASE | re.VERBOSE,
)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)

# Option lists inside a question. Markers: "A)", "(A)", "A.", "A:" followed by text up to the
# next marker, a newline, or the end.
_OPTION_MARK = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=[,;:]))\(?([A-Za-z])\)\s*|(?:(?<=\n)|(?<=^)|(?<=:\s))([A-Z])[.:]\s+")
_LETTER_ANSWER = re.compile(
    r"""^\s*(?:option\s+|choice\s+)?
        (?: \(\s*(?P<a>[A-Za-z])\s*\)      # (b)
          | (?P<b>[A-Za-z])\s*[).:]         # B)  B.  B:
          | (?P<c>[A-Za-z])(?=\s*$)         # b
        )\s*(?P<rest>.*)$""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)

_ABSTAIN_PHRASES = re.compile(
    r"""\b(?:
        sorry
      | (?:i\s+)?(?:can\s*not|cant|can\s+t|could\s*not|couldnt|am\s+unable\s+to|m\s+unable\s+to|unable\s+to|not\s+able\s+to|impossible\s+to|not\s+possible\s+to|difficult\s+to|hard\s+to)
        \s+(?:\w+\s+){0,2}?(?:tell|determine|identify|say|know|see|answer|recogni[sz]e|classify|be\s+sure)
      | (?:i\s+)?(?:do\s+not|dont|don\s+t)\s+know
      | no\s+idea
      | not\s+(?:enough|sufficient)\s+information
      | insufficient\s+information
    )\b""",
    re.VERBOSE,
)
_ABSTAIN_WHOLE = {"", "unknown", "none", "n a", "na", "nan", "null", "not sure", "unsure", "idk", "no answer",
                  "cannot be determined", "undetermined", "unclear", "uncertain", "i am not sure", "im not sure",
                  "i m not sure", "none of the above"}
_HEDGE_THEN_GUESS = re.compile(r"\b(?:but|however|maybe|perhaps|possibly|though|although|probably|likely|looks\s+like|appears\s+to\s+be|might\s+be|may\s+be|could\s+be|seems\s+to\s+be|my\s+best\s+guess)\b")


def parse_options(question: str | None) -> dict[str, str]:
    """Multiple-choice options found in ``question``: ``{"A": "Esox lucius", …}`` (upper-case
    letters, option text stripped of trailing punctuation). Only a run of consecutive letters
    starting at A counts, so stray capitals in prose are ignored."""
    if not question:
        return {}
    marks = [(m.start(), m.end(), (m.group(1) or m.group(2)).upper()) for m in _OPTION_MARK.finditer(question)]
    # keep the longest run A, B, C, … of consecutive markers
    best: list[tuple[int, int, str]] = []
    for i in range(len(marks)):
        if marks[i][2] != "A":
            continue
        run = [marks[i]]
        for m in marks[i + 1:]:
            if m[2] == chr(ord(run[-1][2]) + 1) and m[0] >= run[-1][1]:
                run.append(m)
        if len(run) > len(best):
            best = run
    if len(best) < 2:
        return {}
    out = {}
    for j, (_s, e, letter) in enumerate(best):
        end = best[j + 1][0] if j + 1 < len(best) else len(question)
        text = question[e:end]
        text = text.split("\n", 1)[0]
        text = text.strip().rstrip(",;").strip()
        if j + 1 == len(best):  # last option: stop at the sentence end
            text = re.split(r"(?<=[^A-Z])\.\s|\.$", text, maxsplit=1)[0].strip()
        text = text.rstrip(".,; ").strip()
        out[letter] = text
    return out


def _strip_templates(text: str) -> str:
    m = _ANSWER_TAG.search(text)
    if m:
        text = m.group(1)
    for _ in range(4):
        new = _TEMPLATE_PREFIXES.sub("", text, count=1)
        if new == text:
            break
        text = new
    text = text.strip()
    text = text.strip("\"'`“”‘’*").strip()
    while text.endswith((".", "!")):
        text = text[:-1].rstrip()
    return text


def is_abstention(answer: str) -> bool:
    """True when ``answer`` declines to answer (see the module docstring)."""
    norm = normalise_text(answer)
    if norm in _ABSTAIN_WHOLE:
        return True
    m = _ABSTAIN_PHRASES.search(norm)
    if not m:
        return False
    return not _HEDGE_THEN_GUESS.search(norm, m.end())


def parse_answer(raw, question: str | None = None, options: dict[str, str] | None = None) -> ParsedAnswer:
    """Parse one model output. ``options`` overrides the options read from ``question``.

    Raises :class:`UnparseableAnswer` when ``raw`` is not text or names a letter that is not
    among the options."""
    if raw is None:
        raise UnparseableAnswer("no model output (null)")
    if not isinstance(raw, str):
        raise UnparseableAnswer(f"model output is a {type(raw).__name__}, not text: {raw!r:.60}")
    flags: list[str] = []
    answer = _strip_templates(raw)
    opts = options if options is not None else parse_options(question)
    letter = None
    m = _LETTER_ANSWER.match(answer) if answer else None
    if m:
        cand = (m.group("a") or m.group("b") or m.group("c")).upper()
        rest = _strip_templates(m.group("rest") or "")
        single_letter_word = m.group("c") is not None
        if opts:
            norm_opts = {normalise_text(v): k for k, v in opts.items()}
            rest_letter = norm_opts.get(normalise_text(rest)) if rest else None
            if rest_letter is not None:
                letter = rest_letter
                if rest_letter != cand:
                    flags.append("mc_letter_text_conflict")
            elif cand in opts and (not rest or m.group("a") or m.group("b")):
                letter = cand
                if rest:
                    flags.append("mc_letter_text_conflict")
            elif cand not in opts and (m.group("a") or single_letter_word or (m.group("b") and not rest)):
                raise UnparseableAnswer(f"answer letter {cand!r} is not among the options {sorted(opts)}")
            elif cand not in opts and m.group("b"):
                flags.append("mc_letter_not_an_option")
            if letter is not None:
                answer = opts[letter]
                flags.append("mc_letter")
        elif single_letter_word or m.group("a"):
            flags.append("mc_letter_without_options")
    abstained = is_abstention(answer)
    if abstained:
        flags.append("abstention")
    return ParsedAnswer(raw=raw, answer=answer, abstained=abstained, option_letter=letter, flags=flags)
