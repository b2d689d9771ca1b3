from __future__ import annotations

import pytest

from tests.taxoforge.snapshots.helpers import make_tree, random_edges, serve, stop


@pytest.fixture(scope="session")
def edges():
    return random_edges()


@pytest.fixture(scope="session")
def tree(edges):
    return make_tree(edges)


@pytest.fixture()
def http_server(tmp_path):
    """A real HTTP server on 127.0.0.1 serving ``tmp_path / "remote"`` (a snapshot store)."""
    root = tmp_path / "remote"
    root.mkdir()
    srv, t = serve(root)
    try:
        yield srv
    finally:
        stop(srv, t)
