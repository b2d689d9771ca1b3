"""The memo tables of a scoring run (:class:`taxoforge.files.memo.ContentMemo`): what a call on
the same answers (the researcher's loop) reads instead of computing again.

* :func:`mapping_memo` — the decision of Alg. 1 for each distinct normal form of an answer
  (node, deciding stage, similarity, nodes tied), before ties are decided by the label set
  and the question (those differ per row and are decided in every call); keyed by the tree's
  content hash (its citation), the stored index's tree key and index configuration, the
  mapping configuration, the similarity model, the versions of the packages that shape the
  numbers and the source of the mapping code; beside it (:meth:`ContentMemo.sibling
  <taxoforge.files.memo.ContentMemo.sibling>`, the same key) whether a refusal's unrefused
  part names a node (``naming-decisions``);
* :func:`parse_memo` — the parse of each distinct (output, question, options) of a row
  (:func:`~taxoforge.scores.mapping.parse.parse_answer`: the answer, its letter, flags,
  refusal and options, or why it cannot be parsed); keyed by the packages' versions and the
  source of the parsing code (:func:`parsed_from_memo`, :func:`parse_table`);
* :func:`text_memo` — the five text measures of each distinct (answer, reference) pair; keyed
  by whether METEOR ran and over which synonym table, the packages' versions and the source
  of the measures' code.

* :func:`resampling_memo` — the paired tests of two systems' per-item scores (the leaderboard's
  tests against the best), by the SHA-256 of the values, the statistics, the resamples and the
  seed; keyed by the packages' versions and the source of the statistics' code.

A run whose index is not stored (built in memory, or given by the caller) keeps no mapping
memo: nothing names its content.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from taxoforge.files.memo import ContentMemo, source_fingerprint
from taxoforge.scores.mapping.embedding_measures import similarity_record
from taxoforge.scores.mapping.parse import ParsedAnswer, UnparseableAnswer
from taxoforge.versions import package_versions

__all__ = ["mapping_memo", "text_memo", "parse_memo", "resampling_memo", "parsed_from_memo", "parse_table"]

_SCORES = Path(__file__).resolve().parent
_TEXT = _SCORES.parent / "text.py"


def mapping_memo(tree, index) -> ContentMemo | None:
    """The memo of mapping decisions of ``index`` (module docstring), or None where the index
    is not a stored one of ``tree``.

    Parameters
    ----------
    tree : Taxonomy
        The run's taxonomy (with its citation).
    index : TaxonomyIndex
        Its mapping index.

    Returns
    -------
    ContentMemo or None
    """
    store = getattr(index, "store", None)
    citation = getattr(tree, "citation", None)
    if store is None or citation is None or index.taxonomy is not tree:
        return None
    key = {"tree": citation.content_sha256, "tree_key": store.tree_key, "index_id": store.index_id,
           "config": index.config.to_json(), "similarity": similarity_record(index.similarity),
           "packages": package_versions(), "code": source_fingerprint(_SCORES / "mapping", _TEXT)}
    return ContentMemo("mapping-decisions", key, ["text"])


def text_memo(meteor_status: str) -> ContentMemo:
    """The memo of text measures (module docstring) for a run whose METEOR status is
    ``meteor_status`` (``wordnet <version> …``, or why METEOR did not run).

    Parameters
    ----------
    meteor_status : str

    Returns
    -------
    ContentMemo
    """
    key = {"meteor": meteor_status, "packages": package_versions(),
           "code": source_fingerprint(_SCORES / "measures" / "text.py", _SCORES / "measures" / "meteor.py", _TEXT)}
    return ContentMemo("text-measures", key, ["prediction", "reference"])


def resampling_memo() -> ContentMemo:
    """The memo of resampled statistics (module docstring): ``key`` (the digest of a
    computation's inputs) → ``value`` (its result as JSON).

    Returns
    -------
    ContentMemo
    """
    key = {"packages": package_versions(), "code": source_fingerprint(_SCORES / "statistics",
                                                                     _SCORES / "measures" / "hierarchical.py")}
    return ContentMemo("resampled-statistics", key, ["key"])


#: the key columns of the parse memo, and its results (a parsed answer's fields; ``error``:
#: why the output cannot be parsed, else null)
_PARSE_KEYS = {"output": pl.String, "question": pl.String, "options_given": pl.String}
_PARSED = {"answer": pl.String, "abstained": pl.Boolean, "option_letter": pl.String, "flags": pl.List(pl.String),
           "refusal": pl.Boolean, "unrefused": pl.String, "nota": pl.Boolean, "options": pl.String,
           "error": pl.String}


def parse_memo() -> ContentMemo:
    """The memo of parsed outputs (module docstring).

    Returns
    -------
    ContentMemo
    """
    key = {"packages": package_versions(), "code": source_fingerprint(_SCORES / "mapping", _TEXT)}
    return ContentMemo("parsed-answers", key, list(_PARSE_KEYS))


def parsed_from_memo(memo: ContentMemo, keys: list[tuple]) -> dict:
    """``{(output, question, options): ParsedAnswer or UnparseableAnswer}`` of the ``keys``
    the memo holds.

    Parameters
    ----------
    memo : ContentMemo
    keys : list of tuple
        Distinct (output, question, options as given) of rows.

    Returns
    -------
    dict
    """
    columns = zip(*keys) if keys else ()
    found = memo.lookup(pl.DataFrame(dict(zip(_PARSE_KEYS, columns)), schema=_PARSE_KEYS)) if keys else None
    if found is None:
        return {}
    out, option_maps = {}, {}  # rows share their options' text: each read once
    found = found.filter(pl.col("_found"))
    for output, question, given, answer, abstained, letter, flags, refusal, unrefused, nota, options, error in zip(
            *(found[c].to_list() for c in (*_PARSE_KEYS, *_PARSED))):
        if error is not None:
            out[output, question, given] = UnparseableAnswer(error)
        else:
            out[output, question, given] = ParsedAnswer(
                raw=output, answer=answer, abstained=abstained, option_letter=letter, flags=flags, refusal=refusal,
                unrefused=unrefused, nota=nota, options=_option_map(options, option_maps))
    return out


def _option_map(text: str, seen: dict) -> dict:
    """The options ``text`` (JSON) as a new dict, parsed once per distinct text (``seen``)."""
    parsed = seen.get(text)
    if parsed is None:
        parsed = seen[text] = json.loads(text) if text != "{}" else {}
    return dict(parsed)


def parse_table(parsed: dict) -> pl.DataFrame:
    """The memo rows of ``parsed`` (as :func:`parsed_from_memo` gives them back).

    Parameters
    ----------
    parsed : dict
        ``{(output, question, options): ParsedAnswer or UnparseableAnswer}``.

    Returns
    -------
    polars.DataFrame
    """
    rows = []
    for (output, question, options), pa in parsed.items():
        if isinstance(pa, UnparseableAnswer):
            rows.append((output, question, options, None, None, None, None, None, None, None, None, str(pa)))
        else:
            rows.append((output, question, options, pa.answer, pa.abstained, pa.option_letter, list(pa.flags),
                         pa.refusal, pa.unrefused, pa.nota, json.dumps(pa.options), None))
    return pl.DataFrame(rows, schema={**_PARSE_KEYS, **_PARSED}, orient="row")
