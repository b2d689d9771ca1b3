"""The index of one taxonomy, :class:`TaxonomyIndex`: its name tables (built once, or loaded from
the store) and the batch driver that maps answers with them.

Identical normalised answers are mapped once. Per answer, in the order of docs/method.md#mapping-an-answer-to-a-node: empty →
the root; the exact stage; the contains stage; the n-gram stages; the answers still
undecided (and, with ``contains_scope="topk_first"``, those with hits) get their exact
top-k in one batch (:mod:`taxoforge.scores.mapping.candidates`), then the vote, then the
top-1. Where a context is given (the question put to the model), answers whose decision
was a tie are decided again with it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from taxoforge.scores.mapping.answers import Answer, joined_normal_form
from taxoforge.scores.mapping.candidates import CandidateRetrieval
from taxoforge.scores.mapping.config import MappingConfig, MappingResult
from taxoforge.scores.mapping.keys import text_key
from taxoforge.scores.mapping.name_tables import NameTables
from taxoforge.scores.mapping.stages import Alg1Stages, Decision, label_set_preference
from taxoforge.scores.mapping.store import IndexInfo, open_name_embeddings, open_name_tables, read_index
from taxoforge.scores.mapping.embedding_measures import similarity_from_spec
from taxoforge.scores.mapping.similarity import Similarity
from taxoforge.text import normalise_text
from taxoforge.trees.tables import TreeTables
from taxoforge.trees.taxonomy import Taxonomy


__all__ = ["TaxonomyIndex", "truncate_answer"]

#: a decision's fields as a memo table stores them (:meth:`TaxonomyIndex.map`)
_MEMO_COLUMNS = {"node": pl.Int64, "stage": pl.String, "score": pl.Float64, "tied": pl.Int64}

#: ``found`` not given to :meth:`TaxonomyIndex._decide_without_top_k`: the exact stage looks the answer up itself
_NOT_LOOKED_UP = object()


def truncate_answer(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, at the last whitespace of the last
    fifth when there is one (a word is not cut in two).

    Parameters
    ----------
    text : str
        The text.
    limit : int
        The most to return.

    Returns
    -------
    str
        ``text`` cut to at most ``limit`` characters, at the last whitespace of the last
        fifth when there is one (a word is not cut in two).
    """
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ", int(limit * 0.8))
    return cut[:space] if space > 0 else cut


class TaxonomyIndex:
    """Everything Alg. 1 needs about one taxonomy, built once.

    ``TaxonomyIndex(taxonomy, config)`` reads ``taxonomy.names_table`` (``node_id``,
    ``name``) plus every node's label and builds the lookups
    (:class:`~taxoforge.scores.mapping.name_tables.NameTables`) in memory;
    :meth:`TaxonomyIndex.open` loads them from the index stored beside the tree (or in the
    cache), building and storing them the first time (:mod:`~taxoforge.scores.mapping.store`).
    ``map(answers)`` maps a batch of raw (or normalised) answers; ``names_anything(answers)``
    tells which name a node.

    Parameters
    ----------
    taxonomy : object
        The taxonomy (tables, a tree, or a tree folder).
    config : MappingConfig, optional
        The mapping configuration.
    similarity : Similarity, optional
        The similarity measure (default: the one ``config`` names).
    tables : NameTables, optional
        The tree's tables.
    store : IndexInfo, optional
        The snapshot store.
    progress : bool, optional
        Whether to show a progress bar.
    """

    def __init__(self, taxonomy, config: MappingConfig | None = None, similarity: Similarity | None = None, *,
                 tables: NameTables | None = None, store: IndexInfo | None = None,
                 progress: bool | None = None) -> None:
        self.taxonomy = taxonomy
        self.config = config or MappingConfig()
        self._similarity_given = similarity is not None  # else made from the configuration (and so on unpickling)
        self.similarity = similarity or similarity_from_spec(self.config.similarity)
        self.tables = tables if tables is not None else NameTables(taxonomy, self.config)
        self.store = store  # where the tables were loaded from (None: built in memory)
        self.depth = taxonomy.depth_arr.astype(np.int64)
        self.parent = taxonomy.parent_idx
        self.subtree_size = taxonomy.subtree_size()
        model = getattr(self.similarity, "model_id", None)
        if store is not None and model and callable(getattr(self.similarity, "embed_names", None)):
            # an embedding measure: the names' embeddings computed once per tree, stored beside the index
            emb = open_name_embeddings(store, self.tables, model, self.similarity.embed_names, progress=progress)
            self.similarity.bind(self.tables.strings, embeddings=emb)
        else:
            self.similarity.bind(self.tables.strings)
        self.retrieval = CandidateRetrieval(self.tables, self.similarity, self.config)
        self.stages = Alg1Stages(self.tables, self.retrieval, self.depth, self.parent, self.subtree_size,
                                 self.config)

    @classmethod
    def open(cls, tree, config: MappingConfig | None = None, *, similarity: Similarity | None = None,
             index_dir=None, progress: bool | None = None, ahead=None) -> "TaxonomyIndex":
        """The index of ``tree`` (a :class:`~taxoforge.trees.taxonomy.Taxonomy`, its
        :class:`~taxoforge.trees.tables.TreeTables` or a tree folder) from its stored name
        tables — built and stored on first use, then memory-mapped by every later call: under
        ``index_dir`` when given, else beside the tree's folder, in its snapshot store, or in
        ``$TAXOFORGE_CACHE_DIR`` (:func:`taxoforge.snapshots.tree_cache.index_place`);
        ``progress``: the build's progress bar (None: on a terminal). :attr:`store` says
        where the index is and whether this call built it.

        Parameters
        ----------
        tree : Taxonomy, TreeTables, str or os.PathLike
            The tree.
        config : MappingConfig, optional
            The mapping configuration.
        similarity : Similarity, optional
            The similarity measure (default: the one ``config`` names).
        index_dir : optional
            A folder the user named for indexes, if any.
        progress : bool, optional
            Whether to show a progress bar.
        ahead : TablesBuiltAhead, optional
            Name tables being built for this tree since its tables were read
            (:class:`~taxoforge.scores.mapping.store.TablesBuiltAhead`): taken where the
            index must be built.

        Returns
        -------
        TaxonomyIndex
        """
        if not isinstance(tree, (Taxonomy, TreeTables)):
            tree = TreeTables.read(Path(tree))
        taxonomy = Taxonomy.of(tree)
        tables = taxonomy.tables
        config = config or MappingConfig()
        names, info = open_name_tables(taxonomy, config, folder=tables.folder if tables is not None else None,
                                       index_dir=index_dir, progress=progress,
                                       name=tables.name if tables is not None else taxonomy.name, ahead=ahead)
        return cls(taxonomy, config, similarity, tables=names, store=info, progress=progress)

    # the name tables, as the reference implementation and the benchmarks read them
    @property
    def names(self) -> list[str]:
        """The name keys of the taxonomy (:class:`~taxoforge.scores.mapping.name_tables.NameTables`)."""
        return self.tables.names

    @property
    def node_ptr(self) -> np.ndarray:
        """CSR pointers from each node to its names."""
        return self.tables.node_ptr

    @property
    def node_name(self) -> np.ndarray:
        """The name index of each (node, name) entry, in node order."""
        return self.tables.node_name

    @property
    def stats(self) -> dict:
        """Names, nodes and how often each retrieval path ran."""
        return {"names": len(self.tables), "nodes": self.tables.n_nodes, **self.retrieval.stats}

    def __reduce__(self):
        # a stored index is re-opened from its folder (memory-mapped), not copied
        if self.store is not None:  # the similarity is bound again there: its bound names need not travel
            return (_reopen, (self.taxonomy, self.config, self.similarity if self._similarity_given else None,
                              self.store))
        return (TaxonomyIndex, (self.taxonomy, self.config, self.similarity))

    def read(self, text: str, normalised: bool = False) -> Answer:
        """``text`` as the mapper reads it.

        Parameters
        ----------
        text : str
            An answer.
        normalised : bool, optional
            Whether it is already in its normal form.

        Returns
        -------
        Answer
            ``text`` as the mapper reads it.
        """
        return Answer.read(text if normalised else joined_normal_form(text), self.config.base_forms)

    def nodes_named(self, text: str) -> np.ndarray:
        """Indexes of the nodes having a name whose key equals that of ``text``; where
        several do, those among them with a name of the same normal form, if any (base
        forms must not make a unique name ambiguous).

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        numpy.ndarray
            Indexes of the nodes having a name whose key equals that of ``text``; where
            several do, those among them with a name of the same normal form, if any (base
            forms must not make a unique name ambiguous).
        """
        j = self.tables.lookup(text_key(text, self.config.base_forms))
        if j is None:
            return np.zeros(0, np.int64)
        nodes = self.tables.nodes_of_name(j)
        if len(nodes) > 1 and self.config.base_forms:
            norm = normalise_text(text)
            ids = self.taxonomy.ids
            same = [v for v in nodes.tolist()
                    if any(normalise_text(x) == norm
                           for x in [self.taxonomy.label(str(ids[v])), *self.taxonomy.names(str(ids[v]))])]
            if same:
                nodes = np.asarray(same, np.int64)
        return nodes

    def names_anything(self, texts, normalised: bool = False, memo=None) -> np.ndarray:
        """Per text: does it name a node — a whole-answer (exact) or contained match of a
        name that is not made only of non-naming words? (Refusal handling: an answer with
        a refusal cue is an abstention unless its unrefused part names something.)

        Parameters
        ----------
        texts : object
            Answers.
        normalised : bool, optional
            Whether they are already in their normal form.
        memo : ContentMemo, optional
            Earlier calls' answers by text (``text`` → ``names``), kept as
            :func:`taxoforge.scores.memos.mapping_memo`'s decisions are (the same key).

        Returns
        -------
        numpy.ndarray
            Per text: does it name a node — a whole-answer (exact) or contained match of a
            name that is not made only of non-naming words?
        """
        texts = list(texts)
        distinct: dict = {}  # refusals repeat ("I'm not sure."): each text decided once
        inv = np.fromiter((distinct.setdefault(t, len(distinct)) for t in texts), np.int64, count=len(texts))
        out = np.zeros(len(distinct), bool)
        todo = range(len(distinct))
        keys = pl.DataFrame({"text": [f"{int(normalised)}{t}" for t in distinct]}, schema={"text": pl.String})
        found = memo.lookup(keys) if memo is not None and len(distinct) else None
        if found is not None:
            hit = found["_found"].to_numpy()
            out[hit] = found.filter(pl.col("_found"))["names"].to_numpy()
            todo = np.flatnonzero(~hit).tolist()
        texts = list(distinct)
        for i in todo:
            t = texts[i]
            ans = self.read(t, normalised)
            if not ans.words:
                continue
            nodes = self.stages.exact(ans)
            if nodes is not None and ans.lo < ans.hi:
                out[i] = True
            else:
                out[i] = bool(len(self.stages.contains(ans)))
        if memo is not None and len(todo):
            memo.save(pl.DataFrame({"text": keys["text"][list(todo)], "names": out[list(todo)]},
                                   schema={"text": pl.String, "names": pl.Boolean}))
        return out[inv]

    # ------------------------------------------------------------------ mapping
    def _decide_without_top_k(self, ans: Answer, context=frozenset(), prefer: np.ndarray | None = None,
                              found=_NOT_LOOKED_UP):
        """(decision, None) when a stage decides without the top-k, else (None, (stage, hits));
        ``found``: the answer's :meth:`Stages.exact_span` when already looked up."""
        st = self.stages
        if not ans.words:
            return (self.taxonomy.root_idx, "empty", 0.0, 1), None
        if self.config.exact_stage:
            if found is _NOT_LOOKED_UP:
                found = st.exact_span(ans)
            if found is not None:
                return st.decide_exact(ans, found[0], context, key=found[1], prefer=prefer), None
        stage, hits = st.hits(ans)
        if stage is not None and self.config.contains_scope == "all":
            return st.pick(ans, stage, hits, context=context, prefer=prefer), None
        return None, (stage, hits)

    def _map_unique(self, answers: list[Answer], progress=None) -> list[Decision]:
        out: list = [None] * len(answers)
        pending = []
        gap = self.stages.vote_ruled_out_gap()
        exact = self.stages.exact_span_many(answers) if self.config.exact_stage else [_NOT_LOOKED_UP] * len(answers)
        for i, ans in enumerate(answers):
            dec, wait = self._decide_without_top_k(ans, found=exact[i])
            if dec is None and wait[0] is None and gap < 1 and ans.lo < ans.hi:
                # no stage before the vote decided and the answer has words that could name
                # something: the top-1 alone decides when the vote is provably off
                top1 = self.retrieval.top1_without_vote(ans.query, sorted(ans.content_words()), gap)
                if top1 is not None:
                    dec = (top1[0], "top1", top1[1], 1)
            if dec is None:
                pending.append((i, *wait))
            else:
                out[i] = dec
        if progress is not None and len(answers) - len(pending):
            progress(len(answers) - len(pending))
        for start in range(0, len(pending), 1024):
            chunk = pending[start:start + 1024]
            tops = self.retrieval.top_k([(answers[i].query, sorted(answers[i].content_words())) for i, _, _ in chunk])
            for (i, stage, hits), top in zip(chunk, tops):
                dec = self.stages.finish(answers[i], stage, hits, top)
                out[i] = dec if dec[0] >= 0 else (self.taxonomy.root_idx, dec[1], 0.0, 0)
            if progress is not None:
                progress(len(chunk))
        return out

    def vote_candidates(self, texts, normalised: bool = False) -> list:
        """Per text: ``(top-k nodes, similarities)`` when it reaches the vote (no exact,
        contained or n-gram match), else None (temperature calibration).

        Parameters
        ----------
        texts : object
            Answers.
        normalised : bool, optional
            Whether they are already in their normal form.

        Returns
        -------
        list
            Per text: ``(top-k nodes, similarities)`` when it reaches the vote (no exact,
            contained or n-gram match), else None (temperature calibration).
        """
        answers = [self.read(t, normalised) for t in texts]
        need = [i for i, a in enumerate(answers)
                if a.words and self._decide_without_top_k(a)[0] is None and self.stages.hits(a)[0] is None]
        out: list = [None] * len(answers)
        tops = self.retrieval.top_k([(answers[i].query, sorted(answers[i].content_words())) for i in need])
        for i, top in zip(need, tops):
            out[i] = top
        return out

    @staticmethod
    def _normal_forms(texts: list[str], memo) -> dict[str, str]:
        """``{text: joined normal form}`` of distinct ``texts``: read from ``memo`` (``raw`` →
        ``form``) where an earlier call normalised them, else computed and stored."""
        found = memo.lookup(pl.DataFrame({"raw": texts}, schema={"raw": pl.String}))
        forms: dict[str, str] = {}
        todo = texts
        if found is not None:
            hit = found.filter(pl.col("_found"))
            forms = dict(zip(hit["raw"].to_list(), hit["form"].to_list()))
            todo = [t for t in texts if t not in forms]
        new = {t: joined_normal_form(t) for t in todo}
        if new:
            memo.save(pl.DataFrame({"raw": list(new), "form": list(new.values())},
                                   schema={"raw": pl.String, "form": pl.String}))
        forms.update(new)
        return forms

    def map(self, predictions, normalised: bool = False, progress=None, contexts=None,
            label_sets=None, memo=None) -> MappingResult:
        """Map a sequence of answers (raw text unless ``normalised``: already in their
        normal form). An answer longer than ``max_answer_chars`` is cut there first and
        flagged in ``truncated``. Identical (joined) normal forms are mapped once.
        ``label_sets`` (optional, one per answer: the node indexes of the label set the
        answer is about — answers sharing a set share the same array — or None) and then
        ``contexts`` (optional, one text per answer, e.g. the question) break ties between
        nodes naming the answer equally well (:mod:`~taxoforge.scores.mapping.stages`);
        ``stats["ties"]`` counts the tied answers and those the label set or the context
        decided. ``progress`` is an optional callable ``progress(n_done)``. ``memo`` (a
        :class:`~taxoforge.files.memo.ContentMemo` keyed by this index's tree, configuration and
        code, :func:`taxoforge.scores.memos.mapping_memo`): the decisions of normal forms an
        earlier call mapped are read from it, those of the others stored in it (and the normal
        form of each answer beside them, its sibling ``normal-forms``); ties are decided again
        here either way.

        Parameters
        ----------
        predictions : object
            The answers.
        normalised : bool, optional
            Whether they are already in their normal form.
        progress : optional
            Whether to show a progress bar (None: for large batches).
        contexts : optional
            Each answer's question, for ties.
        label_sets : optional
            Each answer's label set (node indexes), for ties, before the question.
        memo : ContentMemo, optional
            Decisions of earlier calls, by normal form.

        Returns
        -------
        MappingResult
            The node, deciding stage, similarity and ties of every answer.
        """
        cap = self.config.max_answer_chars
        raw = [p or "" for p in predictions]
        truncated = np.fromiter((len(p) > cap for p in raw), bool, count=len(raw))
        raw = [truncate_answer(p, cap) if t else p for p, t in zip(raw, truncated.tolist())]
        forms: dict[str, str] = {}  # answers repeat across rows and models: each text normalised once
        if memo is not None and not normalised:
            forms = self._normal_forms(list(dict.fromkeys(raw)), memo.sibling("normal-forms", ["raw"]))
        preds = raw if normalised else [forms[p] if p in forms else forms.setdefault(p, joined_normal_form(p))
                                        for p in raw]
        uniq: dict[str, int] = {}
        inv = np.fromiter((uniq.setdefault(p, len(uniq)) for p in preds), dtype=np.int64, count=len(preds))
        texts = list(uniq)
        decisions: list = [None] * len(texts)
        answers: list = [None] * len(texts)
        todo = list(range(len(texts)))
        found = memo.lookup(pl.DataFrame({"text": texts}, schema={"text": pl.String})) if memo is not None else None
        if found is not None:
            hit = found["_found"].to_numpy()
            for j, dec in zip(np.flatnonzero(hit).tolist(),
                              found.filter(pl.col("_found")).select(*_MEMO_COLUMNS).iter_rows()):
                decisions[j] = dec
            todo = np.flatnonzero(~hit).tolist()
            if progress is not None and len(texts) - len(todo):
                progress(len(texts) - len(todo))
        for j in todo:
            answers[j] = Answer.read(texts[j], self.config.base_forms)
        if todo:
            self.similarity.prepare([answers[j].query for j in todo])  # an embedding measure embeds them in batches
            for j, dec in zip(todo, self._map_unique([answers[j] for j in todo], progress=progress)):
                decisions[j] = dec
        if memo is not None and todo:
            memo.save(pl.DataFrame({"text": [texts[j] for j in todo],
                                    **{c: [decisions[j][k] for j in todo] for k, c in enumerate(_MEMO_COLUMNS)}},
                                   schema={"text": pl.String, **_MEMO_COLUMNS}))
        n = len(preds)
        node = np.fromiter((decisions[j][0] for j in inv.tolist()), np.int64, count=n)
        stage = np.array([decisions[j][1] for j in inv.tolist()], dtype=object)
        score = np.fromiter((decisions[j][2] for j in inv.tolist()), np.float64, count=n)
        tied = np.fromiter((decisions[j][3] for j in inv.tolist()), np.int64, count=n)
        ties = {"answers": int((tied > 1).sum()), "decided_by_label_set": 0, "decided_by_context": 0}
        if contexts is not None or label_sets is not None:
            for j in np.unique(inv[tied > 1]).tolist():  # answers read from the memo: read now where tied
                if answers[j] is None:
                    answers[j] = Answer.read(texts[j], self.config.base_forms)
            ties.update(self._redecide_ties(answers, inv, contexts, label_sets, node, stage, score, tied))
        stages, counts = np.unique(stage, return_counts=True) if n else ([], [])
        stats = dict(self.stats, unique_predictions=len(uniq), temperature=self.config.temperature, ties=ties,
                     stages=dict(zip([str(s) for s in stages], [int(c) for c in counts])),
                     ambiguous=int((tied > 1).sum()), truncated=int(truncated.sum()))
        return MappingResult(node_idx=node, stage=stage, score=score, tied=tied, stats=stats, truncated=truncated)

    def _redecide_ties(self, answers, inv, contexts, label_sets, node, stage, score, tied) -> dict:
        """Decide the tied answers again with their label set and context; how many each
        changed (the label set counts where it changed the node the context alone gives)."""
        prefs: dict[int, np.ndarray] = {}  # one preference array per distinct label set
        by_label, by_context = 0, 0
        for r in np.flatnonzero(tied > 1).tolist():
            ctx = contexts[r] if contexts is not None else None
            ls = label_sets[r] if label_sets is not None else None
            if not ctx and ls is None:
                continue
            words = frozenset(self.read(ctx).content_words()) if ctx else frozenset()
            prefer = None
            if ls is not None:
                prefer = prefs.get(id(ls))
                if prefer is None:
                    prefer = prefs[id(ls)] = label_set_preference(ls, self.parent)
            plain = int(node[r])
            with_context, _ = self._decide_without_top_k(answers[inv[r]], words) if words else ((plain,), None)
            dec, _ = self._decide_without_top_k(answers[inv[r]], words, prefer)
            if dec is None:
                continue
            if with_context is not None and dec[0] != with_context[0]:
                by_label += 1
            elif with_context is not None and with_context[0] != plain:
                by_context += 1
            node[r], stage[r], score[r], tied[r] = dec
        return {"decided_by_label_set": by_label, "decided_by_context": by_context}


def _reopen(taxonomy, config: MappingConfig, similarity: Similarity | None, store: IndexInfo) -> TaxonomyIndex:
    """Unpickling a stored index: its folder memory-mapped again (rebuilt in memory if it
    is gone or no longer valid)."""
    import dataclasses
    import time

    t0 = time.perf_counter()
    tables = read_index(store.path, store.tree_key, config)
    if tables is None:
        return TaxonomyIndex(taxonomy, config, similarity)
    loaded = dataclasses.replace(store, built=False, seconds=time.perf_counter() - t0)
    return TaxonomyIndex(taxonomy, config, similarity, tables=tables, store=loaded)
