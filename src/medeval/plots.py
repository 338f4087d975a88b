"""Shared figure helpers, so that every chapter's figures look alike."""

from __future__ import annotations

import re
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np


def new_axes(ncols: int = 1, nrows: int = 1, width: float = 3.8, height: float = 3.0, **kwargs):
    """A figure with a grid of axes sized per panel (at most :data:`MAX_WIDTH_IN` wide in all); returns (fig, axes)
    with axes always a flat array."""
    fig, axes = plt.subplots(nrows, ncols, figsize=(min(width * ncols, MAX_WIDTH_IN), height * nrows), squeeze=False,
                             layout="constrained", **kwargs)
    return fig, axes.ravel()


def curve_with_band(ax, x, mean, low=None, high=None, *, label=None, color=None, alpha=0.2, limits=None, **kwargs):
    """A mean curve with an optional shaded band (e.g. +-1 SD over runs or a confidence interval). ``limits``
    ``(lo, hi)`` clips the band to the quantity's range (a precision or an accuracy lies in [0, 1], and mean ± SD
    can leave it)."""
    line, = ax.plot(x, mean, label=label, color=color, **kwargs)
    if low is not None and high is not None:
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        if limits is not None:
            lo, hi = limits
            if not lo < hi:
                raise ValueError(f"limits must be (lo, hi) with lo < hi, got {limits!r}")
            low, high = np.clip(low, lo, hi), np.clip(high, lo, hi)
        ax.fill_between(x, low, high, color=line.get_color(), alpha=alpha, linewidth=0)
    return line


def heatmap(ax, matrix, row_labels: Sequence[str], col_labels: Sequence[str] | None = None, *,
            cmap="viridis", fmt: str | None = ".2f", vmin=None, vmax=None, colorbar: bool = True):
    """A labelled matrix; values printed in the cells when ``fmt`` is given and the matrix is small."""
    matrix = np.asarray(matrix, dtype=float)
    col_labels = row_labels if col_labels is None else col_labels
    im = ax.imshow(matrix, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(col_labels)), col_labels, rotation=90)
    ax.set_yticks(range(len(row_labels)), row_labels)
    if fmt and matrix.size <= 400:
        finite = matrix[np.isfinite(matrix)]
        mid = (finite.max() + finite.min()) / 2 if finite.size else 0
        for (i, j), v in np.ndenumerate(matrix):
            if np.isfinite(v):
                ax.text(j, i, format(v, fmt), ha="center", va="center", fontsize=MIN_FONT_PT,
                        color="white" if v < mid else "black")
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return im


def image_gallery(images, *, masks=None, boxes=None, titles=None, ncols: int = 4, size: float = 2.2, cmap="gray"):
    """Show images with optional mask contours and boxes.

    ``boxes``: per image a list of ``(x, y, w, h)`` top-left boxes (pixels), or ``(x, y, w, h, label)``.
    """
    n = len(images)
    nrows = int(np.ceil(n / ncols))
    scale = min(1.0, MAX_WIDTH_IN / (size * ncols))  # the whole gallery fits the page's content column
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols * scale, size * nrows * scale), squeeze=False,
                             layout="constrained")
    for i, ax in enumerate(axes.ravel()):
        ax.axis("off")
        if i >= n:
            continue
        ax.imshow(images[i], cmap=cmap if np.asarray(images[i]).ndim == 2 else None)
        if masks is not None and np.any(masks[i]):
            ax.contour(np.asarray(masks[i]).astype(float), levels=[0.5], colors=OKABE_ITO["vermillion"], linewidths=0.8)
        if boxes is not None:
            for box in boxes[i]:
                x, y, w, h = box[:4]
                # boxes cover whole pixels: pixel i spans [i - 0.5, i + 0.5] in imshow coordinates
                ax.add_patch(plt.Rectangle((x - 0.5, y - 0.5), w, h, fill=False, edgecolor=OKABE_ITO["yellow"], linewidth=1))
                if len(box) > 4:
                    ax.text(x, y, str(box[4]), color=OKABE_ITO["yellow"], fontsize=MIN_FONT_PT, va="bottom")
        if titles is not None:
            ax.set_title(titles[i], fontsize=MIN_FONT_PT)
    return fig


