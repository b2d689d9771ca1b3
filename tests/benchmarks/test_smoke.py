"""Smoke test of the benchmarks: every benchmark at its tiniest size, through the one command.

Benchmarks are not tests of speed; this checks that they run, that the JSON and Markdown
have the documented shape, and that every candidate agrees with its baseline on the same
input (depths and parents for graph → tree, per-pair hP/hR and hiclass means for the
measures, chosen nodes for the mapping).
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from benchmarks import run as bench_run
from benchmarks.generate import WIKIDATA_SHAPE, wikidata_like_edges
from benchmarks.harness import loglog_slope, measure

# the module's fixture runs every benchmark at its tiny size, which takes 10 to 15 minutes on
# the shared 2-core machine under load: more than the suite's 900 s a test
pytestmark = pytest.mark.timeout(2400)


@pytest.fixture(scope="module")
def tiny_results(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    t = time.perf_counter()
    code = bench_run.main(["--size", "tiny", "--out", str(out)])
    elapsed = time.perf_counter() - t
    doc = json.loads((out / "latest.json").read_text())
    return code, doc, (out / "latest.md").read_text(), elapsed


def test_every_benchmark_runs_and_writes_json_and_markdown(tiny_results):
    code, doc, md, elapsed = tiny_results
    failures = {k: v.get("error") for k, v in doc["benchmarks"].items() if v["status"] != "ok"}
    assert code == 0 and not failures, failures
    assert set(doc["benchmarks"]) == set(bench_run.BENCHMARKS)
    for key in ("generated_at", "size", "command", "machine_before", "machine_after", "rows", "scaling_rows"):
        assert key in doc, key
    assert doc["size"] == "tiny"
    assert md.startswith("# Benchmark results (tiny)")
    for title in ("Graph → tree vs networkx", "hP/hR/hF", "Text → node", "Text → node fidelity", "## Scaling"):
        assert title in md, title
    # one Markdown table row per summary row
    assert md.count("\n| ") >= len(doc["rows"]) + len(doc["scaling_rows"]) + 2


def test_rows_have_measurements_for_candidate_and_baseline(tiny_results):
    _, doc, _, _ = tiny_results
    compared = [r for r in doc["rows"] if r.get("baseline")]
    assert len(compared) >= 6
    for r in compared:
        c, b = r["candidate"], r["baseline"]
        assert c["wall_s"] > 0 and c["throughput"] > 0, r
        assert b["wall_s"] > 0 and b["throughput"] > 0, r
        assert r["speedup"] and r["speedup"] > 0, r
    fresh = [r for r in compared if r["candidate"].get("peak_rss_bytes") and r["baseline"].get("peak_rss_bytes")]
    assert fresh, "no fresh-process memory measurement"
    for r in compared:  # a baseline whose memory is not measured (a shell tool): no memory ratio
        if r["candidate"].get("peak_rss_bytes") and not r["baseline"].get("peak_rss_bytes"):
            assert r.get("memory_ratio") is None, r
    for r in fresh:  # measured separately in fresh processes: both have their own peak
        assert r["candidate"]["peak_rss_bytes"] > 10 * 2**20 and r["baseline"]["peak_rss_bytes"] > 10 * 2**20
        assert r["memory_ratio"] == pytest.approx(r["baseline"]["peak_rss_bytes"] / r["candidate"]["peak_rss_bytes"])


def test_candidates_agree_with_baselines(tiny_results):
    _, doc, _, _ = tiny_results
    tree = doc["benchmarks"]["graph_to_tree"]["result"]
    for q in tree["vs_networkx"] + tree["vs_numpy"] + [tree["inaturalist"]]:
        a = q["agreement"]
        assert a["compared"] and a["same_nodes"] and a["depth_disagreements"] == 0, (q["case"], a)
        assert a["parent_disagreements"] == 0, (q["case"], a)
    threads = tree["threads"]  # each step at 1 and 2 threads, beside the numpy reference
    assert {r["stage"] for r in threads["stages"]} >= {"_encode", "_longest_root_paths", "total"}
    assert all(threads["speedup_vs_numpy"][str(t)] > 0 for t in (1, 2)) and "| whole build_tree |" in threads["markdown"]
    scale = doc["benchmarks"]["hierarchical_measures_scaling"]["result"]
    assert scale["agreement"] == {"python_per_pair": True, "hiclass_means": True}
    meas = doc["benchmarks"]["hierarchical_measures"]["result"]
    assert meas["baseline_python"]["agrees"] is True
    assert meas["baseline_hiclass"] is None or meas["baseline_hiclass"]["agrees"] is True
    mapping = doc["benchmarks"]["text_to_node_mapping"]["result"]
    for case in mapping.get("cases", [mapping]):
        # the prefilter is exact: on and off agree with each other and with the reference
        assert case["agreement_with_baseline"] == {"prefilter_on": 1.0, "prefilter_off": 1.0}
        assert case["prefilter_off"]["same_nodes_and_stages_as_prefilter_on"]
    for case in doc["benchmarks"]["text_to_node_mapping_scale"]["result"]["cases"]:
        assert case["agreement"]["exact_mode_same_node"] == 1.0, case["case"]
        assert case["agreement"]["prefilter_same_node"] == 1.0, case["case"]
    for sp in doc["benchmarks"]["text_to_node_fidelity"]["result"]["prefilter_and_speed"].values():
        assert sp["differences"] == 0, sp["difference_examples"]  # the prefilter never changes a node
    assert all(r["agree"] for r in doc["rows"] if r.get("agree") is not None)


def test_mapping_quality_benchmark_reports_every_gold_set(tiny_results):
    """Every tree is scored with the string measure on every gold set it has; the embedding
    measure is reported (run or skipped with a reason); Table 9's rows are accounted for."""
    from benchmarks.bench_mapping_fidelity import PLURAL, SINGULAR
    from benchmarks.mapping_gold import table9_rows
    from benchmarks.shared_data import SHARED_DATA

    _, doc, md, _ = tiny_results
    res = doc["benchmarks"]["text_to_node_fidelity"]["result"]
    string = {c["tree"]: c for c in res["cases"] if c["measure"] == "string"}
    assert set(string) == {"imagenet1k", "wordnet", "inat21-shaped"}
    for tree, case in string.items():
        assert case["status"] == "ok", case
        sets = case["sets"]
        assert {"templates", "refusals", "hedges"} <= set(sets), (tree, set(sets))
        assert set(sets["templates"]["families"]) == {*SINGULAR, *PLURAL, "singular", "plural"}, tree
        # the iNat21-shaped tree's English names come from the shared data too (WordNet's alone without it)
        plural_floor = 300 if SHARED_DATA.is_dir() or tree != "inat21-shaped" else 100
        assert case["answers_per_template"]["singular"] > 1000 and case["answers_per_template"]["plural"] > plural_floor, tree
        for s in sets.values():
            assert 0 <= s["accuracy"] <= 1 and s["answers"] == sum(x["answers"] for x in s["stages"].values())
    embedding = [c for c in res["cases"] if c["measure"] == "embedding"]
    assert {c["tree"] for c in embedding} == set(string)
    assert all(c["status"] == "ok" or c["reason"] for c in embedding)
    inat = string["inat21-shaped"]
    evaluated = {r["row"] for r in inat["table9_rows"]} | {r["row"] for r in inat["notes"]["table9_not_evaluated"]}
    assert evaluated == {int(r) for r in table9_rows()["row"].to_list()}
    assert res["trees"]["inat21-shaped"]["name_kinds"].get("vernacular", 0) > 0  # English names beside the Latin ones
    if SHARED_DATA.is_dir():
        assert inat["notes"]["vlm4bio"]["with_gold"] > 0 and inat["sets"]["vlm4bio"]["answers"] > 0
        assert inat["sets"]["real_refusals_and_hedges"]["answers"] > 0
    assert "## Mapping quality (tiny)" in md and "Table 9" in md


