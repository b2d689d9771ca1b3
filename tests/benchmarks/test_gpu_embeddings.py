"""The prepared GPU script of the embedding measure, run on the CPU build of torch with a few
hundred names: the same code a lent GPU runs, checked for what it reports (no figure)."""

from __future__ import annotations

import gzip
import json

import pytest

from benchmarks import gpu_embeddings
from tests.conftest import minilm_or_skip


def test_the_gpu_script_runs_on_the_cpu(tmp_path):
    minilm_or_skip("cpu")
    names = [f"{g} {s}" for g in ("Quercus", "Passer", "Canis", "Felis") for s in ("ilex", "alba", "major", "minor",
             "lupus", "catus", "domesticus", "robur", "montanus", "latrans")] + ["holm oak", "house sparrow", "wolf"]
    path = tmp_path / "names.txt.gz"
    path.write_bytes(gzip.compress("\n".join(names).encode()))
    assert gpu_embeddings.read_names(path) == names
    out = tmp_path / "gpu.json"
    assert gpu_embeddings.main(["--names", str(path), "--device", "cpu", "--answers", "60", "--cpu-answers", "30",
                                "--plain-names", "20", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["device"] == "cpu" and res["names"] == len(names)
    assert res["bucketed_fp32"]["min_cosine_to_plain_loop"] >= 0.9999
    assert res["search_device"]["answers"] == 60 and res["search_cpu"]["answers"] == 30
    # the torch search and the numpy search give the same sets, so the same top-1
    assert res["search_cpu"]["same_sets_as_device"] == res["search_cpu"]["same_top1"] == 30
    if "bucketed_fp16" in res:
        assert res["bucketed_fp16"]["model_id"].endswith("-fp16") and res["bucketed_fp16"]["min_cosine_to_fp32"] >= 0.999
    else:
        assert any("fp16" in s for s in res["skipped"])
    with pytest.raises(SystemExit):
        gpu_embeddings.main([])
