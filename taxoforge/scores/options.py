"""The options of reading model outputs and of a scoring run, as two objects validated in one place.

:class:`ReadOptions` says how model-output files are read (:func:`taxoforge.scores.readers.files.read_outputs`);
:class:`ScoreOptions` how the rows are scored (:func:`taxoforge.scores.run.score_frame`). Each
declares its parameters' constraints beside its fields (``CONSTRAINTS``), and
:func:`validate_params` checks them all when the object is made — in the manner of
scikit-learn's ``validate_params`` [34] (declared intervals and option sets, one routine, an error
naming the parameter, what it must be and what it got). A NaN is never inside an interval, so
a fraction or threshold of NaN is refused with the others.

References
----------
Numbers of docs/references.md: [34] scikit-learn's ``sklearn.utils._param_validation``
(parameter constraints: ``Interval``, ``StrOptions``, ``validate_params``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from numbers import Integral

from taxoforge.files.records import MAX_CELLS, MAX_RECORD_BYTES, MAX_RECORDS, MAX_TABLE_BYTES
from taxoforge.params import MAX_BOOTSTRAP_RESAMPLES, Interval, InvalidParameterError, Options, validate_params
from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex
from taxoforge.scores.statistics.confidence import BootstrapConfig

__all__ = ["Interval", "Options", "InvalidParameterError", "validate_params", "ReadOptions", "ScoreOptions",
           "MAX_RECORD_BYTES", "MAX_TABLE_BYTES", "MAX_RECORDS", "MAX_CELLS", "MAX_BOOTSTRAP_RESAMPLES", "FILE_KINDS",
           "LAYOUTS", "HEIGHTS", "RANK_BY",
           "split_options", "env_fraction"]

#: File kinds a model-output file may be read as (``--format``; default: from the name and content).
FILE_KINDS = ("jsonl", "json", "csv", "tsv", "parquet", "xlsx")
#: Layouts of the rows (``--format`` or ``layout=``; default ``auto``: from the columns and the file name).
LAYOUTS = ("auto", "generic", "vlm4bio", "lmms-eval", "vlmevalkit")
#: Where mistake severity's heights are measured (``--heights``): the label set's tree, or the whole tree.
HEIGHTS = ("labels", "tree")
#: The measures a leaderboard can rank by (``--rank-by``); mistake severity ranks lowest first.
RANK_BY = ("hF", "accuracy", "mistake_severity")


class _Validated:
    """Validates the dataclass's fields against its ``CONSTRAINTS`` when made."""

    CONSTRAINTS: dict = {}

    def __post_init__(self) -> None:
        validate_params(type(self).__name__, {f.name: getattr(self, f.name) for f in fields(self)}, self.CONSTRAINTS)
        self._check()

    def _check(self) -> None:
        """Checks that involve several fields (subclasses)."""


