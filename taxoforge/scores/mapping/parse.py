"""From a model's raw text to the answer that gets mapped and scored (docs/method.md#model-outputs).

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
3. **Refusals** are decided by *whether the answer names anything* plus refusal cues
   (docs/method.md#mapping-an-answer-to-a-node). The answer is cut into clauses (at punctuation and at "but", "however",
   "though" …); a clause carrying a refusal cue — an apology, an inability or
   impossibility to tell/determine/identify, "I don't know", "not sure", "not enough
   detail", "unknown", "unclear", or a bare denial ("no one", "no company": "no" and one or
   two words) — is *refused*, names in it included ("I can't tell which bird this is": *bird*
   is not an answer). The rest is ``unrefused``. An answer with a
   cue is an **abstention** when the unrefused rest names nothing (scoring asks the
   taxonomy: :meth:`taxoforge.scores.mapping.TaxonomyIndex.names_anything`; without one,
   any word outside the closed classes of :mod:`taxoforge.scores.mapping.vocabulary` counts), and
   otherwise an answer, however hedged ("It might be a golden retriever, I don't know for
   sure" → ``It might be a golden retriever``). Empty answers and whole-answer
   non-answers ("unknown", "N/A", "none", "no idea") are abstentions.
4. **None of the above** is an answer (``nota``) when the question offers it as an option
   (VLM4Bio's NOTA set: the correct option was replaced by "None of the above"), and an
   abstention otherwise.

>>> parse_answer("The answer is: D) Gambusia affinis.",
...              "Options: A) Esox lucius, B) Notropis atherinoides, C) Cottus bairdii, D) Gambusia affinis.").answer
'Gambusia affinis'
>>> parse_answer("A: a golden retriever").answer
'a golden retriever'
>>> parse_answer("Sorry, I cannot tell from this image.").abstained
True
>>> p = parse_answer("It might be a golden retriever, I don't know for sure.")
>>> p.abstained, p.unrefused
(False, 'It might be a golden retriever')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from taxoforge.scores.mapping.vocabulary import is_non_naming
from taxoforge.text import normalise_text

__all__ = ["ParsedAnswer", "parse_answer", "parse_options", "is_abstention", "split_refusal", "is_nota",
           "UnparseableAnswer", "resolve_letter"]


class UnparseableAnswer(ValueError):
    """The text cannot be turned into an answer (e.g. a letter that is not an option)."""


@dataclass
class ParsedAnswer:
    """``answer``: the text after templates and letters; ``refusal``: a refusal cue was
    found, and ``unrefused`` is the answer without its refused clauses (what gets mapped
    when it names something); ``abstained``: the taxonomy-free decision (module
    docstring); ``nota``: "none of the above" chosen where the question offers it;
    ``options``: the question's options.

    Attributes
    ----------
    raw : str
        The model's text, as given.
    answer : str
        The text after templates and letters.
    abstained : bool
        Whether the answer declines (scored as the root).
    option_letter : str or None
        The multiple-choice letter the answer picked, if any.
    flags : list[str]
        What parsing did (``template``, ``letter``, ``truncated`` …).
    refusal : bool
        Whether a refusal cue was found.
    unrefused : str
        The answer without its refused clauses (what gets mapped when it names
        something).
    nota : bool
        "none of the above" chosen where the question offers it.
    options : dict[str, str]
        The question's options.
    """

    raw: str
    answer: str
    abstained: bool = False
    option_letter: str | None = None
    flags: list[str] = field(default_factory=list)
    refusal: bool = False
    unrefused: str = ""
    nota: bool = False
    options: dict[str, str] = field(default_factory=dict)


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
# (Written for speed: a marker starts with "(" or a letter, checked first; "after whitespace,
# a comma, semicolon or colon, or at the start" as one negative look-behind.)
_OPTION_MARK = re.compile(r"(?=[(A-Za-z])(?:(?<![^\s,;:])\(?([A-Za-z])\)\s*|(?:(?<![^\n])|(?<=:\s))([A-Z])[.:]\s+)")
_LETTER_ANSWER = re.compile(
    r"""^\s*(?:option\s+|choice\s+)?
        (?: \(\s*(?P<a>[A-Za-z])\s*\)      # (b)
          | (?P<b>[A-Za-z])\s*[).:]         # B)  B.  B:
          | (?P<c>[A-Za-z])(?=\s*$)         # b
        )\s*(?P<rest>.*)$""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)

