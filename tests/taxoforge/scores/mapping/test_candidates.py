"""Candidate retrieval: the token prefilter and the fuzzy (trigram) candidates against the
exact full scan."""

from __future__ import annotations

from taxoforge.scores.mapping import MappingConfig, TaxonomyIndex



def test_prefilter_agrees_with_full_scan_on_contains_and_ngram_hits(inat_like):
    exact = TaxonomyIndex(inat_like.taxonomy(), MappingConfig(prefilter=False))
    fast = TaxonomyIndex(inat_like.taxonomy())
    preds = ["Aloe vera", "Toucan", "a bird", "keel billed hornbill", "Iris", "ants", "a toucan bird", "zzz"]
    a, b = exact.map(preds), fast.map(preds)
    assert a.node_idx.tolist() == b.node_idx.tolist()
    assert fast.stats["full_scans"] >= 1  # "zzz" shares no word with any name: documented fallback


def test_fuzzy_candidates_keep_every_taxon_naming_answer_and_survive_pickling(imagenet_tree):
    """The trigram candidates (used on trees with > fuzzy_min_names names, forced here on the
    real ImageNet-1k tree) never change the node of an answer that names a taxon, exactly or
    misspelt, and an index pickles (it is rebuilt, since string hashes differ per process)."""
    import pickle

    tax = imagenet_tree.taxonomy()
    exact = TaxonomyIndex(tax, MappingConfig(prefilter=False))
    fuzzy = TaxonomyIndex(tax, MappingConfig(fuzzy_min_names=0))
    preds = ["golden retriever", "a goldfish", "grey whale", "it is a tabby cat", "pembroke welsh corgi",
             "goldfsh", "golden retreiver", "tarantla", "american alligatr", "a dog", "zzqx"]
    a, b = exact.map(preds), fuzzy.map(preds)
    named = slice(0, 9)
    assert a.node_idx[named].tolist() == b.node_idx[named].tolist()
    # the misspelt answers share no word with any name: the exact index scans every name,
    # the fuzzy one answers them from trigram candidates ("zzqx" shares no trigram either)
    assert exact.stats["full_scans"] >= 4 and fuzzy.stats["full_scans"] <= 1
    assert fuzzy.stats["prefiltered"] >= 4
    again = pickle.loads(pickle.dumps(fuzzy))
    assert again.map(preds).node_idx.tolist() == b.node_idx.tolist()
