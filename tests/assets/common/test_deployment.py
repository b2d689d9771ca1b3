"""The environment the code location is built for: ``os.environ`` unless a build names another."""

import os

import pytest

from assets.common.deployment import built_for, deployment_environ


def test_the_environment_is_the_process_s_unless_a_build_names_one():
    assert deployment_environ() is os.environ
    with built_for({"TAXOFORGE_TAXONOMIES": "inat21"}):
        assert deployment_environ() == {"TAXOFORGE_TAXONOMIES": "inat21"}
        with built_for(None):
            assert deployment_environ() is os.environ
        assert deployment_environ() == {"TAXOFORGE_TAXONOMIES": "inat21"}
    assert deployment_environ() is os.environ


def test_a_failed_build_leaves_the_process_environment():
    with pytest.raises(RuntimeError), built_for({}):
        raise RuntimeError("a domain failed to load")
    assert deployment_environ() is os.environ
