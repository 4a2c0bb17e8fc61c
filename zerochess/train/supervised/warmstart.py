"""The network a run starts from: a preset's fresh weights, or a checkpoint's, grown.

A warm start (``init_from``) takes a checkpoint's weights and architecture; the growth
options then add what it lacks, each so that the grown network computes exactly what the
checkpoint did and training adds only what the new parts learn (Net2Net's
function-preserving growth, ``zerochess.neural.models.transformer.grow`` and ``deepen``):

* ``attention_bias`` True: learnt square-to-square attention biases, at zero;
* ``value_squares`` K: the value head's spatial path, its last map at zero;
* ``threat_inputs`` True: the threat embedding of the squares' attack flags, at zero;
* ``moves_left`` True: the moves-left head, which reads the trunk and feeds nothing back
  (policy and value unchanged whatever its initial weights);
* ``smolgen`` G: attention biases generated from the position, their shared matrix at zero;
* ``n_layers`` N: encoder layers appended up to N, their output projections at zero.

That is how r4 grew from r3 (docs/teacher.md). Options that would remove parameters
(fewer layers, dropping the biases or the value path) are refused with the reason.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from zerochess.neural.checkpoint import load_checkpoint
from zerochess.neural.network import NetworkConfig, PolicyValueModel, build_model
from zerochess.train.supervised.config import SuperviseConfig

#: Names ``init_from`` (and ``train evaluate``) accept besides a path: the networks shipped
#: in the package, named as the engine's ``WeightsFile`` option names them.
SHIPPED_NAMES = ("default", "zero")


def network_path(spec: str) -> Path:
    """The checkpoint file ``spec`` names: "default" (the shipped network), "zero" (the
    shipped network that learnt from the rules alone) or a path (the rule of
    ``zerochess.neural.backends.load_network_spec``)."""
    if spec in SHIPPED_NAMES:
        from zerochess.neural.api import shipped_network_path

        return shipped_network_path(spec)
    return Path(spec)


def _overrides(cfg: SuperviseConfig, names: tuple[str, ...]) -> dict:
    return {k: getattr(cfg, k) for k in names if getattr(cfg, k) is not None}


def network_config(cfg: SuperviseConfig) -> NetworkConfig:
    """The architecture of a run from scratch: the preset, with the config's overrides."""
    return NetworkConfig.preset(cfg.preset, **_overrides(
        cfg, ("policy_head", "dropout", "reach_mask", "attention_bias", "value_squares",
              "threat_inputs", "moves_left", "smolgen", "qat", "n_layers")))


def grown(model: PolicyValueModel, cfg: SuperviseConfig, source: str) -> PolicyValueModel:
    """``model`` with what ``cfg`` adds to it (module docstring); ``source`` names the
    checkpoint in error messages."""
    net = model.config
    changes, layers = {}, None
    if cfg.attention_bias is not None and cfg.attention_bias != net.attention_bias:
        if not cfg.attention_bias:
            raise ValueError(f"{source} has learnt attention biases; attention_bias false "
                             "would drop them (leave it unset)")
        changes["attention_bias"] = True
    if cfg.value_squares is not None and cfg.value_squares != net.value_squares:
        if net.value_squares:
            raise ValueError(f"{source} has a spatial value path of {net.value_squares} "
                             f"channels; value_squares {cfg.value_squares} would replace it "
                             "(leave it unset)")
        changes["value_squares"] = cfg.value_squares
    if cfg.threat_inputs is not None and cfg.threat_inputs != net.threat_inputs:
        if not cfg.threat_inputs:
            raise ValueError(f"{source} reads threat inputs; threat_inputs false would drop "
                             "its threat embedding (leave it unset)")
        changes["threat_inputs"] = True
    if cfg.moves_left is not None and cfg.moves_left != net.moves_left:
        if not cfg.moves_left:
            raise ValueError(f"{source} has a moves-left head; moves_left false would drop "
                             "it (leave it unset)")
        changes["moves_left"] = True
    if cfg.smolgen is not None and cfg.smolgen != net.smolgen:
        if net.smolgen:
            raise ValueError(f"{source} has smolgen of gen width {net.smolgen}; smolgen "
                             f"{cfg.smolgen} would replace it (leave it unset)")
        changes["smolgen"] = cfg.smolgen
    if cfg.n_layers is not None and cfg.n_layers != net.n_layers:
        if cfg.n_layers < net.n_layers:
            raise ValueError(f"{source} has {net.n_layers} layers; n_layers {cfg.n_layers} "
                             "would drop some (growth only adds)")
        layers = cfg.n_layers
    if (changes or layers) and net.architecture != "transformer":
        raise ValueError(f"growing ({', '.join([*changes, *(['n_layers'] if layers else [])])}) "
                         f"is for transformers; {source} is a {net.architecture}")
    from zerochess.neural.models.transformer import deepen, grow

    if layers:
        model = deepen(model, layers)
    if changes:
        model = grow(model, **changes)
    return model


def initial_model(cfg: SuperviseConfig) -> PolicyValueModel:
    """The network a run starts from: fresh weights from the preset (seeded by the caller),
    or ``cfg.init_from``'s weights and architecture, grown as ``cfg`` asks (a
    CheckpointError names a bad file, a ValueError a growth that would remove parameters)."""
    if cfg.init_from is None:
        return build_model(network_config(cfg))
    model, _ = load_checkpoint(network_path(cfg.init_from))
    model = grown(model, cfg, cfg.init_from)
    net_cfg = replace(model.config, **_overrides(cfg, ("dropout", "reach_mask", "qat")))
    if net_cfg != model.config:
        warm = build_model(net_cfg)
        warm.load_state_dict(model.state_dict())
        model = warm
    return model
