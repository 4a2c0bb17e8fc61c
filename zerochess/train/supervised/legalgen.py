"""The seed's move-generation test (§1.6.1): let the network play and count illegal moves.

Sampling from the legal-masked policy can never pick an illegal move; the seed's test
checks exactly that (its expected answer is 0%). The informative number is how often the
*raw* policy, sampled without the mask, would have picked an illegal move, which is what
``raw_illegal_rate`` reports. The games continue with the masked sample so that they
reach the middlegame positions the network will meet in search.

It uses its own torch.Generator so that running it never shifts the training RNG (which
exact resume depends on).
"""

from __future__ import annotations

import numpy as np
import torch

from zerochess.chess import Board, encode_board, index_to_move, legal_move_indices
from zerochess.chess.threats import network_tokens


@torch.no_grad()
def legal_generation_test(model: torch.nn.Module, n_games: int = 100, n_moves: int = 50,
                          seed: int = 0, device: str | torch.device = "cpu") -> dict[str, float]:
    """Play ``n_games`` games of up to ``n_moves`` plies, all games batched per ply.

    Returns masked_illegal_rate (must be 0), raw_illegal_rate and the moves played.
    """
    gen = torch.Generator(device="cpu").manual_seed(seed)
    was_training = model.training
    model.eval()
    boards = [Board() for _ in range(n_games)]
    total = raw_illegal = masked_illegal = 0
    for _ in range(n_moves):
        active = [b for b in boards if not b.is_game_over()]
        if not active:
            break
        tokens = network_tokens(np.stack([encode_board(b) for b in active]),
                                model.config.threat_inputs)  # version 2 if it reads them
        tokens = torch.from_numpy(tokens).to(device)
        logits, _ = model(tokens)
        logits = logits.float().cpu()  # (B, P)
        legal = torch.zeros_like(logits, dtype=torch.bool)
        for i, b in enumerate(active):
            legal[i, torch.from_numpy(legal_move_indices(b).astype(np.int64))] = True
        raw = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)[:, 0]
        raw_illegal += int((~legal.gather(1, raw[:, None])).sum())
        masked = torch.multinomial(torch.softmax(logits.masked_fill(~legal, float("-inf")), -1),
                                   1, generator=gen)[:, 0]
        for b, idx in zip(active, masked.tolist()):
            try:
                b.push_uci(index_to_move(b, idx))
            except ValueError:
                masked_illegal += 1
                b.push_uci(b.legal_moves()[0])
        total += len(active)
    model.train(was_training)
    return {"masked_illegal_rate": masked_illegal / max(total, 1),
            "raw_illegal_rate": raw_illegal / max(total, 1), "moves": total}
