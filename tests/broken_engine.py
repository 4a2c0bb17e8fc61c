"""A deliberately broken UCI engine for the match runner's forfeit tests.

    python tests/broken_engine.py MODE

MODE: ``crash`` exits when told to ``go``; ``hang`` never answers ``go``; ``illegal`` answers
with a move that is not legal; ``none`` answers ``bestmove (none)``; ``mute`` never answers
``uci``; ``first`` plays the first legal move (sorted UCI) at once, a well-behaved weakling;
``slow`` plays it after 20 ms (a match that lasts long enough to be killed in the middle);
``first960`` is ``first`` that declares ``UCI_Chess960`` (the others do not) and castles as
king takes rook once it is set.
It answers ``uci`` and ``isready`` correctly (except ``mute``), so the runner gets to the game.
"""

import sys
import time

import chess

def apply_position(words: list[str], chess960: bool = False) -> chess.Board:
    """The board of a ``position startpos|fen ... [moves ...]`` command (split in words)."""
    moves = words[words.index("moves") + 1:] if "moves" in words else []
    if words[1] == "startpos":
        board = chess.Board(chess960=chess960)
    else:
        end = words.index("moves") if "moves" in words else len(words)
        board = chess.Board(" ".join(words[2:end]), chess960=chess960)
    for uci in moves:
        board.push_uci(uci)
    return board


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "hang"
    board = chess.Board()
    chess960 = False  # UCI_Chess960: castling as king takes rook
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci" and mode != "mute":
            declare = "option name UCI_Chess960 type check default false\n" if mode == "first960" else ""
            print(f"id name broken-{mode}\n{declare}uciok", flush=True)
        elif words[:3] == ["setoption", "name", "UCI_Chess960"]:
            chess960 = words[-1].lower() == "true"
        elif words[0] == "isready":
            print("readyok", flush=True)
        elif words[0] == "position":
            board = apply_position(words, chess960)
        elif words[0] == "go":
            if mode == "crash":
                sys.exit(3)
            elif mode == "illegal":
                print("bestmove e2e5", flush=True)
            elif mode == "none":
                print("bestmove (none)", flush=True)
            elif mode in ("first", "slow", "first960"):
                if mode == "slow":
                    time.sleep(0.02)
                print(f"bestmove {min(m.uci() for m in board.legal_moves)}", flush=True)
            # hang: say nothing
        elif words[0] == "quit":
            break


if __name__ == "__main__":
    main()
