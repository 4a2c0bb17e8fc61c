"""UCI text for search reports: ``info`` and ``bestmove`` lines.

The search hands over plain data (``SearchInfo``/``SearchResult``); only this module turns
it into protocol text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # annotations only: the UCI loop answers `uci` before numpy is imported
    from zerochess.search.results import MoveStats, NodeStats


def score_text(cp: Optional[int], mate: Optional[int]) -> str:
    """``score mate N`` (moves, negative when being mated) or ``score cp N``."""
    if mate is not None:
        return f"score mate {mate}"
    return f"score cp {int(cp or 0)}"


def centipawns(line, score_type: str = "centipawn") -> int:
    """A line's centipawns on the scale UCI ``ScoreType`` names: ``centipawn`` Stockfish
    15.1's (the search's ``cp``), ``centipawn_lc0`` Leela Chess Zero's (search/results.py).
    A tablebase score (beyond CP_LIMIT: search/syzygy.py) is the same on both."""
    if score_type == "centipawn_lc0":
        from zerochess.search.results import CP_LIMIT, lc0_cp  # numpy: after the engine loads
        return line.cp if abs(line.cp) > CP_LIMIT else lc0_cp(line.q)
    return line.cp


def info_line(info, show_wdl: bool, score_type: str = "centipawn") -> str:
    """All ``info`` lines for one report (one per MultiPV line), joined by newlines. The
    depth is ``SearchInfo.search_depth`` (docs/uci.md), never above ``seldepth``."""
    elapsed_ms = max(1, int(round(info.time * 1000)))
    nps = int(info.nodes * 1000 / elapsed_ms)
    lines = []
    multi = len(info.lines) > 1
    depth = info.search_depth
    for rank, line in enumerate(info.lines, start=1):
        parts = [f"info depth {depth} seldepth {max(depth, info.seldepth)}"]
        if multi:
            parts.append(f"multipv {rank}")
        parts.append(score_text(centipawns(line, score_type), line.mate))
        if show_wdl and line.wdl is not None:
            w, d, l = (int(round(1000 * x)) for x in (line.wdl[2], line.wdl[1], line.wdl[0]))
            d = 1000 - w - l  # per mille that add up exactly
            parts.append(f"wdl {w} {d} {l}")
        parts.append(f"nodes {info.nodes} nps {nps} hashfull {info.hashfull} "
                     f"tbhits {info.tbhits} time {elapsed_ms}")
        if line.pv:
            parts.append("pv " + " ".join(line.pv))
        lines.append(" ".join(parts))
    if not lines:  # no line to show yet: still report progress
        lines.append(f"info nodes {info.nodes} nps {nps} hashfull {info.hashfull} "
                     f"tbhits {info.tbhits} time {elapsed_ms}")
    return "\n".join(lines)


def currmove_line(depth: int, move: str, number: int) -> str:
    """Stockfish's ``info depth D currmove M currmovenumber N`` (docs/uci.md: which move)."""
    return f"info depth {depth} currmove {move} currmovenumber {number}"


def bestmove_line(best: Optional[str], ponder: Optional[str]) -> str:
    if best is None:
        return "bestmove (none)"
    if ponder:
        return f"bestmove {best} ponder {ponder}"
    return f"bestmove {best}"


def _number(value: Optional[float], width: int, decimals: int, missing: str) -> str:
    return missing if value is None else f"{value:{width}.{decimals}f}"


def _head(label: str, index: int, visits: int, prior: float) -> str:
    # 100% would not fit Lc0's 5 columns with two decimals: one decimal there, as Lc0 does
    percent = f"{prior * 100:5.1f}" if prior >= 0.99995 else f"{prior * 100:5.2f}"
    return f"{label:<5} ({index:<4}) N: {visits:>7} (+ 0) (P: {percent}%)"


def _values(wl: Optional[float], d: Optional[float], q: float, m: Optional[float] = None,
            with_m: bool = False) -> str:
    # Lc0's (M: ) sits between D and Q; shown only when the network has a moves-left head
    moves_left = f"(M: {_number(m, 5, 1, '  -.-')}) " if with_m else ""
    return (f"(WL: {_number(wl, 8, 5, ' -.-----')}) (D: {_number(d, 5, 3, '-.---')}) "
            f"{moves_left}(Q: {q:8.5f})")


def verbose_move_stats_lines(moves: list[MoveStats], root: Optional[NodeStats]) -> list[str]:
    """Leela Chess Zero's ``VerboseMoveStats`` lines, one ``info string`` per root move and a
    last one for the root (``node``); docs/uci.md describes every field.

    Moves go in Lc0's order, ascending by (N, S), so the move the search likes best comes
    last, just above the ``node`` line (Nibbler ranks the lines by that order). ``M`` (plies
    left) appears, as in Lc0, only with a network that has a moves-left head (the root's
    ``m`` is set). ``(+ 0)``: visits in flight are
    not counted (the report is made between batches; with Threads > 1 other threads' batches
    may be at the network, and N counts completed visits only)."""
    if root is None:
        return []
    lines = []
    with_m = root.m is not None
    for m in sorted(moves, key=lambda m: (m.visits, m.s)):
        tail = " (T)" if m.proven else ""
        lines.append(f"info string {_head(m.move, m.index, m.visits, m.prior)} "
                     f"{_values(m.wl, m.d, m.q, m.m, with_m)} (U: {m.u:6.5f}) (S: {m.s:8.5f}) "
                     f"(V: {_number(m.v, 7, 4, ' -.----')}){tail}")
    q = root.wl if root.wl is not None else 0.0
    lines.append(f"info string {_head('node', root.n_moves, root.visits, root.visited_policy)} "
                 f"{_values(root.wl, root.d, q, root.m, with_m)} "
                 f"(V: {_number(root.v, 7, 4, ' -.----')})")
    return lines
