"""The taxonomy of a file in a watched folder: the nearest taxonomy.txt, then a first-level
folder named after a taxonomy, then the default."""

from __future__ import annotations

import pytest

from assets.scoring.folders import read_sidecar, taxonomy_for_file, taxonomy_name


def test_the_nearest_sidecar_wins_then_the_folder_name_then_the_default(tmp_path):
    root = tmp_path / "model_outputs"
    (root / "inaturalist" / "vlm4bio" / "fish").mkdir(parents=True)
    (root / "inaturalist" / "vlm4bio" / "taxonomy.txt").write_text("\n# pinned\n  inaturalist@0123  \n")
    (root / "inaturalist" / "vlm4bio" / "fish" / "taxonomy.txt").write_text("coldp\n")
    (root / "taxonomy.txt").write_text("wordnet\n")
    known = ["inaturalist", "wordnet", "coldp"]
    r = taxonomy_for_file(root / "inaturalist" / "vlm4bio" / "fish" / "a.jsonl", root, default="imagenet1k", known=known)
    assert (r.ref, r.rule) == ("coldp", "sidecar")
    r = taxonomy_for_file(root / "inaturalist" / "vlm4bio" / "b.jsonl", root, default="imagenet1k", known=known)
    assert (r.ref, r.name, r.rule) == ("inaturalist@0123", "inaturalist", "sidecar")
    # the watched folder's own sidecar applies to everything without a nearer one
    r = taxonomy_for_file(root / "inaturalist" / "c.jsonl", root, default="imagenet1k", known=known)
    assert (r.ref, r.rule) == ("wordnet", "sidecar")
    (root / "taxonomy.txt").unlink()
    r = taxonomy_for_file(root / "inaturalist" / "c.jsonl", root, default="imagenet1k", known=known)
    assert (r.ref, r.rule) == ("inaturalist", "folder name")
    assert taxonomy_for_file(root / "c.jsonl", root, default="imagenet1k", known=known).rule == "default"
    assert taxonomy_for_file(root / "c.jsonl", root, default=None, known=known) is None
    # a sidecar above the watched folder is not the watched folder's business
    (tmp_path / "taxonomy.txt").write_text("wikidata\n")
    assert taxonomy_for_file(root / "c.jsonl", root, default="imagenet1k").ref == "imagenet1k"


def test_a_sidecar_path_is_relative_to_its_folder_and_a_bad_one_names_itself(tmp_path):
    (tmp_path / "out").mkdir()
    side = tmp_path / "out" / "taxonomy.txt"
    side.write_text("../trees/mine\n")
    assert read_sidecar(side) == str((tmp_path / "trees" / "mine").resolve())
    side.write_text("sha256:" + "a" * 64 + "\n")
    assert read_sidecar(side) == "sha256:" + "a" * 64 and taxonomy_name(read_sidecar(side)).startswith("sha256:")
    side.write_text("# nothing\n\n")
    with pytest.raises(ValueError, match="taxonomy.txt: expected one line naming the taxonomy"):
        read_sidecar(side)


def test_the_module_examples_hold():
    import doctest

    import assets.scoring.folders as folders

    result = doctest.testmod(folders)
    assert result.attempted >= 5 and result.failed == 0
