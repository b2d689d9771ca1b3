"""ImageNet-1k label set from the PyPI package, checked against timm's list in ../shared."""

from __future__ import annotations

from taxoforge.sources.imagenet import imagenet1k_labels, wnid_to_node
from tests.conftest import shared_file


def test_thousand_classes_with_wnids():
    labels = imagenet1k_labels()
    assert labels.height == 1000 and labels["external_id"].n_unique() == 1000
    assert labels.row(0) == ("imagenet-1k", "0", "tench", "n01440764")


def test_same_wnids_as_timm():
    timm = shared_file("imagenet", "timm_info", "imagenet_synsets.txt").read_text().split()
    assert imagenet1k_labels()["external_id"].to_list() == timm


def test_wnid_to_node():
    assert wnid_to_node("n02084071") == "wn:n02084071"
    assert wnid_to_node("Q146") is None and wnid_to_node("n123") is None
