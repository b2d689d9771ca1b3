"""Mapping answers without ground truths: every answer gets a node, a stage and a
similarity; rows that cannot be mapped are reported with their lines."""

from __future__ import annotations

import polars as pl

from taxoforge.scores.map_outputs import map_frame
from taxoforge.scores.readers.files import read_outputs


def test_unlabelled_answers_map_with_stage_and_similarity(inat_like, tmp_path):
    f = tmp_path / "answers.csv"
    f.write_text("qid,pred,question\n"
                 "1,Toco Toucan,\n"
                 "2,I cannot tell,\n"
                 "3,,\n"
                 "4,D,\"Which one? A) Aloe vera B) Iris sibirica C) Toco Toucan D) None of the above\"\n"
                 "5,some ants probably,\n")
    rows = read_outputs(f, columns={"id": "qid", "output": "pred"}, require=("output",))
    res = map_frame(rows, inat_like)
    t = res.table
    by_id = {r["id"]: r for r in t.iter_rows(named=True)}
    assert (by_id["1"]["node_id"], by_id["1"]["stage"], by_id["1"]["similarity"]) == ("r_toco", "exact", 1.0)
    assert by_id["2"]["abstained"] and by_id["2"]["node_id"] == "life" and by_id["2"]["stage"] == "abstention"
    # none of the above: no ground truth to be right about, reported at the root as an answer
    assert (by_id["4"]["stage"], by_id["4"]["node_id"], by_id["4"]["abstained"]) == ("none_of_the_above", "life", False)
    assert by_id["5"]["node_id"] == "formicidae" and by_id["5"]["node_label"] == "Formicidae"
    assert res.bad_rows.select("line", "reason").rows() == [(4, "missing model output")]
    assert res.info["rows"] == 5 and res.info["mapped"] == 4 and res.info["taxonomy_version"].startswith("sha256:")
    assert "label" not in t.columns and t.schema["node_depth"] == pl.Int64
    assert res.info["similarity"] == "ratio" and res.info["similarity_model"] is None  # a string measure: no model


def test_map_files_reads_with_read_options_and_writes_the_table(inat_like, tmp_path):
    from taxoforge.scores.map_outputs import map_files
    from taxoforge.scores.options import ReadOptions, ScoreOptions

    f = tmp_path / "preds.json"  # an indented JSON array, VLMEvalKit's PRED_FORMAT=json
    f.write_text('[\n    {\n        "index": 0,\n        "prediction": "Toco Toucan"\n    },\n'
                 '    {\n        "index": 1,\n        "prediction": NaN\n    }\n]')
    res = map_files([f], inat_like, out=tmp_path / "m.parquet", read=ReadOptions(columns={"output": "prediction"}),
                    score=ScoreOptions(progress=False))
    t = pl.read_parquet(tmp_path / "m.parquet")
    assert t.select("line", "node_id").rows() == [(2, "r_toco")] and res.bad_rows["line"].to_list() == [6]
    assert set(t["model"]) == {"preds"}  # no model named: the file stem
