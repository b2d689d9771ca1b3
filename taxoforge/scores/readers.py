"""Read model-output files (JSONL, CSV, Parquet) into one canonical table (docs/method.md#model-outputs).

Canonical columns (all strings but ``line``):

``line``      1-based line of the row in the file (JSONL and CSV: the line the record starts
              on; Parquet: the row number), used in every report about the row
``id``        sample id (default: ``<file stem>:<line>``)
``model``, ``prompt``, ``dataset``   optional grouping keys (default ``"unknown"``)
``question``  the question put to the model (needed to resolve multiple-choice letters)
``output``    the model's raw text, unchanged
``label``     the ground truth as given: a node id, a dataset label id, or a label text

**Column mapping.** ``columns={"output": "response", "label": "gt"}`` maps canonical names
to the file's column names. Without a mapping the adapter is detected from the columns:

``vlm4bio``   VLM4Bio result rows ``{"question", "target-class", "output", "option-gt",
              "image-path", …}``: ``label`` = ``target-class``, ``id`` = ``image-path``;
              ``model``, ``dataset``, ``prompt`` come from the file path
              (``results/<dataset>/[<prompt>/]classification/<mode>/classification_<model>_<mode>_num_…jsonl``).
``generic``   ``{id, model, prompt, dataset, output, label}`` (``question`` optional).

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

A file that cannot be read — bad JSON, JSON nested too deeply, bytes that are not UTF-8, a
CSV row with the wrong number of fields or a header naming a column twice, no output/label
column — raises :class:`OutputFileError` naming the file and the line. A byte-order mark at
the start of a JSONL or CSV file is allowed. Sample ids that several rows share (within a
model, dataset and prompt) raise a :class:`DuplicateIdWarning` naming them and their lines;
every row is still scored, and the run reports the count.
Rows that can be read but not scored are *not* dropped here; :mod:`taxoforge.scores.run`
reports them with their line numbers.
"""

from __future__ import annotations

import glob
import json
import re
import warnings
from pathlib import Path

import polars as pl

from taxoforge.files.records import RecordFileError, read_csv_records, read_jsonl_records, read_parquet_records

__all__ = ["OutputFileError", "DuplicateIdWarning", "read_outputs", "duplicate_ids", "CANONICAL", "detect_adapter",
           "vlm4bio_path_info", "OUTPUT_SUFFIXES", "expand_output_paths"]

#: The file kinds read as model outputs (a folder given to :func:`expand_output_paths` means these files in it).
OUTPUT_SUFFIXES = (".jsonl", ".ndjson", ".csv", ".tsv", ".parquet")

CANONICAL = ("id", "model", "prompt", "dataset", "question", "output", "label")
_ADAPTERS = {
    "vlm4bio": {"question": "question", "output": "output", "label": "target-class", "id": "image-path"},
    "generic": {c: c for c in CANONICAL},
}


class OutputFileError(RecordFileError):
    """A model-output file that cannot be read; the message names the file and line."""


def _read_jsonl(path: Path) -> tuple[list[dict], list[int]]:
    return read_jsonl_records(path, error=OutputFileError)


def _read_csv(path: Path, delimiter: str | None, header: bool = True,
              column_names=None) -> tuple[list[dict], list[int]]:
    return read_csv_records(path, delimiter, header, column_names, error=OutputFileError)


def _read_parquet(path: Path) -> tuple[list[dict], list[int]]:
    return read_parquet_records(path, error=OutputFileError)


def detect_adapter(columns) -> str:
    """``vlm4bio`` or ``generic`` from the column names; ``OutputFileError`` if neither fits."""
    cols = set(columns)
    if {"target-class", "output"} <= cols or {"option-gt", "output"} <= cols:
        return "vlm4bio"
    if {"output", "label"} <= cols:
        return "generic"
    raise OutputFileError(f"cannot tell the format from the columns {sorted(cols)}: expected VLM4Bio rows "
                          "(question, target-class, output, option-gt) or generic rows (id, model, prompt, "
                          "dataset, output, label); pass a column mapping")


_VLM4BIO_FILE = re.compile(r"classification_(?P<model>.+?)_(?P<mode>selection|direct|open)(?:_num_\d+)?(?:_chunk_\d+)?$")