# --- the book's figure style -------------------------------------------------------------------------------------
# One colour-blind-safe palette (Okabe & Ito, "Color Universal Design", 2008) for the whole book, and one colour per
# named thing (operator, estimator, strategy, distribution, model, metric, ...), so a thing keeps its colour on
# every page. Figures are at most ``MAX_WIDTH_IN`` wide and use no text below ``MIN_FONT_PT``, so text stays at least
# 9 pt when the page shows the figure at its natural size (the content column is about 8 in wide at 96 px/in).

OKABE_ITO = {
    "blue": "#0072B2", "orange": "#E69F00", "green": "#009E73", "vermillion": "#D55E00",
    "purple": "#CC79A7", "sky": "#56B4E9", "black": "#000000", "yellow": "#F0E442",
}
PALETTE = tuple(OKABE_ITO.values())
NEUTRAL = "#7F7F7F"  # reference lines, chance levels, ideal curves
FIGURE_DPI = 150
MIN_FONT_PT = 9.0
MAX_WIDTH_IN = 8.0
_o = OKABE_ITO

COLORS: dict[str, dict[str, str]] = {
    # chapter 1: MIL pooling operators
    "operator": {"noisy_or": _o["blue"], "noisy_or_li": _o["sky"], "mean": _o["green"], "lse_r0.1": _o["orange"],
                 "lse_r1": _o["vermillion"], "max": _o["purple"]},
    # chapter 3: variance estimators and validation strategies
    "estimator": {"EVE": _o["blue"], "NEVE": _o["orange"], "fold-wise": _o["green"], "NFW": _o["green"],
                  "binomial": _o["vermillion"], "half EVE": _o["sky"], "truth": _o["black"]},
    "strategy": {"LOO": _o["black"], "10x10": _o["blue"], "10x1": _o["sky"], "3x10": _o["vermillion"],
                 "3x1": _o["orange"], "5x1": _o["green"], "5x10": _o["purple"]},
    # performance measures, wherever they are drawn
    "metric": {"accuracy": _o["blue"], "sensitivity": _o["orange"], "specificity": _o["green"], "auc": _o["vermillion"],
               "AUC": _o["vermillion"], "ROC-AUC": _o["vermillion"], "PR-AUC": _o["purple"], "AP": _o["purple"],
               "precision": _o["sky"], "recall": _o["orange"], "F1": _o["black"]},
    # Chapter 4: training class distributions. The colour says which class is favoured (the thesis's own
    # convention: balanced green, ¬C-biased blue, C-biased red), so E2.b, E3.b and E4.b share blue; the five Table
    # 4.3 sets have five distinct colours, and every figure draws at most one group (E1, E2, E3 or E4) at a time.
    "distribution": {"Balanced_S": _o["purple"], "C-biased": _o["vermillion"], "notC-biased": _o["blue"],
                     "Balanced_L": _o["green"], "Natural": _o["orange"],
                     "E1.a": _o["green"], "E1.b": _o["orange"],
                     "E2.a": _o["green"], "E2.b": _o["blue"], "E2.c": _o["vermillion"],
                     "E3.a": _o["green"], "E3.b": _o["blue"], "E3.c": _o["vermillion"],
                     "E4.a": _o["green"], "E4.b": _o["blue"], "E4.c": _o["vermillion"],
                     "En": _o["blue"], "Ep": _o["vermillion"]},
    # chapter 2: detection metrics. Three shades per IoU-threshold metric (light = 10 %, dark = 50 %), so every
    # series of a three-panel (acc@IoU, AP@IoU, RoDeO) figure has its own colour; dark shades extend Okabe-Ito.
    "detection_metric": {"acc@10": _o["sky"], "acc@30": _o["blue"], "acc@50": "#003A5C",
                         "AP@10": _o["orange"], "AP@30": _o["vermillion"], "AP@50": "#7F3300", "mAP": _o["purple"],
                         "RoDeO": _o["black"], "RoDeO loc": _o["green"], "RoDeO shape": "#A08F00",
                         "RoDeO cls": "#6A3D9A", "Hausdorff similarity": "#882255"},
    # appendix A1 (data): real data next to its phantom stand-in; the slide phantom's pixel classes (C red, ¬C blue
    # as in Chapter 4's class-bias colours)
    "data source": {"real": _o["blue"], "phantom": _o["orange"]},
    "tissue class": {"O": _o["yellow"], "notC": _o["blue"], "C": _o["vermillion"]},
    # chapter 1 (mil): stability scores; the four simulations of Fig. 9 (named by their colour in the paper); the
    # example bags of the vote histograms (Fig. 5)
    "stability score": {"positive_jaccard": _o["green"], "adjusted_positive_jaccard": _o["blue"],
                        "adjusted_jaccard": _o["orange"], "spearman": _o["vermillion"], "kendall": _o["purple"],
                        "pearson": _o["sky"]},
    "apj simulation": {"blue: n11 up, n10 down": _o["blue"], "green: n11 up, n00 down": _o["green"],
                       "black dotted: n10 up, n01 down": _o["black"], "red dotted: n10 up, n00 down": _o["vermillion"]},
    "example bag": {"most stable": _o["green"], "median": _o["orange"], "least stable": _o["vermillion"]},
    # chapter 5: how examples are assigned to folds
    "splitter": {"random": _o["blue"], "iterative": _o["orange"]},
    # Chapter 5 (em): the two toy models of the thesis's Example 1 (its En/Ep/E2.x models use "distribution")
    "model": {"Example 1, model 1": _o["orange"], "Example 1, model 2": _o["purple"]},
    # add a chapter's families below (one entry per named thing; colours distinct within a family)
}