def test_embedding_benchmark_measures_the_cpu_against_the_string_measure(tiny_results):
    """The embedding measure's rates beside the string measure's on the same answers, on the
    CPU; CUDA measured where present, else reported as not measured with the reason."""
    _, doc, md, _ = tiny_results
    res = doc["benchmarks"]["embedding_measure"]["result"]
    assert res["string"]["answers_per_s"] > 0
    if res["status"] != "ok":  # the embeddings extra is not installed: said so
        assert "embeddings" in res["reason"] or "not installed" in res["reason"], res["reason"]
        return
    cpu = res["cpu"]
    assert cpu["device"] == "cpu" and cpu["names_embedding"]["names"] == res["names"] > 0
    assert cpu["mapping"]["answers"] == res["string"]["answers"] and cpu["mapping"]["answers_per_s"] > 0
    assert cpu["mapping"]["ratio_to_string_measure"] == pytest.approx(
        cpu["mapping"]["answers_per_s"] / res["string"]["answers_per_s"], rel=1e-3)
    # the names embedded once: a second index in the process, or stored embeddings, cost no embedding
    assert cpu["index_build_s"]["warm_same_process"] < cpu["index_build_s"]["cold_names_embedded"]
    # the measure's build path against the plain sentence-transformers loop, same names, same run
    assert cpu["plain_sentence_transformers_loop"]["names_per_s"] > 0 and cpu["min_cosine_to_plain_loop"] >= 0.9999
    # the full scan: float32 blocks against the whole float64 matrix, the same top-k nodes
    x = res["search"]
    assert x["queries"] > 0 and x["whole_matrix"]["answers_per_s"] > 0 and x["blocked_float32"]["answers_per_s"] > 0
    assert x["same_top_k_nodes"] >= 0.99 * x["queries"] and x["max_similarity_difference"] <= x["float32_rounding_bound"]
    # the static model distilled from MiniLM: its names/s on a larger tree's names, its mapping rate
    st = res["static"]
    assert st["names_embedding"]["names"] > res["names"] and st["names_embedding"]["names_per_s"] > 0
    assert st["mapping"]["answers"] == res["string"]["answers"] and st["source_model_id"] == cpu["model_id"]
    assert "minilm-static" in md and "Full scan" in md
    gpu = res["cuda"]
    assert "mapping" in gpu or (gpu["status"] == "not measured" and "CUDA" in gpu["reason"])
    if "mapping" in gpu:
        assert gpu["max_abs_difference_from_cpu_embeddings"] < 1e-3 and gpu["same_nodes_as_cpu"] >= 0.99
    assert "## Embedding measure (tiny)" in md and "embedding measure on CPU" in md


