"""Distil a teacher-labelled data set (``zerochess train label``) into a network, on a wall-clock
budget, so architectures can be compared at equal training compute.

    python experiments/distill.py --data DIR --out RUN --d-model 128 --layers 4 --minutes 25

Loss: cross-entropy to the teacher's multipv policy target over the legal moves, the
``log`` illegal-move penalty of phase 1 (so the raw policy keeps knowing the rules), and
cross-entropy to the teacher's WDL (a soft target). AdamW + warm-up + cosine to 10%, the
total number of steps fixed after a short throughput probe so the schedule ends with the
budget. Reports on the validation split: top-1 agreement with the teacher's best move and
the value error |E_net - E_teacher| (expected score, win + draw / 2). Writes RUN/best.pt (a
zerochess checkpoint: ``WeightsFile``) and RUN/metrics.jsonl; RUN/resume.pt lets the same
command continue after a kill (not bit-exact: the schedule is re-derived from the probe).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from pathlib import Path

import numpy as np
import torch

from zerochess.engine.checkpoint import load_checkpoint, save_checkpoint
from zerochess.engine.models.transformer import deepen, grow
from zerochess.engine.network import NetworkConfig, build_model
from zerochess.train.data.batches import csr_rows
from zerochess.train.data.format import load_shard
from zerochess.train.losses import illegal_penalty, legal_log_softmax

P = 4168


class Packed:
    """One split of a v3 data set in memory: tokens, WDL, and the two CSR groups."""

    def __init__(self, data: Path, split: str) -> None:
        meta = json.loads((data / "metadata.json").read_text())
        names = sorted(n for n, s in meta["shards"].items() if s["split"] == split and s["samples"])
        parts = [load_shard(data / n, verify=False) for n in names]
        self.tokens = np.concatenate([np.asarray(s["tokens"]) for s in parts])
        self.wdl = np.concatenate([np.asarray(s["wdl"]) for s in parts])
        self.best = np.concatenate([np.asarray(s["teacher_best"]) for s in parts]).astype(np.int64)
        self.pol = self._csr(parts, "policy_offsets", "policy_indices", "policy_weights")
        self.leg = self._csr(parts, "legal_offsets", "legal_indices", None)

    @staticmethod
    def _csr(parts, off, idx, val):
        offs, idxs, vals, base = [np.zeros(1, np.int64)], [], [], 0
        for s in parts:
            o = np.asarray(s[off])
            offs.append(o[1:] + base)
            base += int(o[-1])
            idxs.append(np.asarray(s[idx]).astype(np.int64))
            if val:
                vals.append(np.asarray(s[val]))
        return (np.concatenate(offs), np.concatenate(idxs), np.concatenate(vals) if val else None)

    def __len__(self) -> int:
        return len(self.tokens)

    def _dense(self, csr, rows, dtype):
        off, idx, val = csr
        flat, lens = csr_rows(off, rows)
        r = np.repeat(np.arange(len(rows)), lens)
        out = np.zeros((len(rows), P), dtype)
        out[r, idx[flat]] = val[flat] if val is not None else True
        return out

    def batch(self, rows: np.ndarray):
        return (torch.from_numpy(self.tokens[rows].astype(np.int64)),
                torch.from_numpy(self.wdl[rows]),
                torch.from_numpy(self._dense(self.pol, rows, np.float32)),
                torch.from_numpy(self._dense(self.leg, rows, bool)),
                torch.from_numpy(self.best[rows]))


def losses(model, batch):
    tokens, wdl, target, legal, _ = batch
    policy_logits, wdl_logits = model(tokens)
    logits = policy_logits.float()
    pol = -(target * legal_log_softmax(logits, legal)).sum(-1).mean()
    pen, mass = illegal_penalty(logits, legal, "log")
    val = -(wdl * torch.log_softmax(wdl_logits.float(), -1)).sum(-1).mean()
    return pol, val, pen, mass, logits, wdl_logits


@torch.no_grad()
def evaluate(model, data: Packed, n: int = 8192) -> dict:
    model.eval()
    rows = np.arange(min(n, len(data)))
    sums = {"policy_ce": 0.0, "value_ce": 0.0, "top1": 0.0, "value_err": 0.0, "illegal_mass": 0.0}
    for i in range(0, len(rows), 512):
        b = data.batch(rows[i:i + 512])
        pol, val, _, mass, logits, wdl_logits = losses(model, b)
        k = len(b[0])
        pred = logits.masked_fill(~b[3], float("-inf")).argmax(-1)
        p = torch.softmax(wdl_logits.float(), -1)
        e_net = p[:, 2] + 0.5 * p[:, 1]
        e_t = b[1][:, 2] + 0.5 * b[1][:, 1]
        for name, v in (("policy_ce", pol.item()), ("value_ce", val.item()),
                        ("top1", (pred == b[4]).float().mean().item()),
                        ("value_err", (e_net - e_t).abs().mean().item()),
                        ("illegal_mass", mass.item())):
            sums[name] += v * k
    model.train()
    return {k: round(v / len(rows), 5) for k, v in sums.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--init-from", type=Path, default=None, help="warm start from a checkpoint")
    ap.add_argument("--deepen-to", type=int, default=None,
                    help="with --init-from: append encoder layers up to this many, each starting "
                         "as the identity (zero output projections), so the deeper network "
                         "starts exactly where the checkpoint is")
    ap.add_argument("--attention-bias", action="store_true",
                    help="learnt square-to-square attention biases (NetworkConfig.attention_bias); "
                         "with --init-from they are added at zero, so training starts where the "
                         "checkpoint is")
    ap.add_argument("--value-squares", type=int, default=0,
                    help="channels per square of the value head's spatial path "
                         "(NetworkConfig.value_squares); with --init-from it is added at zero")
    ap.add_argument("--minutes", type=float, default=20.0)
    ap.add_argument("--steps", type=int, default=None,
                    help="fixed number of steps instead of the --minutes probe (a probe on a "
                         "busy machine undercounts)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.deepen_to and not a.init_from:
        ap.error("--deepen-to grows the --init-from checkpoint: give both")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    a.out.mkdir(parents=True, exist_ok=True)
    train, val = Packed(a.data, "train"), Packed(a.data, "val")
    if a.init_from:
        model, _ = load_checkpoint(a.init_from)
        if a.deepen_to:
            model = deepen(model, a.deepen_to)
        changes = {}
        if a.attention_bias and not model.config.attention_bias:
            changes["attention_bias"] = True
        if a.value_squares and not model.config.value_squares:
            changes["value_squares"] = a.value_squares
        if changes:
            model = grow(model, **changes)
    else:
        cfg = NetworkConfig(d_model=a.d_model, n_layers=a.layers, n_heads=a.heads,
                            d_ff=4 * a.d_model, policy_d=a.d_model, reach_mask=True,
                            attention_bias=a.attention_bias, value_squares=a.value_squares)
        model = build_model(cfg)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": rest, "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95))
    rng = np.random.default_rng(a.seed)
    state_path = a.out / "resume.pt"
    step, total, spent, best = 0, a.steps, 0.0, math.inf
    if state_path.exists():
        s = torch.load(state_path, weights_only=False)
        model.load_state_dict(s["model"]), opt.load_state_dict(s["opt"])
        step, total, spent, best = s["step"], s["total"], s["spent"], s["best"]
        rng = np.random.default_rng([a.seed, step])
    log = open(a.out / "metrics.jsonl", "a")
    params = sum(p.numel() for p in model.parameters())
    print(f"params {params}, train {len(train)}, val {len(val)}", flush=True)
    t0 = time.perf_counter() - spent
    while total is None or step < total:
        if total is None and step == 30:  # fix the schedule from the probe's throughput
            total = int(30 * a.minutes * 60 / (time.perf_counter() - t0))
        frac = step / total if total else 0.0
        lr = a.lr * (min(1.0, (step + 1) / 200) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))))
        for g in opt.param_groups:
            g["lr"] = lr
        b = train.batch(rng.integers(0, len(train), a.batch))
        pol, val_loss, pen, mass, _, _ = losses(model, b)
        loss = pol + val_loss + pen
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step % 500 == 0 or (total and step == total):
            m = evaluate(model, val)
            rec = {"step": step, "total": total, "minutes": round((time.perf_counter() - t0) / 60, 2),
                   "lr": lr, "train_policy": round(pol.item(), 4), "train_value": round(val_loss.item(), 4),
                   **{f"val_{k}": v for k, v in m.items()}}
            print(json.dumps(rec), flush=True)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            score = m["policy_ce"] + m["value_ce"]
            meta = {"distill": vars(a) | {"data": str(a.data), "out": str(a.out),
                                          "init_from": str(a.init_from),
                                          "network": dataclasses.asdict(model.config)},
                    "step": step, "val": m, "params": params}
            if score < best:
                best = score
                save_checkpoint(a.out / "best.pt", model, meta)
            save_checkpoint(a.out / "last.pt", model, meta)
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                        "total": total, "spent": time.perf_counter() - t0, "best": best},
                       a.out / "resume.tmp")
            (a.out / "resume.tmp").replace(state_path)


if __name__ == "__main__":
    main()
