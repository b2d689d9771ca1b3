"""The batch driver: :class:`TaxonomyIndex` builds the tables once and maps batches.

Identical normalised predictions are mapped once. Per prediction: the contains hits; the
exact-name shortcut; the contains / n-gram stage; then the top-k from the token prefilter
when it is enough, else the prediction waits for the batched full scan
(:mod:`taxoforge.scores.mapping.candidates`); finally the stage decides
(:meth:`taxoforge.scores.mapping.stages.Alg1Stages.finish`).
"""

from __future__ import annotations

import numpy as np

from taxoforge.scores.mapping.candidates import CandidateRetrieval
from taxoforge.scores.mapping.config import MappingConfig, MappingResult
from taxoforge.scores.mapping.index import NameTables
from taxoforge.scores.mapping.stages import Alg1Stages
from taxoforge.scores.similarity import Similarity, similarity_from_spec
from taxoforge.text import normalise_text

__all__ = ["TaxonomyIndex"]


class TaxonomyIndex:
    """Everything Alg. 1 needs about one taxonomy, built once.

    ``TaxonomyIndex(taxonomy, config)`` reads ``taxonomy.names_table`` (``node_id``,
    ``name``) plus every node's label, normalises the names and builds the lookups
    (:class:`~taxoforge.scores.mapping.index.NameTables`). ``map(predictions)`` maps a
    batch of raw or normalised predictions.
    """

    def __init__(self, taxonomy, config: MappingConfig | None = None, similarity: Similarity | None = None) -> None:
        self.taxonomy = taxonomy
        self.config = config or MappingConfig()
        self.similarity = similarity or similarity_from_spec(self.config.similarity)
        self.tables = NameTables(taxonomy, self.config)
        self.depth = taxonomy.depth_arr.astype(np.int64)
        self.parent = taxonomy.parent_idx
        self.similarity.bind(self.tables.names)
        self.retrieval = CandidateRetrieval(self.tables, self.similarity, self.config)
        self.stages = Alg1Stages(self.tables, self.retrieval, self.depth, self.parent, self.config)
        self.stats = {"names": len(self.tables), "nodes": self.tables.n_nodes, "exact_shortcut": 0,
                      "prefiltered": 0, "full_scans": 0}

    # the name tables, as the reference implementation and the benchmarks read them
    @property
    def names(self) -> list[str]:
        return self.tables.names

    @property
    def node_ptr(self) -> np.ndarray:
        return self.tables.node_ptr

    @property
    def node_name(self) -> np.ndarray:
        return self.tables.node_name

    def __reduce__(self):
        # the lookup tables are keyed by str hashes, which differ between processes: rebuild
        return (TaxonomyIndex, (self.taxonomy, self.config, self.similarity))

    def nodes_named(self, text: str) -> np.ndarray:
        """Indexes of the nodes having a name whose normal form equals that of ``text``."""
        j = self.tables.lookup(normalise_text(text))
        if j is None:
            return np.zeros(0, np.int64)
        return self.tables.nodes_of_name(j)

    def _map_unique(self, preds: list[str], progress=None):
        st = self.stages
        n = len(preds)
        out_v = np.empty(n, np.int64)
        out_s = np.empty(n)
        out_stage = np.empty(n, dtype=object)
        pending: list[tuple[int, str | None, np.ndarray]] = []
        for i, p in enumerate(preds):
            if not p:
                out_v[i], out_stage[i], out_s[i] = self.taxonomy.root_idx, "empty", 0.0
                continue
            hits = st.contains_hits(p)
            v = st.exact_shortcut(p, hits)
            if v is not None:
                self.stats["exact_shortcut"] += 1
                out_v[i], out_stage[i], out_s[i] = v, "contains", 1.0
                continue
            stage, hits = st.hit_stage(p, hits)
            # the hits' own names are always candidates, so word-sharing names serve the
            # contains / n-gram stages; the vote / top-1 stages need k of them
            top = self.retrieval.top_k_prefiltered(p, 1 if stage is not None else self.config.k, hits)
            if top is None:
                pending.append((i, stage, hits))
                continue
            self.stats["prefiltered"] += 1
            out_v[i], out_stage[i], out_s[i] = st.finish(p, stage, hits, *top)
        if progress is not None and n - len(pending):
            progress(n - len(pending))
        for start in range(0, len(pending), 1024):
            chunk = pending[start:start + 1024]
            tops = self.retrieval.top_k_full([preds[i] for i, _, _ in chunk])
            self.stats["full_scans"] += len(chunk)
            for (i, stage, hits), top in zip(chunk, tops):
                out_v[i], out_stage[i], out_s[i] = st.finish(preds[i], stage, hits, *top)
            if progress is not None:
                progress(len(chunk))
        return out_v, out_stage, out_s

    def map(self, predictions, normalised: bool = False, progress=None) -> MappingResult:
        """Map a sequence of predictions (raw text unless ``normalised``). Identical normal
        forms are mapped once. ``progress`` is an optional callable ``progress(n_done)``."""
        preds = list(predictions) if normalised else [normalise_text(p) for p in predictions]
        uniq: dict[str, int] = {}
        inv = np.fromiter((uniq.setdefault(p, len(uniq)) for p in preds), dtype=np.int64, count=len(preds))
        out_v, out_stage, out_s = self._map_unique(list(uniq), progress=progress)
        stages, counts = np.unique(out_stage[inv], return_counts=True) if len(inv) else ([], [])
        stats = dict(self.stats, unique_predictions=len(uniq),
                     stages=dict(zip([str(s) for s in stages], [int(c) for c in counts])))
        return MappingResult(node_idx=out_v[inv], stage=out_stage[inv], score=out_s[inv], stats=stats)
