"""Bar plots for the markdown reports of eval/results (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def grouped_bars(path: Path, title: str, groups: Sequence[str], series: Mapping[str, Sequence[float | None]],
                 ylabel: str = "", ylim: tuple[float, float] = (0.0, 1.0), rotate: int = 30) -> Path:
    """One bar per (group, series), written as a PNG; a ``None`` value draws no bar. Returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(1, len(series))
    width = 0.8 / n
    present = max(1, max(sum(v is not None for v in vals) for vals in zip(*series.values())) if series else 1)
    fig, ax = plt.subplots(figsize=(min(14.0, max(6.0, 0.45 * len(groups) * present + 2)), 5.0))
    for j, (name, values) in enumerate(series.items()):
        xs = [i + (j - (n - 1) / 2) * width for i, v in enumerate(values) if v is not None]
        ys = [float(v) for v in values if v is not None]
        bars = ax.bar(xs, ys, width, label=name)
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in ys], fontsize=7, padding=1)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=rotate, ha="right" if rotate else "center", fontsize=8)
    ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(series) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
