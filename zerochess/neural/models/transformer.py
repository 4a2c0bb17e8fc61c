"""The "transformer" architecture: the engine's policy/value network (``ChessTransformer``).

Shape of the network (seed §1.4, with Leela Chess Zero's attention policy as an option)::

    tokens (B, 72) uint8
      -> token embedding + position embedding       (B, T, C)
           squares 0..63: rank_embed[s // 8] + file_embed[s % 8]  (factored: a1 and a2
           share a file vector without learning it); tokens 64..71: one flag embedding each
           threat_inputs only: version-2 tokens t (threats.pyx), the token embedding of
           t % 44 plus, on the squares, threat_embed[t // 44] (attacked / defended flags)
      -> n_layers pre-norm encoder layers (fused QKV, scaled_dot_product_attention, GELU MLP;
           optionally a learnt square-to-square bias on each head's attention logits, and
           smolgen's bias generated from the position)
      -> final LayerNorm                            (B, T, C)
      -> value head on the mean-pooled tokens       (B, 3) loss/draw/win logits
      -> moves_left only: moves-left head on the mean-pooled tokens  (B,) plies left, >= 0
      -> policy head                                (B, POLICY_SIZE) logits
           "pooled":    MLP on the mean-pooled tokens (the seed's head)
           "attention": from-square queries x to-square keys over the 64 square tokens, plus
                        under-promotion offsets from the rank-8 keys (Lc0's attention policy)

The encoder layer is written out rather than using ``nn.TransformerEncoder`` so that the
layout stays (B, T, C) end to end with one fused QKV matmul and no per-layer transposes
beyond the head split SDPA needs; that is where eager ``nn.TransformerEncoder`` loses speed.
"""

from __future__ import annotations

import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn

from zerochess.neural.fake_quant import Int8Linear
from zerochess.chess.layout import (N_FROM_TO, N_SQUARES, N_THREAT_FLAGS, N_UNDERPROMOTIONS,
                                     VOCAB_SIZE)
from zerochess.neural.network import NetworkConfig, PolicyValueModel


def reach_table() -> torch.Tensor:
    """(VOCAB_SIZE, 64, 64) bool: square token t on square f may move to square s on an empty
    board, in the mover's frame (own pawns move up; castling is the king's e1-g1/e1-c1).
    Only own-piece tokens 1..6 (P N B R Q K, zerochess.chess.encoding) have any move."""
    table = torch.zeros(VOCAB_SIZE, N_SQUARES, N_SQUARES, dtype=torch.bool)
    for f in range(N_SQUARES):
        r, c = divmod(f, 8)
        for s in range(N_SQUARES):
            r2, c2 = divmod(s, 8)
            dr, dc = r2 - r, c2 - c
            if f == s:
                continue
            line, diagonal = dr == 0 or dc == 0, abs(dr) == abs(dc)
            table[1, f, s] = (dr == 1 and abs(dc) <= 1) or (r == 1 and dr == 2 and dc == 0)
            table[2, f, s] = {abs(dr), abs(dc)} == {1, 2}
            table[3, f, s] = diagonal
            table[4, f, s] = line
            table[5, f, s] = line or diagonal
            table[6, f, s] = max(abs(dr), abs(dc)) == 1 or (f == 4 and s in (2, 6))
    return table


def underpromotion_tables() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """For each of the 72 under-promotion indices: from-square, to-square, piece.

    Index 4096 + (from_file * 3 + (to_file - from_file + 1)) * 3 + piece, always rank 7 -> 8
    in the mover's frame. Off-board to-files (a-file capturing left, h-file right) are
    clamped: those indices are never legal, so their logits only need to exist.
    """
    frm, to, piece = [], [], []
    for from_file in range(8):
        for direction in range(3):
            to_file = min(max(from_file + direction - 1, 0), 7)
            for p in range(3):
                frm.append(48 + from_file)
                to.append(56 + to_file)
                piece.append(p)
    return torch.tensor(frm), torch.tensor(to), torch.tensor(piece)


