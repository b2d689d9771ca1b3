"""Mapping configuration: validation, the calibrated temperature and the content id."""

from __future__ import annotations

import pytest

from taxoforge.scores.mapping import MappingConfig
from taxoforge.scores.mapping.config import CALIBRATED_TEMPERATURES, EMBEDDING_TEMPERATURE
from taxoforge.scores.mapping.similarity import STRING_SCORERS, StringSimilarity


def test_bad_config_values():
    with pytest.raises(ValueError, match="vote_rule"):
        MappingConfig(vote_rule="sometimes")
    with pytest.raises(ValueError, match="contains_scope"):
        MappingConfig(contains_scope="nearby")
    with pytest.raises(ValueError, match="temperature"):
        MappingConfig(temperature=0)
    with pytest.raises(ValueError, match="ngram_sizes"):
        MappingConfig(ngram_sizes=(2, 0))
    with pytest.raises(ValueError, match="unknown string similarity"):
        StringSimilarity("levenshtein-ish")
    assert MappingConfig().config_id == MappingConfig().config_id != MappingConfig(k=5).config_id


def test_temperature_defaults_to_the_calibrated_one_per_measure_and_is_recorded():
    assert set(CALIBRATED_TEMPERATURES) == set(STRING_SCORERS)
    for measure, t in CALIBRATED_TEMPERATURES.items():
        cfg = MappingConfig(similarity=measure)
        assert cfg.temperature == t and cfg.to_dict()["temperature"] == t
    assert MappingConfig(similarity="sentence-transformers:/m").temperature == EMBEDDING_TEMPERATURE
    assert MappingConfig(temperature=3.0).temperature == 3.0
    # an explicit value equal to the default is the same configuration
    assert MappingConfig(temperature=CALIBRATED_TEMPERATURES["ratio"]).config_id == MappingConfig().config_id
