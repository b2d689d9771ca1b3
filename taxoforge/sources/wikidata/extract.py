"""Extraction from seed entities over SPARQL (Snæbjarnarson et al. 2025 [1] §4.1).

Input
    Seed QIDs (e.g. the Wikidata entities of the OVEN benchmark), a
    :class:`~taxoforge.sources.wikidata.sparql.SparqlClient`, and optionally a checkpoint folder.

Output
    A :class:`~taxoforge.sources.wikidata.graph.WikidataGraph`: ``P31`` edges from every seed
    to its classes, the ``P279`` edges of the closure of those classes up to the root, and the
    labels and aliases of every node in one language. ``info`` holds the query time.

Algorithm
    1. Validate the seeds (``Q`` then digits) and sort them numerically.
    2. ``instance_of.rq`` over batches of seeds: their P31 classes.
    3. Breadth-first over ``subclass_of.rq``: the frontier starts with those classes (and
       with the seeds that have no class, which are classes themselves); each level queries
       the superclasses of the frontier in batches, and the next frontier is the superclasses
       not seen before. The root (Q35120 "entity") is not expanded. Every node is queried
       once, so cycles end the walk rather than loop it.
    4. ``labels.rq`` over batches of every node: English labels and aliases.

Batches are sorted id chunks, so they depend only on the seeds and the answers to earlier
batches; with a checkpoint folder every finished batch is stored
(:mod:`~taxoforge.sources.wikidata.checkpoint`) and a rerun after a crash re-queries only the
unfinished ones, with the same result as an uninterrupted run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint, batch_key
from taxoforge.sources.wikidata.graph import WikidataGraph
from taxoforge.sources.wikidata.ids import node_id, qid_of_iri, sort_qids, validate_qid, validate_qids
from taxoforge.sources.wikidata.queries import language_tag, render
from taxoforge.sources.wikidata.sparql import SparqlClient

__all__ = ["extract_from_seeds", "read_seed_qids", "BatchRunner", "ROOT_QID", "DEFAULT_BATCH_SIZE",
           "DEFAULT_LABEL_BATCH_SIZE"]

ROOT_QID = "Q35120"  # "entity", the root of Wikidata's class tree
# VALUES blocks of a few hundred ids answer in well under a second on WDQS for P31/P279
# lookups, far from its 60 s limit; labels with aliases return more rows per id.
DEFAULT_BATCH_SIZE = 250
DEFAULT_LABEL_BATCH_SIZE = 200


def _chunks(seq: Sequence[str], n: int) -> Iterable[list[str]]:
    for i in range(0, len(seq), n):
        yield list(seq[i:i + n])


class BatchRunner:
    """Runs one query over id batches, through the checkpoint when there is one.

    Each batch is rendered (by default ``render(name, items=batch, lang=lang)``; another
    query shape passes ``render_batch``), looked up in the checkpoint by the hash of its
    text, and queried only when absent. ``row`` turns one binding into a stored row (or
    ``None`` to drop it).

    Parameters
    ----------
    client : SparqlClient
        The SPARQL client.
    checkpoint : BatchCheckpoint or None
        Where batch answers are kept (None: nowhere).
    progress : Callable[[str], None] or None
        Called with a line of progress, if given.
    """

    def __init__(self, client: SparqlClient, checkpoint: BatchCheckpoint | None,
                 progress: Callable[[str], None] | None):
        self.client = client
        self.checkpoint = checkpoint
        self.progress = progress
        self.batches_run = 0
        self.batches_resumed = 0
        self.query_times: list[str] = []

    def run(self, name: str, ids: Sequence[str], batch_size: int, *, lang: str | None = None,
            row: Callable[[dict], list | None],
            render_batch: Callable[[list[str]], str] | None = None) -> list[list]:
        """Run query ``name`` over ``ids`` in batches, each batch read from the checkpoint when it holds it.

        Parameters
        ----------
        name : str
            The query's name (:mod:`taxoforge.sources.wikidata.queries`).
        ids : sequence of str
            The QIDs to query for.
        batch_size : int
            QIDs per request.
        lang : str, optional
            The language of the names asked for.
        row : callable
            ``row(binding) -> list or None``: one result binding as a row (None drops it).
        render_batch : callable, optional
            ``render_batch(batch) -> str``: the query text of a batch (default: the named query over ``items``).

        Returns
        -------
        list of list
            The rows of all batches, in batch order.
        """
        out: list[list] = []
        for batch in _chunks(ids, batch_size):
            text = render_batch(batch) if render_batch else render(name, items=batch, lang=lang)
            key = batch_key(name, text, self.client.endpoint)
            doc = self.checkpoint.get(name, key) if self.checkpoint else None
            if doc is None:
                started = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                t0 = time.perf_counter()
                bindings = self.client.select(text, name=name)
                rows = [r for r in (row(b) for b in bindings) if r is not None]
                doc = {"query": name, "ids": batch, "queried_at": started,
                       "seconds": round(time.perf_counter() - t0, 3), "rows": rows}
                if self.checkpoint:
                    self.checkpoint.put(name, key, doc)
                self.batches_run += 1
            else:
                self.batches_resumed += 1
            self.query_times.append(doc["queried_at"])
            out.extend(doc["rows"])
            if self.progress:
                self.progress(f"{name}: {len(batch)} ids, {len(doc['rows'])} rows")
        return out


def _pair(a: str, b: str) -> Callable[[dict], list | None]:
    def row(binding: dict) -> list | None:
        x = qid_of_iri(binding.get(a, {}).get("value", ""))
        y = qid_of_iri(binding.get(b, {}).get("value", ""))
        return [x, y] if x and y else None

    return row


def _name_row(binding: dict) -> list | None:
    item = qid_of_iri(binding.get("item", {}).get("value", ""))
    name = binding.get("name", {})
    kind = binding.get("kind", {}).get("value")
    if not item or "value" not in name or kind not in ("label", "alias"):
        return None
    return [item, kind, name["value"], name.get("xml:lang")]


def read_seed_qids(path: str | os.PathLike) -> list[str]:
    """Seed QIDs from a file: a table with a ``qid`` column (tab-separated, e.g. OVEN's
    ``qid<TAB>label`` list), or one QID per line (``#`` comments and blank lines skipped).
    Raises ``ValueError`` naming the file and line of anything that is not a QID.

    Parameters
    ----------
    path : str or os.PathLike
        A table with a ``qid`` column, or one QID per line.

    Returns
    -------
    list[str]
        Seed QIDs from a file: a table with a ``qid`` column (tab-separated, e.g. OVEN's
        ``qid<TAB>label`` list), or one QID per line (``#`` comments and blank lines
        skipped).
    """
    path = Path(path)
    out: list[str] = []
    with path.open(encoding="utf-8") as f:
        col = None
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\r\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if col is None and lineno == 1 and "qid" in [x.strip().lower() for x in fields]:
                col = [x.strip().lower() for x in fields].index("qid")
                continue
            value = fields[col] if col is not None and col < len(fields) else fields[0]
            out.append(validate_qid(value.strip(), where=f"{path}:{lineno}"))
    return out


def extract_from_seeds(
    client: SparqlClient,
    seed_qids: Iterable[str],
    *,
    root: str = ROOT_QID,
    lang: str = "en",
    batch_size: int = DEFAULT_BATCH_SIZE,
    label_batch_size: int = DEFAULT_LABEL_BATCH_SIZE,
    checkpoint: BatchCheckpoint | str | None = None,
    progress: Callable[[str], None] | None = None,
) -> WikidataGraph:
    """Fetch the classes of ``seed_qids``, their subclass-of closure and their names (module docstring).

    Parameters
    ----------
    client : SparqlClient
    seed_qids : iterable of str
        The seed entities: QIDs (``Q146``, ``wd:Q146`` or entity IRIs); anything else raises ``ValueError``.
    root : str
        The class not to expand further (default Q35120 "entity").
    lang : str
        Language of labels and aliases.
    batch_size, label_batch_size : int
        Ids per ``VALUES`` block.
    checkpoint : BatchCheckpoint or path, optional
        Where finished batches are stored, to resume an interrupted run.
    batch_size : int, optional
        How many texts go to the model at once.
    label_batch_size : int, optional
        QIDs per names query.
    progress : Callable[[str], None], optional
        Whether to show a progress bar.

    Returns
    -------
    WikidataGraph
    """
    seed_qids = validate_qids(seed_qids, where="seed_qids")
    if not seed_qids:
        raise ValueError("no seeds given")
    root = validate_qid(root, where="root")
    if batch_size < 1 or label_batch_size < 1:
        raise ValueError("batch sizes must be positive")
    lang = language_tag(lang)  # refused before the first query, not after the closure
    if checkpoint is not None and not isinstance(checkpoint, BatchCheckpoint):
        checkpoint = BatchCheckpoint(checkpoint)
    runner = BatchRunner(client, checkpoint, progress)
    t_start = time.perf_counter()

    p31 = runner.run("instance_of", seed_qids, batch_size, row=_pair("item", "class"))
    classes = {c for _, c in p31}
    classless = set(seed_qids) - {s for s, _ in p31}

    p279: list[list] = []
    seen: set[str] = set()
    frontier = sort_qids((classes | classless) - {root})
    levels = 0
    while frontier:
        levels += 1
        seen.update(frontier)
        rows = runner.run("subclass_of", frontier, batch_size, row=_pair("class", "super"))
        p279.extend(rows)
        frontier = sort_qids({s for _, s in rows} - seen - {root})

    nodes = set(seed_qids) | classes | {q for pair in p279 for q in pair}
    names = runner.run("labels", sort_qids(nodes), label_batch_size, lang=lang, row=_name_row)

    edges = pl.DataFrame(
        {
            "child": [node_id(c) for c, _ in p31] + [node_id(c) for c, _ in p279],
            "parent": [node_id(p) for _, p in p31] + [node_id(p) for _, p in p279],
            "relation": ["P31"] * len(p31) + ["P279"] * len(p279),
        },
        schema={"child": pl.String, "parent": pl.String, "relation": pl.String},
    )
    names_df = pl.DataFrame(
        {
            "node_id": [node_id(r[0]) for r in names],
            "name": [r[2] for r in names],
            "kind": [r[1] for r in names],
            "lang": [r[3] or lang for r in names],
        },
        schema={"node_id": pl.String, "name": pl.String, "kind": pl.String, "lang": pl.String},
    )
    times = sorted(runner.query_times)
    info = {
        "method": "sparql",
        "endpoint": client.endpoint,
        "user_agent": client.agent,
        "root": node_id(root),
        "lang": lang,
        "seeds": len(seed_qids),
        "seeds_without_class": len(classless),
        "closure_levels": levels,
        "batch_size": batch_size,
        "label_batch_size": label_batch_size,
        "batches_queried": runner.batches_run,
        "batches_from_checkpoint": runner.batches_resumed,
        # the snapshot manifest's "query time": when the data was read from the endpoint
        "query_time_first": times[0] if times else None,
        "query_time_last": times[-1] if times else None,
        "requests": client.summary(),
        "seconds": round(time.perf_counter() - t_start, 3),
    }
    return WikidataGraph(edges=edges, names=names_df, seed_node_ids=[node_id(q) for q in seed_qids], info=info)
