"""Quantization-aware training: int8 matmuls simulated in torch exactly as ONNX Runtime runs them.

A network with ``NetworkConfig.qat`` builds its encoder layers' and attention policy head's
Linears as ``Int8Linear``. Exported (``zerochess.neural.int8_export``), each of them becomes a
``MatMul`` that ONNX Runtime's ``quantize_dynamic(per_channel=True, reduce_range=True,
weight_type=QInt8)`` turns into ``DynamicQuantizeLinear`` + ``MatMulInteger`` (fused by the
runtime into ``DynamicQuantizeMatMul``). That is what this module computes in float:

* weights: per output channel (the column of the MatMul's B, the row of a torch Linear's
  weight), symmetric, zero point 0, scale = absmax / 64 (``reduce_range``: the range
  [-64, 64]; a column of zeros gets scale 1), q = round-half-even(w / scale);
* activations (``DynamicQuantizeLinear``, per call, over the whole input tensor, every
  position of the batch together): the range [min(x, 0), max(x, 0)] mapped onto uint8 0..255,
  scale = (max - min) / 255 (1 when the range is empty), zero point = round-half-even of
  -min / scale saturated to 0..255, q = saturate(round-half-even(x / scale) + zero point);
* the product: integer sums of (qx - zx) qw, times scale_x scale_w, plus the fp32 bias.

Why reduce_range: x86 CPUs without VNNI multiply uint8 by int8 with ``vpmaddubsw``, whose
int16 sum of two products saturates for 255 x 127 + 255 x 127; with weights in [-64, 64] two
products sum to at most 32,640 and no CPU saturates, so the int8 graph computes what this
module does on every CPU, not only on those with VNNI.

Gradients pass the rounding straight through (the straight-through estimator): the forward
sees int8's values, the backward treats the rounding as the identity. Neither range clips
(both come from the tensor's own extremes), so there is no clipping gradient to mask.
The activation's scale depends on every position of the batch, as ONNX Runtime's does: an
output of the int8 graph is exact only against this module run on the same batch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

#: ``reduce_range`` int8 weights: symmetric, [-64, 64] (quant_utils' reduced INT8 range).
WEIGHT_QMAX = 64
#: ``DynamicQuantizeLinear``'s uint8 range.
ACT_QMAX = 255


def _straight_through(x: torch.Tensor, rounded: torch.Tensor) -> torch.Tensor:
    """``rounded``'s values with ``x``'s gradient."""
    return x + (rounded - x).detach()


def int8_weight(w: torch.Tensor) -> torch.Tensor:
    """(out, in) weight -> its int8 values times their per-row scales (dequantized)."""
    absmax = w.detach().abs().amax(dim=1, keepdim=True)  # (out, 1)
    # ORT: (absmax - -absmax) / (64 - -64) in float64, stored as float32: absmax / 64 exactly
    scale = absmax / WEIGHT_QMAX
    scale = torch.where(scale < torch.finfo(torch.float32).tiny, torch.ones_like(scale), scale)
    q = torch.round(w.detach() / scale).clamp_(-128, 127)
    return _straight_through(w, q * scale)


def uint8_activation(x: torch.Tensor) -> torch.Tensor:
    """x -> what ``DynamicQuantizeLinear`` makes of it, dequantized (one scale for all of x)."""
    d = x.detach()
    lo, hi = d.min().clamp(max=0), d.max().clamp(min=0)
    scale = (hi - lo) / ACT_QMAX
    scale = torch.where(hi == lo, torch.ones_like(scale), scale)
    zero = torch.round((0 - lo / scale).clamp(0, ACT_QMAX))
    q = (torch.round(d / scale) + zero).clamp_(0, ACT_QMAX)
    return _straight_through(x, (q - zero) * scale)


class Int8Linear(nn.Linear):
    """An ``nn.Linear`` whose matmul is simulated int8 (module docstring) while ``fake_quant``
    is on; its parameters and their names are a Linear's, so checkpoints load either way.

    ``fake_quant`` off, it is a plain Linear: the export traces the fp32 graph from it and
    the quantizer then makes that graph's MatMul int8. Always computed in fp32 (autocast
    off): bf16 inputs would round before the simulated int8 does; the output goes back to
    the input's dtype."""

    fake_quant: bool = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.fake_quant:
            return super().forward(x)
        dtype = x.dtype
        with torch.autocast(x.device.type, enabled=False):
            y = F.linear(uint8_activation(x.float()), int8_weight(self.weight.float()),
                         None if self.bias is None else self.bias.float())
        return y.to(dtype)  # what a Linear of this dtype returns


def int8_linears(model: nn.Module) -> list[str]:
    """Names of ``model``'s ``Int8Linear`` modules, in module order."""
    return [name for name, m in model.named_modules() if isinstance(m, Int8Linear)]


def set_fake_quant(model: nn.Module, on: bool) -> None:
    """Switch every ``Int8Linear`` of ``model`` between simulated int8 and plain fp32."""
    for m in model.modules():
        if isinstance(m, Int8Linear):
            m.fake_quant = on