@dataclass(frozen=True)
class ReadOptions(_Validated):
    """How model-output files are read (:func:`taxoforge.scores.readers.files.read_outputs`).

    Parameters
    ----------
    fmt : str or None
        The file kind (:data:`FILE_KINDS`); None: from the file's name and content.
    layout : str
        The rows' layout (:data:`LAYOUTS`): ``auto`` tells it from the columns and the file
        name; ``generic``, ``vlm4bio``, ``lmms-eval`` or ``vlmevalkit`` name it.
    columns : mapping
        Canonical column → the file's column, a column path (``filtered_resps[0]``,
        ``doc.target-class``) overriding the layout's.
    defaults : mapping
        ``model``/``dataset``/``prompt`` for rows that have none (they also override what
        the file's path says).
    delimiter : str or None
        The CSV/TSV field delimiter (None: tab for ``.tsv``, else a comma).
    header : bool
        False: a CSV/TSV whose first line is data.
    column_names : sequence of str or None
        Names of the CSV/TSV fields in order.
    derive : mapping or None
        Canonical column → ``(column, regex)`` (module docstring of :mod:`~taxoforge.scores.readers.files`).
    require : sequence of str
        Canonical columns the file must give (mapping answers needs no ``label``).
    allow_duplicate_ids : bool
        Let rows of one model, dataset and prompt share a sample id (default: an error naming
        the files and lines).
    ranked : sequence of str
        The columns (or column paths) of a ranked top-k, best first (a classifier's
        ``top1 … top6``): read into the list column ``ranked_outputs``, mapped to nodes by
        the run (``ranked_nodes``) for the hierarchical distance@k
        (:mod:`taxoforge.scores.measures.mistakes`). Without an ``output`` column the first is the
        answer.
    max_record_bytes : int
        Bytes one record may take before it is parsed (:data:`MAX_RECORD_BYTES`).
    max_table_bytes : int
        Bytes a file may decode to, counted as decoded: a workbook's XML, a Parquet file's
        column data, a JSON document read whole (:data:`MAX_TABLE_BYTES`).
    max_records : int
        Records (rows) one file may hold (:data:`MAX_RECORDS`).
    max_cells : int
        Fields one file's records may hold in all (:data:`MAX_CELLS`).
    all_runs : bool
        Read every run of a harness, model and dataset, each as its own model
        ``{model}@{run}`` (default: the latest run, by the harness's run id;
        :mod:`~taxoforge.scores.readers.sources`).
    """

    fmt: str | None = None
    layout: str = "auto"
    columns: Mapping = field(default_factory=dict)
    defaults: Mapping = field(default_factory=dict)
    delimiter: str | None = None
    header: bool = True
    column_names: Sequence | None = None
    derive: Mapping | None = None
    require: Sequence = ("output", "label")
    allow_duplicate_ids: bool = False
    ranked: Sequence = ()
    max_record_bytes: int = MAX_RECORD_BYTES
    max_table_bytes: int = MAX_TABLE_BYTES
    max_records: int = MAX_RECORDS
    max_cells: int = MAX_CELLS
    all_runs: bool = False

    CONSTRAINTS = {
        "fmt": [Options(FILE_KINDS), None], "layout": [Options(LAYOUTS)], "columns": [Mapping],
        "defaults": [Mapping], "delimiter": [str, None], "header": [bool], "column_names": [Sequence, None],
        "derive": [Mapping, None], "require": [Sequence], "allow_duplicate_ids": [bool], "ranked": [Sequence],
        "max_record_bytes": [Interval(Integral, 1, None)], "max_table_bytes": [Interval(Integral, 1, None)],
        "max_records": [Interval(Integral, 1, None)], "max_cells": [Interval(Integral, 1, None)],
        "all_runs": [bool],
    }

    def _check(self) -> None:
        if self.delimiter is not None and len(self.delimiter) != 1:
            raise InvalidParameterError(f"the 'delimiter' parameter of ReadOptions must be one character; "
                                        f"got {self.delimiter!r}")
        bad = [k for k in self.defaults if k not in ("model", "dataset", "prompt")]
        if bad:
            raise InvalidParameterError(f"the 'defaults' parameter of ReadOptions may set model, dataset and prompt; "
                                        f"got {', '.join(map(repr, bad))}")
        if isinstance(self.ranked, str):
            raise InvalidParameterError("the 'ranked' parameter of ReadOptions must be a sequence of columns, "
                                        f"not one string; got {self.ranked!r}")
        if self.ranked and "output" not in self.columns:
            object.__setattr__(self, "columns", {**self.columns, "output": self.ranked[0]})
        if isinstance(self.column_names, str):
            raise InvalidParameterError("the 'column_names' parameter of ReadOptions must be a sequence of names, "
                                        f"not one string; got {self.column_names!r}")