# Families whose colours encode a property shared by several members (Chapter 4: the colour says which class a
# training distribution favours). Their members are only ever drawn within these groups, and colours must differ
# within each group; every other family gives each member its own colour.
DRAWN_TOGETHER: dict[str, list[tuple[str, ...]]] = {
    "distribution": [("Balanced_S", "C-biased", "notC-biased", "Balanced_L", "Natural"), ("E1.a", "E1.b"),
                     ("E2.a", "E2.b", "E2.c"), ("E3.a", "E3.b", "E3.c"), ("E4.a", "E4.b", "E4.c"),
                     ("E2.a", "En", "Ep")],
}

# The colours of one palette repeat across families (blue is EVE, the 10x10 strategy and accuracy in chapter 3).
# Where a page draws several families, each family keeps its own line style and marker (:func:`style`), so a blue
# dashed line with squares is a strategy wherever a blue solid line with circles is an estimator.
FAMILY_STYLES: dict[str, dict[str, str]] = {
    "estimator": {"linestyle": "-", "marker": "o"},
    "strategy": {"linestyle": "--", "marker": "s"},
    "metric": {"linestyle": ":"},  # often dense curves (PR-T over 101 thresholds): a line style, no marker
    "distribution": {"linestyle": "-"},
    "model": {"linestyle": "-."},
    "splitter": {"linestyle": "-"},
}


def style(family: str, name: str) -> dict[str, str]:
    """The colour (:func:`color`), line style and marker of ``name`` within ``family`` (:data:`FAMILY_STYLES`), as
    keyword arguments of ``ax.plot``, ``ax.errorbar`` or :func:`curve_with_band`:
    ``ax.plot(x, y, **style("metric", "accuracy"))``."""
    return {"color": color(family, name), **FAMILY_STYLES.get(family, {})}


def color(family: str, name: str) -> str:
    """The book-wide colour of ``name`` within ``family`` (e.g. ``color("operator", "max")``).

    Raises ``KeyError`` naming the family's known names when ``name`` has no colour yet: add it to :data:`COLORS`
    rather than letting matplotlib's colour cycle pick one that means something else on another page.
    """
    try:
        members = COLORS[family]
    except KeyError:
        raise KeyError(f"no colour family {family!r}; known families: {sorted(COLORS)}") from None
    try:
        return members[name]
    except KeyError:
        raise KeyError(f"{name!r} has no colour in family {family!r} (known: {sorted(members)}); "
                       "add it to medeval.plots.COLORS") from None


