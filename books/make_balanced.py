"""Build the balanced opening suite: 2-move openings that Stockfish rates within +-50 cp.

Candidates are the lines of `noob_2moves.pgn` (the 7,314 positions of `noob_2moves.epd` with
their move sequences, see `make_pgn.py`), taken in a seeded random order. Each is searched by
Stockfish at a fixed depth, one thread, 16 MB hash, cleared before each position (`ucinewgame`),
so a given Stockfish build gives the same scores on any machine and in any order. A position is
kept when |score| <= --max-cp (from White's view; a mate score is never kept), until --count
positions are kept. Positions are distinct by Polyglot key (the suite has no duplicates; this
is checked). The output keeps the candidates' random order, as cutechess/fastchess read suites
in file order unless told to shuffle.

Writes OUT.epd (FEN per line, like noob_2moves.epd) and OUT.pgn (the move sequences, each game
with a comment giving the score and depth).

    python books/make_balanced.py --depth 12 --count 1000 --out books/balanced_2moves
"""

import argparse
import os
import random
import time

import chess
import chess.engine
import chess.pgn
import chess.polyglot


def read_lines(path):
    with open(path) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            yield list(game.mainline_moves())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=os.path.join(os.path.dirname(__file__), "noob_2moves.pgn"))
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "balanced_2moves"))
    parser.add_argument("--depth", type=int, default=12)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--max-cp", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stockfish", default="/usr/games/stockfish")
    args = parser.parse_args()

    lines = list(read_lines(args.source))
    random.Random(args.seed).shuffle(lines)
    kept, seen, tried = [], set(), 0
    start = time.monotonic()
    engine = chess.engine.SimpleEngine.popen_uci(args.stockfish, timeout=30)
    try:
        engine.configure({"Threads": 1, "Hash": 16})
        name = engine.id.get("name", "Stockfish")
        for moves in lines:
            if len(kept) >= args.count:
                break
            board = chess.Board()
            for move in moves:
                board.push(move)
            key = chess.polyglot.zobrist_hash(board)
            if key in seen:
                raise SystemExit(f"duplicate position: {board.fen()}")
            seen.add(key)
            tried += 1
            info = engine.analyse(board, chess.engine.Limit(depth=args.depth), game=object())
            cp = info["score"].white().score()  # None for a mate score
            if cp is not None and abs(cp) <= args.max_cp:
                kept.append((board, moves, cp))
    finally:
        engine.quit()
    elapsed = time.monotonic() - start

    with open(args.out + ".epd.tmp", "w") as f:
        for board, _, _ in kept:
            f.write(board.fen() + "\n")
    with open(args.out + ".pgn.tmp", "w") as f:
        for i, (board, moves, cp) in enumerate(kept, 1):
            game = chess.pgn.Game.from_board(board)
            game.headers["Event"] = os.path.basename(args.out)
            game.headers["Round"] = str(i)
            game.headers["Result"] = "*"
            game.end().comment = f"{name} depth {args.depth}: {cp / 100:+.2f}"
            print(game, file=f, end="\n\n")
    os.replace(args.out + ".epd.tmp", args.out + ".epd")
    os.replace(args.out + ".pgn.tmp", args.out + ".pgn")
    cps = [cp for _, _, cp in kept]
    print(f"{len(kept)} of {tried} positions within +-{args.max_cp} cp at depth {args.depth} "
          f"({name}); mean {sum(cps) / max(1, len(cps)):+.1f} cp; {elapsed:.0f} s")


if __name__ == "__main__":
    main()