def vlm4bio_path_info(path: str | Path) -> dict[str, str]:
    """``model``, ``dataset``, ``prompt`` of a VLM4Bio result file from its path."""
    p = Path(path)
    m = _VLM4BIO_FILE.match(p.stem)
    model = m.group("model") if m else p.stem
    mode = m.group("mode") if m else "unknown"
    parts = list(p.parts)
    dataset, prompt = "unknown", mode
    if "results" in parts:
        rest = parts[parts.index("results") + 1:-1]
        if rest:
            dataset = rest[0]
        if "classification" in rest:
            pre = rest[1:rest.index("classification")]
            if pre:
                prompt = f"{'/'.join(pre)}/{mode}"
    elif len(parts) >= 2:
        dataset = parts[-2]
    return {"model": model, "dataset": dataset, "prompt": prompt}


def _fmt(path: Path, fmt: str | None) -> str:
    if fmt:
        return fmt.lower()
    suf = "".join(path.suffixes[-2:]).lower() if path.suffix.lower() == ".gz" else path.suffix.lower()
    if suf in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suf in (".csv", ".tsv", ".tab"):
        return "csv"
    if suf in (".parquet", ".pq"):
        return "parquet"
    raise OutputFileError(f"{path}: unknown file type {suf!r}; expected .jsonl, .csv/.tsv or .parquet (or pass fmt=)")


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


def _check_mapping(path: Path, columns: dict[str, str] | None, present: set[str], has_rows: bool) -> None:
    """Every ``canonical=column`` pair names a canonical column and a column of the file; a
    typo says which column is missing, the nearest names, and lists the file's columns."""
    import difflib

    for canon, col in (columns or {}).items():
        if canon not in CANONICAL:
            near = difflib.get_close_matches(canon, CANONICAL, n=1)
            raise OutputFileError(f"{path}: column mapping {canon}={col}: {canon!r} is not a canonical column"
                                  + (f" (did you mean {near[0]!r}?)" if near else "")
                                  + f"; canonical columns are {', '.join(CANONICAL)}")
        if has_rows and col not in present:
            near = difflib.get_close_matches(col, sorted(present), n=3)
            raise OutputFileError(f"{path}: column mapping {canon}={col}: the file has no column {col!r}"
                                  + (f" (did you mean {' or '.join(repr(x) for x in near)}?)" if near else "")
                                  + f"; its columns are {', '.join(sorted(present))}")


def read_outputs(path: str | Path, *, fmt: str | None = None, columns: dict[str, str] | None = None,
                 adapter: str = "auto", defaults: dict[str, str] | None = None,
                 delimiter: str | None = None, header: bool = True, column_names=None,
                 derive: dict[str, tuple[str, str]] | None = None,
                 require: tuple[str, ...] = ("output", "label")) -> pl.DataFrame:
    """Read one model-output file into the canonical table (module docstring).

    ``columns`` maps canonical names to the file's names and overrides the adapter's (a
    name the file lacks is an :class:`OutputFileError` listing the file's columns);
    ``defaults`` fills ``model``/``prompt``/``dataset`` where the file has none;
    ``header``/``column_names`` read a CSV/TSV without a header line; ``derive`` takes
    canonical columns from other columns by a regex (module docstring). ``require``: the
    canonical columns the file must have (mapping answers to nodes needs no ``label``)."""
    path = Path(path)
    if not path.is_file():
        raise OutputFileError(f"{path}: no such file")
    kind = _fmt(path, fmt)
    if kind != "csv" and (not header or column_names is not None):
        raise OutputFileError(f"{path}: header=False and column_names apply to CSV/TSV files, not {kind}")
    derivations = _derivations(path, derive)
    readers = {"jsonl": _read_jsonl, "parquet": _read_parquet}
    rows, lines = readers.get(kind, lambda p: _read_csv(p, delimiter, header, column_names))(path)
    present = set().union(*(r.keys() for r in rows)) if rows else set()
    for canon, (source, _) in derivations.items():
        if rows and source not in present:
            raise OutputFileError(f"{path}: derive {canon!r}: no column {source!r} (columns: {sorted(present)})")
    _check_mapping(path, columns, present, bool(rows))
    given = set(columns or {}) | set(derivations)
    if adapter == "auto":
        if not rows or set(require) <= given:
            adapter = "generic"
        else:
            try:
                adapter = detect_adapter(present)
            except OutputFileError:
                if "label" not in require:
                    adapter = "generic"  # answers without ground truths
                elif "label" not in given and "label" not in present and "output" in given:
                    raise OutputFileError(
                        f"{path}: no ground-truth column: name it with a column mapping label=COLUMN (the file's "
                        f"columns are {', '.join(sorted(present))}); answers without ground truths can be mapped to "
                        "nodes but not scored (`taxoforge map`)") from None
                else:
                    raise
    if adapter not in _ADAPTERS:
        raise ValueError(f"unknown adapter {adapter!r}; choose auto, {', '.join(_ADAPTERS)}")
    mapping = dict(_ADAPTERS[adapter])
    mapping.update(columns or {})
    for need in require:
        if rows and need not in derivations and mapping.get(need) not in present:
            raise OutputFileError(f"{path}: no column {mapping.get(need)!r} for {need!r} (columns: {sorted(present)}); "
                                  "pass a column mapping")
    fill = {"model": "unknown", "prompt": "unknown", "dataset": "unknown"}
    if adapter == "vlm4bio":
        fill.update(vlm4bio_path_info(path))
    fill.update(defaults or {})
    data: dict[str, list] = {c: [] for c in CANONICAL}
    extra_gt, notes = [], []
    for r, n in zip(rows, lines):
        note = []
        for c in CANONICAL:
            if c in derivations:
                v, why = _derived(r, *derivations[c])
                if why:
                    note.append(f"{c}: {why}")
            else:
                v = r.get(mapping.get(c, c)) if mapping.get(c) else None
            if c == "output":
                data[c].append(v)  # kept exactly; type problems are reported per row later
                continue
            if v is not None and not isinstance(v, str):
                v = json.dumps(v) if isinstance(v, (list, dict)) else str(v)
            if c == "id" and v is None:
                v = f"{path.stem}:{n}"
            if c in fill and v is None:
                v = fill[c]
            data[c].append(v)
        extra_gt.append(r.get("option-gt") if adapter == "vlm4bio" else None)
        notes.append("; ".join(note) or None)
    out_type = [type(v).__name__ for v in data["output"]]
    df = pl.DataFrame(
        {"line": lines, **{c: data[c] for c in CANONICAL if c != "output"},
         "output": [v if isinstance(v, str) or v is None else json.dumps(v) for v in data["output"]],
         "output_type": out_type, "option_gt": [None if g is None else str(g) for g in extra_gt], "note": notes},
        schema_overrides={"line": pl.Int64, **{c: pl.String for c in CANONICAL}, "option_gt": pl.String,
                          "note": pl.String},
    )
    _warn_duplicate_ids(df, path)
    return df.with_columns(pl.lit(str(path)).alias("file"), pl.lit(adapter).alias("adapter"))


