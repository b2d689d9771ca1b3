"""Map free-text predictions onto taxonomy nodes: paper 000 Alg. 1 with SPEC §3's fixes.

Input: a normalised prediction (:func:`taxoforge.text.normalise_text`) and a
:class:`TaxonomyIndex` built once per taxonomy. Output: one node (the algorithm always
returns a node), the stage that decided and the similarity of the chosen node.

Algorithm (stages tried in order; ``k = 10``, ``thr_topk = 0.0015``, ``thr_top2 = 0.001``,
``thr_vote = 4``, softmax temperature 100 — all in :class:`MappingConfig`):

0. **Similarity.** A node's similarity is the best over its names (canonical, aliases,
   scientific and common names). The nodes are ranked by similarity (ties: node id order);
   ``V[:k]`` are the top-k nodes, ``S_k`` the softmax of ``temperature × similarity`` over them.
1. **Contains.** Nodes with a name occurring in the prediction as whole words (SPEC §3; the
   pseudocode's raw substring test, which makes "ant" match "plant", is
   ``contains="substring"``). If some hit is among the top-k, the deepest such hit wins;
   otherwise the deepest hit overall (``contains_scope="all"`` always takes the deepest hit
   overall). Ties go to the more similar node.
2. **n-grams**, for n = 4, 3, 2: nodes sharing a word n-gram with the prediction (a name
   with fewer than n words has none); the same deepest-hit rule.
3. **Voting** (fixed, SPEC §3), only when the top-k are near-tied
   (``S_k[0] - S_k[1] < thr_top2`` and ``S_k[0] - S_k[-1] < thr_topk``): every node on the
   root paths of the top-k gets one vote per top-k node below it (or equal); the deepest node
   with at least ``thr_vote`` votes wins (``vote_rule="more_than"`` is the pseudocode's
   ``> thr_vote``); ties go to more votes, then to the best-ranked candidate under it.
4. **Fallback**: the most similar node ``V[0]``.

Names that are English function words ("a", "it", "is" …, :data:`STOP_WORDS`) never count
as contained, and n-grams made only of function words are ignored.

Speed and memory (no per-prediction scan of every name in Python; about 300 bytes per node
besides the names themselves, so a 1.1 M-node tree fits in about 1.2 GiB): every table is a
numpy array — name → nodes and node → names as CSR, and three inverted indexes (word
n-gram → names, stemmed word → names, character trigram → names) as CSR keyed by sorted
64-bit string hashes (collisions on exact-name lookups are checked against the name;
``__reduce__`` rebuilds the index because ``hash(str)`` differs between processes). The
whole-word contains check looks every run of up to max-name-length words of the prediction
up among the names (equivalent to a whole-word search, since predictions and names are
normalised to single spaces); the raw-substring variant builds an Aho–Corasick automaton
on first use. Identical normalised predictions are mapped once. The top-k similarity list is found in one of three
ways, in this order:

1. **Exact-name shortcut** (exact): a prediction that *is* a name has that name's node(s)
   at similarity 1; if they are also the deepest contains-hits, Alg. 1 returns them
   whatever the rest of the top-k is, so the top-k is not computed.
2. **Token prefilter** (string measures; ``prefilter=True``): the top-k among the names
   sharing a stemmed content word with the prediction. When the contains or n-gram check
   has hits (they always share words) this list decides "is a hit among the top-k"; for
   the vote and top-1 stages it is used when at least ``k`` nodes share a word. The hits
   themselves are exact; only the top-k list can differ from a full scan, and only through
   names that share no word with the prediction.
   **Fuzzy candidates** (taxonomies with more than ``fuzzy_min_names`` = 100,000 names):
   when fewer than the needed nodes share a word, the ``fuzzy_candidates`` = 1,024 names
   sharing the most character trigrams with the prediction join the candidates (posting
   lists read rarest trigram first, at most ``FUZZY_BUDGET`` entries, so the cost does not
   grow with the taxonomy). This replaces the full scan for misspellings and for text that
   names no taxon. *Approximation*: on the iNat-derived benchmark trees every prediction
   naming a taxon (exact, contained, genus/family, misspelt) maps to the same node as the previous
   mapper (exact full scan as fallback); text naming no taxon ("the bird a 0") maps to the most similar name
   among the candidates, which is the full scan's choice for about half of such texts
   (both are arbitrary nodes). ``prefilter=False`` or ``fuzzy_candidates=0`` keeps the exact
   full scan.
3. **Batched full scan** (exact; the documented fallback when no node shares a word, or
   fewer than ``k`` do and the vote / top-1 stages decide; always with ``prefilter=False``
   or embedding measures): all pending
   predictions against all names at once, at most ~16 M similarities in memory — rapidfuzz
   ``cdist`` in C++ on every core, or one matrix product for embeddings — then, per prediction, the names at or above the
   ``4k``-th best score reduced to nodes (exact: every other node scores lower).

Nodes without any name never enter the top-k.

Files: :mod:`.config` (parameters, result type, function words), :mod:`.index` (name tables and
posting lists), :mod:`.candidates` (top-k retrieval: prefilter, fuzzy candidates, full scan),
:mod:`.stages` (the Alg. 1 decisions), :mod:`.batch` (:class:`TaxonomyIndex`, the batch
driver), :mod:`.reference` (:func:`map_prediction_reference`, a direct transcription of Alg. 1 (with the same
fixes), scanning every node per prediction; tests and the benchmark compare against it).
"""

from taxoforge.scores.mapping.batch import TaxonomyIndex
from taxoforge.scores.mapping.config import STOP_WORDS, MappingConfig, MappingResult
from taxoforge.scores.mapping.reference import map_prediction_reference

__all__ = [
    "MappingConfig",
    "MappingResult",
    "TaxonomyIndex",
    "STOP_WORDS",
    "map_prediction_reference",
]
