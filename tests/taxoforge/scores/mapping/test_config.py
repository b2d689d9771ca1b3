"""Mapping configuration: validation and the content id."""

from __future__ import annotations

import pytest

from taxoforge.scores.mapping import MappingConfig
from taxoforge.scores.similarity import StringSimilarity


def test_bad_config_values():
    with pytest.raises(ValueError, match="vote_rule"):
        MappingConfig(vote_rule="sometimes")
    with pytest.raises(ValueError, match="unknown string similarity"):
        StringSimilarity("levenshtein-ish")
    assert MappingConfig().config_id == MappingConfig().config_id != MappingConfig(k=5).config_id
