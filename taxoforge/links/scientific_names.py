"""Scientific names: their normal form, epithet stems, and the label sets that use them.

* :func:`scientific_key` — the normal form in which two scientific names are compared (case,
  punctuation and rank markers ignored), and :func:`with_scientific_key`, the same computed
  for a whole column (vectorised for printable ASCII, nearly every scientific name).
* :func:`epithet_stem` — an epithet without its Latin gender ending (*habroptila* /
  *habroptilus*), and :func:`epithet_stem_expr`, the same as a polars expression.
* :func:`vlm4bio_labels`, :func:`bioclip_labels` — the species names of VLM4Bio result files
  and of the BioCLIP rare-species list, as label sets for
  :func:`taxoforge.links.resolve.resolve_labels`, which links them (exact, synonym, epithet
  variant, genus transfer, partial ground truths …);
  :func:`unmatched_report` lists the labels it could not link, with its reasons.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import polars as pl

__all__ = [
    "RANK_MARKERS",
    "scientific_key",
    "with_scientific_key",
    "first_word_expr",
    "epithet_stem",
    "epithet_stem_expr",
    "vlm4bio_labels",
    "bioclip_labels",
    "unmatched_report",
]

# Words that mark a rank inside a name; they carry no identity ("subsp. bakeri" = "bakeri").
RANK_MARKERS = frozenset({"subsp", "ssp", "var", "subvar", "f", "fo", "forma", "morph", "nothosubsp",
                          "nothovar", "cv", "agg", "sp", "spp", "cf", "aff"})
_GENDER_ENDINGS = r"(ensis|ense|ior|ius|ium|ia|us|um|a|is|e|er|ra|rum|os|on|es)$"
_GENDER_RE = re.compile(_GENDER_ENDINGS)
_MIN_STEM = 3
# Apostrophes join the letters of one word ("O'Neill"); every other punctuation mark or symbol
# separates words ("var.sericea", "dog/wolf", "Esox_lucius").
_APOSTROPHES = frozenset("'\u2019\u02bc")


def scientific_key(text: str | None) -> str:
    """The normal form used to compare scientific names: Unicode NFKC, case folded,
    apostrophes deleted, every other punctuation mark or symbol a space, rank markers
    (``subsp.``, ``var.``, ``f.`` …) dropped, whitespace collapsed.

    >>> scientific_key("Esox Americanus")
    'esox americanus'
    >>> scientific_key("Crepis bakeri subsp. bakeri")
    'crepis bakeri bakeri'
    >>> scientific_key("lespedeza_juncea_var.sericea")
    'lespedeza juncea sericea'

    Parameters
    ----------
    text : str or None
        The text.

    Returns
    -------
    str
        The normal form used to compare scientific names: Unicode NFKC, case folded,
        apostrophes deleted, every other punctuation mark or symbol a space, rank
        markers (``subsp.``, ``var.``, ``f.`` …) dropped, whitespace collapsed.
    """
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join("" if ch in _APOSTROPHES else " " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return " ".join(w for w in text.split() if w not in RANK_MARKERS)


_PRINTABLE_ASCII = r"^[\x20-\x7e]*$"
_MARKERS_RE = r"(?:^|\b)(?:" + "|".join(sorted(RANK_MARKERS)) + r")(?:\b|$)"


def _ascii_key(col: str) -> pl.Expr:
    """:func:`scientific_key`, vectorised, for printable-ASCII text (where NFKC changes nothing
    and casefold is lower case). Equal to the Python function on every printable-ASCII string
    (tested)."""
    text = pl.col(col).str.to_lowercase().str.replace_all("'", "").str.replace_all(r"[\p{P}\p{S}]", " ")
    text = text.str.replace_all(_MARKERS_RE, " ")  # words are letters and digits only by now
    return text.str.replace_all(r"\s+", " ").str.strip_chars()


def with_scientific_key(df: pl.DataFrame, col: str, out: str = "_key") -> pl.DataFrame:
    """``df`` with ``out``, the :func:`scientific_key` of ``col``, computed once per distinct
    value: vectorised for printable ASCII, by the Python function otherwise (null stays null).

    Parameters
    ----------
    df : polars.DataFrame
        The table.
    col : str
        The column of scientific names.
    out : str, optional
        The name of the key column added.

    Returns
    -------
    polars.DataFrame
        ``df`` with ``out``, the :func:`scientific_key` of ``col``, computed once per
        distinct value: vectorised for printable ASCII, by the Python function otherwise
        (null stays null).
    """
    distinct = df.select(pl.col(col).drop_nulls().unique())
    simple = pl.col(col).str.contains(_PRINTABLE_ASCII)
    fast = distinct.filter(simple).with_columns(_ascii_key(col).alias(out))
    slow = distinct.filter(~simple).with_columns(
        pl.col(col).map_elements(scientific_key, return_dtype=pl.String).alias(out))
    keys = pl.concat([fast, slow]).with_columns(pl.col(out).cast(pl.String))
    return df.join(keys, on=col, how="left")


def first_word_expr(col: str) -> pl.Expr:
    """The first word of ``col`` roughly as :func:`scientific_key` would give it (NFKC, lower
    case, punctuation a space; rank markers kept). Only used to cut large name tables down
    before exact keys are computed: every name whose key starts with a word ``w`` has first
    word ``w`` or a rank marker here.

    Parameters
    ----------
    col : str
        The column of names.

    Returns
    -------
    polars.Expr
        The first word of ``col`` roughly as :func:`scientific_key` would give it (NFKC,
        lower case, punctuation a space; rank markers kept).
    """
    return (pl.col(col).str.normalize("NFKC").str.to_lowercase().str.replace_all("['\u2019\u02bc]", "")
            .str.replace_all(r"[\p{P}\p{S}]", " ").str.strip_chars().str.extract(r"^(\S+)", 1))


def epithet_stem(epithet: str) -> str:
    """An epithet without its Latin gender ending (``habroptila`` → ``habroptil``); epithets
    whose stem would be shorter than three letters are kept whole.

    >>> epithet_stem("habroptilus") == epithet_stem("habroptila")
    True
    >>> epithet_stem("ab")
    'ab'

    Parameters
    ----------
    epithet : str
        A specific epithet, lower case.

    Returns
    -------
    str
        An epithet without its Latin gender ending (``habroptila`` → ``habroptil``);
        epithets whose stem would be shorter than three letters are kept whole.
    """
    stem = _GENDER_RE.sub("", epithet)
    return stem if len(stem) >= _MIN_STEM else epithet


def epithet_stem_expr(expr: pl.Expr) -> pl.Expr:
    """:func:`epithet_stem` of one word per row, vectorised.

    Parameters
    ----------
    expr : polars.Expr
        One epithet per row, lower case.

    Returns
    -------
    polars.Expr
        :func:`epithet_stem` of one word per row, vectorised.
    """
    stem = expr.str.replace(_GENDER_ENDINGS, "")
    return pl.when(stem.str.len_chars() >= _MIN_STEM).then(stem).otherwise(expr)


def unmatched_report(links: pl.DataFrame) -> pl.DataFrame:
    """The labels not linked (unmatched or ambiguous) with their reasons, for metadata and reports.

    Parameters
    ----------
    links : polars.DataFrame
        The links table.

    Returns
    -------
    polars.DataFrame
        The labels not linked (unmatched or ambiguous) with their reasons, for metadata
        and reports.
    """
    return links.filter(pl.col("status") != "linked").select("dataset", "label_text", "status", "detail",
                                                             "candidates")


# --------------------------------------------------------------------------- label sets

_OPTION = re.compile(r"(?:^|,\s*)\(?([A-Da-d])\)\s*([^,\n]+?)(?=\s*,\s*\(?[A-Da-d]\)|\s*$)")


def _options(question: str) -> list[str]:
    m = re.search(r"Options:\s*(.*?)(?:\.\s*(?:\n|Write|Please|$)|\n|$)", question, re.S)
    if not m:
        return []
    return [o.strip().rstrip(".") for _, o in _OPTION.findall(m.group(1).strip())]


def vlm4bio_labels(folder: str | Path) -> pl.DataFrame:
    """Every species name of VLM4Bio result files under ``folder`` (``target-class`` and the
    multiple-choice options): ``dataset`` = ``vlm4bio-<organism>`` (fish, bird, butterfly),
    ``label_id`` = ``label_text`` = the name as written.

    Parameters
    ----------
    folder : str or Path
        The folder.

    Returns
    -------
    polars.DataFrame
        Every species name of VLM4Bio result files under ``folder`` (``target-class``
        and the multiple-choice options): ``dataset`` = ``vlm4bio-<organism>`` (fish,
        bird, butterfly), ``label_id`` = ``label_text`` = the name as written.
    """
    folder = Path(folder)
    files = sorted(folder.rglob("*.jsonl"))
    rows: dict[tuple[str, str], None] = {}
    for f in files:
        rel = f.relative_to(folder).parts
        if "results" in rel:
            rel = rel[rel.index("results") + 1:]
        if not rel or len(rel) < 2:
            continue
        organism = rel[0].split("-")[0].lower()
        with open(f, encoding="utf-8") as fh:
            for ln, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{f}: line {ln}: invalid JSON ({e.msg})") from e
                if "question" not in r:
                    continue
                names = _options(r.get("question") or "")
                if r.get("target-class"):
                    names.append(str(r["target-class"]).strip())
                for n in names:
                    if n:
                        rows[(f"vlm4bio-{organism}", n)] = None
    if not rows:
        raise ValueError(f"{folder}: no VLM4Bio result rows (*.jsonl with 'question') found")
    ds, txt = zip(*sorted(rows))
    return pl.DataFrame({"dataset": list(ds), "label_id": list(txt), "label_text": list(txt)})


def bioclip_labels(csv_path: str | Path, dataset: str = "bioclip-rare-species") -> pl.DataFrame:
    """Species of a BioCLIP lineage CSV (``scientific_name``, ``common_name``).

    Parameters
    ----------
    csv_path : str or Path
        The CSV file, with a ``scientific_name`` column.
    dataset : str, optional
        The dataset name the labels get.

    Returns
    -------
    polars.DataFrame
        Species of a BioCLIP lineage CSV (``scientific_name``, ``common_name``).
    """
    df = pl.read_csv(csv_path, infer_schema=False)
    for c in ("scientific_name",):
        if c not in df.columns:
            raise ValueError(f"{csv_path}: missing column {c!r}; found {df.columns}")
    out = df.select(pl.lit(dataset).alias("dataset"), pl.col("scientific_name").alias("label_id"),
                    pl.col("scientific_name").alias("label_text"),
                    (pl.col("common_name") if "common_name" in df.columns else pl.lit(None, dtype=pl.String))
                    .alias("common_name"))
    return out.unique(["dataset", "label_id"], keep="first", maintain_order=True)
