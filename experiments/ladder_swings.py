"""Where zerochess loses a ladder match: the opponent's own evaluations, read back from the PGN.

`zerochess match` writes each engine's last `info score` into the move's comment as
`[%eval ...]` (White's point of view), so a ladder PGN against Stockfish already holds a
deeper engine's opinion of every position zerochess left it. Reading them answers what the
score alone cannot: are the lost games lost by one blunder from a level position, or by a
slow slide, and how many games did zerochess have won by the opponent's own account and fail
to win? That says which lever to pull next (tactics in the middlegame, or conversion).

    python experiments/ladder_swings.py ladder2000.pgn --engine zc

Per game result: games in which the opponent's evaluation (from zerochess's side) stayed at
+2 or more for three of its moves in a row, the move where that began, and, for losses, the
first opponent move that put zerochess at -1.5 or worse and what the opponent thought one move
before.
"""

from __future__ import annotations

import argparse
import statistics

import chess.pgn

from zerochess.client.uci import MATE_CP  # the centipawns a mate counts as, as the match's


def opponent_evals(game: chess.pgn.Game, engine: str) -> list[tuple[int, float]]:
    """(full-move number, evaluation in pawns from `engine`'s side) after each opponent move."""
    engine_white = game.headers.get("White") == engine
    out = []
    board = game.board()  # walked along the game once (node.board() replays from the start)
    for node in game.mainline():
        mover_white = board.turn == chess.WHITE
        fullmove = board.fullmove_number
        board.push(node.move)
        score = node.eval()
        if mover_white == engine_white or score is None:
            continue
        pawns = score.white().score(mate_score=MATE_CP) / 100.0
        out.append((fullmove, pawns if engine_white else -pawns))
    return out


def engine_score(game: chess.pgn.Game, engine: str) -> float | None:
    result = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(game.headers.get("Result", "*"))
    if result is None:
        return None
    return result if game.headers.get("White") == engine else 1.0 - result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn")
    parser.add_argument("--engine", default="zc", help="The engine's name in the PGN headers.")
    args = parser.parse_args()

    games: dict[float, list[list[tuple[int, float]]]] = {1.0: [], 0.5: [], 0.0: []}
    with open(args.pgn, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            score = engine_score(game, args.engine)
            if score is not None:
                games[score].append(opponent_evals(game, args.engine))

    total = sum(len(g) for g in games.values())
    print(f"{total} games: W/D/L {len(games[1.0])}/{len(games[0.5])}/{len(games[0.0])}")
    for score, name in ((1.0, "wins"), (0.5, "draws"), (0.0, "losses")):
        starts = []
        for evals in games[score]:
            for i in range(len(evals) - 2):
                if all(v >= 2.0 for _, v in evals[i:i + 3]):
                    starts.append(evals[i][0])
                    break
        median = statistics.median(starts) if starts else "-"
        print(f"{name:6s}: opponent saw the engine at +2 or more for 3 moves in {len(starts)} "
              f"of {len(games[score])} (from move {median}, median)")

    turns, before = [], []
    for evals in games[0.0]:
        for i, (move, value) in enumerate(evals):
            if value <= -1.5:
                turns.append(move)
                if i:
                    before.append(evals[i - 1][1])
                break
    if turns:
        quartiles = statistics.quantiles(turns, n=4) if len(turns) > 1 else [turns[0]] * 3
        level = sum(1 for v in before if v >= -0.5)
        print(f"losses: first opponent move with the engine at -1.5 or worse: move "
              f"{quartiles[0]:.0f} / {quartiles[1]:.0f} / {quartiles[2]:.0f} (quartiles); "
              f"one move before it the opponent had the engine at -0.5 or better in {level} "
              f"of {len(before)} (a single blunder from a level position)")


if __name__ == "__main__":
    main()
