"""The scoring step of ``make demo``: score the shipped example outputs against ImageNet-1k.

``data/examples/imagenet_example_outputs.jsonl`` holds made-up answers (marked
``"example": true``) of three fictional models to 15 ImageNet-1k images whose ground truth
is a wnid (or a class name). :func:`score_example` scores it against the ImageNet-1k
taxonomy — the published snapshot ``imagenet1k`` if the snapshot store has one, else the
materialised asset folder ``<data dir>/assets/imagenet1k_taxonomy`` — writes the results to
``<data dir>/scores/imagenet_example/`` and prints the leaderboard.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["EXAMPLE_OUTPUTS", "score_example", "imagenet_taxonomy_ref"]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_OUTPUTS = REPO / "data" / "examples" / "imagenet_example_outputs.jsonl"


def _data_dir() -> Path:
    return Path(os.environ.get("TAXOFORGE_DATA_DIR", "data"))


def imagenet_taxonomy_ref(data_dir: str | os.PathLike | None = None):
    """What to score the example against: the ``imagenet1k`` snapshot, else the asset folder."""
    data_dir = Path(data_dir) if data_dir else _data_dir()
    try:
        from taxoforge.snapshots.load import load_taxonomy

        return load_taxonomy("imagenet1k")
    except Exception:  # noqa: BLE001 - no store / no snapshot: fall back to the asset folder
        pass
    folder = data_dir / "assets" / "imagenet1k_taxonomy"
    if not (folder / "nodes.parquet").exists():
        raise FileNotFoundError(f"{folder}: the ImageNet-1k taxonomy has not been materialised "
                                "(run `make demo` or materialise imagenet1k_taxonomy)")
    return folder


def score_example(data_dir: str | os.PathLike | None = None, out_dir: str | os.PathLike | None = None,
                  echo=print) -> bool:
    """Score the example file, write the results and print the leaderboard. True on success."""
    from taxoforge.scores.run import score_file

    data_dir = Path(data_dir) if data_dir else _data_dir()
    out_dir = Path(out_dir) if out_dir else data_dir / "scores" / "imagenet_example"
    try:
        ref = imagenet_taxonomy_ref(data_dir)
        run = score_file(EXAMPLE_OUTPUTS, ref, out_dir=out_dir)
    except Exception as e:  # noqa: BLE001 - the demo reports and goes on
        echo(f"\nScoring the example outputs failed: {type(e).__name__}: {e}")
        return False
    echo(f"\nScored the example model outputs {EXAMPLE_OUTPUTS.relative_to(REPO)} (made-up answers of fictional models):\n")
    echo(run.markdown())
    echo(f"Scores, leaderboard and plots: {out_dir.resolve()}/")
    return True