def book_style() -> dict:
    """The matplotlib settings of every figure in the book (applied by the chapter set-up)."""
    from cycler import cycler

    return {
        "figure.dpi": FIGURE_DPI, "savefig.dpi": FIGURE_DPI, "figure.figsize": (6.4, 3.6),
        "figure.constrained_layout.use": True,
        "font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "xtick.labelsize": 9, "ytick.labelsize": 9,
        "legend.fontsize": 9, "legend.title_fontsize": 9, "figure.titlesize": 11,
        "axes.prop_cycle": cycler(color=PALETTE), "axes.spines.top": False, "axes.spines.right": False,
        "image.cmap": "viridis",
    }


def apply_book_style() -> None:
    import matplotlib

    matplotlib.rcParams.update(book_style())


def _visible_texts(fig):
    for text in fig.findobj(lambda a: isinstance(a, plt.Text)):
        if text.get_visible() and text.get_text().strip() and text.get_figure() is fig:
            yield text


def legibility_problems(fig) -> list[str]:
    """What makes ``fig`` hard to read in the book: too wide, text below :data:`MIN_FONT_PT`, overlapping labels.

    Overlap is checked between labels (titles, axis labels, tick labels, legends, annotations); text drawn inside a
    heatmap's cells is allowed to touch its neighbours only when it does not cover them by more than a fifth.
    """
    problems = []
    width, _ = fig.get_size_inches()
    if width > MAX_WIDTH_IN + 1e-9:
        problems.append(f"figure is {width:.1f} in wide (at most {MAX_WIDTH_IN} in, or its text shrinks below "
                        f"{MIN_FONT_PT:g} pt on the page)")
    texts = list(_visible_texts(fig))
    small = sorted({f"{t.get_text()[:30]!r} ({t.get_fontsize():.1f} pt)" for t in texts
                    if t.get_fontsize() < MIN_FONT_PT - 1e-9})
    if small:
        problems.append(f"text below {MIN_FONT_PT:g} pt: " + ", ".join(small[:8]) + (" ..." if len(small) > 8 else ""))
    fig.draw_without_rendering()  # the layout and the text extents of a draw, without rasterising the figure
    renderer = fig.canvas.get_renderer()
    boxes = []
    for t in texts:
        try:
            bb = t.get_window_extent(renderer)
        except (RuntimeError, ValueError):
            continue
        if bb.width > 0 and bb.height > 0 and np.isfinite([bb.x0, bb.y0, bb.x1, bb.y1]).all():
            boxes.append((t, bb))
    overlaps = []
    for i in range(len(boxes)):
        ti, bi = boxes[i]
        for j in range(i + 1, len(boxes)):
            tj, bj = boxes[j]
            w = min(bi.x1, bj.x1) - max(bi.x0, bj.x0)
            h = min(bi.y1, bj.y1) - max(bi.y0, bj.y0)
            if w <= 0 or h <= 0:
                continue
            if w * h > 0.2 * min(bi.width * bi.height, bj.width * bj.height):
                overlaps.append(f"{ti.get_text()[:25]!r} / {tj.get_text()[:25]!r}")
    if overlaps:
        problems.append("overlapping labels: " + "; ".join(overlaps[:6]) + (" ..." if len(overlaps) > 6 else ""))
    drawn = list(_visible_texts(fig))  # after the draw: categorical tick labels exist only once one has happened
    names = sorted({m.group(0) for t in drawn for m in _CODE_NAME.finditer(_MATH_TEXT.sub(" ", t.get_text()))}
                   - set(PAPER_NAMES))
    if names:
        problems.append("code names where a reader expects words or math: " + ", ".join(names[:8])
                        + " (write $S_{APJ}$ for a symbol, 'Pleural thickening' for a name)")
    return problems


#: names with an underscore that a reproduced paper itself prints (the thesis's Table 4.3 sets): not code names
PAPER_NAMES = ("Balanced_S", "Balanced_L")
#: an identifier with an underscore (``S_APJ``, ``Pleural_Thickening``, ``bag_auc``) outside $...$ math
_CODE_NAME = re.compile(r"(?<![\\\w$])[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]*[A-Za-z0-9](?![\w$])")
_MATH_TEXT = re.compile(r"\$[^$]*\$")


