"""Syzygy endgame tablebases: the UCI options ``SyzygyPath``, ``SyzygyProbeLimit`` and
``Syzygy50MoveRule`` (Stockfish's and Lc0's names), probed with python-chess's
``chess.syzygy`` (docs/syzygy.md has the measurements that chose it).

Two places use them, as in Stockfish and Lc0:

* **The root** (``Tablebases.rank_root``, Stockfish's ``root_probe``): when the position to
  search is in the tables, every root move is ranked by the DTZ of the position it leads
  to, counted with the game's fifty-move counter and whether a position repeated since the
  last capture or pawn move; the search may then play only the moves that keep the best
  result (win, draw or loss under the fifty-move rule), and of the winning ones only those
  that zero the counter fastest (of the losing ones, those that hold out longest). The
  restriction is ``go searchmoves``'s (``Tree.restrict_root``). Without a DTZ table the
  moves are ranked by WDL alone. A won position is then always won, a drawn one never
  lost, whatever the network thinks. Reports show such a root move's score as the tables
  say (``TB_WIN_CP``, 0, ``-TB_WIN_CP``; a mate the search proves is still a mate).
* **The tree** (``Tablebases.probe_leaf``, called by ``mcts.gather`` between the nogil
  gathering and the evaluator): a new leaf with at most ``probe_limit`` men, no castling
  right and a fifty-move counter of 0 (the move into it captured or moved a pawn: Lc0's
  and Stockfish's rule, the one place where WDL is exact under the fifty-move rule) and a
  material the tables hold is not sent to the network; its WDL makes it a proven win, draw
  or loss for the solver (cursed wins and blessed losses are draws while
  ``Syzygy50MoveRule`` is on). Its proof's plies are ``TABLEBASE_PLIES`` + the plies to it,
  so a mate the search finds ranks before it, and it is shown as
  ``TB_WIN_CP`` less those plies, never as ``score mate``. Probes are cached by the
  position's Zobrist key.

Files are checked when the path is set (readable, not empty, the size of a Syzygy file, the
magic bytes); a table whose header points beyond the end of its file is caught the first
time it is read. A bad file or directory gives one message in ``problems`` (the UCI layer
sends it as ``info string error: ...``) and play goes on with the other tables; a probe
that fails (a table missing behind a capture) drops that material from the tree's probes.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Optional, Sequence

from zerochess.search.tree import TABLEBASE_PLIES

__all__ = ["Tablebases", "RootProbe", "TB_WIN_CP", "TABLEBASE_PLIES", "split_path",
           "material_code", "tablebase_cp", "annotate"]

log = logging.getLogger("zerochess.syzygy")

TB_WIN_CP = 20000
"""Centipawns shown for a tablebase win at the root (less the plies to the position the
tables decided, for one found in the tree): above every score from Q (``results.CP_LIMIT``),
below nothing but a mate, as Stockfish shows its ``VALUE_TB_WIN`` scores."""

MAX_PIECES = 7                 # the largest Syzygy tables
CACHE_LIMIT = 1 << 20          # probes kept per Tablebases (cleared when full)
WDL_SUFFIX, DTZ_SUFFIX = ".rtbw", ".rtbz"
MAGIC = {WDL_SUFFIX: bytes((0x71, 0xE8, 0x23, 0x5D)), DTZ_SUFFIX: bytes((0xD7, 0x66, 0x0C, 0xA5))}
_PIECE_ORDER = "PNBRQ"         # mcts._material_code's order (board.pxd's PAWN .. QUEEN)


def split_path(text: str) -> list[str]:
    """The directories of a ``SyzygyPath``: separated by ';' on Windows and ':' elsewhere, as
    Stockfish reads it; empty parts (and ``<empty>``) are ignored."""
    if text.strip() in ("", "<empty>"):
        return []
    return [part.strip() for part in text.split(os.pathsep) if part.strip()]


def material_code(white: str, black: str) -> int:
    """The material code ``mcts._tb_candidate`` compares: 3 bits per count of White's
    pawns, knights, bishops, rooks and queens, then Black's (``white``, ``black``: piece
    letters, e.g. "KQ", "KR"; the kings are implied)."""
    code = 0
    for side, pieces in enumerate((white.upper(), black.upper())):
        for k, letter in enumerate(_PIECE_ORDER):
            code |= min(pieces.count(letter), 7) << (3 * (5 * side + k))
    return code


def tablebase_cp(proven: int, plies: int) -> int:
    """Centipawns for a root move whose proof came from the tables (``plies`` >=
    ``TABLEBASE_PLIES``; ``proven``: 1 win, 2 draw, 3 loss for the root's side)."""
    distance = max(0, plies - TABLEBASE_PLIES)
    if proven == 1:
        return TB_WIN_CP - distance
    if proven == 3:
        return -(TB_WIN_CP - distance)
    return 0


def _wdl_class(wdl: int, rule50: bool) -> int:
    """-1, 0 or 1 from python-chess's -2..2 (cursed wins, blessed losses: draws under the
    fifty-move rule)."""
    if rule50:
        return 1 if wdl == 2 else (-1 if wdl == -2 else 0)
    return (wdl > 0) - (wdl < 0)


def _dtz_before_zeroing(wdl: int) -> int:
    return ((wdl > 0) - (wdl < 0)) * (1 if abs(wdl) == 2 else (101 if wdl else 0))


@dataclass
class RootProbe:
    """The tables' verdict on a root position: every probed move's rank and the moves the
    search may play."""
    result: int                     # 1 win, 0 draw, -1 loss for the side to move
    keep: tuple[str, ...]           # the moves kept (best result; fastest win, longest loss)
    ranks: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    """uci -> (rank as Stockfish's root_probe ranks, DTZ in plies from the root (0 for a
    draw; WDL only: 0), class 1/0/-1)."""
    by_dtz: bool = True             # False: ranked by WDL only (no DTZ table)
    hits: int = 0                   # probes that answered (reported in tbhits)

    def score(self, move: str) -> Optional[tuple[float, tuple[float, float, float], int]]:
        """(q, (loss, draw, win), cp) the tables give a root move, or None if not ranked."""
        ranked = self.ranks.get(move)
        if ranked is None:
            return None
        cls = ranked[2]
        if cls > 0:
            return 1.0, (0.0, 0.0, 1.0), TB_WIN_CP
        if cls < 0:
            return -1.0, (1.0, 0.0, 0.0), -TB_WIN_CP
        return 0.0, (0.0, 1.0, 0.0), 0


def annotate(info, root: Optional[RootProbe]):
    """A search report with the root's tablebase verdict: ``tbhits`` counts the root's probes
    too (as Stockfish's does), and each line of a ranked move shows the tables' score unless
    the search proved a mate. Returns ``info``."""
    if root is None:
        return info
    info.tbhits += root.hits
    for line in info.lines:
        score = root.score(line.move)
        if score is not None and line.mate is None:
            line.q, line.wdl, line.cp = score
    if hasattr(info, "best_move") and info.lines:    # a SearchResult: its best line's copy
        best = info.lines[0]
        info.q, info.wdl, info.cp = best.q, best.wdl, best.cp
    return info


def _repeated_since_zeroing(board) -> bool:
    """A position occurred twice since the last capture or pawn move (Stockfish's
    ``has_repeated``): then even a win with DTZ to spare is ranked by its DTZ."""
    b = board.copy()
    for _ in range(min(board.halfmove_clock, len(board)) + 1):
        if b.is_repetition(2):
            return True
        if not len(b):
            break
        b.pop()
    return False


def _checked_tables():
    """python-chess's table classes with a check after the header is read: the data it
    describes must fit in the file (a truncated file is found before a probe reads
    beyond it)."""
    import chess.syzygy as cs

    def data_end(table) -> Optional[int]:
        pairs = []
        if isinstance(table, cs.WdlTable):
            if not table.has_pawns:
                pairs = [(d, 3 * k + 2) for k, d in table.precomp.items()]
            else:
                pairs = [(d, 6 * f + 3 * k + 2) for f in range(4)
                         for k, d in table.files[f].precomp.items()]
        elif not table.has_pawns:
            pairs = [(table.precomp, 2)]
        else:
            pairs = [(table.files[f].precomp, 3 * f + 2) for f in range(4)
                     if getattr(table.files[f], "precomp", None) is not None]
        ends = [d.data + table.size[i] for d, i in pairs if getattr(d, "data", None) is not None]
        return max(ends) if ends else None

    def check(table) -> None:
        try:
            end = data_end(table)
        except Exception:          # python-chess's internals changed: no extra check
            return
        if end is not None and end > table.data.size():
            raise OSError(f"{table.path}: truncated ({table.data.size()} bytes, its header "
                          f"describes {end})")

    class WdlTable(cs.WdlTable):
        def init_table_wdl(self) -> None:
            fresh = not self.initialized
            super().init_table_wdl()
            if fresh:
                check(self)

    class DtzTable(cs.DtzTable):
        def init_table_dtz(self) -> None:
            fresh = not self.initialized
            super().init_table_dtz()
            if fresh:
                check(self)

    return WdlTable, DtzTable


class Tablebases:
    """The Syzygy files of a ``SyzygyPath``, with what the search asks of them.

    ``problems`` holds one line per file or directory that could not be used (and, later,
    per table found broken while probing); ``take_problems`` hands them over once."""

    def __init__(self, path: str, probe_limit: int = MAX_PIECES, rule50: bool = True):
        import chess
        import chess.syzygy

        self._chess = chess
        self._syzygy = chess.syzygy
        self.path = path
        self.limit = probe_limit
        self.rule50 = rule50
        self.problems: list[str] = []
        self._tb = chess.syzygy.Tablebase(max_fds=128)
        self._tables = _checked_tables()
        self._dropped: set[int] = set()      # materials no longer probed in the tree
        self._cache: dict[int, int] = {}
        self._lock = threading.Lock()
        for directory in split_path(path):
            self._add_directory(directory)

    # ---------------------------------------------------------------- opening
    def _add_directory(self, directory: str) -> None:
        if not os.path.isdir(directory):
            what = "is not a directory" if os.path.exists(directory) else "does not exist"
            self._problem(f"SyzygyPath: {directory} {what}")
            return
        try:
            names = sorted(os.listdir(directory))
        except OSError as exc:
            self._problem(f"SyzygyPath: cannot read {directory}: {exc.strerror or exc}")
            return
        for name in names:
            stem, ext = os.path.splitext(name)
            if ext not in MAGIC or not self._syzygy.is_tablename(stem):
                continue
            path = os.path.join(directory, name)
            reason = self._check_file(path, ext)
            if reason is not None:
                self._problem(f"Syzygy table {path}: {reason}; not used")
                continue
            opener = getattr(self._tb, "_open_table", None)
            if opener is None:         # another python-chess: its own classes, no header check
                self._tb.add_file(path)
            else:
                opener(self._tb.wdl if ext == WDL_SUFFIX else self._tb.dtz,
                       self._tables[0] if ext == WDL_SUFFIX else self._tables[1], path)

    @staticmethod
    def _check_file(path: str, ext: str) -> Optional[str]:
        """Why the file cannot be a Syzygy table, or None."""
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                head = f.read(4)
        except OSError as exc:
            return f"cannot be read ({exc.strerror or exc})"
        if size == 0:
            return "empty file"
        if size % 64 != 16:
            return f"truncated or not a Syzygy file ({size} bytes)"
        if head != MAGIC[ext]:
            return "not a Syzygy file (wrong magic bytes)"
        return None

    def _problem(self, message: str) -> None:
        log.warning("%s", message)
        self.problems.append(message)

    def take_problems(self) -> list[str]:
        """The problems not yet handed over (the UCI layer reports them once)."""
        with self._lock:
            problems, self.problems = self.problems, []
        return problems

    # ---------------------------------------------------------------- what is there
    @property
    def n_tables(self) -> int:
        """WDL tables found (a table counts once, whichever side holds the pieces)."""
        return len({id(t) for t in self._tb.wdl.values()})

    @property
    def max_pieces(self) -> int:
        """Men in the largest WDL table (0 without any)."""
        return max((len(key) - 1 for key in self._tb.wdl), default=0)

    @property
    def probe_limit(self) -> int:
        """Positions with at most this many men are probed: ``SyzygyProbeLimit`` or the
        largest table, whichever is smaller."""
        return min(self.limit, self.max_pieces)

    def material_codes(self) -> list[int]:
        """``material_code`` of every material the tree may probe (both colourings of each
        WDL table, up to ``probe_limit`` men, less the ones dropped)."""
        limit = self.probe_limit
        codes = set()
        for key in self._tb.wdl:
            if len(key) - 1 <= limit:
                white, black = key.split("v")
                codes.add(material_code(white, black))
        return sorted(codes - self._dropped)

    # ---------------------------------------------------------------- probing
    def _board(self, bitboards) -> "chess.Board":
        white, black, pawns, knights, bishops, rooks, queens, kings, turn, ep = bitboards
        board = self._chess.Board(None)
        board.occupied_co[self._chess.WHITE] = white
        board.occupied_co[self._chess.BLACK] = black
        board.occupied = white | black
        board.pawns, board.knights, board.bishops = pawns, knights, bishops
        board.rooks, board.queens, board.kings = rooks, queens, kings
        board.turn = turn
        board.ep_square = ep
        return board

    def _probe(self, board, dtz: bool = False) -> Optional[int]:
        """python-chess's WDL (or DTZ) of ``board``; None when it cannot say (a missing
        table: quietly; a broken one: reported, and the table is no longer used)."""
        try:
            return self._tb.probe_dtz(board) if dtz else self._tb.probe_wdl(board)
        except KeyError:                                  # MissingTableError, too many men
            return None
        except Exception as exc:                          # a broken file
            self._broken(board, exc)
            return None

    def _broken(self, board, exc: Exception) -> None:
        """Stop using the table that failed (the one named by the error, else the probed
        position's own) and report it."""
        text = str(exc)
        tables = [t for t in {id(t): t for t in (*self._tb.wdl.values(),
                                                 *self._tb.dtz.values())}.values()
                  if t.path in text]
        if not tables:
            key = self._syzygy.calc_key(board)
            tables = [t for t in (self._tb.wdl.get(key), self._tb.dtz.get(key)) if t]
        for table in tables:
            for registry in (self._tb.wdl, self._tb.dtz):
                for key in [k for k, t in registry.items() if t is table]:
                    del registry[key]
            table.close()
        named = ", ".join(t.path for t in tables) or f"the table of {board.fen()}"
        for table in tables:
            text = text.replace(f"{table.path}: ", "")
        with self._lock:
            self._problem(f"Syzygy table {named}: {' '.join(text.split())[:200]}; not used")

    def probe_leaf(self, key: int, bitboards) -> Optional[int]:
        """WDL of a tree leaf (fifty-move counter 0) from its side to move: 2, 0 or -2 (a
        cursed win or blessed loss: 0 while ``rule50``), or None when the tables cannot
        say; then its material is dropped (the tree must call ``Tree.set_tablebase`` again
        to see it: ``mcts.gather`` does). ``key``: the position's Zobrist key (the cache's),
        ``bitboards``: mcts._tb_bitboards."""
        wdl = self._cache.get(key)
        if wdl is not None:
            return wdl
        board = self._board(bitboards)
        raw = self._probe(board)
        if raw is None:
            self._drop(board)
            return None
        wdl = 2 * _wdl_class(raw, self.rule50)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = wdl
        return wdl

    def _drop(self, board) -> None:
        chess = self._chess
        sides = ["".join(letter * chess.popcount(board.pieces_mask(piece, color))
                         for piece, letter in zip((chess.PAWN, chess.KNIGHT, chess.BISHOP,
                                                   chess.ROOK, chess.QUEEN), _PIECE_ORDER))
                 for color in (chess.WHITE, chess.BLACK)]
        self._dropped.add(material_code(*sides))
        log.info("tablebase: no longer probing K%svK%s in the tree", *sides)

    def probe_wdl(self, board) -> Optional[int]:
        """python-chess's WDL (-2..2, the side to move's) of a zerochess Board, as if its
        fifty-move counter were 0; None when the tables cannot say (tests, tools)."""
        return self._probe(self._chess.Board(board.fen()))

    def probe_dtz(self, board) -> Optional[int]:
        """python-chess's DTZ of a zerochess Board; None when the tables cannot say."""
        return self._probe(self._chess.Board(board.fen()), dtz=True)

    # ---------------------------------------------------------------- the root
    def rank_root(self, board, moves: Sequence[str] = ()) -> Optional[RootProbe]:
        """The tables' verdict on ``board`` (a zerochess Board with its game history) and
        the moves the search may play, among ``moves`` (``go searchmoves``; empty: all);
        None when the position is not in the tables (too many men, castling rights, a
        table missing)."""
        limit = self.probe_limit
        if limit == 0:
            return None
        cboard = self._chess.Board(board.fen())
        if cboard.castling_rights or self._chess.popcount(cboard.occupied) > limit:
            return None
        moves = list(dict.fromkeys(moves)) or list(board.legal_moves())
        if not moves:
            return None
        return (self._rank(board, cboard, moves, by_dtz=True)
                or self._rank(board, cboard, moves, by_dtz=False))

    def _rank(self, board, cboard, moves: list[str], by_dtz: bool) -> Optional[RootProbe]:
        cnt50 = board.halfmove_clock
        rep = _repeated_since_zeroing(board)
        bound = 900 if self.rule50 else 1
        ranks: dict[str, tuple[int, int, int]] = {}
        for uci in moves:
            child = board.copy()
            child.push_uci(uci)
            cboard.push(self._chess.Move.from_uci(uci))
            try:
                if child.is_checkmate():
                    dtz = 1
                elif child.is_repetition(3) or child.is_fifty_moves():
                    dtz = 0                              # the game ends drawn there
                elif not by_dtz or child.halfmove_clock == 0:
                    wdl = self._probe(cboard)
                    if wdl is None:
                        return None
                    dtz = _dtz_before_zeroing(-wdl)
                else:
                    dtz = self._probe(cboard, dtz=True)
                    if dtz is None:
                        return None
                    dtz = -dtz
                    dtz += (dtz > 0) - (dtz < 0)         # one ply more, from the root
            finally:
                cboard.pop()
            if by_dtz:
                rank = ((1000 if dtz + cnt50 <= 99 and not rep else 1000 - (dtz + cnt50))
                        if dtz > 0 else
                        (-1000 if -dtz * 2 + cnt50 < 100 else -1000 + (-dtz + cnt50))
                        if dtz < 0 else 0)
            else:                                        # WDL: only the result counts
                rank = 1000 if dtz == 1 else (-1000 if dtz == -1 else 0)
                if not self.rule50:
                    rank = 1000 if dtz > 0 else (-1000 if dtz < 0 else 0)
            cls = 1 if rank >= bound else (-1 if rank <= -bound else 0)
            ranks[uci] = (rank, dtz if by_dtz else 0, cls)
        best = max(cls for _, _, cls in ranks.values())
        group = {m: r for m, r in ranks.items() if r[2] == best}
        if best != 0 and by_dtz:                         # fastest win, longest loss
            target = min(r[1] for r in group.values())
            keep = [m for m, r in group.items() if r[1] == target]
        elif best == 0:        # a draw: a cursed win first (the opponent may still err),
            top = max(r[0] for r in group.values())      # then a true draw, then the
            keep = [m for m, r in group.items()          # blessed loss farthest from zeroing
                    if (r[0] > 0 if top > 0 else r[0] == top)]
        else:
            keep = list(group)
        return RootProbe(result=best, keep=tuple(keep), ranks=ranks, by_dtz=by_dtz,
                         hits=len(ranks))
