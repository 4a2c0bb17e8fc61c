"""The network file the engine plays from: an ONNX model that carries what the engine must
know about it, so that playing needs ONNX Runtime and never the torch checkpoint.

Written by ``zerochess export CHECKPOINT OUT.onnx`` (``zerochess.neural.export``) from a ``.pt``
checkpoint; read by ``read_onnx_network`` with onnxruntime alone (no torch, no ``onnx``).

The graph: input ``tokens`` uint8 [batch, 72] (``zerochess.chess.encoding``; version 2,
``zerochess.chess.threats``, for a network with threat inputs), outputs
``policy`` float32 [batch, 4168] (logits; only legal moves' are meaningful) and ``wdl``
float32 [batch, 3] (probabilities, loss/draw/win from the side to move), and for a network
with a moves-left head (its config says ``"moves_left": true``) a third, ``moves_left``
float32 [batch] (plies the game has left from the position). Its
``metadata_props`` (strings; JSON where structured):

    format             "zerochess-network-onnx"   tells our files from any other ONNX model
    format_version     "1"                        bumped on any incompatible change
    encoding           ENCODING                   the input tokens' layout: ENCODING, or
                       ENCODING_THREATS           for a network with threat inputs (whose
                                                  evaluators call threats.add_threats first)
    policy_layout      POLICY_LAYOUT              the policy indices' meaning
    policy_size        "4168"
    seq_len            "72"
    config             JSON NetworkConfig.to_dict() of the exported network
    training           JSON metadata of the checkpoint (step, data, validation figures...)
    source_sha256      SHA-256 of the checkpoint file it was exported from
    zerochess_version  the package that exported it
    probe              JSON {"wdl": [[l, d, w] x K], "legal_logits": [[...] x K]}: torch's
                       fp32 outputs on ``PROBE_FENS`` at export (and "moves_left": [K
                       plies] with the head); the reader checks the file still gives
                       them (a damaged or altered file is refused); for a
                       quantization-aware network (config "qat": true), torch's
                       simulated-int8 outputs, which its int8 graph reproduces to
                       ``probe_tolerances(int8=True)``
    int8               only in a QAT network's file, whose weight matmuls of the encoder
                       layers and policy head are int8: JSON {"scheme": how they are
                       quantized, "linears": which} (zerochess/neural/int8_export.py)

Every failure to read raises ``CheckpointError`` naming the file and the problem.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from zerochess.neural.errors import CheckpointError

__all__ = ["FORMAT", "FORMAT_VERSION", "ENCODING", "ENCODING_THREATS", "POLICY_LAYOUT",
           "PROBE_FENS", "OnnxNetwork", "encoding_name", "read_onnx_network", "probe_tokens",
           "probe_legal", "probe_tolerances", "session_options"]

FORMAT = "zerochess-network-onnx"
FORMAT_VERSION = 1
#: The input layout (the table in zerochess/chess/encoding.pyx); renamed when it changes.
ENCODING = "zerochess-tokens-72-v1"
#: Version 2: version 1 with threat flags in the square tokens (zerochess/chess/threats.pyx),
#: what a network with ``NetworkConfig.threat_inputs`` reads.
ENCODING_THREATS = "zerochess-tokens-72-v2-threats"
#: The policy index layout: from*64+to, then 72 underpromotions, in the mover's frame.
POLICY_LAYOUT = "from64-to-then-underpromotions-4168-v1"

#: Positions whose outputs are recorded at export and checked at every load.
PROBE_FENS = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - 3 3",
)
#: fp32 with another summation order differs by ~1e-5: far below what moves a prior (or a
#: ply of the moves-left head's prediction).
LOGIT_TOLERANCE, WDL_TOLERANCE, PLIES_TOLERANCE = 1e-3, 1e-4, 1e-2
#: An int8 file (a QAT network's) against torch's simulation of it: those fp32 differences
#: move a few activations' uint8 codes by one step, and each moved code moves what follows
#: (docs/network.md, "Quantization-aware training"): measured up to 0.17 on a probe logit
#: and 6e-4 on a WDL of a trained QAT network. Still far below what a damaged file moves.
INT8_LOGIT_TOLERANCE, INT8_WDL_TOLERANCE, INT8_PLIES_TOLERANCE = 0.5, 2e-2, 0.5


def probe_tolerances(int8: bool) -> tuple[float, float, float]:
    """(logit, WDL, plies) tolerances of the probe check: the int8 ones for an int8 file."""
    if int8:
        return INT8_LOGIT_TOLERANCE, INT8_WDL_TOLERANCE, INT8_PLIES_TOLERANCE
    return LOGIT_TOLERANCE, WDL_TOLERANCE, PLIES_TOLERANCE


def encoding_name(threat_inputs: bool) -> str:
    """The ``encoding`` a network reads: ENCODING_THREATS with threat inputs, else ENCODING."""
    return ENCODING_THREATS if threat_inputs else ENCODING


def probe_tokens(threat_inputs: bool = False) -> np.ndarray:
    """The tokens of ``PROBE_FENS`` as a network reads them: uint8 [K, 72], version 2 for
    one with threat inputs."""
    from zerochess.chess.board import Board
    from zerochess.chess.encoding import encode_board
    from zerochess.chess.threats import network_tokens

    tokens = np.stack([encode_board(Board(fen)) for fen in PROBE_FENS]).astype(np.uint8)
    return network_tokens(tokens, threat_inputs)


def probe_legal() -> list[np.ndarray]:
    """The policy indices of each probe position's legal moves."""
    from zerochess.chess.board import Board
    from zerochess.chess.encoding import legal_move_indices

    return [np.asarray(legal_move_indices(Board(fen)), np.int64) for fen in PROBE_FENS]


