"""WordNet 3.0 noun hierarchy: the graph of all noun synsets and the tree made from it."""

from functools import partial

import dagster as dg

from assets.common.automation import FOLLOW_INPUTS, observed_recently, package_source
from assets.common.checks import tree_checks
from assets.common.metadata import tree_metadata
from assets.common.tags import EMBEDDED_DEFAULT, TAXOFORGE_TEAM
from taxoforge.sources.wordnet_data import WORDNET_VERSION
from taxoforge.sources.wordnet_files import wordnet_source_version
from taxoforge.sources.wordnet import noun_graph
from taxoforge.sources.wordnet import wordnet_tree as build_wordnet_tree
from taxoforge.trees.tables import TreeTables

#: ``@dg.asset`` with what every asset of this domain shares.
wordnet_asset = partial(dg.asset, group_name="wordnet", owners=[TAXOFORGE_TEAM], tags=EMBEDDED_DEFAULT, kinds={"python", "parquet"},
                        code_version="1", automation_condition=FOLLOW_INPUTS)

#: The WordNet 3.0 database files the noun graph is read from (NLTK's data folder, or Debian's
#: wordnet-base in place), observed daily: a change of their content is a new data version, and
#: the graph and tree follow it.
wordnet_files = package_source(
    "wordnet_files", group_name="wordnet", version=wordnet_source_version,
    description="The WordNet 3.0 database files the noun graph is read from (NLTK's data folder, or Debian's "
                "`wordnet-base` in place): "
                "observed daily; the observed version is WordNet's version and the SHA-256 of `data.noun` and "
                "`index.noun`. WordNet 3.0 is frozen (2006), so this changes only if the installed files do.")
wordnet_files_observed = observed_recently(wordnet_files)


class TreeBuildConfig(dg.Config):
    """How the graph→tree step runs (docs/method.md#trees)."""

    tie_seed: int = 0
    cycle_policy: str = "dfs_back_edges"
    exclude: list[str] = []


@wordnet_asset(
    deps=[wordnet_files],
    description=(
        "All 82,115 WordNet 3.0 noun synsets with their hypernym and instance-hypernym edges "
        "(`edges`) and lemma names (`names`). WordNet 3.0 is frozen (its last release, 2006): "
        "it is rebuilt only when the observed files change."
    ),
)
def wordnet_noun_graph(context: dg.AssetExecutionContext) -> dg.Output[dict]:
    edges, names = noun_graph()
    by_rel = dict(edges.group_by("relation").len().iter_rows())
    return dg.Output(
        {"edges": edges, "names": names},
        metadata={
            "synsets": dg.MetadataValue.int(names["node_id"].n_unique()),
            "edges": dg.MetadataValue.int(edges.height),
            "hypernym_edges": dg.MetadataValue.int(int(by_rel.get("hypernym", 0))),
            "instance_hypernym_edges": dg.MetadataValue.int(int(by_rel.get("instance_hypernym", 0))),
            "names": dg.MetadataValue.int(names.height),
            "wordnet_version": WORDNET_VERSION,
        },
    )


@wordnet_asset(
    description=(
        "The WordNet noun hierarchy as one rooted tree (root `wn:n00001740` entity.n.01): every "
        "synset keeps a parent on one of its longest root paths, ties drawn with the seed. "
        "Depth equals NLTK's `Synset.max_depth()`."
    ),
)
def wordnet_tree(context: dg.AssetExecutionContext, config: TreeBuildConfig, wordnet_noun_graph: dict) -> dg.Output[TreeTables]:
    tree = build_wordnet_tree(wordnet_noun_graph["edges"], wordnet_noun_graph["names"], tie_seed=config.tie_seed,
                              cycle_policy=config.cycle_policy, exclude=config.exclude)
    return dg.Output(tree, metadata=tree_metadata(tree))


wordnet_tree_checks = tree_checks("wordnet_tree")
