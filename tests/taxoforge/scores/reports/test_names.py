"""Display names: the harness prefix rule, clashes kept whole, a two-column map read with its
errors naming file and line, and names wrapped to a width without losing a character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taxoforge.scores.reports.names import (DisplayNamesError, display_names, read_display_names, short_name,
                                            wrap_name)


def test_the_harness_prefix_rule():
    # lmms-eval's sanitize_model_name writes a Hugging Face id's '/' as '__'
    assert short_name("lmms-lab__llava-onevision-qwen2-72b-ov-chat") == "llava-onevision-qwen2-72b-ov-chat"
    assert short_name("Qwen/Qwen2-VL-7B-Instruct") == "Qwen2-VL-7B-Instruct"
    assert short_name("home__me__ckpt__step-1000") == "step-1000"   # a local path, sanitised whole
    assert short_name("llava_v1.5_7b") == "llava_v1.5_7b"            # VLMEvalKit's names stay
    assert short_name("trailing__") == "trailing__"                 # nothing after the prefix: kept
    shown = display_names(["a__x", "b__x", "c__y"], {"c__y": "Model Y"})
    assert shown == {"a__x": "a__x", "b__x": "b__x", "c__y": "Model Y"}


def test_a_display_names_file_and_its_errors(tmp_path):
    f = tmp_path / "names.csv"
    f.write_text("model,display\nQwen__Qwen2-VL-72B-Instruct,Qwen2-VL 72B\n\nlmms-lab__llava-ov,LLaVA-OV\n")
    assert read_display_names(f) == {"Qwen__Qwen2-VL-72B-Instruct": "Qwen2-VL 72B", "lmms-lab__llava-ov": "LLaVA-OV"}
    t = tmp_path / "names.tsv"
    t.write_text("a\tA, the first\n")
    assert read_display_names(t) == {"a": "A, the first"}
    bad = tmp_path / "bad.csv"
    bad.write_text("a,A\nb\n")
    with pytest.raises(DisplayNamesError, match=r"bad\.csv:2: .*two fields a line"):
        read_display_names(bad)
    twice = tmp_path / "twice.csv"
    twice.write_text("a,A\nb,B\na,C\n")
    with pytest.raises(DisplayNamesError, match=r"twice\.csv:3: 'a' is already named on line 1"):
        read_display_names(twice)


def test_the_command_line_reads_the_map_and_refuses_a_bad_one(tmp_path):
    from click.testing import CliRunner

    from taxoforge.cli import main

    bad = tmp_path / "bad.csv"
    bad.write_text("a,A,extra\n")
    r = CliRunner().invoke(main, ["compare", str(tmp_path), str(tmp_path), "--display-names", str(bad)])
    assert r.exit_code == 2 and "bad.csv:1: expected two fields" in r.output


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcXYZ019-_./ ", min_size=1, max_size=60), st.integers(4, 30))
def test_wrapping_keeps_every_character_within_the_width(name, width):
    lines = wrap_name(name, width)
    assert "".join(lines) == name.strip() or "".join(lines) == name.rstrip() or "".join(lines) == name
    assert all(len(line.rstrip()) <= width for line in lines)
