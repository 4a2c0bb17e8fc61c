"""How often does a move leave a piece en prise? UCI_LimitStrength levels against full strength.

Quoted in docs/strength-limit.md. The positions are those where zerochess was to move in the
calibration games (PGNs given on the command line), every ``--every``-th one; in each,
zerochess plays once per level, from a fresh tree (``ucinewgame``), and python-chess judges
the position after the move:

    en prise: the opponent has a capture that wins more than the move itself just took,
    counting a capture of a defended piece as worth the victim minus the capturer
    (pawn 1, knight and bishop 3, rook 5, queen 9; kings and en passant left out);
    hung: en prise after the move where the mover had nothing en prise before it (and was
    not in check): the move itself left the piece there.

So a plain trade (BxN, then pxB) is not en prise; a piece left where a pawn takes it, or
undefended where anything takes it, is. The moves the other engine (Stockfish at its
UCI_Elo level) played in the same games are judged the same way, for reference.

    python experiments/strength_en_prise.py runs/calib/*.pgn --every 4
"""

from __future__ import annotations

import argparse
import sys

import chess
import chess.engine
import chess.pgn

VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}


def taken_by(board: chess.Board, move: chess.Move) -> int:
    """Material the move captures (0 for en passant and quiet moves; see the docstring)."""
    victim = board.piece_at(move.to_square)
    return VALUE.get(victim.piece_type, 0) if victim and victim.color != board.turn else 0


def best_capture_gain(board: chess.Board) -> int:
    """The most the side to move wins by one capture (victim, less the capturer when the
    victim is defended); 0 if no capture gains."""
    best = 0
    for reply in board.legal_moves:
        victim = board.piece_at(reply.to_square)
        if victim is None or victim.color == board.turn or victim.piece_type == chess.KING:
            continue
        capturer = board.piece_at(reply.from_square)
        defended = board.is_attacked_by(victim.color, reply.to_square)
        best = max(best, VALUE[victim.piece_type] - (VALUE.get(capturer.piece_type, 0) if defended else 0))
    return best


def leaves_en_prise(board: chess.Board, move: chess.Move) -> bool:
    """Whether after ``move`` the opponent can capture for a gain larger than ``move`` took."""
    after = board.copy(stack=False)
    after.push(move)
    return best_capture_gain(after) > taken_by(board, move)


def had_en_prise(board: chess.Board) -> bool:
    """Whether the side to move already has a piece en prise (as if the opponent moved now);
    a position in check counts as such (its answer is forced)."""
    if board.is_check():
        return True
    passed = board.copy(stack=False)
    passed.push(chess.Move.null())
    return best_capture_gain(passed) > 0


def creates_en_prise(board: chess.Board, move: chess.Move) -> bool:
    """A piece en prise after the move where none was before it: the move itself hung it."""
    return not had_en_prise(board) and leaves_en_prise(board, move)


def positions(paths, every):
    """(board, the move zerochess played, the move the opponent played next or None)."""
    found = []
    for path in paths:
        with open(path) as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                zc_white = game.headers.get("White") == "zc"
                board = game.board()
                moves = list(game.mainline_moves())
                for i, move in enumerate(moves):
                    if (board.turn == chess.WHITE) == zc_white:
                        found.append((board.copy(stack=False), move,
                                      moves[i + 1] if i + 1 < len(moves) else None))
                    board.push(move)
    return found[::every]


def rate(flags) -> str:
    return f"{sum(flags)}/{len(flags)} ({100 * sum(flags) / max(1, len(flags)):.1f}%)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", nargs="+")
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--levels", default="1000,1300,1550")
    parser.add_argument("--full-nodes", type=int, default=400,
                        help="nodes per move of full strength")
    args = parser.parse_args()
    for path in args.pgn:                       # the moves actually played in each match
        played = positions([path], 1)
        zc = [leaves_en_prise(b, m) for b, m, _ in played]
        zc_new = [creates_en_prise(b, m) for b, m, _ in played]
        sf = [leaves_en_prise(_after(b, m), r) for b, m, r in played if r is not None]
        sf_new = [creates_en_prise(_after(b, m), r) for b, m, r in played if r is not None]
        print(f"{path}: moves that leave a piece en prise: zerochess {rate(zc)}, Stockfish "
              f"{rate(sf)}; that hang one where none was: zerochess {rate(zc_new)}, "
              f"Stockfish {rate(sf_new)}")
    sample = positions(args.pgn, args.every)
    print(f"fixed set: {len(sample)} positions with zerochess to move (every {args.every}th)",
          flush=True)
    runs = [(f"UCI_Elo {elo}", {"UCI_LimitStrength": True, "UCI_Elo": int(elo)}, None)
            for elo in args.levels.split(",")]
    runs.append((f"full strength ({args.full_nodes} nodes)", {}, args.full_nodes))
    for name, options, nodes in runs:
        engine = chess.engine.SimpleEngine.popen_uci([sys.executable, "-m", "zerochess"])
        try:
            engine.configure({"Threads": 1, **options})
            hung, new = [], []
            for board, _, _ in sample:
                limit = chess.engine.Limit(nodes=nodes or 100_000)   # a level caps its own
                move = engine.play(board, limit, game=object()).move  # ucinewgame each time
                hung.append(leaves_en_prise(board, move))
                new.append(creates_en_prise(board, move))
        finally:
            engine.quit()
        print(f"{name}: {rate(hung)} moves leave a piece en prise, {rate(new)} hang one where "
              f"none was", flush=True)


def _after(board: chess.Board, move: chess.Move) -> chess.Board:
    after = board.copy(stack=False)
    after.push(move)
    return after


if __name__ == "__main__":
    main()
