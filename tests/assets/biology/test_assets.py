"""The biology assets materialise in-process through the project's Parquet IO manager:
the offline iNaturalist tree, a ColDP tree (the real Pterophoroidea dataset; taxoforge ships
no ColDP data), the iNat21 fixture tree and the VLM4Bio/BioCLIP links, with checks."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import polars as pl
import pytest

import assets.biology.assets as bio
from pipelines.resources import default_resources
from taxoforge.trees.tables import TreeTables
from tests.conftest import shared_file

INAT21_FIXTURE = Path(__file__).parents[2] / "taxoforge" / "sources" / "fixtures" / "inat21_categories.json"
ASSETS = dg.load_assets_from_modules([bio])
CHECKS = dg.load_asset_checks_from_modules([bio])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    shared_file("vlm4bio")
    data_dir = tmp_path_factory.mktemp("data")
    result = dg.materialize(
        [*ASSETS, *CHECKS],
        resources=default_resources(str(data_dir)),
        instance=dg.DagsterInstance.ephemeral(),
        run_config={"ops": {"inat21_tree": {"config": {"source": str(INAT21_FIXTURE)}},
                            "coldp_tree": {"config": {"source": str(shared_file("coldp", "pterophoroidea_world_catalogue")),
                                                      "name": "pterophoroidea"}},
                            "biology_labels": {"config": {
                                "vlm4bio_folder": str(shared_file("vlm4bio")),
                                "bioclip_csv": str(shared_file("bioclip", "rare_species_400_lineage_common_names.csv"))}}}},
    )
    return result, data_dir


def _md(result) -> dict:
    return {e.asset_key.to_user_string(): e.materialization.metadata for e in result.get_asset_materialization_events()}


def test_assets_materialise_and_structure_checks_pass(run):
    result, _ = run
    assert result.success
    assert set(_md(result)) == {"inaturalist_tree", "coldp_tree", "inat21_tree", "biology_labels", "biology_links"}
    checks = {(c.asset_key.to_user_string(), c.check_name): c for c in result.get_asset_check_evaluations()}
    for tree in bio.TREES:
        for name in bio.STRUCTURE:
            assert checks[(tree, name)].passed, (tree, name)
    # iNat21 and the Pterophoroidea ColDP: every species under a genus; iNaturalist has real gaps, within the
    # threshold measured for its file, each example named
    assert checks[("inat21_tree", "inat21_tree_species_under_genus")].passed
    assert checks[("coldp_tree", "coldp_tree_species_under_genus")].passed
    inat_sp = checks[("inaturalist_tree", "inaturalist_tree_species_under_genus")]
    assert inat_sp.passed and inat_sp.severity == dg.AssetCheckSeverity.WARN
    assert 0 < inat_sp.metadata["species_not_under_genus"].value <= inat_sp.metadata["threshold"].value
    assert "Dichelia sobriana (inat:1077333, species) under Tortricidae (family)" in inat_sp.metadata["examples"].value
    top = checks[("inaturalist_tree", "tree_top_ranks_under_root")]
    assert top.passed and top.metadata["top_rank"].value == "kingdom" and top.metadata["children_of_root"].value == 8
    assert checks[("biology_links", "biology_links_complete")].passed


def test_metadata_taxa_per_rank_leaves_unmatched(run):
    result, _ = run
    md = _md(result)
    per_rank = {r.data["rank"]: r.data["taxa"] for r in md["inaturalist_tree"]["taxa_per_rank"].value.records}
    assert per_rank["species"] > 100_000  # a table with counts and a schema, not Markdown
    assert md["inaturalist_tree"]["nodes"].value > 1_300_000
    assert md["inat21_tree"]["leaves"].value == md["inat21_tree"]["categories"].value == 18
    assert md["inat21_tree"]["max_depth"].value == 7
    assert md["coldp_tree"]["synonyms"].value > 1000
    links = md["biology_links"]
    assert links["labels"].value == links["linked"].value + links["ambiguous"].value + links["unmatched"].value
    assert links["unmatched"].value >= 1 and "not a genus of the tree" in links["unmatched_labels"].value
    assert "genus_transfer" in links["by_method"].value and "Notropis hudsonius" in links["genus_transfers"].value
    assert links["partial"].value >= 1


def test_files_on_disk(run):
    _, data_dir = run
    tree = TreeTables.read(data_dir / "assets" / "inat21_tree")
    assert tree.taxonomy().root == "inat21:root"
    links = pl.read_parquet(data_dir / "assets" / "biology_links" / "table.parquet")
    fish = links.filter(pl.col("dataset") == "vlm4bio-fish")
    assert set(fish["status"]) == {"linked"}
    # a shiner renamed since VLM4Bio was made: recovered by the general genus-transfer rule
    row = fish.filter(pl.col("label_text") == "Notropis hudsonius").row(0, named=True)
    assert row["method"] == "genus_transfer" and "Hudsonius hudsonius" in row["detail"]


def test_coldp_tree_asset_on_the_pterophoroidea_dataset(tmp_path):
    src = shared_file("coldp", "pterophoroidea_world_catalogue")
    result = dg.materialize(
        [bio.coldp_tree, *(c for c in CHECKS if "coldp_tree" in str(c.check_keys))],
        resources=default_resources(str(tmp_path)), instance=dg.DagsterInstance.ephemeral(),
        run_config={"ops": {"coldp_tree": {"config": {"source": str(src), "name": "pterophoroidea"}}}},
    )
    assert result.success
    md = _md(result)["coldp_tree"]
    assert md["nodes"].value == 1712 and md["species"].value == 1604 and md["leaves"].value == 1604
    assert {r.data["rank"]: r.data["taxa"] for r in md["taxa_per_rank"].value.records}["genus"] == 91
    assert md["flavour"].value == "split"
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks and all(checks.values())


def test_coldp_release_at_a_fixed_url_is_refetched_when_it_changes_and_recorded(tmp_path, monkeypatch):
    """A weekly run on a "latest" URL rebuilds from the new release, and
    the metadata names the bytes it used (URL, ETag, SHA-256), not just the URL."""
    import hashlib
    import io
    import json
    import zipfile

    from tests.taxoforge.files.scripted_http import ScriptedServer, file_reply

    usage = "ID\tparentID\tstatus\tscientificName\trank\n" + "".join(f"{r}\n" for r in (
        "leuciscidae\t\taccepted\tLeuciscidae\tfamily",
        "hudsonius\tleuciscidae\taccepted\tHudsonius\tgenus",
        "hudsonius_hudsonius\thudsonius\taccepted\tHudsonius hudsonius\tspecies",
        "notropis_hudsonius\thudsonius_hudsonius\tsynonym\tNotropis hudsonius\tspecies"))

    def release(text: str) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("NameUsage.tsv", text)
        return buf.getvalue()

    v1 = release(usage)
    v2 = release(usage.rstrip("\n") + "\nnewgenus\tleuciscidae\taccepted\tNovogenus\tgenus\n")
    served = {"body": v1, "etag": '"r1"'}
    monkeypatch.setenv("TAXOFORGE_DATA_DIR", str(tmp_path))
    with ScriptedServer() as srv:
        srv.routes["/latest/coldp.zip"] = lambda r: file_reply(r, served["body"], etag=served["etag"])
        url = f"{srv.url}/latest/coldp.zip"

        def materialise():
            result = dg.materialize([bio.coldp_tree], resources=default_resources(str(tmp_path)),
                                    instance=dg.DagsterInstance.ephemeral(),
                                    run_config={"ops": {"coldp_tree": {"config": {"source": url}}}})
            assert result.success
            info = json.loads((tmp_path / "assets" / "coldp_tree" / "info.json").read_text())
            return _md(result)["coldp_tree"]["nodes"].value, info["source_versions"]["coldp"]

        n1, prov1 = materialise()
        served.update(body=v2, etag='"r2"')  # next week: a new release behind the same URL
        n2, prov2 = materialise()
    assert n2 == n1 + 1
    assert prov1["etag"] == '"r1"' and prov2["etag"] == '"r2"' and prov2["url"] == url
    assert prov2["sha256"] == hashlib.sha256(v2).hexdigest()
