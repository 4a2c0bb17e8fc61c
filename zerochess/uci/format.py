"""UCI text for search reports: ``info`` and ``bestmove`` lines.

The search hands over plain data (``SearchInfo``/``SearchResult``); only this module turns
it into protocol text.
"""

from __future__ import annotations

from typing import Optional


def score_text(cp: Optional[int], mate: Optional[int]) -> str:
    """``score mate N`` (moves, negative when being mated) or ``score cp N``."""
    if mate is not None:
        return f"score mate {mate}"
    return f"score cp {int(cp or 0)}"


def info_line(info, show_wdl: bool) -> str:
    """All ``info`` lines for one report (one per MultiPV line), joined by newlines."""
    elapsed_ms = max(1, int(round(info.time * 1000)))
    nps = int(info.nodes * 1000 / elapsed_ms)
    lines = []
    multi = len(info.lines) > 1
    for rank, line in enumerate(info.lines, start=1):
        parts = [f"info depth {max(1, int(round(info.depth)))} seldepth {max(1, info.seldepth)}"]
        if multi:
            parts.append(f"multipv {rank}")
        parts.append(score_text(line.cp, line.mate))
        if show_wdl and line.wdl is not None:
            w, d, l = (int(round(1000 * x)) for x in (line.wdl[2], line.wdl[1], line.wdl[0]))
            d = 1000 - w - l  # per mille that add up exactly
            parts.append(f"wdl {w} {d} {l}")
        parts.append(f"nodes {info.nodes} nps {nps} hashfull {info.hashfull} time {elapsed_ms}")
        if line.pv:
            parts.append("pv " + " ".join(line.pv))
        lines.append(" ".join(parts))
    if not lines:  # no line to show yet: still report progress
        lines.append(f"info nodes {info.nodes} nps {nps} hashfull {info.hashfull} time {elapsed_ms}")
    return "\n".join(lines)


def bestmove_line(best: Optional[str], ponder: Optional[str]) -> str:
    if best is None:
        return "bestmove (none)"
    if ponder:
        return f"bestmove {best} ponder {ponder}"
    return f"bestmove {best}"
