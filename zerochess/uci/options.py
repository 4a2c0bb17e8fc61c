"""UCI options, each declared exactly once.

A declaration yields both the ``option name ...`` line sent after ``uci`` and the parser
for ``setoption``, so the two can never disagree (Leela Chess Zero's ``OptionId`` idea).
An option that sets a field of the search (``sets="search.<field>"``) or an attribute of the
evaluator (``sets="evaluator.<attribute>"``) takes its default from there, so no default is
typed twice; ``search_params`` and ``evaluator_settings`` apply them. The options that choose
the network and how it runs (``sets="network.<make_evaluator argument>"``) reload it when
they change: ``network_settings`` gives them to ``make_evaluator``. The README's options
table is checked against these declarations (tests/test_uci_options_doc.py).

Floating-point options are advertised as ``type string`` holding a decimal number: UCI
has no float type, and GUIs that see ``spin`` expect integers (Leela Chess Zero does the same).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from zerochess.neural.backends import RUNTIME_HELP, RUNTIMES
from zerochess.neural.defaults import DEFAULT_POLICY_TEMPERATURE
from zerochess.search.params import ENGINE_PARAMS, SearchParams
from zerochess.uci.strength import NODE_BAND_START, STRENGTH_ELO_MAX, STRENGTH_ELO_MIN

class OptionError(ValueError):
    """A ``setoption`` that names no option or gives a value the option does not accept."""


@dataclass(frozen=True)
class Option:
    name: str
    kind: str                      # "check" | "spin" | "combo" | "string" | "float" | "button"
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    sets: str = ""
    """What the value sets: "search.<SearchParams field>", "evaluator.<attribute>",
    "network.<make_evaluator argument>" (a change reloads the network), or "" for an option
    the UCI layer itself reads (files, clock, book, output)."""
    aliases: tuple[str, ...] = ()
    """Other names ``setoption`` accepts for the same setting (never advertised: a GUI that
    sends every option it was shown would otherwise send the default of one name after the
    user's value of the other)."""

    def uci_line(self, default: Any = None) -> str:
        """The ``option name ...`` declaration a GUI reads; ``default``: the value to
        advertise instead of the declared one (a command-line flag's, so that a GUI that
        sends every option back keeps it)."""
        default = self.default if default is None else default
        if self.kind == "check":
            return f"option name {self.name} type check default {'true' if default else 'false'}"
        if self.kind == "spin":
            return (f"option name {self.name} type spin default {default} "
                    f"min {int(self.min)} max {int(self.max)}")
        if self.kind == "combo":
            vars_ = " ".join(f"var {c}" for c in self.choices)
            return f"option name {self.name} type combo default {default} {vars_}"
        if self.kind == "float":
            return f"option name {self.name} type string default {format_float(default)}"
        if self.kind == "button":
            return f"option name {self.name} type button"
        return f"option name {self.name} type string default {default if default != '' else '<empty>'}"

    def parse(self, text: str | None) -> Any:
        """The typed value of ``setoption ... value TEXT``, or OptionError saying why not."""
        if self.kind == "button":
            return True
        if text is None:
            if self.kind == "string":
                return ""
            raise OptionError(f"option {self.name} needs a value")
        if self.kind == "check":
            lowered = text.lower()
            if lowered not in ("true", "false"):
                raise OptionError(f"option {self.name} takes true or false, not {text!r}")
            return lowered == "true"
        if self.kind in ("spin", "float"):
            try:
                value = int(text) if self.kind == "spin" else float(text)
            except ValueError:
                wanted = "an integer" if self.kind == "spin" else "a number"
                raise OptionError(f"option {self.name} takes {wanted}, not {text!r}") from None
            if value != value or not (self.min <= value <= self.max):  # NaN or out of range
                raise OptionError(f"option {self.name} must be between {format_float(self.min)} "
                                  f"and {format_float(self.max)}, not {text}")
            return value
        if self.kind == "combo":
            for choice in self.choices:
                if choice.lower() == text.lower():
                    return choice
            raise OptionError(f"option {self.name} takes one of {', '.join(self.choices)}, not {text!r}")
        return "" if text == "<empty>" else text


def search_option(name: str, param: str, help: str, lo: float, hi: float) -> Option:
    """An option setting the ``SearchParams`` field ``param``: its default is the engine's
    (``ENGINE_PARAMS``), its type follows the field's (int: spin, float: a number)."""
    default = getattr(ENGINE_PARAMS, param)
    kind = "spin" if isinstance(default, int) else "float"
    return Option(name, kind, default, help, lo, hi, sets=f"search.{param}")


def format_float(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


DEFAULT = "<default>"   # WeightsFile / BookFile value meaning "the file shipped in the package"

OPTIONS: tuple[Option, ...] = (
    search_option("Hash", "hash_mb", "Transposition table (network-evaluation cache) size in MB.",
                  1, 65536),
    Option("Clear Hash", "button", False, "Forget the search tree and the cached network "
           "evaluations now (as ucinewgame does; the options stay)."),
    search_option("Threads", "threads", "Minibatches at the network at once, each run on its "
                  "own CPU thread (as Stockfish's and Leela's search threads): N keeps N cores "
                  "busy. 1 searches deterministically on one core, what a GUI that plays "
                  "engine matches on one core each expects.", 1, max(1, os.cpu_count() or 1) * 4),
    search_option("MinibatchSize", "minibatch", "Leaves gathered with virtual loss per network "
                  "call.", 1, 1024),
    Option("WeightsFile", "string", DEFAULT, "Network file: an .onnx network (zerochess "
           "export) or, with the train extra, a .pt checkpoint; <default> is the network "
           "shipped with zerochess, 'zero' the shipped network that learnt from the rules "
           "alone (self-play), 'uniform' a weightless evaluator (for testing).",
           sets="network.spec"),
    Option("Device", "combo", "auto", "Where the network runs (cuda needs the train extra).",
           choices=("auto", "cpu", "cuda"), sets="network.device"),
    Option("Backend", "combo", RUNTIMES[0], RUNTIME_HELP, choices=RUNTIMES,
           sets="network.runtime"),
    Option("Move Overhead", "spin", 100, "Milliseconds kept back per move for the GUI and "
           "pipes (raise it if the engine ever loses on time). Stockfish's name; the older "
           "MoveOverhead is accepted too.", 0, 10000, aliases=("MoveOverhead",)),
    Option("SlowMover", "spin", 100, "Percent of the planned time per move the engine "
           "spends (more: deeper early moves, less left for later; the caps that keep a "
           "move from flagging hold at any value).", 10, 1000),
    Option("TimeManager", "combo", "adaptive", "adaptive: the optimum and maximum with more "
           "time for an unstable best move, more when the value falls, less when the best "
           "move holds most visits, none once the root is proven (+52 +- 37 Elo against "
           "classic, 200 games at 10+0.1); classic: the first rule only.",
           choices=("classic", "adaptive")),
    search_option("MultiPV", "multipv", "Number of principal variations reported.", 1, 500),
    Option("Ponder", "check", False, "Think on the opponent's time (the GUI decides when)."),
    Option("UCI_ShowWDL", "check", False, "Add 'wdl W D L' (per mille) to info lines. Off by "
           "default because some GUIs reject the token."),
    Option("ScoreType", "combo", "centipawn", "The scale of 'score cp': centipawn is "
           "Stockfish 15.1's (+100 is an advantage it wins about half the time; fitted on its "
           "own labels, docs/uci.md), centipawn_lc0 Leela Chess Zero's 90 tan(1.5637541897 Q), "
           "which zerochess used before.", choices=("centipawn", "centipawn_lc0")),
    Option("UCI_AnalyseMode", "check", False, "Analysis, not play (python-chess sets it for "
           "analyse()): no book move, and a movetime or clock is spent in full, without the "
           "early stops that save time in games."),
    Option("VerboseMoveStats", "check", False, "Before bestmove, one 'info string' line per "
           "root move with its visits, prior, values and exploration terms, in Leela Chess "
           "Zero's format (Nibbler and BanksiaGUI show them as a table; docs/uci.md)."),
    Option("LogLiveStats", "check", False, "The VerboseMoveStats lines with every info "
           "update, not only before bestmove."),
    Option("UCI_Chess960", "check", False, "Chess960 castling in UCI text: king takes rook "
           "(e1h1) instead of the king's two-square move (e1g1)."),
    Option("OwnBook", "check", False, "Play from the Polyglot opening book while it has moves."),
    Option("BookFile", "string", DEFAULT, "Polyglot .bin for OwnBook; <default> is the book "
           "shipped with zerochess."),
    Option("SyzygyPath", "string", "", "Directories of Syzygy endgame tablebases (.rtbw and "
           ".rtbz files), separated by ':' (';' on Windows), as Stockfish reads them; <empty> = "
           "none. A position in the tables keeps its result: at the root only the moves that "
           "keep it are searched (a win by the fastest DTZ), in the tree a position after a "
           "capture or pawn move is a proven win, draw or loss (docs/syzygy.md)."),
    Option("SyzygyProbeLimit", "spin", 7, "Probe only positions with at most this many men, "
           "kings included.", 0, 7),
    Option("Syzygy50MoveRule", "check", True, "Count the fifty-move rule as the tables do: a "
           "win that needs more than fifty moves without a capture or pawn move (a cursed "
           "win) is a draw; off: a win."),
    Option("Nodes", "spin", 0, "Fixed nodes per move, overriding the clock (0 = off); for "
           "reproducible matches.", 0, 1_000_000_000),
    Option("Temperature", "float", 0.0, "Choose the move by visit counts with this temperature "
           "instead of the most visited (variety in matches); 0 = best move.", 0.0, 10.0),
    Option("UCI_LimitStrength", "check", False, "Play at the strength UCI_Elo asks for: "
           f"fewer nodes and, below {NODE_BAND_START}, a choice among the moves the search "
           "liked, never one the search saw lose clearly or one that allows mate in one "
           "(docs/strength-limit.md)."),
    Option("UCI_Elo", "spin", STRENGTH_ELO_MAX, "The strength UCI_LimitStrength plays at, on "
           "Stockfish 15.1's UCI_Elo scale (calibrated by matches against it; below 1350, "
           "Stockfish's lowest, extrapolated). The top, 2000, sets no limit: full "
           "strength, measured at 2000 with 3,400 nodes a move; near the top a level is a "
           "node budget, which a slow machine's clock may not allow "
           "(docs/strength-limit.md).",
           STRENGTH_ELO_MIN, STRENGTH_ELO_MAX),
    search_option("CPuct", "cpuct_init", "Exploration constant c_init in c(N) = c_init + "
                  "c_factor * ln((N + c_base) / c_base).", 0.0, 100.0),
    search_option("CPuctFactor", "cpuct_factor", "Exploration growth c_factor.", 0.0, 100.0),
    search_option("CPuctBase", "cpuct_base", "Exploration growth base c_base.", 1.0, 1e9),
    search_option("FpuReduction", "fpu_reduction", "First-play urgency: an unvisited move's "
                  "value is the parent's value minus this times the square root of the visited "
                  "policy mass.", -10.0, 10.0),
    search_option("TacticalPrior", "tactical_prior", "Search: the smallest prior PUCT "
                  "gives a capture, a promotion or a check (the network's prior when larger), "
                  "so a tactical move the network overlooks still gets visits; 0 = off "
                  "(docs/search.md).", 0.0, 1.0),
    search_option("MovesLeftMaxEffect", "moves_left_max_effect", "With a network that "
                  "predicts the plies left (moves-left head), the most a move's score gains or "
                  "loses for ending the game sooner (winning side) or later (losing side), as "
                  "Lc0 does; 0 = off. No effect with a network without the head "
                  "(docs/moves-left.md).", 0.0, 1.0),
    search_option("MovesLeftThreshold", "moves_left_threshold", "The parent's abs(Q) beyond which "
                  "the moves-left term applies.", 0.0, 0.99),
    search_option("MovesLeftSlope", "moves_left_slope", "Moves-left term per ply of "
                  "difference between a move's plies left and its parent's.", 0.0, 1.0),
    search_option("MovesLeftConstantFactor", "moves_left_constant_factor", "Moves-left term "
                  "scaled by a + b abs(Q) + c Q^2: a.", -100.0, 100.0),
    search_option("MovesLeftScaledFactor", "moves_left_scaled_factor", "Moves-left Q scaling: "
                  "b.", -100.0, 100.0),
    search_option("MovesLeftQuadraticFactor", "moves_left_quadratic_factor", "Moves-left Q "
                  "scaling: c.", -100.0, 100.0),
    Option("PolicyTemperature", "float", DEFAULT_POLICY_TEMPERATURE, "Softmax temperature of "
           "the network's move priors.", 0.05, 10.0, sets="evaluator.policy_temperature"),
    Option("LogFile", "string", "", "Write diagnostics to this file (they always go to stderr)."),
)

BY_NAME: dict[str, Option] = {name.lower(): o for o in OPTIONS for name in (o.name, *o.aliases)}


@dataclass
class OptionValues:
    """Current values, looked up case-insensitively as UCI requires."""
    values: dict[str, Any] = field(default_factory=lambda: {o.name: o.default for o in OPTIONS})

    def __getitem__(self, name: str) -> Any:
        return self.values[BY_NAME[name.lower()].name]

    def set(self, name: str, text: str | None) -> Option:
        option = BY_NAME.get(name.strip().lower())
        if option is None:
            raise OptionError(f"no such option: {name!r}")
        self.values[option.name] = option.parse(text)
        return option


def flag_name(name: str) -> str:
    """An option's command-line flag, Leela Chess Zero's way: lowercase words joined by '-'
    (``WeightsFile`` -> ``--weights-file``, ``Move Overhead`` -> ``--move-overhead``,
    ``UCI_ShowWDL`` -> ``--uci-show-wdl``, ``CPuctBase`` -> ``--cpuct-base``)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return "--" + "-".join(spaced.lower().split())


def _flag_key(text: str) -> str:
    """What a flag is matched by: its letters and digits, lowercase (so ``--weights-file``,
    ``--weightsfile`` and ``--Weights_File`` all name WeightsFile)."""
    return re.sub(r"[-_ ]", "", text).lower()


BY_FLAG: dict[str, Option] = {_flag_key(name): o for o in OPTIONS for name in (o.name, *o.aliases)}


def parse_flags(argv: list[str]) -> list[tuple[Option, str]]:
    """``--name=value`` / ``--name value`` command-line flags -> [(option, value text)], in
    order, for ``OptionValues.set``; a check option may stand alone (``--ponder``: true).
    Lichess-bot passes its ``engine_options`` this way, as Leela Chess Zero reads them.
    OptionError names an unknown flag, a button, or a flag without its value."""
    settings = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, eq, value = arg[2:].partition("=")
        if not arg.startswith("--") or not name:
            raise OptionError(f"{arg!r} is not an option flag (--name=value or --name value)")
        option = BY_FLAG.get(_flag_key(name))
        if option is None:
            raise OptionError(f"no such option: --{name} (zerochess uci --help lists them)")
        if option.kind == "button":
            raise OptionError(f"--{name}: {option.name} is a button (an action), not a setting")
        if not eq:
            following = argv[i] if i < len(argv) else None
            if option.kind == "check" and (following is None
                                          or following.lower() not in ("true", "false")):
                value = "true"
            elif following is None or (following.startswith("--") and option.kind != "check"):
                raise OptionError(f"--{name} needs a value (--{name}=VALUE)")
            else:
                value, i = following, i + 1
        settings.append((option, value))
    return settings


def search_params(values: OptionValues) -> SearchParams:
    """The engine's ``SearchParams`` with every ``search.*`` option's current value."""
    return ENGINE_PARAMS.replace(**{o.sets.partition(".")[2]: values[o.name]
                                    for o in OPTIONS if o.sets.startswith("search.")})


def evaluator_settings(values: OptionValues) -> dict[str, Any]:
    """``{attribute: value}`` of the ``evaluator.*`` options: set on a loaded evaluator,
    they change its answers without reloading or re-casting the network."""
    return {o.sets.partition(".")[2]: values[o.name]
            for o in OPTIONS if o.sets.startswith("evaluator.")}


def network_settings(values: OptionValues) -> dict[str, Any]:
    """``{make_evaluator argument: value}`` of the ``network.*`` options, which choose the
    network and its runtime: a change of any of them reloads the network. ``spec`` is None
    for ``<default>``."""
    settings = {o.sets.partition(".")[2]: values[o.name]
                for o in OPTIONS if o.sets.startswith("network.")}
    if settings.get("spec") == DEFAULT:
        settings["spec"] = None
    return settings
