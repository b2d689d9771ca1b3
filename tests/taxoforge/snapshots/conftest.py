from __future__ import annotations

import pytest

from tests.taxoforge.snapshots.helpers import (
    MotoS3,
    http_kind,
    local_kind,
    make_tree,
    random_edges,
    s3_kind,
    serve,
    stop,
)

STORE_KINDS = ("local", "http", "s3")


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


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 API server (moto, server mode) on 127.0.0.1 for the whole session."""
    pytest.importorskip("s3fs", reason="the S3 store needs the s3 extra: pip install 'taxoforge[s3]'")
    pytest.importorskip("moto.server", reason="the S3 tests need moto[server] (the dev extra)")
    server = MotoS3()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=STORE_KINDS)
def store_kind(request, tmp_path):
    """Each kind of store in turn (:class:`~tests.taxoforge.snapshots.helpers.StoreKind`):
    a local folder, that folder served read-only over HTTP on 127.0.0.1, and an S3 bucket
    on a real S3 API server on 127.0.0.1. The same tests run against each."""
    if request.param == "local":
        yield local_kind(tmp_path / "store")
    elif request.param == "http":
        yield http_kind(request.getfixturevalue("http_server"))
    else:
        yield s3_kind(request.getfixturevalue("s3_server"))
