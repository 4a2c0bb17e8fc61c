"""UCI_Chess960 through raw pipes: castling read in both forms, written as the option says.

With the option off, standard castling travels as the king's two-square move (e1g1) as
before; with it on, as king takes rook (e1h1), the form Chess960 GUIs and match tools use.
Chess960 castlings that are not standard (king off the e-file or rook off the corner) have
only the king-takes-rook form."""

import pytest

from uci_process import UciProcess

STANDARD = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"
# a double Fischer random start (Shredder-FEN): king g1, rooks f1 and h1
DFRC = "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"


@pytest.fixture
def engine():
    e = UciProcess()
    e.send("uci")
    lines = e.expect("uciok", timeout=15)
    assert "option name UCI_Chess960 type check default false" in lines
    e.send("setoption name WeightsFile value uniform")
    e.sync()
    yield e
    e.close()


def fen_after(e, position):
    e.send(position)
    e.send("d")
    line = e.expect("info string fen ")[-1]
    return line[len("info string fen "):]


def bestmove(e, go):
    e.send(go)
    return e.expect("bestmove", timeout=30)[-1].split()[1]


@pytest.mark.parametrize("chess960", [False, True])
def test_standard_castling_is_read_in_both_forms_and_written_as_the_option_says(engine, chess960):
    engine.send(f"setoption name UCI_Chess960 value {'true' if chess960 else 'false'}")
    castled = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 b kq - 1 1"
    for text in ("e1g1", "e1h1"):
        assert fen_after(engine, f"position fen {STANDARD} moves {text}") == castled
    engine.send(f"position fen {STANDARD}")
    for asked in ("e1g1", "e1h1", "e1c1", "e1a1"):
        best = bestmove(engine, f"go nodes 16 searchmoves {asked}")
        short = asked in ("e1g1", "e1h1")
        assert best == (("e1h1" if short else "e1a1") if chess960 else ("e1g1" if short else "e1c1"))
    # black answers with castling too, in the option's form, and the game goes on from it
    engine.send(f"position fen {STANDARD} moves e1g1")
    assert bestmove(engine, "go nodes 16 searchmoves e8c8") == ("e8a8" if chess960 else "e8c8")
    assert fen_after(engine, f"position fen {STANDARD} moves e1g1 e8a8") == \
        "2kr3r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 w - - 2 2"


@pytest.mark.parametrize("chess960", [False, True])
def test_chess960_castling_travels_as_king_takes_rook(engine, chess960):
    engine.send(f"setoption name UCI_Chess960 value {'true' if chess960 else 'false'}")
    # clear c1, d1, e1 (c8, d8, e8): the a-side castling, king g1 takes the f1 rook, opens
    opening = "d1e3 d8e6 e1f3 e8f6 d2d4 d7d5 c1d2 c8d7"
    assert fen_after(engine, f"position fen {DFRC} moves {opening}") == \
        "bb3rkr/pppqpppp/4nn2/3p4/3P4/4NN2/PPPQPPPP/BB3RKR w HFhf - 2 5"
    engine.send(f"position fen {DFRC} moves {opening}")
    assert bestmove(engine, "go nodes 16 searchmoves g1f1") == "g1f1"
    engine.send(f"position fen {DFRC} moves {opening} g1f1")
    assert bestmove(engine, "go nodes 16 searchmoves g8f8") == "g8f8"
    assert fen_after(engine, f"position fen {DFRC} moves {opening} g1f1 g8f8") == \
        "bbkr3r/pppqpppp/4nn2/3p4/3P4/4NN2/PPPQPPPP/BBKR3R w - - 4 6"


def test_a_bad_option_value_is_reported_and_changes_nothing(engine):
    engine.send("setoption name UCI_Chess960 value maybe")
    lines = engine.sync()
    assert any(l.startswith("info string error:") and "UCI_Chess960" in l for l in lines)
    engine.send(f"position fen {STANDARD}")
    assert bestmove(engine, "go nodes 16 searchmoves e1h1") == "e1g1"  # still off


@pytest.mark.parametrize("chess960", [False, True])
def test_a_book_castling_comes_in_the_options_form(engine, tmp_path, chess960):
    from zerochess.book.polyglot import BookProber, write_book
    from zerochess.chess import Board

    book = tmp_path / "castle.bin"
    write_book(book, {(Board(STANDARD).zobrist(), "e1h1"): 1})  # Polyglot: king takes rook
    shredder = STANDARD.replace("KQkq", "HAha")
    assert BookProber(book).probe(shredder, chess960=chess960) == ("e1h1" if chess960 else "e1g1")
    engine.send(f"setoption name UCI_Chess960 value {'true' if chess960 else 'false'}")
    engine.send("setoption name OwnBook value true")
    engine.send(f"setoption name BookFile value {book}")
    engine.sync()
    engine.send(f"position fen {STANDARD}")
    assert bestmove(engine, "go nodes 16") == ("e1h1" if chess960 else "e1g1")
