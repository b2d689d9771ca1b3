"""ReadOptions and ScoreOptions: declared constraints checked in one place, errors naming the
parameter; the compatible keyword call path; environment fractions named when wrong."""

from __future__ import annotations

import math

import pytest

from taxoforge.scores.statistics.confidence import BootstrapConfig
from taxoforge.scores.options import (MAX_BOOTSTRAP_RESAMPLES, Interval, InvalidParameterError, Options, ReadOptions,
                                      ScoreOptions, env_fraction, split_options, validate_params)


def test_intervals_hold_numbers_of_their_kind_and_never_nan():
    from numbers import Integral, Real

    frac = Interval(Real, 0, 1)
    assert 0.5 in frac and 0 in frac and 1 in frac and math.nan not in frac and 1.5 not in frac
    assert True not in frac and "0.5" not in frac
    assert 3 in Interval(Integral, 1, None) and 3.0 not in Interval(Integral, 1, None)
    assert 0 not in Interval(Real, 0, 1, closed="neither") and str(Interval(Real, 0, 1, "right")) == \
        "a number in the range (0, 1]"
    assert "x" in Options(("x", "y")) and "z" not in Options(("x", "y"))


@pytest.mark.parametrize("kwargs, says", [
    ({"fmt": "xls"}, "the 'fmt' parameter of ReadOptions must be one of 'jsonl', 'json', 'csv', 'tsv', 'parquet', "
                     "'xlsx' or None; got 'xls'"),
    ({"layout": "lmms"}, "the 'layout' parameter of ReadOptions must be one of 'auto'"),
    ({"max_record_bytes": 0}, "the 'max_record_bytes' parameter of ReadOptions must be an int in the range [1, inf)"),
    ({"header": "no"}, "the 'header' parameter of ReadOptions must be a bool; got 'no'"),
    ({"delimiter": ";;"}, "the 'delimiter' parameter of ReadOptions must be one character"),
    ({"defaults": {"colour": "x"}}, "may set model, dataset and prompt; got 'colour'"),
    ({"column_names": "a,b"}, "must be a sequence of names, not one string"),
])
def test_read_options_refuse_what_their_constraints_do_not_hold(kwargs, says):
    with pytest.raises(InvalidParameterError) as e:
        ReadOptions(**kwargs)
    assert says in str(e.value)


def test_score_options_and_the_bootstrap_are_validated_with_the_parameter_named():
    with pytest.raises(InvalidParameterError, match="the 'altered' parameter of ScoreOptions must be one of "):
        ScoreOptions(altered="ignore")
    with pytest.raises(InvalidParameterError, match="the 'ci' parameter of ScoreOptions must be a BootstrapConfig"):
        ScoreOptions(ci=100)
    with pytest.raises(InvalidParameterError, match="'n_resamples' parameter of BootstrapConfig must be an int in "
                                                    rf"the range \[0, {MAX_BOOTSTRAP_RESAMPLES:,}\]; got 2000000000"):
        BootstrapConfig(n_resamples=2_000_000_000)
    with pytest.raises(InvalidParameterError, match="'level' parameter of BootstrapConfig .* got nan"):
        BootstrapConfig(level=math.nan)
    assert ScoreOptions().ci == BootstrapConfig() and ScoreOptions(ci=None).ci is None


def test_keyword_options_split_into_read_and_score_options():
    read, score = split_options({"columns": {"output": "pred"}, "adapter": "generic", "meteor": False, "plots": False})
    assert read.columns == {"output": "pred"} and read.layout == "generic"
    assert score.meteor is False and score.plots is False
    base = ReadOptions(allow_duplicate_ids=True)
    read, _ = split_options({"fmt": "csv"}, read=base)
    assert read.allow_duplicate_ids and read.fmt == "csv"
    with pytest.raises(TypeError, match="score_files\\(\\) got an unexpected keyword argument 'meteors'"):
        split_options({"meteors": False})


def test_validate_params_names_the_owner_and_every_allowed_way():
    from numbers import Real

    with pytest.raises(InvalidParameterError, match="the 'x' parameter of f must be a number in the range "
                                                    r"\[0, 1\] or None; got nan"):
        validate_params("f", {"x": math.nan}, {"x": [Interval(Real, 0, 1), None]})


def test_environment_fractions_name_the_variable():
    assert env_fraction("TAXOFORGE_MIN_SCORED", 0.95, {}) == 0.95
    assert env_fraction("TAXOFORGE_MIN_SCORED", 0.95, {"TAXOFORGE_MIN_SCORED": " 0.5 "}) == 0.5
    for bad in ("abc", "nan", "1.5", "-0.1", "inf"):
        with pytest.raises(ValueError, match=rf"\$TAXOFORGE_MIN_SCORED='{bad}': expected a fraction between 0 and 1"):
            env_fraction("TAXOFORGE_MIN_SCORED", 0.95, {"TAXOFORGE_MIN_SCORED": bad})