# Refusal cues, matched on the normal form of one clause (apostrophes inside words are
# deleted: "can't" -> "cant", "I'm" -> "im").
_TELL = (r"(?:tell|determine|identify|say|know|see|answer|recogni[sz]e|classify|be\s+sure|be\s+certain|make\s+out|"
         r"distinguish|confirm|provide|give|specify|discern|decide|judge|assess|verify|pinpoint|name|guess)")
_REFUSAL_CUE = re.compile(
    rf"""\b(?:
        sorry | apologi[sz]e | unfortunately
      | (?:cant|cannot|can\s+not|couldnt|could\s+not|unable\s+to|not\s+able\s+to|impossible\s+to|
           not\s+possible\s+to|no\s+way\s+to|hard\s+to|difficult\s+to|too\s+\w+\s+to)
        \s+(?:\w+\s+){{0,3}}?{_TELL}
      | (?:cant|cannot|can\s+not|couldnt|could\s+not|not)\s+be\s+(?:determined|identified|told|known|seen|
           recogni[sz]ed|classified|confirmed|ascertained|established|said)
      | (?:dont|do\s+not|doesnt|does\s+not|didnt|did\s+not)\s+know
      | not\s+(?:\w+\s+)?(?:sure|certain|confident|clear|visible|identifiable|recogni[sz]able|enough|sufficient|possible)
      | no\s+idea | unsure | insufficient | lack\s+of | lacks
      | unknown | unidentifiable | unidentified | undetermined | indeterminate | unclear | uncertain
      | unrecogni[sz]able | ambiguous
    )\b""",
    re.VERBOSE,
)
_NON_ANSWERS = {"", "n a", "na", "nan", "null", "none", "nil", "nothing", "idk", "no answer", "not applicable",
                "pass", "skip", "no", "nobody", "noone"}
# A clause that is a bare denial: "no" and a noun phrase of one or two words, written apart
# ("no one", "no company", "no bird"): it says there is nothing to name ("no-see-um" is a name).
_DENIAL = re.compile(r"^\s*no\s+[^\W\d_]+(?:\s+[^\W\d_]+)?\s*$", re.IGNORECASE)
_NOTA = re.compile(r"^none of (?:the )?(?:above|these|those|them|options|choices|the options|the choices|the above options)$")
# Clause boundaries: punctuation, free-standing dashes, and contrastive conjunctions (which
# start the next clause).
_CLAUSE_SPLIT = re.compile(
    r"[.;:!?,()\[\]{}\n]+|\s[-‐‑‒–—―]+\s|[–—―]|(?=\b(?:but|however|though|although|whereas|yet|nevertheless|"
    r"nonetheless|except)\b)",
    re.IGNORECASE,
)
# Punctuation inside one scientific name is not a clause boundary: the full stop of a rank
# connecting term ("Quercus subsect. Stellatae", "Poa annua var. annua", "Carex cf. nigra"; ICN
# Art. 21-24 and Rec. 60C, ICZN Art. 6) and the parentheses of a subgenus written between genus
# and species ("Melitta (Plesiomelitta)", ICZN Art. 6.1). Those marks are masked before the
# clause split and restored in each clause, so a refusal cue decides for the whole name.
_RANK_TERM_STOP = re.compile(
    r"(?<![^\W\d_])((?:nothosubsp|nothovar|subsp|ssp|subvar|var|subf|f|fo|forma|subsect|sect|subser|ser|"
    r"subgen|subg|sp|spp|cf|aff|agg|s\.\s?str|s\.\s?l|s\.\s?lat|e\.\s?g|i\.\s?e|ca|approx|st|mt)\.)(?=\s+\S)",
    re.IGNORECASE,
)
_SUBGENUS = re.compile(r"(?<![^\W\d_])([A-Z][a-z]+\s*)\(([A-Z][a-z]+)\)")
_MASKED_STOP, _MASKED_OPEN, _MASKED_CLOSE = "\uE000", "\uE001", "\uE002"
_UNMASK = str.maketrans({_MASKED_STOP: ".", _MASKED_OPEN: "(", _MASKED_CLOSE: ")"})


