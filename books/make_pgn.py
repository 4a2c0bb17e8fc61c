"""Reconstruct the move sequences of an EPD of 2-move openings as a PGN.

`noob_2moves.epd` lists positions after two moves by each side, but not the moves. We walk
every 4-ply sequence from the start position (197,281 leaves; legal moves in sorted UCI order,
so the walk is deterministic), index each leaf by its Polyglot Zobrist key (which covers piece
placement, side to move, castling rights and a capturable en-passant square: exactly what
defines the position), and write, for each EPD line in file order, one sequence that reaches
it. Transpositions (1.e4 e5 2.Nf3 Nc6 and 1.Nf3 Nc6 2.e4 e5) reach the same position;
we write the most conventional one: at each ply in turn, the sequence whose move comes first
in a fixed list of common opening moves (`COMMON`: e4, d4, Nf3, c4, ... for White; e5, c5, e6,
d5, Nf6, ... for Black; other moves after them in sorted UCI order). So 1.e4 e5 2.Nf3 Nc6, not
1.Nf3 Nc6 2.e4 e5, and a book built from these lines opens as people do. The halfmove clock
and move number of the EPD ("0 3") are nominal, so positions are matched by key, not by the
full FEN text.

    python books/make_pgn.py books/noob_2moves.epd books/noob_2moves.pgn
"""

import argparse
import os
import sys

import chess
import chess.pgn

from zerochess.chess import Board


def leaves(board: Board, plies: int, line: list, found: dict) -> None:
    if plies == 0:
        found.setdefault(board.zobrist(), []).append(tuple(line))
        return
    for move in board.legal_moves():  # sorted UCI
        board.push_uci(move)
        line.append(move)
        leaves(board, plies - 1, line, found)
        line.pop()
        board.pop()


COMMON = {
    chess.WHITE: "e2e4 d2d4 g1f3 c2c4 g2g3 b2b3 f2f4 b1c3 e2e3 d2d3 c2c3 b2b4".split(),
    chess.BLACK: "e7e5 c7c5 e7e6 c7c6 d7d5 g8f6 g7g6 d7d6 b8c6 f7f5 b7b6 a7a6".split(),
}


def choose_mainstream(candidates):
    """For each position's list of sequences, the one that is most conventional ply by ply."""
    def rank(seq):
        keys = []
        for ply, move in enumerate(seq):
            common = COMMON[chess.WHITE if ply % 2 == 0 else chess.BLACK]
            keys.append(common.index(move) if move in common else len(common))
        return tuple(keys) + (seq,)
    return [min(sequences, key=rank) for sequences in candidates]


def epd_fens(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def write_pgn(fens, lines, out, event):
    """Write one PGN game per (fen, moves); atomic (temp file + os.replace)."""
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        for i, (fen, moves) in enumerate(zip(fens, lines), 1):
            game = chess.pgn.Game()
            game.headers["Event"] = event
            game.headers["Site"] = "?"
            game.headers["Date"] = "????.??.??"
            game.headers["Round"] = str(i)
            game.headers["White"] = "?"
            game.headers["Black"] = "?"
            node = game
            for uci in moves:
                node = node.add_variation(chess.Move.from_uci(uci))
            if node.board().board_fen() != chess.Board(fen).board_fen():
                raise AssertionError(f"line {i}: reconstructed position differs from {fen}")
            print(game, file=f, end="\n\n")
    os.replace(tmp, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("epd")
    parser.add_argument("pgn")
    parser.add_argument("--plies", type=int, default=4)
    args = parser.parse_args()
    found = {}
    leaves(Board(), args.plies, [], found)
    fens = epd_fens(args.epd)
    candidates, missing = [], []
    for i, fen in enumerate(fens, 1):
        sequences = found.get(Board(fen).zobrist())
        if sequences is None:
            missing.append(i)
        candidates.append(sequences or [])
    if missing:
        sys.exit(f"{len(missing)} positions are not {args.plies} plies from the start: lines {missing[:10]}")
    lines = choose_mainstream(candidates)
    if len(set(lines)) != len(lines):
        sys.exit("duplicate positions in the EPD")
    write_pgn(fens, lines, args.pgn, os.path.splitext(os.path.basename(args.epd))[0])
    print(f"{args.pgn}: {len(lines)} games from {len(found)} distinct {args.plies}-ply positions")


if __name__ == "__main__":
    main()