class DuplicateIdWarning(UserWarning):
    """Rows of one file share a sample id (within a model, dataset and prompt)."""


def duplicate_ids(df: pl.DataFrame) -> pl.DataFrame:
    """``model``, ``dataset``, ``prompt``, ``id`` and the ``lines`` of every id that more than
    one row of the canonical table carries."""
    keys = ["model", "dataset", "prompt", "id"]
    return (df.group_by(keys, maintain_order=True).agg(pl.col("line").sort().alias("lines"))
            .filter(pl.col("lines").list.len() > 1))


def _warn_duplicate_ids(df: pl.DataFrame, path: Path) -> None:
    if not df.height:
        return
    dup = duplicate_ids(df)
    if dup.height:
        ex = "; ".join(f"{i!r} on lines {', '.join(map(str, ls[:5]))}" for i, ls in dup.select("id", "lines").head(3).iter_rows())
        warnings.warn(f"{path}: {dup.height} sample id(s) occur more than once ({ex}"
                      f"{' …' if dup.height > 3 else ''}); every row is scored", DuplicateIdWarning, stacklevel=3)


def expand_output_paths(patterns) -> list[Path]:
    """The model-output files ``patterns`` name, in the order given, each once: a file as
    it is; a folder as every :data:`OUTPUT_SUFFIXES` file under it (recursively, hidden
    files and folders skipped, sorted); a glob pattern (``*``, ``?``, ``[…]``, ``**`` for
    any depth) as its matching files, sorted — so ``'results/**/*.jsonl'`` works whether
    or not the shell expanded it. A pattern that matches nothing, or a path that does not
    exist, raises :class:`OutputFileError` naming it."""
    out: list[Path] = []
    for pat in patterns:
        text = str(pat)
        p = Path(text)
        if p.is_file():
            found = [p]
        elif p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in OUTPUT_SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise OutputFileError(f"{text}: a folder without model-output files ({', '.join(OUTPUT_SUFFIXES)})")
        elif glob.escape(text) != text:
            found = sorted(Path(f) for f in glob.glob(text, recursive=True) if Path(f).is_file())
            if not found:
                raise OutputFileError(f"{text}: no file matches this pattern")
        else:
            raise OutputFileError(f"{text}: no such file")
        out.extend(found)
    seen: set[Path] = set()
    unique = []
    for f in out:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique
