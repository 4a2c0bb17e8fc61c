"""The WDL-to-value convention training uses (train/losses.wdl_value), for network outputs and
targets alike."""

import torch

from zerochess.chess.layout import POLICY_SIZE
from zerochess.train.losses import LossWeights, MetricSums, wdl_value


def test_value_is_win_minus_loss_for_probabilities_and_classes():
    probs = torch.tensor([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    torch.testing.assert_close(wdl_value(probs), torch.tensor([0.3, -1.0, 0.0]))
    torch.testing.assert_close(wdl_value(torch.tensor([0, 1, 2])), torch.tensor([-1.0, 0.0, 1.0]))


def test_the_value_metric_applies_the_same_convention_to_the_network_and_the_target():
    wdl_logits = torch.log(torch.tensor([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]]))  # softmax: these
    target = torch.tensor([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    legal = torch.zeros(2, POLICY_SIZE, dtype=torch.bool)
    move = torch.tensor([12, 796])
    legal[0, 12] = legal[1, 796] = True
    sums = MetricSums(LossWeights())
    sums.update(torch.zeros(2, POLICY_SIZE), wdl_logits, move, target, legal, torch.zeros(2))
    want = ((0.6 - 1.0) ** 2 + (-0.5 - -0.5) ** 2) / 2  # (0.7 - 0.1) vs 1; (0.1 - 0.6) vs -0.5
    assert abs(sums.result()["value_mse"] - want) < 1e-6