def _mask_name_punctuation(answer: str) -> str:
    """``answer`` with the full stops of rank terms and a subgenus's parentheses masked, so
    that :data:`_CLAUSE_SPLIT` keeps a scientific name in one clause."""
    if "." in answer:
        answer = _RANK_TERM_STOP.sub(lambda m: m.group(1).replace(".", _MASKED_STOP), answer)
    if "(" in answer:
        answer = _SUBGENUS.sub(lambda m: f"{m.group(1)}{_MASKED_OPEN}{m.group(2)}{_MASKED_CLOSE}", answer)
    return answer


def is_nota(text: str | None) -> bool:
    """Is ``text`` a "none of the above" answer (or option)?

    Parameters
    ----------
    text : str or None
        The text.

    Returns
    -------
    bool
        Is ``text`` a "none of the above" answer (or option)?
    """
    return bool(_NOTA.match(normalise_text(text)))


def split_refusal(answer: str) -> tuple[bool, str]:
    """``(refusal cue found, the answer without its refused clauses)``; whole-answer
    non-answers ("unknown", "N/A", "none", empty) are refusals with nothing left.

    Parameters
    ----------
    answer : str
        The answer's text.

    Returns
    -------
    tuple[bool, str]
        ``(refusal cue found, the answer without its refused clauses)``; whole-answer
        non-answers ("unknown", "N/A", "none", empty) are refusals with nothing left.
    """
    norm = normalise_text(answer)
    if norm in _NON_ANSWERS or is_nota(norm):
        return True, ""
    kept, refused = [], False
    for clause in _CLAUSE_SPLIT.split(_mask_name_punctuation(answer)):
        clause = clause.translate(_UNMASK)
        c = normalise_text(clause)
        if not c:
            continue
        if _REFUSAL_CUE.search(c) or c in _NON_ANSWERS or _DENIAL.match(clause):
            refused = True
        else:
            kept.append(clause.strip())
    return refused, " ".join(kept) if refused else answer


def _names_something(text: str) -> bool:
    """Taxonomy-free reading of "names anything": a word outside the closed classes."""
    return any(not is_non_naming(w) for w in normalise_text(text).split())


def parse_options(question: str | None) -> dict[str, str]:
    """Multiple-choice options found in ``question``: ``{"A": "Esox lucius", …}`` (upper-case
    letters, option text stripped of trailing punctuation). Only a run of consecutive letters
    starting at A counts, so stray capitals in prose are ignored.

    Parameters
    ----------
    question : str or None
        The question's text.

    Returns
    -------
    dict[str, str]
        Multiple-choice options found in ``question``: ``{"A": "Esox lucius", …}``
        (upper-case letters, option text stripped of trailing punctuation).
    """
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


