"""Extraction from seeds over SPARQL: against the real data, through faults, and across a crash."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import polars as pl
import pytest

from taxoforge.sources.wikidata.checkpoint import BatchCheckpoint
from taxoforge.sources.wikidata.extract import extract_from_seeds
from taxoforge.sources.wikidata.sparql import SparqlClient, SparqlError
from taxoforge.sources.wikidata.tree import build_wikidata_tree

REPO = Path(__file__).resolve().parents[4]
BATCH = 7  # small batches: many requests over the small real graph


def make_client(endpoint, **kw) -> SparqlClient:
    opts = dict(endpoint=endpoint.url, contact="tests@taxoforge.invalid", timeout=2.0, max_retries=5,
                backoff_base=0.005, backoff_max=0.02, min_interval=0)  # a loopback endpoint needs no pace
    opts.update(kw)
    return SparqlClient(**opts)


def extract(endpoint, seeds, **kw):
    return extract_from_seeds(make_client(endpoint), seeds, batch_size=BATCH, label_batch_size=BATCH, **kw)


def expected_edges(instances, seeds, all_p279) -> set[tuple[str, str, str]]:
    """What the extraction must find, computed independently with networkx."""
    out = set()
    starts = set()
    for s in seeds:
        classes = instances[s]["classes"]
        out |= {(f"wd:{s}", f"wd:{c}", "P31") for c in classes}
        starts |= set(classes) if classes else {s}
    reach = set()
    for c in starts:
        if c in all_p279:
            reach |= {c} | nx.descendants(all_p279, c)
    reach.discard("Q35120")
    out |= {(f"wd:{c}", f"wd:{p}", "P279") for c in reach for p in all_p279.successors(c)}
    return out


def test_extraction_matches_the_graph(endpoint, instances, all_p279):
    seeds = sorted(instances)
    g = extract(endpoint, seeds)
    got = set(g.edges.iter_rows())
    assert got == expected_edges(instances, seeds, all_p279)
    assert g.seed_node_ids == [f"wd:{q}" for q in sorted(seeds, key=lambda q: int(q[1:]))]
    # the root is reached and never expanded
    assert "wd:Q35120" in set(g.edges["parent"]) and "wd:Q35120" not in set(g.edges["child"])
    # labels and aliases of the seeds
    names = g.names.filter(pl.col("node_id") == "wd:Q12418")
    assert set(names.filter(pl.col("kind") == "alias")["name"]) == {"La Gioconda", "La Joconde"}
    assert names.filter(pl.col("kind") == "label")["name"].to_list() == ["Mona Lisa"]
    assert set(g.names["lang"]) == {"en"}
    # every node that has an English label in the data has it in the names
    nodes = set(g.edges["child"]) | set(g.edges["parent"])
    labelled = set(g.names.filter(pl.col("kind") == "label")["node_id"])
    assert labelled <= nodes | set(g.seed_node_ids)
    # query time for the snapshot manifest
    assert g.info["query_time_first"] and g.info["query_time_first"] <= g.info["query_time_last"]
    assert g.info["requests"]["succeeded"] == g.info["batches_queried"] == len(endpoint.requests)
    assert g.info["seeds_without_class"] == 1 and g.info["closure_levels"] > 5


def test_entities_become_leaves_under_their_classes(endpoint, instances, all_p279):
    seeds = sorted(instances)
    tree = build_wikidata_tree(extract(endpoint, seeds), exclude={})
    nodes = tree.nodes
    leaf = dict(zip(nodes["node_id"], nodes["is_leaf"]))
    parent = dict(zip(nodes["node_id"], nodes["parent_id"]))
    for q, spec in instances.items():
        if spec["classes"]:
            assert leaf[f"wd:{q}"], q
            assert parent[f"wd:{q}"] in {f"wd:{c}" for c in spec["classes"]}
    # the classless seed has no edge: left out and reported
    unplaced = tree.report.filter(pl.col("kind") == "unplaced_seed")["child_id"].to_list()
    assert unplaced == ["wd:Q990000102"]
    assert "wd:Q990000102" not in leaf
    assert dict(zip(nodes["node_id"], nodes["label"]))["wd:Q12418"] == "Mona Lisa"
    assert set(tree.names["kind"]) == {"label", "alias"}


def test_invalid_seed_never_queried(endpoint):
    with pytest.raises(ValueError, match=r"seed_qids\[1\]"):
        extract(endpoint, ["Q12418", "Q1 } ; DROP ALL"])
    assert endpoint.requests == []


def test_faults_do_not_change_the_result(endpoint, instances, tmp_path):
    seeds = sorted(instances)
    clean = extract(endpoint, seeds)
    n_clean = len(endpoint.requests)
    endpoint.reset()
    endpoint.inject(("status", 429, {"Retry-After": "0"}), ("status", 500, {}), ("truncate",),
                    ("status", 503, {}), ("truncate_unannounced",), ("hang", 1.0), ("status", 502, {}))
    c = make_client(endpoint, timeout=0.3, max_retries=8)  # all seven faults hit the first batch
    faulty = extract_from_seeds(c, seeds, batch_size=BATCH, label_batch_size=BATCH)
    assert faulty.edges.equals(clean.edges) and faulty.names.equals(clean.names)
    assert len(endpoint.requests) == n_clean + 7
    assert faulty.info["requests"]["retries"] == 7


def test_failure_then_resume_in_process(endpoint, instances, tmp_path):
    seeds = sorted(instances)
    clean = extract(endpoint, seeds)
    n_batches = len(endpoint.requests)
    endpoint.reset()
    ck = tmp_path / "ck"
    # the endpoint fails for good at the 6th request: the run aborts
    endpoint.on_request = lambda n: endpoint.inject(*[("status", 500, {})] * 10) if n == 5 else None
    with pytest.raises(SparqlError):
        extract_from_seeds(make_client(endpoint, max_retries=1), seeds, batch_size=BATCH, label_batch_size=BATCH,
                           checkpoint=ck)
    assert BatchCheckpoint(ck).count() == 5
    endpoint.reset()
    resumed = extract_from_seeds(make_client(endpoint), seeds, batch_size=BATCH, label_batch_size=BATCH,
                                 checkpoint=ck)
    assert resumed.edges.equals(clean.edges) and resumed.names.equals(clean.names)
    assert len(endpoint.requests) == n_batches - 5
    assert resumed.info["batches_from_checkpoint"] == 5 and resumed.info["batches_queried"] == n_batches - 5
    # a third run is served wholly from the checkpoint
    endpoint.reset()
    again = extract_from_seeds(make_client(endpoint), seeds, batch_size=BATCH, label_batch_size=BATCH, checkpoint=ck)
    assert endpoint.requests == [] and again.edges.equals(clean.edges)


CHILD = textwrap.dedent(
    """
    import json, sys
    from taxoforge.sources.wikidata.extract import extract_from_seeds
    from taxoforge.sources.wikidata.sparql import SparqlClient
    url, ck, out, seeds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(",")
    c = SparqlClient(endpoint=url, contact="tests@taxoforge.invalid", timeout=5, backoff_base=0.005, min_interval=0)
    g = extract_from_seeds(c, seeds, batch_size=%d, label_batch_size=%d, checkpoint=ck)
    g.edges.write_parquet(out + ".edges.parquet")
    g.names.write_parquet(out + ".names.parquet")
    json.dump({"queried": g.info["batches_queried"], "resumed": g.info["batches_from_checkpoint"]}, open(out + ".json", "w"))
    """
    % (BATCH, BATCH)
)


def run_child(endpoint, ck: Path, out: Path, seeds: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", CHILD, endpoint.url, str(ck), str(out), ",".join(seeds)], env=env)


@pytest.mark.timeout(120)
def test_crash_mid_extraction_then_resume(endpoint, instances, tmp_path):
    """A real crash: the extracting process is SIGKILLed while a request is in flight; a new
    process resumes from the checkpoint folder. Nothing is queried twice, and the result equals
    an uninterrupted run."""
    seeds = sorted(instances)
    ck = tmp_path / "ck"
    p = run_child(endpoint, tmp_path / "ck_clean", tmp_path / "clean", seeds)
    assert p.wait(60) == 0
    clean_edges = pl.read_parquet(tmp_path / "clean.edges.parquet")
    clean_names = pl.read_parquet(tmp_path / "clean.names.parquet")
    clean_queries = [r["query"] for r in endpoint.requests]
    n_total = len(clean_queries)
    assert n_total > 15
    kill_at = n_total // 2
    endpoint.reset()

    proc: list[subprocess.Popen] = []

    def crash(n: int) -> None:
        if n == kill_at:
            proc[0].send_signal(signal.SIGKILL)
            proc[0].wait(10)

    endpoint.on_request = crash
    proc.append(run_child(endpoint, ck, tmp_path / "crashed", seeds))
    assert proc[0].wait(60) == -signal.SIGKILL
    first_queries = [r["query"] for r in endpoint.requests]
    assert len(first_queries) == kill_at
    assert BatchCheckpoint(ck).count() == kill_at - 1  # the in-flight batch was not finished
    assert not list(ck.glob("*/.*.tmp")), "a half-written checkpoint file was left behind"

    endpoint.reset()
    p = run_child(endpoint, ck, tmp_path / "resumed", seeds)
    assert p.wait(60) == 0
    second_queries = [r["query"] for r in endpoint.requests]
    # complete and identical
    assert pl.read_parquet(tmp_path / "resumed.edges.parquet").equals(clean_edges)
    assert pl.read_parquet(tmp_path / "resumed.names.parquet").equals(clean_names)
    # no work repeated except the batch that was in flight at the crash; none lost
    assert len(second_queries) == n_total - (kill_at - 1)
    assert set(first_queries[:-1]).isdisjoint(second_queries)
    assert sorted(first_queries[:-1] + second_queries) == sorted(clean_queries)
    info = json.loads((tmp_path / "resumed.json").read_text())
    assert info == {"queried": n_total - kill_at + 1, "resumed": kill_at - 1}
