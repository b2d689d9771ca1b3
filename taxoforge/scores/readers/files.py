"""Read model-output files into one canonical table (the scoring run's input; docs/method.md#model-outputs).

Canonical columns (all strings but ``line`` and ``harness_correct``):

``line``      1-based line of the row in the file (JSONL, CSV: the line the record starts on;
              a JSON array: the line its element opens on; Parquet: the row number; xlsx: the
              spreadsheet row), used in every report about the row
``id``        sample id (default: ``<file stem>:<line>``)
``model``, ``dataset``, ``prompt``   grouping keys: from the rows, else the file's path under its
              layout (:mod:`~taxoforge.scores.readers.harness_layouts`), else the file stem (model,
              dataset) and ``default`` (prompt); ``defaults`` (``--model`` …) override the path
``question``  the question put to the model (its options resolve multiple-choice letters)
``output``    the model's raw text, unchanged
``label``     the ground truth as given: a node id, a dataset label id, a label text, or an
              option letter
``options``   the row's options as JSON (``{"A": …, "B": …}``) when the file gives them as
              fields (VLMEvalKit's ``A``–``D`` columns, a ``doc``'s options), else null
``category``  the row's category when the file has one
``harness_correct``   the harness's own verdict on the row (``hit``, ``exact_match`` …), or null

**Layouts, no flags.** The file kind comes from the name (``.jsonl``, ``.json`` — an array, a
document or JSON Lines, told by the content —, ``.csv``, ``.tsv``, ``.parquet``, ``.xlsx``) or
``fmt``; the layout (VLM4Bio, lmms-eval of either generation, VLMEvalKit predictions and judge
files, generic) from the columns, and the model and dataset from the path as each harness
writes it (:mod:`~taxoforge.scores.readers.harness_layouts`). ``columns={"output": "filtered_resps[0]",
"label": "doc.target-class"}`` maps canonical names to columns or column paths (nested fields,
list elements) and overrides the layout's.

**Headerless CSV/TSV.** ``header=False`` reads the first line as data; ``column_names``
declares the names of the fields in order (fields beyond them are ``column_<n>``, 1-based;
without names every field is ``column_<n>``). Every line must have as many fields as the
first. With a header line, ``column_names`` replaces its names.

**Derived columns.** ``derive={"label": ("image", REGEX)}`` takes a canonical column from
another column of the file: the regex is searched in that column's value, and the named group
``value`` (else group 1, else the whole match) becomes the canonical value. A row where it
does not match keeps a null value and a ``note`` saying so (reported as a bad row by
scoring). E.g. an iNat2021 classifier's top-6 predictions, a headerless TSV of the image path
then name/probability pairs, whose ground truth is the image file name
(``…/acacia_saligna_gold_01.jpg`` → ``acacia_saligna``)::

    read_outputs(path, header=False,
                 column_names=["image", "top1", "p1", "top2", "p2", "top3", "p3"],
                 columns={"output": "top1", "id": "image"},
                 derive={"label": ("image", r"([^/]+?)_(?:(?:gold|obs)_)?\d+[^/]*$")})

(from the command line: ``--no-header --names image,top1,p1,… --column output=top1
--derive label image REGEX``). Label texts such as ``acacia_saligna`` resolve through the
label linker's normal form (underscores and case ignored).

A file that cannot be read — bad JSON, a key twice in one object, a lone surrogate, JSON
nested too deeply, bytes that are not UTF-8, a record over the byte cap, a CSV row with the
wrong number of fields or a header naming a column twice, no output/label column — raises
:class:`OutputFileError` naming the file and the line (:mod:`taxoforge.files.records`);
one whose layout cannot be told also suggests the ``--column`` options that would read it.
A byte-order mark at the start of a file is allowed. Sample ids that several rows share within
one model, dataset and prompt are an error naming the files and lines, unless
``allow_duplicate_ids``. Rows that can be read but not scored are *not* dropped here;
:mod:`taxoforge.scores.run` reports them with their line numbers.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict
from pathlib import Path

import polars as pl

from taxoforge.files.checksums import file_sha256
from taxoforge.files.memo import ContentMemo, source_fingerprint
from taxoforge.files.paths import check_regular, open_regular
from taxoforge.files.records import (RecordFileError, read_csv_records, read_json_records, read_jsonl_records,
                                     read_parquet_records, read_xlsx_records, sniff_json_kind)
from taxoforge.messages import FEW, few
from taxoforge.scores.options import FILE_KINDS, ReadOptions, split_options
from taxoforge.scores.readers.harness_layouts import (LAYOUT_COLUMNS, column_value, detect_layout, harness_verdicts,
                                                      may_name_a_value, path_info, row_options, suggest_columns, unwrap,
                                                      vlm4bio_path_info)
from taxoforge.scores.readers.run_folders import OUTPUT_SUFFIXES
from taxoforge.versions import package_versions

__all__ = ["OutputFileError", "read_outputs", "read_memo", "READ_MEMO_MIN_BYTES", "duplicate_ids", "check_duplicate_ids", "CANONICAL",
           "detect_adapter", "vlm4bio_path_info", "OUTPUT_SUFFIXES", "file_kind", "ReadOptions"]

CANONICAL = ("id", "model", "prompt", "dataset", "question", "output", "label", "category")
#: Canonical columns that name things in the reports (Markdown, CSV, LaTeX, file names): no control characters.
_NAMES = ("id", "model", "dataset", "prompt")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SUFFIX_KINDS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv",
                 ".tab": "tsv", ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx", ".xlsm": "xlsx"}


class OutputFileError(RecordFileError):
    """A model-output file that cannot be read.

    Parameters
    ----------
    message : str
        Names the file and line, and what was expected.
    suggestion : list of str, optional
        The ``--column`` options (command-line words) that would read the file.
    """

    def __init__(self, message: str, suggestion: list[str] | None = None) -> None:
        super().__init__(message)
        self.suggestion = suggestion


def file_kind(path: Path, fmt: str | None = None) -> str:
    """The kind of a model-output file.

    Parameters
    ----------
    path : Path
    fmt : str, optional
        The kind named (:data:`~taxoforge.scores.options.FILE_KINDS`); wins when given.

    Returns
    -------
    str
        ``fmt``, else the suffix's kind, else the first bytes' (``[`` a JSON array, ``{`` JSON Lines).
    """
    if fmt:
        return fmt.lower()
    kind = _SUFFIX_KINDS.get(path.suffix.lower())
    if kind in (None, "jsonl", "json"):  # the content says: an array is JSON whatever the suffix
        kind = "json" if sniff_json_kind(path) == "json" else kind or sniff_json_kind(path)
    if kind is None:
        raise OutputFileError(f"{path}: cannot tell the file kind from {path.suffix or 'its name'!r} or its content; "
                              f"expected one of {', '.join(_SUFFIX_KINDS)}, or name it: taxoforge score '{path}' "
                              f"TAXONOMY --format {'|'.join(FILE_KINDS)}")
    return kind


def detect_adapter(columns) -> str:
    """The layout column names say (:func:`~taxoforge.scores.readers.harness_layouts.detect_layout`).

    Parameters
    ----------
    columns : iterable of str

    Returns
    -------
    str

    Raises
    ------
    OutputFileError
        When no layout fits.
    """
    layout = detect_layout(columns)
    if layout is None:
        raise OutputFileError(f"cannot tell the format from the columns {sorted(columns)}")
    return layout


def _derivations(path: Path, derive) -> dict[str, tuple[str, re.Pattern]]:
    out = {}
    for canon, spec in (derive or {}).items():
        if canon not in CANONICAL:
            raise OutputFileError(f"{path}: cannot derive {canon!r}; derivable columns are {', '.join(CANONICAL)}")
        try:
            source, pattern = spec
            out[canon] = (str(source), re.compile(pattern))
        except (TypeError, ValueError) as e:
            raise OutputFileError(f"{path}: derive {canon!r} needs (column, regex), got {spec!r}") from e
        except re.error as e:
            raise OutputFileError(f"{path}: derive {canon!r}: the regex {spec[1]!r} does not compile ({e})") from None
    return out


def _derived(row: dict, source: str, pattern: re.Pattern) -> tuple[str | None, str | None]:
    """(value, note) of one derivation on one row."""
    raw = row.get(source)
    if raw is None:
        return None, f"column {source!r} is empty"
    m = pattern.search(str(raw))
    if m is None:
        return None, f"pattern {pattern.pattern!r} does not match column {source!r} ({str(raw)!r})"
    if "value" in pattern.groupindex:
        return m.group("value"), None
    return (m.group(1) if pattern.groups else m.group(0)), None


def _check_mapping(path: Path, columns, rows: list[dict], present: set[str]) -> None:
    """Every ``canonical=column`` pair names a canonical column and a column (or column path)
    of the file; a typo says which column is missing, the nearest names, and lists the file's
    columns."""
    for canon, col in (columns or {}).items():
        if canon not in CANONICAL:
            near = difflib.get_close_matches(canon, CANONICAL, n=1)
            raise OutputFileError(f"{path}: column mapping {canon}={col}: {canon!r} is not a canonical column"
                                  + (f" (did you mean {near[0]!r}?)" if near else "")
                                  + f"; canonical columns are {', '.join(CANONICAL)}")
        if rows and col not in present and not any(column_value(r, col, None) is not None for r in rows[:1000]):
            head = re.split(r"[.\[]", col, maxsplit=1)[0]
            near = difflib.get_close_matches(head, sorted(present), n=3)
            what = f"no column {col!r}" if head == col or head not in present else f"nothing at {col!r}"
            raise OutputFileError(f"{path}: column mapping {canon}={col}: the file has {what}"
                                  + (f" (did you mean {' or '.join(repr(x) for x in near)}?)" if near else "")
                                  + f"; its columns are {', '.join(sorted(present))}")


def _cannot_tell(path: Path, rows: list[dict], present: set[str], require) -> OutputFileError:
    words = suggest_columns(rows, require)
    cmd = " ".join([f"taxoforge score '{path}' TAXONOMY", *(w if w == "--column" else f"'{w}'" for w in words)])
    return OutputFileError(
        f"{path}: cannot tell the format from the columns {', '.join(sorted(present))}: expected lmms-eval samples "
        "(doc_id, target, filtered_resps), VLMEvalKit predictions (index, question, answer, prediction), VLM4Bio "
        "rows (question, target-class, output) or generic rows (output, label). Name the columns (nested fields as "
        f"doc.KEY, list elements as KEY[0]), e.g.:\n  {cmd}", suggestion=words)


def _text(v) -> str | None:
    """A canonical text value: strings as they are, integral floats without '.0', lists and
    objects as JSON."""
    v = unwrap(v)
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, float):
        if v != v:
            return None
        return str(int(v)) if v.is_integer() else repr(v)
    if isinstance(v, (list, dict)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def _sniff_delimiter(path: Path, kind: str) -> str:
    """A tab or a comma: the suffix's, unless the first line holds more of the other (a TSV
    saved as ``.csv``)."""
    with open_regular(path, "model-output file") as fh:
        head = fh.readline(1 << 16)
    tabs, commas = head.count(b"\t"), head.count(b",")
    if kind == "csv":
        return "\t" if tabs > commas else ","
    return "," if commas > tabs and tabs == 0 else "\t"


def _read_records(path: Path, kind: str, o: ReadOptions) -> tuple[list[dict], list[int], dict]:
    if kind != "csv" and kind != "tsv" and (not o.header or o.column_names is not None):
        raise OutputFileError(f"{path}: header=False and column_names apply to CSV/TSV files, not {kind}")
    err = {"error": OutputFileError, "max_record_bytes": o.max_record_bytes, "max_table_bytes": o.max_table_bytes,
           "max_records": o.max_records, "max_cells": o.max_cells}
    if kind == "jsonl":
        return (*read_jsonl_records(path, **err), {})
    if kind == "json":
        return read_json_records(path, **err)
    if kind in ("csv", "tsv"):
        delim = o.delimiter or _sniff_delimiter(path, kind)
        return (*read_csv_records(path, delim, o.header, o.column_names, **err), {})
    if kind == "parquet":
        return (*read_parquet_records(path, **err), {})
    if kind == "xlsx":
        return (*read_xlsx_records(path, **err), {})
    raise OutputFileError(f"{path}: unknown file type {kind!r}; expected one of {', '.join(FILE_KINDS)}")


def read_outputs(path: str | Path, options: ReadOptions | None = None, **kwargs) -> pl.DataFrame:
    """Read one model-output file into the canonical table (module docstring).

    A file of at least :data:`READ_MEMO_MIN_BYTES` is read once per content: its table is kept
    as a memo (:func:`read_memo`) keyed by the file's path, the options and the code that
    reads it, and holds the SHA-256 of the bytes it was read from; the next read of the same
    bytes (the researcher's loop: the same file scored again against another tree, with other
    options, beside a new model's file) loads that table instead of parsing every record.
    What cannot be read is never kept: it raises again.

    Parameters
    ----------
    path : str or Path
    options : ReadOptions, optional
        How to read it (:class:`~taxoforge.scores.options.ReadOptions`).
    **kwargs
        Fields of :class:`~taxoforge.scores.options.ReadOptions` (``columns=``, ``defaults=``,
        ``fmt=``, ``layout=`` or ``adapter=``, ``header=``, ``column_names=``, ``derive=``,
        ``require=``, ``allow_duplicate_ids=`` …), applied on top of ``options``.

    Returns
    -------
    polars.DataFrame
        The canonical columns, ``output_type``, ``option_gt``, ``note``, ``options``,
        ``harness_correct``, ``file`` and ``adapter`` (the layout).

    Raises
    ------
    OutputFileError
        Naming the file and line of what cannot be read.
    """
    o = split_options(kwargs, read=options, where="read_outputs")[0] if kwargs else (options or ReadOptions())
    path = Path(path)
    if not path.exists():
        raise OutputFileError(f"{path}: no such file")
    check_regular(path, "model-output file")  # a FIFO, a device or a folder: refused by name, never waited on
    if path.stat().st_size < READ_MEMO_MIN_BYTES:
        return _read_outputs(path, o)
    memo = read_memo(path, o)
    digest = file_sha256(path)
    kept = memo.load()
    if kept is not None and kept.height and kept[_DIGEST][0] == digest:
        return kept.drop(_DIGEST)
    df = _read_outputs(path, o)
    if file_sha256(path) == digest:  # the bytes read are the bytes hashed: the table is theirs
        memo.save(df.with_columns(pl.lit(digest).alias(_DIGEST)))
    return df


#: Files this large or larger are read once per content (:func:`read_memo`); a smaller one
#: reads faster than its memo table would.
READ_MEMO_MIN_BYTES = 1 << 18
_DIGEST = "_file_sha256"
_READ_CODE = (Path(__file__).resolve().parent, Path(__file__).resolve().parents[2] / "files",
              Path(__file__).resolve().parents[1] / "options.py", Path(__file__).resolve().parents[2] / "messages.py")


def read_memo(path: Path, options: ReadOptions):
    """The memo of ``path``'s canonical table (:class:`~taxoforge.files.memo.ContentMemo`, one
    table per file path that is replaced when the file changes): keyed by the path (as given:
    the table's ``file`` column; and resolved), the read options, the versions of the packages
    that read the file kinds and the source of the readers.

    Parameters
    ----------
    path : Path
    options : ReadOptions

    Returns
    -------
    ContentMemo
    """
    key = {"path": str(path), "resolved": str(path.resolve()),
           "options": json.dumps(asdict(options), sort_keys=True, default=repr),
           "packages": package_versions(), "code": source_fingerprint(*_READ_CODE)}
    return ContentMemo("read-table", key, ["line"], merge=False)


def _read_outputs(path: Path, o: ReadOptions) -> pl.DataFrame:
    """:func:`read_outputs` of a file checked to be a regular file, without its memo."""
    kind = file_kind(path, o.fmt)
    derivations = _derivations(path, o.derive)
    rows, lines, meta = _read_records(path, kind, o)
    present = set().union(*(r.keys() for r in rows)) if rows else set()
    for canon, (source, _) in derivations.items():
        if rows and source not in present:
            raise OutputFileError(f"{path}: derive {canon!r}: no column {source!r} (columns: {sorted(present)})")
    _check_mapping(path, o.columns, rows, present)
    given = set(o.columns) | set(derivations)
    layout = o.layout
    if layout == "auto":
        layout = detect_layout(present) if rows else "generic"
        if layout is None:
            if set(o.require) <= given or "label" not in o.require:
                layout = "generic"
            elif "label" not in given and "output" in given:
                rest = [{k: v for k, v in r.items() if k != o.columns["output"]} for r in rows[:1]]
                words = ["--column", f"output={o.columns['output']}", *suggest_columns(rest, ("label",))]
                cmd = " ".join([f"taxoforge score '{path}' TAXONOMY",
                                *(w if w == "--column" else f"'{w}'" for w in words)])
                raise OutputFileError(
                    f"{path}: no ground-truth column: name it with a column mapping label=COLUMN (the file's "
                    f"columns are {', '.join(sorted(present))}), e.g.:\n  {cmd}\nanswers without ground truths can "
                    "be mapped to nodes but not scored (`taxoforge map`)", suggestion=words)
            else:
                raise _cannot_tell(path, rows, present, o.require)
    if layout not in LAYOUT_COLUMNS:
        raise ValueError(f"unknown layout {layout!r}; choose auto, {', '.join(LAYOUT_COLUMNS)}")
    candidates = {c: tuple(LAYOUT_COLUMNS[layout].get(c, ())) for c in CANONICAL}
    for c, col in o.columns.items():
        candidates[c] = (col,)
    for need in o.require:
        if rows and need not in derivations and not any(
                column_value(r, p, None) is not None for r in rows[:1000] for p in candidates[need]):
            if not any(p in present for p in candidates[need]):
                raise _cannot_tell(path, rows, present, o.require)
    fill = {"model": path.stem, "dataset": path.stem, "prompt": "default"}
    fill.update(path_info(layout, path, meta, rows))
    fill.update(o.defaults)
    missing_ranked = [c for c in o.ranked if rows and all(column_value(r, c, None) is None for r in rows[:1000])
                      and c not in present]
    if missing_ranked:
        raise OutputFileError(f"{path}: --ranked names no column {missing_ranked} (columns: {sorted(present)})")
    data: dict[str, list] = {c: [] for c in CANONICAL}
    extra_gt, notes, options, ranked = [], [], [], []
    verdicts = harness_verdicts(rows)
    # the candidates that can name a value in some row (the others give None in every row)
    reachable = {c: tuple(p for p in candidates[c] if may_name_a_value(p, present)) for c in CANONICAL}
    stem = path.stem
    for i, n in enumerate(lines):
        r, rows[i] = rows[i], None  # each record is let go once read into the columns: memory is the table's
        note = []
        for c in CANONICAL:
            if c in derivations:
                v, why = _derived(r, *derivations[c])
                if why:
                    note.append(f"{c}: {why}")
            else:
                v = None
                for p in reachable[c]:
                    v = column_value(r, p, None)
                    if v is not None and (c != "question" or isinstance(v, str)):
                        break
                    v = None
            if c == "output":
                data[c].append(unwrap(v))  # kept exactly; type problems are reported per row later
                continue
            v = _text(v)
            if c == "label" and v == "None" and layout == "lmms-eval" and "label" not in o.columns:
                v = None  # lmms-eval writes str(target): a doc without a target is "None"
                note.append("label: lmms-eval wrote the target None (the doc has none)")
            if c == "id" and v is None:
                v = f"{stem}:{n}"
            if c in fill and v is None:
                v = fill[c]
            if c in _NAMES and v is not None and _CONTROL.search(v):
                raise OutputFileError(f"{path}:{n}: the {c} {v!r} holds a control character "
                                      f"(U+{ord(_CONTROL.search(v).group()):04X}); names go into the reports as "
                                      "text: fix the file, or name it with --" + (c if c != "id" else "column id=…"))
            data[c].append(v)
        extra_gt.append(_text(r.get("option-gt")) if layout == "vlm4bio" else None)
        notes.append("; ".join(note) or None)
        opts = row_options(r)
        options.append(json.dumps(opts, ensure_ascii=False) if opts else None)
        if o.ranked:
            ranked.append([_text(unwrap(column_value(r, c, None))) for c in o.ranked])
    out_type = [type(v).__name__ for v in data["output"]]
    df = pl.DataFrame(
        {"line": lines, **{c: data[c] for c in CANONICAL if c != "output"},
         "output": [v if isinstance(v, str) or v is None else json.dumps(v, ensure_ascii=False) for v in data["output"]],
         "output_type": out_type, "option_gt": extra_gt, "note": notes, "options": options,
         "harness_correct": verdicts},
        schema_overrides={"line": pl.Int64, **{c: pl.String for c in CANONICAL}, "option_gt": pl.String,
                          "note": pl.String, "options": pl.String, "harness_correct": pl.Float64},
    )
    df = df.with_columns(pl.lit(str(path)).alias("file"), pl.lit(layout).alias("adapter"))
    if o.ranked:
        df = df.with_columns(pl.Series("ranked_outputs", ranked, dtype=pl.List(pl.String)))
    check_duplicate_ids(df, o.allow_duplicate_ids)
    return df


def duplicate_ids(df: pl.DataFrame) -> pl.DataFrame:
    """The sample ids that more than one row of a canonical table carries.

    Parameters
    ----------
    df : polars.DataFrame
        A canonical table (:func:`read_outputs`).

    Returns
    -------
    polars.DataFrame
        ``model``, ``dataset``, ``prompt``, ``id``, the ``lines`` and ``where`` (``file:line``).
    """
    keys = ["model", "dataset", "prompt", "id"]
    where = (pl.col("file") + ":" + pl.col("line").cast(pl.String)) if "file" in df.columns \
        else pl.col("line").cast(pl.String)
    return (df.group_by(keys, maintain_order=True)
            .agg(pl.col("line").sort().alias("lines"), where.alias("where"))
            .filter(pl.col("lines").list.len() > 1))


def check_duplicate_ids(df: pl.DataFrame, allow: bool = False) -> None:
    """Refuse sample ids that rows of one model, dataset and prompt share.

    Parameters
    ----------
    df : polars.DataFrame
        A canonical table.
    allow : bool
        Let them through.

    Raises
    ------
    OutputFileError
        Naming the files and lines of the shared ids.
    """
    dup = duplicate_ids(df) if df.height and not allow else None
    if dup is None or not dup.height:
        return None
    lines = [f"  {i!r} ({m} / {d}): {few(w, quote=False)}"
             for m, d, i, w in dup.select("model", "dataset", "id", "where").head(FEW).iter_rows()]
    more = f"\n  … and {dup.height - FEW:,} more ids" if dup.height > FEW else ""
    raise OutputFileError(
        f"{dup.height:,} sample id{'s occur' if dup.height != 1 else ' occurs'} more than once within one model, dataset "
        "and prompt (their rows would be pooled):\n" + "\n".join(lines) + more
        + "\nTell the files apart (--model/--dataset/--prompt, or score them in separate runs), or pass "
          "--allow-duplicate-ids (allow_duplicate_ids=True) to score every row")