@dataclass(frozen=True)
class ScoreOptions(_Validated):
    """How a scoring run scores the rows (:func:`taxoforge.scores.run.score_frame`).

    Parameters
    ----------
    config : MappingConfig or None
        The mapping's parameters (None: the index's, else the defaults).
    index : TaxonomyIndex or None
        A mapping index of the same tree, shared between calls.
    index_dir : str, path or None
        Where the tree's stored mapping index lives (:func:`taxoforge.scores.run.index_for`).
    text_measures, meteor : bool
        Compute the text measures; METEOR among them.
    progress : bool or None
        Progress bars (None: on for long runs).
    store : str or None
        The snapshot store a taxonomy name is looked up in.
    remote : str or None
        A store a name ``store`` lacks is pulled from (into ``store``, or ``cache``).
    cache : str, path or None
        The local store a remote snapshot is pulled into.
    altered : str
        ``refuse`` a snapshot folder that no longer matches its manifest, or cite it by its
        ``content`` hash.
    ci : BootstrapConfig or None
        The bootstrap of the leaderboard's intervals (None: none).
    breakdowns : bool
        The leaderboard's breakdown columns and tables.
    plots : bool
        Write the figures with the results.
    label_set : sequence of str or None
        The dataset's labels (resolved as ground truths are): their nodes win when an answer
        names several nodes equally well, and they span the tree mistake severity's heights
        are measured on; None: the ground truths of each model × dataset's own rows.
    heights : str
        Where mistake severity's heights are measured (:data:`HEIGHTS`): ``labels``, the tree
        the label set spans (default), or ``tree``, the whole taxonomy
        (:mod:`taxoforge.scores.measures.heights`).
    rank_by : str
        The measure that ranks models within a dataset × prompt (:data:`RANK_BY`; default
        ``hF``; mistake severity ranks lowest first).
    display_names : mapping or None
        Model → the name the LaTeX tables and figures show
        (:func:`taxoforge.scores.reports.names.read_display_names`); the rest are shortened by
        :func:`~taxoforge.scores.reports.names.short_name`. Recorded in ``run.json``.
    """

    config: object = None
    index: object = None
    index_dir: object = None
    text_measures: bool = True
    meteor: bool = True
    progress: bool | None = None
    store: object = None
    remote: object = None
    cache: object = None
    altered: str = "refuse"
    ci: object = "default"
    breakdowns: bool = True
    plots: bool = True
    label_set: object = None
    heights: str = "labels"
    rank_by: str = "hF"
    display_names: object = None

    CONSTRAINTS = {
        "config": [object], "index": [object], "index_dir": [str, os.PathLike, None], "text_measures": [bool],
        "meteor": [bool], "progress": [bool, None], "store": [object], "remote": [object],
        "cache": [str, os.PathLike, None], "altered": [Options(("refuse", "content"))],
        "ci": [object], "breakdowns": [bool], "plots": [bool], "label_set": [list, tuple, None],
        "heights": [Options((*HEIGHTS, "ground_truths"))], "rank_by": [Options(RANK_BY)],
        "display_names": [Mapping, None],
    }

    def _check(self) -> None:
        if self.ci == "default":
            object.__setattr__(self, "ci", BootstrapConfig())
        for name, kind in (("config", MappingConfig), ("index", TaxonomyIndex), ("ci", BootstrapConfig)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise InvalidParameterError(f"the {name!r} parameter of ScoreOptions must be a {kind.__name__} or "
                                            f"None; got {value!r:.80}")


def split_options(kwargs: Mapping, read: ReadOptions | None = None, score: ScoreOptions | None = None,
                  where: str = "score_files") -> tuple[ReadOptions, ScoreOptions]:
    """Split the keyword options of the compatible call path into the two option objects.

    ``score_files(paths, tax, meteor=False, columns=…)`` is
    ``score_files(paths, tax, read=ReadOptions(columns=…), score=ScoreOptions(meteor=False))``.

    Parameters
    ----------
    kwargs : mapping
        Fields of either object (``adapter`` is the former name of ``layout``).
    read, score : ReadOptions or ScoreOptions, optional
        The objects the keywords are applied on top of.
    where : str
        The function named when a keyword is neither's.

    Returns
    -------
    (ReadOptions, ScoreOptions)

    Raises
    ------
    TypeError
        For a keyword that names no field.
    """
    from dataclasses import replace

    r_names = {f.name for f in fields(ReadOptions)}
    s_names = {f.name for f in fields(ScoreOptions)}
    r_kw, s_kw = {}, {}
    for k, v in kwargs.items():
        if k == "adapter":
            r_kw["layout"] = v
        elif k in r_names:
            r_kw[k] = v
        elif k in s_names:
            s_kw[k] = v
        else:
            raise TypeError(f"{where}() got an unexpected keyword argument {k!r}")
    for k in ("columns", "defaults"):
        if k in r_kw and r_kw[k] is None:
            r_kw[k] = {}
    if r_kw.get("require") is not None:
        r_kw["require"] = tuple(r_kw["require"])
    read = replace(read, **r_kw) if read is not None else ReadOptions(**r_kw)
    score = replace(score, **s_kw) if score is not None else ScoreOptions(**s_kw)
    return read, score


def env_fraction(name: str, default: float, environ: Mapping | None = None) -> float:
    """The fraction in [0, 1] an environment variable holds.

    Parameters
    ----------
    name : str
        The variable.
    default : float
        The value when it is unset or empty.
    environ : mapping, optional
        The environment (default: :data:`os.environ`).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming the variable, for anything else (``abc``, ``nan``, ``1.5``).
    """
    raw = (os.environ if environ is None else environ).get(name, "")
    if not raw.strip():
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0.0 <= value <= 1.0):
        raise ValueError(f"${name}={raw!r}: expected a fraction between 0 and 1, e.g. 0.95")
    return value