def _cpu_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                   bias: torch.Tensor | None = None, scale: float | None = None) -> torch.Tensor:
    """softmax(q k^T / sqrt(D) + bias) v with plain batched matmuls, for CPU inference.

    At T = 72 and D = 32 the CPU flash-attention kernel behind scaled_dot_product_attention
    (tiled for long sequences) is slower than two bmm calls and a softmax: measured 1.4x
    in fp32 and 1.8x in bf16 on the attention alone, which was 13% (fp32) and 32% (bf16)
    of the small network's inference time. Same maths; training keeps SDPA (fused dropout,
    memory-efficient backward), and a test checks both paths agree.

    ``scale``: 1/sqrt(D) as a Python number (the layer passes it). Computed from ``q.shape``
    while tracing, it becomes four ONNX ops (Shape, Gather, Cast, Pow) and a Mul over every
    attention logit that ONNX Runtime cannot fold; a constant is folded into the matmul
    (its FusedMatMul alpha). With D = 16 the scale is 0.25, a power of two: folded or not,
    the logits are bit for bit the same.
    """
    if scale is None:
        scale = q.shape[-1] ** -0.5
    att = torch.matmul(q.contiguous(), k.transpose(-2, -1).contiguous())  # (B, H, T, T)
    att = att.mul_(scale)
    if bias is not None:
        att = att.add_(bias)  # (H, T, T) broadcast over the batch, or smolgen's (B, H, T, T)
    att = att.softmax(dim=-1)
    return torch.matmul(att, v.contiguous())  # (B, H, T, D)


def matmul_linear(cfg: NetworkConfig) -> type[nn.Linear]:
    """The Linear class of the matmuls that ``cfg.qat`` makes int8: ``Int8Linear`` (simulated
    int8, zerochess/neural/fake_quant.py) with it, ``nn.Linear`` without. Only Linears applied
    to (B, T, C) tokens take it: they export as ``MatMul``, what ONNX Runtime's dynamic
    quantizer makes int8 (bench_int8.py measured those the fast ones); the value head's small
    Linears on the pooled vector (``Gemm``) stay fp32. Same parameters and initialisation
    either way, so a checkpoint loads into both."""
    return Int8Linear if cfg.qat else nn.Linear


def linear_rows(cfg: NetworkConfig, t: int) -> tuple[int, ...]:
    """The shape the Linears of ``t`` tokens a position read their input in: ``(-1, C)``,
    every token of the batch one row, so that each Linear exports as one ``Gemm`` with its
    bias fused in (as (B, T, C) it is a batched ``MatMul`` and a separate bias ``Add``:
    ONNX Runtime took 1.13x the time with the tiny network at the engine's batch of 8, the
    same outputs to 5e-5; docs/network.md); ``(-1, t, C)`` for a quantization-aware
    network, whose int8 export rewrites ``MatMul`` nodes (``matmul_linear``)."""
    return (-1, t, cfg.d_model) if cfg.qat else (-1, cfg.d_model)


#: Smolgen's channels per token: what each layer keeps of a token (d_model wide) before the
#: 72 tokens are flattened into one vector of the position.
SMOLGEN_COMPRESS = 8


class SmolgenLayer(nn.Module):
    """One layer's part of smolgen: its normalised tokens (B*T, C) -> one gen vector per head
    (B*H, G). Compress every token to ``SMOLGEN_COMPRESS`` channels, flatten the position's
    72 x 8, then Linear -> GELU -> LayerNorm to d_model, and Linear -> GELU to H x G, each
    head's G normalised (Lc0's smolgen with our sizes)."""

    def __init__(self, cfg: NetworkConfig) -> None:
        super().__init__()
        K, T = SMOLGEN_COMPRESS, cfg.seq_len
        self.flat, self.gen = T * K, cfg.smolgen  # Python ints: graph constants
        self.compress = nn.Linear(cfg.d_model, K, bias=False)
        self.hidden = nn.Linear(T * K, cfg.d_model)
        self.hidden_norm = nn.LayerNorm(cfg.d_model)
        self.heads = nn.Linear(cfg.d_model, cfg.n_heads * cfg.smolgen)
        self.gen_norm = nn.LayerNorm(cfg.smolgen)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        z = self.compress(h).reshape(-1, self.flat)  # (B, T*K): the position, flattened
        z = self.hidden_norm(F.gelu(self.hidden(z)))  # (B, C)
        return self.gen_norm(F.gelu(self.heads(z)).reshape(-1, self.gen))  # (B*H, G)


