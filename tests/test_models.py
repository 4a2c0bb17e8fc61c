"""The model factory: the config names the architecture, build_model is the only constructor."""

import sys
import types

import pytest
import torch
from torch import nn

from zerochess.neural import network
from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint
from zerochess.chess.layout import POLICY_SIZE, SEQ_LEN
from zerochess.neural.models.transformer import ChessTransformer
from zerochess.neural.network import NetworkConfig, PolicyValueModel, architectures, build_model


def test_the_transformer_is_the_default_and_old_configs_load_as_one():
    assert "transformer" in architectures()
    old = NetworkConfig.preset("tiny").to_dict()
    del old["architecture"]                      # a checkpoint saved before the field existed
    cfg = NetworkConfig.from_dict(old)
    assert cfg.architecture == "transformer"
    model = build_model(cfg)
    assert isinstance(model, ChessTransformer) and isinstance(model, PolicyValueModel)


def test_an_unknown_architecture_is_refused():
    with pytest.raises(ValueError, match="unknown architecture"):
        NetworkConfig(architecture="resnet")


def test_the_model_names_its_heads_and_its_fp32_parts():
    model = build_model(NetworkConfig.preset("tiny"))
    heads = model.head_modules()
    assert set(heads) == {"policy", "value"}
    assert heads["policy"] is model.policy_head and heads["value"] is model.value_head
    assert model.fp32_modules() == [model.norm, model.policy_head, model.value_head]


class _Toy(PolicyValueModel):
    """The smallest architecture: a bag of token embeddings into two linear heads."""

    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.policy = nn.Linear(cfg.d_model, cfg.policy_size)
        self.value = nn.Linear(cfg.d_model, 3)

    def forward(self, tokens, legal_only=False):
        x = self.embed(tokens.long()).mean(dim=1)
        return self.policy(x), self.value(x)

    def head_modules(self):
        return {"policy": self.policy, "value": self.value}


def test_one_module_and_a_preset_add_an_architecture(monkeypatch, tmp_path):
    module = types.ModuleType("zerochess.neural.models.toy")
    module.Model = _Toy
    monkeypatch.setitem(sys.modules, "zerochess.neural.models.toy", module)
    monkeypatch.setattr(network, "architectures", lambda: ("toy", "transformer"))
    monkeypatch.setitem(network.PRESETS, "toy", NetworkConfig(architecture="toy", d_model=16))
    cfg = NetworkConfig.preset("toy")
    model = build_model(cfg)
    assert isinstance(model, _Toy) and model.fp32_modules() == [model.policy, model.value]
    policy, wdl = model(torch.zeros(2, SEQ_LEN, dtype=torch.uint8))
    assert policy.shape == (2, POLICY_SIZE) and wdl.shape == (2, 3)
    # the architecture travels in the checkpoint
    path = save_checkpoint(tmp_path / "toy.pt", model)
    loaded, _ = load_checkpoint(path)
    assert isinstance(loaded, _Toy) and loaded.config == cfg
    assert network.param_count(cfg) == sum(p.numel() for p in model.parameters())