@dataclass
class OnnxNetwork:
    """A read and checked ``.onnx`` network with an onnxruntime session ready to run.

    Attributes:
        source: the file it came from.
        session: the ``onnxruntime.InferenceSession`` (``threads`` intra-op threads).
        config: the network's config as a plain dict (``NetworkConfig.to_dict()``).
        metadata: provenance: ``training`` (the checkpoint's metadata), ``source_sha256``,
            ``zerochess_version``, and for an int8 file ``int8`` (which matmuls, how).
        policy_size, seq_len: the encoding contract it was built for.
        threat_inputs: it reads version-2 tokens (its ``encoding`` is ENCODING_THREATS):
            its evaluator turns the search's tokens into them (``threats.add_threats``).
        moves_left: it has a moves-left head, the graph's third output ``moves_left``.
    """

    source: str
    session: object
    config: dict
    metadata: dict = field(default_factory=dict)
    policy_size: int = 0
    seq_len: int = 0
    threat_inputs: bool = False
    moves_left: bool = False


def session_options(threads: int | None):
    """The engine's onnxruntime settings: all graph optimisations, one op at a time,
    ``threads`` intra-op threads (None: onnxruntime's default), idle threads sleeping."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = int(threads) if threads else 0
    # Idle pool threads sleep instead of spinning: between batches the search's own
    # thread needs the core (and a GUI may run two engines). Measured with 2 threads on
    # the shared 2-core machine: 1.2-1.7x the positions/s of spinning, 1.7x the nodes/s.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # errors only: stdout and stderr belong to UCI
    return options


def _props(session) -> dict[str, str]:
    return dict(session.get_modelmeta().custom_metadata_map)


def _json(props: dict, key: str, path) -> object:
    try:
        return json.loads(props[key])
    except (KeyError, ValueError) as exc:
        raise CheckpointError(path, f"missing or malformed {key!r} metadata") from exc


def _check_contract(props: dict, session, path) -> tuple[int, int, bool, bool]:
    """The file's format, encoding and graph signature against this zerochess's; returns
    (policy_size, seq_len, whether it reads threat inputs, whether it has a moves-left head)."""
    from zerochess.chess.encoding import POLICY_SIZE, SEQ_LEN

    if props.get("format") != FORMAT:
        raise CheckpointError(path, "an ONNX model, but not a zerochess network (no "
                              f"format={FORMAT!r} in its metadata)")
    if props.get("format_version") != str(FORMAT_VERSION):
        raise CheckpointError(path, f"format version {props.get('format_version')!r}; this "
                              f"zerochess reads version {FORMAT_VERSION}")
    if props.get("encoding") not in (ENCODING, ENCODING_THREATS):
        raise CheckpointError(path, f"encoding {props.get('encoding')!r} is not one this "
                              f"zerochess reads ({ENCODING!r}, {ENCODING_THREATS!r})")
    threat_inputs = props["encoding"] == ENCODING_THREATS
    config = _json(props, "config", path)
    if not isinstance(config, dict) or bool(config.get("threat_inputs", False)) != threat_inputs:
        raise CheckpointError(path, f"its config's threat_inputs does not match its encoding "
                              f"{props['encoding']!r}")
    expected = {"policy_layout": POLICY_LAYOUT,
                "policy_size": str(POLICY_SIZE), "seq_len": str(SEQ_LEN)}
    for key, value in expected.items():
        if props.get(key) != value:
            raise CheckpointError(path, f"{key} {props.get(key)!r} is not this zerochess's {value!r}")
    moves_left = bool(config.get("moves_left", False))
    inputs = [(i.name, i.type, i.shape[1:]) for i in session.get_inputs()]
    outputs = [(o.name, o.type, o.shape[1:]) for o in session.get_outputs()]
    expected_outputs = [("policy", "tensor(float)", [POLICY_SIZE]), ("wdl", "tensor(float)", [3])]
    if moves_left:
        expected_outputs.append(("moves_left", "tensor(float)", []))
    if inputs != [("tokens", "tensor(uint8)", [SEQ_LEN])] or outputs != expected_outputs:
        raise CheckpointError(path, f"graph inputs {inputs} and outputs {outputs} are not a "
                              "zerochess network's" + (" with a moves-left head (its config "
                                                       "says it has one)" if moves_left else ""))
    return POLICY_SIZE, SEQ_LEN, threat_inputs, moves_left


def _check_probe(session, props: dict, path, threat_inputs: bool, moves_left: bool) -> None:
    """Run the probe positions; refuse a file whose outputs are not the recorded ones."""
    probe = _json(props, "probe", path)
    try:
        logits, wdl, *plies = session.run(None, {"tokens": probe_tokens(threat_inputs)})
    except Exception as exc:  # onnxruntime's own types
        raise CheckpointError(path, f"onnxruntime cannot run it: {_first_line(exc)}") from exc
    try:
        want_wdl = np.asarray(probe["wdl"], np.float32)
        want_logits = [np.asarray(x, np.float32) for x in probe["legal_logits"]]
        want_plies = np.asarray(probe["moves_left"], np.float32) if moves_left else None
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(path, "malformed 'probe' metadata") from exc
    legal = probe_legal()
    logit_tol, wdl_tol, plies_tol = probe_tolerances("int8" in props)
    same = (want_wdl.shape == wdl.shape and len(want_logits) == len(legal)
            and np.allclose(wdl, want_wdl, atol=wdl_tol)
            and all(w.shape == i.shape and np.allclose(logits[k, i], w, rtol=LOGIT_TOLERANCE,
                                                       atol=logit_tol)
                    for k, (w, i) in enumerate(zip(want_logits, legal))))
    if moves_left:
        same = same and (want_plies.shape == plies[0].shape
                         and np.allclose(plies[0], want_plies, rtol=LOGIT_TOLERANCE,
                                         atol=plies_tol))
    if not same:
        raise CheckpointError(path, "its outputs differ from those recorded at export "
                              "(a damaged or altered file)")


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def read_onnx_network(path: str | os.PathLike, threads: int | None = None,
                      data: bytes | None = None) -> OnnxNetwork:
    """Read, check and open the ``.onnx`` network at ``path`` (``data``: its bytes, already
    read) with ``threads`` intra-op threads. Raises ``CheckpointError`` for a missing,
    empty, truncated or foreign file, one of another format version or encoding, and one
    whose outputs are not those recorded at export."""
    import onnxruntime as ort

    if data is None:
        path = Path(path)
        if not path.is_file():
            raise CheckpointError(path, "no such file")
        data = path.read_bytes()
    if not data:
        raise CheckpointError(path, "empty file")
    try:
        session = ort.InferenceSession(data, session_options(threads),
                                       providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own types for a bad model
        raise CheckpointError(path, "not an ONNX model onnxruntime can load (truncated or "
                              f"corrupt?): {_first_line(exc)}") from exc
    props = _props(session)
    policy_size, seq_len, threat_inputs, moves_left = _check_contract(props, session, path)
    _check_probe(session, props, path, threat_inputs, moves_left)
    metadata = {"training": _json(props, "training", path),
                "source_sha256": props.get("source_sha256"),
                "zerochess_version": props.get("zerochess_version")}
    if "int8" in props:
        metadata["int8"] = _json(props, "int8", path)
    return OnnxNetwork(str(path), session, _json(props, "config", path), metadata,
                       policy_size, seq_len, threat_inputs, moves_left)
