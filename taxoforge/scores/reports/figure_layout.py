"""How a figure is sized, laid out and written, so that it fits the page at its natural size.

Every figure is drawn at the width it is printed at — one column of a two-column paper
(:data:`COLUMN_WIDTH`, 3.3 in) or the page (:data:`WIDE_WIDTH`, 6.9 in; the ``*_wide`` files)
— and laid out by matplotlib's constrained layout, which keeps titles, tick labels and a
legend *outside* the axes inside that width: nothing sticks out, so the saved file is as wide
as asked (:data:`MAX_WIDTH` at most, checked on the files by the tests). Type is never smaller
than :data:`MIN_FONT_SIZE` points at that size. Legends go in a spare panel slot when the grid
has one, else below the panels, in as many columns as fit; names in legends and titles are
wrapped (:func:`taxoforge.scores.reports.names.wrap_name`) to the room they have.

Files: PNG (300 dpi), PDF and SVG, without timestamps (the same results give the same bytes),
written atomically (:func:`save_figure`). Figures are matplotlib :class:`~matplotlib.figure.Figure`
objects made without pyplot (no display, no figure manager). Each is laid out once: its tight
box is measured in one pass that draws nothing, and every format is drawn inside that box.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path

from taxoforge.files import atomic_writer
from taxoforge.scores.reports.names import wrap_name

__all__ = ["FIGURE_FORMATS", "PNG_DPI", "COLUMN_WIDTH", "WIDE_WIDTH", "MAX_WIDTH", "MAX_WIDE_WIDTH", "MIN_FONT_SIZE",
           "RC", "mpl", "legend_line", "save_figure", "figure_bytes", "panel_grid", "place_legend", "wrapped",
           "chars_in"]

#: Every figure is written in these formats; PNG at :data:`PNG_DPI`.
FIGURE_FORMATS = ("png", "pdf", "svg")
PNG_DPI = 300
#: The width figures are drawn at: one column of a two-column paper, and the page (``*_wide``), in inches.
COLUMN_WIDTH = 3.3
WIDE_WIDTH = 6.9
#: The most a saved figure may measure across, in inches: one column, the page.
MAX_WIDTH = 3.4
MAX_WIDE_WIDTH = 7.0
#: The smallest type of any figure, in points, at its natural size.
MIN_FONT_SIZE = 6.0
RC = {"font.size": 7, "axes.titlesize": 7, "axes.labelsize": 7, "xtick.labelsize": 6, "ytick.labelsize": 6,
      "legend.fontsize": 6, "legend.title_fontsize": 6, "lines.linewidth": 1.0, "lines.markersize": 4,
      "axes.linewidth": 0.6, "svg.hashsalt": "taxoforge", "figure.constrained_layout.h_pad": 0.02,
      "figure.constrained_layout.w_pad": 0.02, "figure.constrained_layout.hspace": 0.04,
      "figure.constrained_layout.wspace": 0.04}
_SAVE_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
                  "svg": {"Date": None, "Creator": None}}
_PAD_INCHES = 0.02
#: The widest panel of a page-wide figure, in inches.
_WIDE_PANEL = (WIDE_WIDTH - 0.45) / 4 * 1.3
#: The width of a character of 6-point type, in inches (a generous average for names).
_CHAR_INCHES = 6 * 0.56 / 72


def mpl():
    """matplotlib, with stable ids inside SVG files (no pyplot: figures are drawn on their own canvas).

    Returns
    -------
    module
    """
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "taxoforge"
    return matplotlib


def legend_line(**kwargs):
    """A legend handle: a line (and marker) not drawn in any axes.

    Parameters
    ----------
    **kwargs
        Those of :class:`matplotlib.lines.Line2D`.

    Returns
    -------
    matplotlib.lines.Line2D
    """
    from matplotlib.lines import Line2D

    return Line2D([], [], **kwargs)


def chars_in(inches: float, font_size: float = 6.0) -> int:
    """How many characters of ``font_size``-point type a line of ``inches`` holds (at least 6).

    Parameters
    ----------
    inches : float
    font_size : float

    Returns
    -------
    int
    """
    return max(6, int(inches / (_CHAR_INCHES * font_size / 6.0)))


def wrapped(text: str, chars: int) -> str:
    """``text`` wrapped to lines of at most ``chars`` characters (at hyphens, underscores, spaces).

    Parameters
    ----------
    text : str
    chars : int

    Returns
    -------
    str
    """
    return "\n".join(wrap_name(str(text), chars))


def panel_grid(n: int, *, width: float = COLUMN_WIDTH, panel_aspect: float = 1.0, ncols: int | None = None,
               sharex: bool = True, sharey: bool = True, extra_height: float = 0.3):
    """A constrained-layout figure of ``n`` panels in rows of ``ncols`` (default: 1 for one
    panel; 2 across a column; up to 4 across the page), ``width`` inches wide; the unused
    slots of the last row are turned off and returned (a legend goes there), so no panel is
    empty.

    Parameters
    ----------
    n : int
        Panels.
    width : float
        The figure's width, in inches.
    panel_aspect : float
        Height over width of a panel.
    ncols : int, optional
    sharex, sharey : bool
    extra_height : float
        Inches added for titles, labels and a legend below.

    Returns
    -------
    (Figure, list of Axes, list of Axes, int)
        The figure, the panels, the spare slots, the columns. A page-wide figure of few panels
        is narrower than ``width``: its panels are never more than 1.3 times as large as four
        across the page.
    """
    from matplotlib.figure import Figure

    if ncols is None:
        ncols = 1 if n == 1 else (2 if width <= MAX_WIDTH else min(n, 4))
    if width > MAX_WIDTH:  # the page: panels no larger than they would be four across
        width = min(width, 0.45 + ncols * _WIDE_PANEL)
    nrows = math.ceil(n / ncols)
    panel_w = (width - 0.45) / ncols
    fig = Figure(figsize=(width, nrows * panel_w * panel_aspect + extra_height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=sharex, sharey=sharey)
    flat = list(axes.ravel())
    spare = flat[n:]
    for ax in spare:
        ax.set_axis_off()
    return fig, flat[:n], spare, ncols


def place_legend(fig, handles, spare, *, width: float, title: str | None = None) -> None:
    """The legend in the first spare slot when there is one, else below the panels in as many
    columns as fit the figure's width; labels wrapped to their room.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    handles : list
        Legend handles with labels.
    spare : list of Axes
        The grid's unused slots.
    width : float
        The figure's width, in inches.
    title : str, optional
    """
    if not handles:
        return
    handle_room = 0.32  # the handle, its padding and the space between columns, in inches
    if spare:
        slot = spare[0].get_position().width * fig.get_figwidth()
        chars = chars_in(slot - handle_room)
        for h in handles:
            h.set_label(wrapped(h.get_label(), chars))
        spare[0].legend(handles=handles, loc="center", frameon=False, title=title)
        return
    longest = max(len(line) for h in handles for line in str(h.get_label()).split("\n"))
    chars = min(longest, chars_in(width / 2 - handle_room))
    ncol = max(1, min(len(handles), int(width // (chars * _CHAR_INCHES + handle_room))))
    for h in handles:
        h.set_label(wrapped(h.get_label(), chars))
    fig.legend(handles=handles, loc="outside lower center", ncol=ncol, frameon=False, title=title)


def _tight_box(fig, dpi: float):
    """The figure's tight bounding box (inches, padded), measured in a pass that lays out
    every artist on an Agg renderer and draws nothing."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    old = fig.dpi
    fig.set_dpi(dpi)
    try:
        renderer = canvas.get_renderer()
        with renderer._draw_disabled():  # what savefig(bbox_inches="tight") does before each format
            fig.draw(renderer)
        return fig.get_tightbbox(renderer).padded(_PAD_INCHES)
    finally:
        fig.set_dpi(old)