class Smolgen(nn.Module):
    """Attention-logit biases generated from the position (Leela Chess Zero's smolgen,
    ``NetworkConfig.smolgen``): per layer a ``SmolgenLayer``, and one G -> T*T matrix shared
    by every layer and head that turns a head's gen vector into its (T, T) bias.

    The shared matrix starts at zero: every bias is then 0, and a network with smolgen
    computes what the same network without it does (``grow``). Its gradient is not zero
    (the gen vectors are LayerNorm outputs), so it learns from the first step, and the
    layers' parts get gradients once it has moved."""

    def __init__(self, cfg: NetworkConfig) -> None:
        super().__init__()
        self.n_heads, self.seq_len = cfg.n_heads, cfg.seq_len
        self.layers = nn.ModuleList(SmolgenLayer(cfg) for _ in range(cfg.n_layers))
        self.shared = nn.Linear(cfg.smolgen, cfg.seq_len * cfg.seq_len, bias=False)

    def forward(self, h: torch.Tensor, index: int) -> torch.Tensor:
        """(B, H, T, T) bias of layer ``index`` from its normalised input ``h`` (B*T, C)."""
        T = self.seq_len
        return self.shared(self.layers[index](h)).view(-1, self.n_heads, T, T)


class EncoderLayer(nn.Module):
    """Pre-norm transformer layer: x + attn(ln(x)), then x + mlp(ln(x)); layout (B, T, C)."""

    def __init__(self, cfg: NetworkConfig) -> None:
        super().__init__()
        self.n_heads = cfg.n_heads
        self.scale = (cfg.d_model // cfg.n_heads) ** -0.5  # a constant in the exported graph
        self.seq_len, self.d_model = cfg.seq_len, cfg.d_model  # Python ints: graph constants
        self.rows = linear_rows(cfg, cfg.seq_len)
        self.dropout = cfg.dropout
        linear = matmul_linear(cfg)
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = linear(cfg.d_model, 3 * cfg.d_model)  # fused: one matmul, not three
        self.proj = linear(cfg.d_model, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.fc1 = linear(cfg.d_model, cfg.d_ff)
        self.fc2 = linear(cfg.d_ff, cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        # Zero at the start: the layer attends exactly as one without the bias would.
        self.attn_bias = (nn.Parameter(torch.zeros(cfg.n_heads, cfg.seq_len, cfg.seq_len))
                          if cfg.attention_bias else None)

    def forward(self, x: torch.Tensor, smolgen: Smolgen | None = None,
                index: int = 0) -> torch.Tensor:
        """``smolgen`` (the network's, with this layer's ``index``): its bias is added to the
        attention logits, with ``attn_bias`` when the layer has both."""
        T, C, H = self.seq_len, self.d_model, self.n_heads
        x = x.reshape(self.rows)  # (B*T, C): see linear_rows
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(-1, T, 3, H, C // H).permute(2, 0, 3, 1, 4)  # 3x (B, H, T, D)
        bias = self.attn_bias  # (H, T, T) | None
        if smolgen is not None:
            generated = smolgen(h, index)  # (B, H, T, T)
            bias = generated if bias is None else generated + bias
        if self.training or not x.is_cpu:
            p = self.dropout if self.training else 0.0
            bias = None if bias is None else bias.to(q.dtype)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p)  # (B, H, T, D)
        else:
            y = _cpu_attention(q, k, v, bias, self.scale)  # (B, H, T, D)
        y = y.transpose(1, 2).reshape(self.rows)  # (B*T, C)
        x = x + self.drop(self.proj(y))
        x = x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))  # (B*T, C)
        return x.view(-1, T, C)  # (B, T, C)


class PooledPolicyHead(nn.Module):
    """The seed's head: an MLP from the mean-pooled board vector to every move's logit."""

    def __init__(self, cfg: NetworkConfig) -> None:
        super().__init__()
        self.fc1 = nn.Linear(cfg.d_model, 2 * cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.fc2 = nn.Linear(2 * cfg.d_model, cfg.policy_size)

    def forward(self, x: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(F.gelu(self.fc1(pooled))))  # (B, P)


class AttentionPolicyHead(nn.Module):
    """Lc0's attention policy: logit(from, to) = <query(from), key(to)> / sqrt(d).

    Each move's logit is computed from the two squares' own features, so the head scales
    with board geometry instead of memorising 4096 unrelated outputs. Under-promotions add
    a learnt per-(to-file, piece) offset from the rank-8 keys to the from-to logit, as Lc0
    does; queen promotions use the plain from-to logit (the contract's index for them).
    """

    def __init__(self, cfg: NetworkConfig) -> None:
        super().__init__()
        linear = matmul_linear(cfg)
        self.embed = linear(cfg.d_model, cfg.policy_d)
        self.qk = linear(cfg.policy_d, 2 * cfg.policy_d)
        self.promo = linear(cfg.policy_d, 3)  # knight, bishop, rook offsets per to-file
        self.scale = 1.0 / math.sqrt(cfg.policy_d)
        self.policy_d, self.rows = cfg.policy_d, linear_rows(cfg, N_SQUARES)
        frm, to, piece = underpromotion_tables()
        self.register_buffer("up_flat", frm * N_SQUARES + to, persistent=False)  # (72,)
        self.register_buffer("up_offset", (to - 56) * 3 + piece, persistent=False)  # (72,)

    def forward(self, x: torch.Tensor, pooled: torch.Tensor) -> torch.Tensor:
        # -1 and constants, not x.shape: a shape read at trace time is ops in the graph
        h = F.gelu(self.embed(x[:, :N_SQUARES].reshape(self.rows)))  # (B*64, Dp): linear_rows
        qk = self.qk(h).view(-1, N_SQUARES, 2 * self.policy_d)  # (B, 64, 2Dp)
        q, k = qk[..., :self.policy_d], qk[..., self.policy_d:]  # 2x (B, 64, Dp); chunk() reads shapes
        moves = torch.matmul(q, k.transpose(1, 2)).mul_(self.scale).view(-1, N_FROM_TO)  # (B, 4096)
        promo = self.promo(k[:, 56:]).reshape(-1, 24)  # (B, 8 to-files x 3 pieces)
        under = moves[:, self.up_flat] + promo[:, self.up_offset]  # (B, 72)
        return torch.cat([moves, under], dim=1)  # (B, P)


#: The moves-left head's output unit: it predicts plies / ``MOVES_LEFT_SCALE`` (the scale
#: Lc0's moves-left loss uses), so its outputs and the loss stay near 1 for a typical game.
MOVES_LEFT_SCALE = 20.0


class MovesLeftHead(nn.Module):
    """Plies left in the game from the pooled board vector: an MLP whose softplus output is
    non-negative and smooth at 0 (a ReLU output, Lc0's, can die at 0 and stop learning)."""

    def __init__(self, cfg: NetworkConfig) -> None:
        super().__init__()
        hidden = max(32, cfg.d_model // 4)
        self.fc1 = nn.Linear(cfg.d_model, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        z = self.fc2(F.gelu(self.fc1(pooled)))  # (B, 1)
        return F.softplus(z).squeeze(1) * MOVES_LEFT_SCALE  # (B,) plies


class ChessTransformer(PolicyValueModel):
    """tokens (B, 72) -> (policy logits (B, POLICY_SIZE), WDL logits (B, 3))."""

    def __init__(self, cfg: NetworkConfig) -> None:
        super().__init__()
        self.config = cfg
        C = cfg.d_model
        self.tok_embed = nn.Embedding(cfg.vocab_size, C)
        self.rank_embed = nn.Embedding(8, C)
        self.file_embed = nn.Embedding(8, C)
        self.flag_embed = nn.Embedding(cfg.seq_len - N_SQUARES, C)
        squares = torch.arange(N_SQUARES)
        self.register_buffer("sq_rank", squares // 8, persistent=False)
        self.register_buffer("sq_file", squares % 8, persistent=False)
        self.layers = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.LayerNorm(C)
        self.value_head = nn.Sequential(
            nn.Linear(C, C), nn.GELU(), nn.Dropout(cfg.dropout), nn.Linear(C, 3)
        )
        # Spatial value path (value_squares > 0): square vectors -> K channels each -> the
        # 64 x K of them in board order -> added to the pooled vector the value head reads.
        self.value_squares = (nn.Sequential(
            nn.Linear(C, cfg.value_squares), nn.GELU(), nn.Flatten(1),
            nn.Linear(N_SQUARES * cfg.value_squares, C)) if cfg.value_squares else None)
        head = PooledPolicyHead if cfg.policy_head == "pooled" else AttentionPolicyHead
        self.policy_head = head(cfg)
        if cfg.reach_mask:
            self.register_buffer("reach", reach_table().view(VOCAB_SIZE, N_FROM_TO), persistent=False)
            frm, under_to, _ = underpromotion_tables()
            file_step = torch.arange(N_UNDERPROMOTIONS) // 3 % 3 - 1  # -1, 0, +1
            on_board = ((frm % 8) + file_step >= 0) & ((frm % 8) + file_step <= 7)
            self.register_buffer("under_from", frm, persistent=False)
            self.register_buffer("under_to", under_to, persistent=False)
            self.register_buffer("under_on_board", on_board, persistent=False)
            self.register_buffer("from_sq", torch.arange(N_FROM_TO) // N_SQUARES, persistent=False)
            self.register_buffer("to_sq", torch.arange(N_FROM_TO) % N_SQUARES, persistent=False)
        self.apply(self._init_weights)
        if self.value_squares is not None:
            nn.init.zeros_(self.value_squares[-1].weight)  # adds nothing until it learns
        # Threat inputs: a square's flags (threats.pyx) add a learnt vector to its token
        # embedding, zero at the start (likewise: the flags start unread). Made from zeros
        # after the others' init, so it draws no random numbers: the rest of the network
        # gets the weights a network without it gets from the same seed.
        self.threat_embed = (nn.Embedding.from_pretrained(torch.zeros(N_THREAT_FLAGS, C),
                                                          freeze=False)
                             if cfg.threat_inputs else None)
        # Moves-left head: built last, so the modules above draw the random numbers they
        # draw without it (same seed, same policy and value weights).
        self.moves_left_head = None
        if cfg.moves_left:
            self.moves_left_head = MovesLeftHead(cfg)
            self.moves_left_head.apply(self._init_weights)
        # Smolgen: built after everything else for the same reason, its shared matrix at
        # zero (it adds nothing until it learns: same seed, same function as without it).
        self.smolgen = None
        if cfg.smolgen:
            self.smolgen = Smolgen(cfg)
            self.smolgen.apply(self._init_weights)
            nn.init.zeros_(self.smolgen.shared.weight)

    def allowed_moves(self, tokens: torch.Tensor) -> torch.Tensor:
        """(B, POLICY_SIZE) bool: the moves ``reach_mask`` keeps for these positions."""
        squares = tokens[:, :N_SQUARES].long()  # (B, 64)
        own = (squares >= 1) & (squares <= 6)  # (B, 64)
        from_token = squares[:, self.from_sq]  # (B, 4096)
        reach = self.reach[from_token, torch.arange(N_FROM_TO, device=tokens.device)]  # (B, 4096)
        moves = reach & ~own[:, self.to_sq]
        under = ((squares[:, self.under_from] == 1) & self.under_on_board  # own pawn on rank 7
                 & ~own[:, self.under_to])
        return torch.cat([moves, under], dim=1)

    @staticmethod
    def _init_weights(m: nn.Module) -> None:
        # GPT-2 style: small normal weights keep the initial logits near uniform and the
        # initial WDL near (1/3, 1/3, 1/3), a sane prior for an untrained search.
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def position_embedding(self) -> torch.Tensor:
        squares = self.rank_embed(self.sq_rank) + self.file_embed(self.sq_file)  # (64, C)
        return torch.cat([squares, self.flag_embed.weight], dim=0)  # (T, C)

    def embed(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(token + position embeddings (B, T, C), the version-1 tokens (B, T)).

        With ``threat_inputs`` the tokens are version 2 (threats.pyx): t % 44 is the
        version-1 token, t // 44 the square's flags (0 on tokens 64..71), whose embedding is
        added to the 64 squares only. Integer ops: the ONNX export reads them as they are."""
        tokens = tokens.long()
        if self.threat_embed is None:
            return self.tok_embed(tokens) + self.position_embedding(), tokens
        base, flags = tokens % VOCAB_SIZE, tokens[:, :N_SQUARES] // VOCAB_SIZE
        x = self.tok_embed(base) + self.position_embedding()  # (B, T, C)
        squares = x[:, :N_SQUARES] + self.threat_embed(flags)  # (B, 64, C)
        return torch.cat([squares, x[:, N_SQUARES:]], dim=1), base

    def forward(self, tokens: torch.Tensor,
                legal_only: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        policy, value, _ = self._heads(tokens, legal_only, with_moves_left=False)
        return policy, value  # (B, P), (B, 3)

    def forward_all(self, tokens: torch.Tensor, legal_only: bool = False
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        return self._heads(tokens, legal_only, with_moves_left=True)

    def _heads(self, tokens: torch.Tensor, legal_only: bool, with_moves_left: bool
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        x, tokens = self.embed(tokens)  # (B, T, C), version-1 tokens (B, T) for the mask
        for i, layer in enumerate(self.layers):
            x = layer(x, self.smolgen, i)  # (B, T, C)
        # Reduced-precision inference may keep the final norm and heads in fp32 (see
        # TorchEvaluator); the cast is a no-op when the whole model shares one dtype.
        x = self.norm(x.to(self.norm.weight.dtype))  # (B, T, C)
        pooled = x.mean(dim=1)  # (B, C)
        policy = self.policy_head(x, pooled)  # (B, P)
        # The mask never touches a legal move (tested), so a caller that reads only legal
        # logits skips it: its gathers over 4,168 moves were 1.3x the search's batch-8
        # inference time with the tiny network in ONNX Runtime.
        if self.config.reach_mask and not legal_only:
            policy = policy.masked_fill(~self.allowed_moves(tokens), -1e4)
        value_in = pooled
        if self.value_squares is not None:
            value_in = pooled + self.value_squares(x[:, :N_SQUARES])  # (B, C)
        moves_left = None
        if with_moves_left and self.moves_left_head is not None:
            moves_left = self.moves_left_head(pooled)  # (B,)
        return policy, self.value_head(value_in), moves_left  # (B, P), (B, 3), (B,) | None

    def head_modules(self) -> dict[str, nn.Module]:
        value = self.value_head
        if self.value_squares is not None:
            value = nn.ModuleList([self.value_squares, self.value_head])
        heads = {"policy": self.policy_head, "value": value}
        if self.moves_left_head is not None:
            heads["moves_left"] = self.moves_left_head
        return heads

    def fp32_modules(self) -> list[nn.Module]:
        # forward() casts the trunk's output to the final norm's dtype, so keeping the norm
        # fp32 too makes the heads see fp32 activations, not just fp32 weights.
        return [self.norm, *self.head_modules().values()]

    @classmethod
    def flops_per_position(cls, cfg: NetworkConfig) -> int:
        """Analytic forward FLOPs for one position, whole network with heads.

        A matmul of (m x k) by (k x n) counts 2mkn; bias adds, norms, GELU and softmax are
        not counted (they are O(T C), negligible next to the O(T C^2) matmuls, and a
        matmul-only count is what the efficiency-versus-matmul-peak figure compares against).
        """
        T, C, F_, P = cfg.seq_len, cfg.d_model, cfg.d_ff, cfg.policy_size
        per_layer = (
            2 * T * C * 3 * C  # fused QKV projection
            + 2 * T * T * C  # Q K^T over all heads
            + 2 * T * T * C  # attention-weighted sum of V
            + 2 * T * C * C  # output projection
            + 2 * T * C * F_ * 2  # MLP up and down
        )
        value = 2 * C * C + 2 * C * 3
        if cfg.value_squares:
            value += 2 * N_SQUARES * C * cfg.value_squares + 2 * N_SQUARES * cfg.value_squares * C
        if cfg.policy_head == "pooled":
            policy = 2 * C * 2 * C + 2 * 2 * C * P
        else:
            S, D = N_SQUARES, cfg.policy_d
            policy = 2 * S * C * D + 2 * S * D * 2 * D + 2 * S * S * D + 2 * 8 * D * 3
        moves_left = 0
        if cfg.moves_left:
            hidden = max(32, C // 4)
            moves_left = 2 * C * hidden + 2 * hidden
        if cfg.smolgen:
            K, G, H = SMOLGEN_COMPRESS, cfg.smolgen, cfg.n_heads
            per_layer += (2 * T * C * K  # compress every token
                          + 2 * T * K * C  # the flattened position to the hidden vector
                          + 2 * C * H * G  # the hidden vector to each head's gen vector
                          + 2 * H * G * T * T)  # the shared matrix: each head's (T, T) bias
        return cfg.n_layers * per_layer + value + policy + moves_left


def _rebuilt(model: ChessTransformer, is_new, **changes) -> ChessTransformer:
    """A network of ``model``'s config with ``changes``, holding ``model``'s weights; only
    parameters whose names ``is_new`` accepts may be left at their initial values."""
    rebuilt = ChessTransformer(dataclasses.replace(model.config, **changes))
    missing, unexpected = rebuilt.load_state_dict(model.state_dict(), strict=False)
    assert not unexpected and all(is_new(k) for k in missing), (missing, unexpected)
    return rebuilt


def deepen(model: ChessTransformer, n_layers: int) -> ChessTransformer:
    """The same network with encoder layers appended up to ``n_layers``, as the identity.

    The layers are pre-norm residual blocks, x + proj(attn(...)) and x + fc2(mlp(...)): with
    ``proj`` and ``fc2`` zero a new block returns its input, so the deeper network computes
    exactly what the checkpoint did and training adds what the extra depth can learn
    (Net2Net's function-preserving growth) instead of starting from nothing.
    """
    cfg = model.config
    if n_layers <= cfg.n_layers:
        raise ValueError(f"deepen to {n_layers} layers: the network already has {cfg.n_layers}")
    # a smolgen network's new layers get their smolgen parts too (the shared matrix is the
    # trained one, but a new block's zero ``proj`` discards whatever its attention makes)
    deeper = _rebuilt(model, lambda name: name.startswith(("layers.", "smolgen.layers.")),
                      n_layers=n_layers)
    with torch.no_grad():
        for layer in deeper.layers[cfg.n_layers:]:
            for lin in (layer.proj, layer.fc2):
                lin.weight.zero_()
                lin.bias.zero_()
    return deeper


#: Options whose new parameters start where they add nothing, so ``grow`` can switch them
#: on in a trained network: {field: what the names of its parameters contain}.
GROWABLE = {"attention_bias": ".attn_bias", "value_squares": "value_squares.",
            "threat_inputs": "threat_embed.", "moves_left": "moves_left_head.",
            "smolgen": "smolgen."}


def grow(model: ChessTransformer, **changes) -> ChessTransformer:
    """The same network with more of it (``attention_bias=True``, ``value_squares=K``,
    ``threat_inputs=True``, ``moves_left=True``, ``smolgen=G``), computing exactly what it did.

    Each option's new parameters start at zero where they enter (the attention biases, the
    spatial value path's last map, the threat embedding, smolgen's shared matrix), so the
    grown network answers as the checkpoint does (with threat inputs: on the version-2
    tokens of the positions the checkpoint read as version 1) and training adds what the
    new parts can learn, as ``deepen`` does for depth: a trained network gains them
    without starting over. The
    moves-left head is the exception that needs no zero: it reads the trunk and feeds
    nothing back, so the policy and value are untouched whatever its initial weights.
    """
    cfg = model.config
    for name, value in changes.items():
        if name not in GROWABLE:
            raise ValueError(f"cannot grow {name!r}; growable: {sorted(GROWABLE)}")
        if getattr(cfg, name) or not value:
            raise ValueError(f"{name} is {getattr(cfg, name)!r} in the network; growing "
                             f"switches on what is off")
    new = tuple(GROWABLE[name] for name in changes)
    return _rebuilt(model, lambda key: any(part in key for part in new), **changes)


#: What ``zerochess.neural.network.build_model`` builds for ``architecture="transformer"``.
Model = ChessTransformer