def resolve_letter(text: str, options: dict[str, str], what: str = "answer") -> tuple[str, str | None, list[str]]:
    """``(text, letter, flags)``: a text that starts with a letter marker (``B``, ``B)``,
    ``(b)``, ``B.``, ``B:``, ``option B``) resolved against ``options`` — the option the text
    after the letter names, else the letter's option (module docstring, step 2). The one
    routine for a model's letter answer and a dataset's letter label: both mean the option.

    Parameters
    ----------
    text : str
        The answer or label, templates stripped.
    options : dict
        Letter → option text.
    what : str
        Names the text in the error ("answer", "label").

    Returns
    -------
    (str, str or None, list of str)
        The text (the option's when a letter resolved), the letter, the flags.

    Raises
    ------
    UnparseableAnswer
        For a letter that is not among the options.
    """
    flags: list[str] = []
    letter = None
    m = _LETTER_ANSWER.match(text) if text else None
    if not m:
        return text, None, flags
    cand = (m.group("a") or m.group("b") or m.group("c")).upper()
    rest = _strip_templates(m.group("rest") or "")
    single_letter_word = m.group("c") is not None
    if options:
        norm_opts = {normalise_text(v): k for k, v in options.items()}
        rest_letter = norm_opts.get(normalise_text(rest)) if rest else None
        if rest_letter is not None:
            letter = rest_letter
            if rest_letter != cand:
                flags.append("mc_letter_text_conflict")
        elif cand in options and (not rest or m.group("a") or m.group("b")):
            letter = cand
            if rest:
                flags.append("mc_letter_text_conflict")
        elif cand not in options and (m.group("a") or single_letter_word or (m.group("b") and not rest)):
            seen = "; ".join(f"{k}) {v if len(v) <= 40 else v[:39] + '…'}" for k, v in sorted(options.items()))
            raise UnparseableAnswer(f"{what} letter {cand!r} is not among the row's options ({seen})")
        elif cand not in options and m.group("b"):
            flags.append("mc_letter_not_an_option")
        if letter is not None:
            text = options[letter]
            flags.append("mc_letter")
    elif single_letter_word or m.group("a"):
        flags.append("mc_letter_without_options")
    return text, letter, flags


def is_abstention(answer: str, names_anything=None) -> bool:
    """True when ``answer`` declines to answer (module docstring). ``names_anything(text)``
    decides whether the unrefused rest names something (default: the taxonomy-free rule).

    Parameters
    ----------
    answer : str
        The answer's text.
    names_anything : optional
        ``names_anything(text) -> bool``: whether a text names something (default: the
        taxonomy-free rule).

    Returns
    -------
    bool
        True when ``answer`` declines to answer (module docstring).
    """
    refusal, rest = split_refusal(answer)
    if not refusal:
        return False
    return not (rest and (names_anything or _names_something)(rest))


def parse_answer(raw, question: str | None = None, options: dict[str, str] | None = None) -> ParsedAnswer:
    """Parse one model output. ``options`` overrides the options read from ``question``.

    Raises :class:`UnparseableAnswer` when ``raw`` is not text or names a letter that is not
    among the options.

    Parameters
    ----------
    raw : object
        The model's text.
    question : str, optional
        The question asked, where its options are read from.
    options : dict[str, str], optional
        The options, overriding those read from ``question``.

    Returns
    -------
    ParsedAnswer
        The answer, its letter, flags and whether it abstains.
    """
    if raw is None:
        raise UnparseableAnswer("no model output (null)")
    if not isinstance(raw, str):
        raise UnparseableAnswer(f"model output is a {type(raw).__name__}, not text: {raw!r:.60}")
    flags: list[str] = []
    answer = _strip_templates(raw)
    opts = options if options is not None else parse_options(question)
    answer, letter, letter_flags = resolve_letter(answer, opts)
    flags.extend(letter_flags)
    nota_offered = any(is_nota(v) for v in opts.values())
    if nota_offered and (is_nota(answer) or normalise_text(answer) == "none"):
        flags.append("none_of_the_above")
        return ParsedAnswer(raw=raw, answer=answer, option_letter=letter, flags=flags, unrefused=answer, nota=True,
                            options=dict(opts))
    refusal, rest = split_refusal(answer)
    abstained = refusal and not (rest and _names_something(rest))
    if refusal:
        flags.append("abstention" if abstained else "hedged_answer")
    return ParsedAnswer(raw=raw, answer=answer, abstained=abstained, option_letter=letter, flags=flags,
                        refusal=refusal, unrefused=rest, options=dict(opts))
