"""Map free-text answers onto taxonomy nodes: Algorithm 1 of Snæbjarnarson et al. 2025 [1], in
the order of decisions of docs/method.md#mapping-an-answer-to-a-node.

Input: answers (raw or :func:`taxoforge.text.normalise_text`-normalised) and a
:class:`TaxonomyIndex` built once per taxonomy. Output (:class:`MappingResult`): one node
per answer (the algorithm always returns a node), the stage that decided, the similarity
of the chosen node and how many nodes tied under the deciding rule.

**Reading.** Names and answers are compared through their key: the normal form with every
word in its noun base form ("two tenches" → ``two tench``; :func:`taxoforge.text.base_form`).
Words that name nothing on their own — function words, numerals and quantifiers, words
about the task ("image", "species", "breed") and framing words ("I think", "looks like") —
are marked (:mod:`taxoforge.scores.mapping.vocabulary`); the answer's **core** is its key with
such words stripped from both ends (:mod:`.answers`).

**Stages** (``k = 10``, ``thr_topk = 0.0015``, ``thr_top2 = 0.001``, ``thr_vote = 4``; the
softmax temperature is calibrated per similarity measure; all in :class:`MappingConfig`):

0. *Empty* answer → the root.
1. *Exact*: the core, with any of the framing words around it (widest span first), is a
   name → that name's node; several nodes → the one whose ancestors share most words with
   the context (the question), then the deepest, the larger subtree, the smallest index
   (reported as a tie).
2. *Contains*: names occurring in the answer as whole words (``contains="substring"``: the
   pseudocode's raw test). A name made only of non-naming words never counts ("two dogs"
   is not *deuce*); a match lying inside a longer match is dropped ("pig" inside "guinea
   pig"); the deepest remaining node wins, ties to the more similar
   (``contains_scope="topk_first"``: the pseudocode's scan, a hit among the top-k first).
3. *n-grams*, n = 4, 3, 2: names sharing a word n-gram (not made only of non-naming words)
   with the answer; the same rule.
4. *Vote* (fixed, docs/method.md#mapping-an-answer-to-a-node), only when the softmax of the top-k similarities is near-tied
   (``S_k[0] − S_k[1] < thr_top2`` and ``S_k[0] − S_k[−1] < thr_topk``): every node on the
   root paths of the top-k gets one vote per top-k node below it (or equal); the deepest
   node with at least ``thr_vote`` votes wins (``vote_rule="more_than"``: ``> thr_vote``).
5. *Top-1*: the most similar node.

**Similarity and top-k.** A node's similarity is the best over its names, between the
answer's core and the name keys (:mod:`taxoforge.scores.mapping.similarity`: rapidfuzz ``ratio``
by default, or sentence embeddings). The top-k is needed only by stages 4–5 (and the
``topk_first`` scan) and is always exact (:mod:`.candidates`): on large trees (100,000
names and more) a provable q-gram bound retrieves every name that could reach the ``k``-th
similarity of the word-sharing candidates, and when the top-2 gap provably rules the vote
out the top-1 alone decides; otherwise, and on smaller trees, a batched full scan in C++.
``prefilter=False`` always scans: same results, more time.

Identical normalised answers are mapped once. Nodes without names never enter the top-k.

Files, in the order of the steps: :mod:`.parse` (a model's raw text → the answer that is
mapped: templates stripped, multiple-choice letters resolved, abstentions detected);
:mod:`.vocabulary` (the closed word classes that name nothing on their own); :mod:`.config`
(parameters, result type, calibrated temperatures); the index of a taxonomy's names —
:mod:`.keys` (name keys and their 64-bit hashes), :mod:`.strings` (string columns as offsets and UTF-8 bytes), :mod:`.postings` (CSR
relations and hash-keyed posting lists), :mod:`.trigrams` (the character-trigram index),
:mod:`.name_tables` (the tables built from a tree), :mod:`.store` (stored once per tree,
memory-mapped); :mod:`.answers` (an answer's key words and core), :mod:`.candidates` (exact
top-k retrieval, through a similarity measure of :mod:`.similarity`; the sentence models of
the embedding measure are found and loaded by :mod:`.sentence_models`), :mod:`.stages` (the
Alg. 1 decisions), :mod:`.taxonomy_index` (:class:`TaxonomyIndex`: the index of one taxonomy
and the batch driver), :mod:`.calibration` (choosing the softmax temperature),
:mod:`.reference` (:func:`map_prediction_reference`, a direct transcription scanning every node per answer; tests and the benchmarks compare against it).
"""

from taxoforge.scores.mapping.taxonomy_index import TaxonomyIndex
from taxoforge.scores.mapping.config import STAGES, MappingConfig, MappingResult, default_temperature
from taxoforge.scores.mapping.reference import map_prediction_reference

__all__ = [
    "MappingConfig",
    "MappingResult",
    "TaxonomyIndex",
    "STAGES",
    "default_temperature",
    "map_prediction_reference",
]
