"""`zerochess rate`: the report of games already played equals the report of the match that
played them, from our own PGNs and from a cutechess-style PGN without annotations."""

import random

import chess
import chess.engine
import pytest
from click.testing import CliRunner

from zerochess.cli import main
from zerochess.match import EngineSpec, MatchConfig, MatchResult, TimeControl
from zerochess.match.cli import report
from zerochess.match.game import GameRecord, MoveRecord
from zerochess.match.openings import Opening
from zerochess.match.pgn import write_game
from zerochess.match.rate import RateError, read_games

OPENINGS = [  # two from one root with book moves (a PGN suite), two from EPD-style FENs
    Opening(chess.STARTING_FEN, ("e2e4", "e7e5")),
    Opening(chess.STARTING_FEN, ("d2d4", "d7d5")),
    Opening("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"),
    Opening("rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2"),
]
ENDINGS = [("1-0", "normal", "White mates", None), ("0-1", "normal", "Black mates", None),
           ("1/2-1/2", "adjudication", "Draw by adjudication: scores near zero", None),
           ("1-0", "adjudication", "Black resigns by adjudication", None),
           ("0-1", "time forfeit", "White loses on time", "white"),
           ("1-0", "rules infraction", "Black forfeits: illegal move a1a1", "black")]


def played_match(games=24, seed=3):
    """A MatchResult as `run_match` builds it (pairs of colour-swapped games), random results."""
    rng = random.Random(seed)
    config = MatchConfig([EngineSpec("zc", ["zc"]), EngineSpec("sf", ["sf"])], games=games,
                         tc=TimeControl(10, 0.1))
    records = []
    for i in range(games):
        pair, opening = i // 2 + 1, OPENINGS[(i // 2) % len(OPENINGS)]
        white, black = ("zc", "sf") if i % 2 == 0 else ("sf", "zc")
        result, termination, reason, loser = rng.choice(ENDINGS)
        record = GameRecord(i + 1, pair, (i // 2) % len(OPENINGS), white, black, opening,
                            result=result, termination=termination, reason=reason,
                            forfeit={"white": white, "black": black}.get(loser))
        board = opening.board()
        move = next(iter(board.legal_moves))
        record.moves = [MoveRecord(move.uci(), 0.31, 9.7,
                                   chess.engine.PovScore(chess.engine.Cp(20), board.turn), 5)]
        records.append(record)
    return MatchResult(config, records)


def write_pgn(path, result, order=None):
    with open(path, "w") as handle:
        for record in (order or result.games):
            write_game(handle, record, result.config)


def test_rated_pgn_reports_what_the_match_reported(tmp_path):
    played = played_match()
    write_pgn(tmp_path / "m.pgn", played)
    rated = read_games([tmp_path / "m.pgn"], "zc")
    assert rated.unpaired == 0 and not rated.skipped
    assert report(rated.result) == report(played)
    est = rated.result.estimate
    assert est.model == "pentanomial" and est.games == 24
    assert sum(rated.result.forfeit_counts().values()) == len(played.forfeits) > 0


def test_two_files_together_and_the_other_side(tmp_path):
    first, second = played_match(12, seed=1), played_match(16, seed=2)
    write_pgn(tmp_path / "a.pgn", first)
    write_pgn(tmp_path / "b.pgn", second)
    both = read_games([tmp_path / "a.pgn", tmp_path / "b.pgn"], "zc").result.estimate
    scores = first.scores() + second.scores()
    assert both.games == 28 and both.model == "pentanomial"
    assert both.score == pytest.approx(sum(scores) / 28)
    assert both.pairs == tuple(sum(1 for p in first.pair_scores() + second.pair_scores()
                                   if p == k / 2) for k in range(5))
    sf = read_games([tmp_path / "a.pgn", tmp_path / "b.pgn"], "sf").result.estimate
    assert (sf.wins, sf.draws, sf.losses) == (both.losses, both.draws, both.wins)


def test_pairs_are_found_in_any_order_and_on_book_moves(tmp_path):
    """Same root, different book moves: different openings. Shuffled games still pair (each
    opening once here; an opening played twice pairs in file order)."""
    played = played_match(2 * len(OPENINGS))
    order = list(played.games)
    random.Random(0).shuffle(order)
    write_pgn(tmp_path / "m.pgn", played, order)
    rated = read_games([tmp_path / "m.pgn"], "zc")
    assert rated.unpaired == 0
    by_pair = {}
    for g in rated.result.games:
        by_pair.setdefault(g.pair, []).append(g)
    assert len(by_pair) == len(OPENINGS)
    for a, b in by_pair.values():
        assert a.opening == b.opening and {a.white, b.white} == {"zc", "sf"}
    assert sorted(o.moves for o in (p[0].opening for p in by_pair.values())) == \
        sorted(o.moves for o in OPENINGS)
    assert sorted(rated.result.pair_scores()) == sorted(played.pair_scores())


def test_unpaired_unfinished_and_foreign_games_are_counted_not_rated(tmp_path):
    played = played_match(6)
    write_pgn(tmp_path / "m.pgn", played, played.games[:5])  # the last pair is cut in half
    with open(tmp_path / "m.pgn", "a") as handle:
        handle.write('[White "zc"]\n[Black "sf"]\n[Result "*"]\n\n1. e4 *\n\n'
                     '[White "x"]\n[Black "y"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n\n')
    rated = read_games([tmp_path / "m.pgn"], "zc")
    assert rated.unpaired == 1 and rated.result.estimate.games == 5
    assert rated.result.estimate.model == "trinomial"
    assert rated.skipped == {"unfinished": 1, "not played by zc": 1}


def test_cutechess_style_pgn_without_annotations(tmp_path):
    (tmp_path / "c.pgn").write_text(
        '[White "A"]\n[Black "B"]\n[Result "0-1"]\n[Termination "time forfeit"]\n\n'
        '1. e4 {+0.30/12 0.5s} e5 {-0.20/11 0.4s, White loses on time} 0-1\n\n'
        '[White "B"]\n[Black "A"]\n[Result "1/2-1/2"]\n\n1. e4 e5 1/2-1/2\n\n')
    rated = read_games([tmp_path / "c.pgn"])  # default: White of the first game, A
    est = rated.result.estimate
    assert (est.wins, est.draws, est.losses, est.model) == (0, 1, 1, "pentanomial")
    assert [g.forfeit for g in rated.result.games] == ["A", None]


def test_no_game_to_rate_is_a_clear_error(tmp_path):
    (tmp_path / "junk.pgn").write_bytes(b"\x00\xffnot a pgn at all\n")
    with pytest.raises(RateError, match="no game to rate"):
        read_games([tmp_path / "junk.pgn"])
    out = CliRunner().invoke(main, ["rate", str(tmp_path / "junk.pgn")])
    assert out.exit_code == 1 and "no game to rate" in out.output and "Traceback" not in out.output


def test_cli_prints_the_match_report(tmp_path):
    played = played_match()
    write_pgn(tmp_path / "m.pgn", played)
    out = CliRunner().invoke(main, ["rate", str(tmp_path / "m.pgn"), "--engine", "zc"])
    assert out.exit_code == 0, out.output
    assert out.output.splitlines() == report(played)