def test_scaling_rows_have_three_sizes_and_a_slope(tiny_results):
    _, doc, _, _ = tiny_results
    names = [r["benchmark"] for r in doc["scaling_rows"]]
    assert "Graph → tree (taxoforge)" in names and "hP/hR/hF (taxoforge)" in names
    for r in doc["scaling_rows"]:
        assert len(r["sizes"]) == 3 and r["sizes"] == sorted(r["sizes"])
        assert len(r["ns_per_unit"]) == 3 and all(x > 0 for x in r["ns_per_unit"])
        assert isinstance(r["slope_wall"], float)


def test_measure_sees_peak_memory_of_the_work_only():
    rec = measure(_alloc_setup, _alloc_work, 64)
    assert rec["status"] == "ok", rec
    # the 64 MiB set-up is not counted, the 256 MiB the work touched is
    assert rec["peak_delta_bytes"] >= 200 * 2**20
    assert rec["peak_rss_bytes"] >= rec["rss_before_bytes"] + 200 * 2**20
    assert rec["summary"] == {"sum": 0.0} and rec["check"] == "done"


def test_measure_reports_errors_and_timeouts():
    err = measure(_alloc_setup, _fail, 1)
    assert err["status"] == "error" and "ValueError: boom" in err["error"]
    slow = measure(_alloc_setup, _sleep, 1, timeout=2)
    assert slow["status"] == "timeout"