def figure_bytes(fig, fmt: str = "png", dpi: int = PNG_DPI, *, box=None) -> bytes:
    """``fig`` rendered as ``fmt`` (``png``, ``pdf``, ``svg``), without timestamps, cut to
    its tight bounding box.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    fmt : str
    dpi : int
    box : matplotlib.transforms.Bbox, optional
        The tight box when already measured (:func:`save_figure` measures it once for every
        format); else measured here.

    Returns
    -------
    bytes
    """
    from matplotlib.layout_engine import ConstrainedLayoutEngine, PlaceHolderLayoutEngine

    if box is None:
        box = _tight_box(fig, dpi)
    engine = fig.get_layout_engine()
    if isinstance(engine, (PlaceHolderLayoutEngine, ConstrainedLayoutEngine)):  # laid out already:
        with mpl().rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine("none")  # else savefig lays it out again, one more pass per format
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi, bbox_inches=box, metadata=_SAVE_METADATA.get(fmt))
    return buf.getvalue()


def save_figure(fig, path: str | os.PathLike, formats=FIGURE_FORMATS) -> dict[str, Path]:
    """Write ``fig`` beside ``path`` (its suffix replaced) in every format, atomically.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or os.PathLike
    formats : sequence of str

    Returns
    -------
    dict
        ``{format: path}``.
    """
    stem = Path(path)
    stem = stem.with_suffix("") if stem.suffix.lower().lstrip(".") in FIGURE_FORMATS else stem
    out = {}
    box = _tight_box(fig, PNG_DPI)  # once for every format
    for fmt in formats:
        target = stem.with_name(f"{stem.name}.{fmt}")
        with atomic_writer(target, "wb") as fh:
            fh.write(figure_bytes(fig, fmt, box=box))
        out[fmt] = target
    return out