#: the longest takeaway a caption pastes: a sentence or two for a reader, not a table
MAX_TAKEAWAY_CHARS = 360
#: what a takeaway must not contain: unformatted floats, undefined values as code prints them, reprs, placeholders
_RAW_IN_TEXT = re.compile(r"\d\.\d{6,}|\b(?:nan|NaN|inf|None)\b|\bnp\.\w+\(|\{'|\{\}|\[\]|\bn = ;")


def takeaway_key(name: str) -> str:
    """The glue key of figure ``name``'s takeaway, which its caption pastes with ``{glue:md}`<key>:myst```."""
    return f"{name}-takeaway"


def takeaway_problems(text) -> list[str]:
    """Why ``text`` cannot stand as a figure's takeaway: not a non-empty string, longer than
    :data:`MAX_TAKEAWAY_CHARS`, not a finished sentence, or carrying raw output (an unformatted float, ``nan``,
    ``None``, a repr, an empty placeholder); an empty list when it can."""
    if not isinstance(text, str) or not text.strip():
        return [f"a takeaway is a non-empty sentence, got {text!r}"]
    problems = []
    if len(text) > MAX_TAKEAWAY_CHARS:
        problems.append(f"{len(text)} characters (at most {MAX_TAKEAWAY_CHARS}: a sentence or two)")
    if not text.rstrip().endswith((".", "!", "?", ")")):
        problems.append("it does not end as a sentence")
    raw = sorted({m.group(0) for m in _RAW_IN_TEXT.finditer(_MATH_TEXT.sub("", text))})
    if raw:
        problems.append(f"raw output in the text: {', '.join(raw)}")
    return problems


def word_list(items) -> str:
    """Phrases of a takeaway joined as a sentence lists them: ``'a'``, ``'a and b'``, ``'a, b and c'``; ``''`` for
    none."""
    items = [str(item) for item in items]
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def math_sci(value: float, digits: int = 2) -> str:
    """A small or large number of a takeaway as typeset math with ``digits`` significant digits:
    ``math_sci(7.5e-4) == '$7.5 \\times 10^{-4}$'``. Refuses a value that is not finite (say it in words)."""
    if not np.isfinite(value):
        raise ValueError(f"math_sci needs a finite number, got {value!r}: say 'undefined' in words")
    mantissa, exponent = f"{value:.{max(digits, 1) - 1}e}".split("e")
    return f"${mantissa} \\times 10^{{{int(exponent)}}}$"


def number_or_undefined(value: float, fmt: str = ".2f") -> str:
    """A number as a takeaway prints it (``fmt``), or ``'undefined'`` when it is not finite (the precision of a
    class never predicted, a score with no pair)."""
    return format(value, fmt) if np.isfinite(value) else "undefined"


def glue_figure(name: str, fig, *, takeaway: str, check: bool = True) -> None:
    """Hand ``fig`` to the page as the glued figure ``name`` (shown by a ``{glue:figure}`` block with its number,
    caption and alt text) after checking that it is legible; the figure is closed so it is not shown twice.

    ``takeaway`` is what the figure shows *on this run*, in a sentence or two computed from the data it draws (a
    re-run with other parameters gets its own). It is glued as Markdown under :func:`takeaway_key` and the caption
    ends with it (``{glue:md}`<name>-takeaway:myst```), so that a caption states the result and not only what is
    drawn.

    Raises ``ValueError`` listing the problems (see :func:`legibility_problems` and :func:`takeaway_problems`)
    when ``check`` is true; an unfit takeaway is refused either way.
    """
    problems = takeaway_problems(takeaway)
    if problems:
        plt.close(fig)
        raise ValueError(f"figure {name!r}: its takeaway cannot stand in the caption: " + "; ".join(problems))
    if check:
        problems = legibility_problems(fig)
        if problems:
            plt.close(fig)
            raise ValueError(f"figure {name!r} is not legible in the book: " + "; ".join(problems))
    from IPython.display import Markdown
    from myst_nb import glue

    glue(name, fig, display=False)
    glue(takeaway_key(name), Markdown(takeaway.strip()), display=False)
    plt.close(fig)