def test_loglog_slope():
    assert loglog_slope([1, 10, 100], [2, 20, 200]) == pytest.approx(1.0)
    assert loglog_slope([1, 10, 100], [1, 100, 10_000]) == pytest.approx(2.0)
    assert loglog_slope([1], [1]) is None


def test_wikidata_like_graph_has_the_shape_and_is_seeded():
    e, info = wikidata_like_edges(0.01, seed=3)
    assert info["classes"] == round(WIKIDATA_SHAPE["classes"] * 0.01)
    assert abs(info["edges"] / WIKIDATA_SHAPE["edges"] / 0.01 - 1) < 0.02
    share = info["classes_with_several_parents"] / info["classes"]
    assert abs(share - WIKIDATA_SHAPE["multi_parent"] / WIKIDATA_SHAPE["classes"]) < 0.01
    assert info["injected_cycles"] > 0 and info["long_chains"] > 0
    assert e["child"].str.starts_with("wd:Q").all() and e["parent"].str.starts_with("wd:Q").all()
    e2, _ = wikidata_like_edges(0.01, seed=3)
    assert e.equals(e2)
    e3, _ = wikidata_like_edges(0.01, seed=4)
    assert not e.equals(e3)


# module-level helpers (spawned processes import them by name)
def _alloc_setup(mib):
    return np.ones(mib * 2**17)  # mib MiB of float64


def _alloc_work(state):
    big = np.zeros(256 * 2**17)
    big[:] = 1.0
    return {"summary": {"sum": float(big.sum() - big.size)}, "check": "done"}


def _fail(state):
    raise ValueError("boom")


def _sleep(state):
    time.sleep(30)


def test_dump_benchmark_checks_its_answers(tiny_results):
    """The dump reader against grep / pigz / lbzip2 on the same generated files (dense and
    mixed), first call and warm call, and Spark beside it: counts agree with the shell tools,
    every read gives the same tables, and the Spark job's tables equal the reader's."""
    _, doc, md, _ = tiny_results
    d = doc["benchmarks"]["wikidata_dump"]["result"]
    for shape in ("dense", "mixed"):
        assert d[shape]["agreement"]["agree"], d[shape]["agreement"]
        assert d[shape]["candidate"]["status"] == "ok" and d[shape]["ratio_to_baseline"] > 0
        assert d[shape]["first_call"]["status"] == "ok" and d[shape]["first_call_ratio"] > 0
    assert d["mixed"]["input"]["lines"] > 2 * (d["mixed"]["input"]["p279_edges"] + d["mixed"]["input"]["classes"])
    for kind in ("gzip", "bzip2"):
        assert d["compressed"][kind]["agreement"]["agree"], d["compressed"][kind]
    assert d["memory"]["peak_rss_bytes"] > 0
    assert d["install"]["status"] == "skipped"  # at tiny size: it compiles every kernel from scratch
    th = d["threads"]  # each stage at 1 and 2 threads, the same tables at every count
    assert th["same_tables_at_every_count"] and all(th["ratio_to_grep"][str(t)] > 0 for t in (1, 2))
    assert {r["stage"] for r in th["stages"]} >= {"scan", "node_codes", "edge_table", "name_table", "total"}
    assert d["spark"].get("status") == "skipped" or all(r["agreement"]["agree"] for r in d["spark"]["runs"]), d["spark"]
    assert "Dump → graph, dense (read_dump)" in md and "Dump → graph, mixed (read_dump)" in md