"""`zerochess train supervise`: supervised training on any data set, with exact resume.

The data set may come from random play (phase 1, the default), a teacher engine or
self-play: every shard holds tokens, a WDL target and a sparse policy target
(``zerochess.train.data.format``), which is all a step needs. Several sets train at once,
each batch drawn from them in proportion to their weights (``data/mixture.py``); a set
still being written trains as a recorded snapshot of its finished shards. The data are held
in memory when they fit (``data/packed.py``), else read memory-mapped. A run starts from a preset or warm from
a checkpoint, grown as asked (``warmstart.py``), and lasts ``steps``, ``epochs`` or a
wall-clock budget (``minutes``: the total steps are fixed once, from a probe, and stored).

A run directory holds::

    config.json      the SuperviseConfig, network config and total steps of the run, and
                     every data set's path, weight, fingerprint (and snapshot shard list)
    train.log        human-readable log (what the progress bar showed, and more)
    metrics.jsonl    one JSON object per line: {"type": "train", ...} every log_every_steps,
                     {"type": "val", ...} at every validation (plotted by `train report`;
                     with a budget, step 0 is the starting network's)
    resume.pt        full training state: model, AdamW, schedule and its total steps, RNG
                     states (torch, numpy, python), data position (epoch, batch index; the
                     order is a function of seed and epoch, a mixture's of seed and step),
                     the data sets' record, best validation loss
    best.pt          network checkpoint (zerochess.neural.checkpoint) at best validation loss
    epoch-NNNN.pt    network checkpoint every checkpoint_every_epochs epochs
    final.pt         network checkpoint at the end of the run

Exactness of ``--resume``: nothing but dropout draws from the global torch RNG (the data
order is a pure function of (seed, epoch), the legal-generation test has its own
generator), so restoring the RNG states, the weights, AdamW's moments, the schedule and the
data position makes step k + 1 after a kill identical to step k + 1 of an uninterrupted run.
A budget's probe puts back every state it touched, and the total it fixed is stored, so a
budget run is exactly the run of ``steps`` = that total, killed or not.
"""

from __future__ import annotations

import copy
import logging
import math
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from zerochess.atomic import write_json_atomic
from zerochess.neural.checkpoint import load_checkpoint, save_checkpoint
from zerochess.neural.network import PolicyValueModel, param_count
from zerochess.neural.torch_evaluator import resolve_device
from zerochess.train.common.jsonl import append_jsonl, keep_jsonl
from zerochess.train.common.optim import adamw, cosine
from zerochess.train.common.runlog import attach_log, detach_log
from zerochess.train.common.state import load_state, rng_state, save_state, set_rng_state
from zerochess.chess.threats import network_tokens
from zerochess.train.data.batches import (Batch, PositionSet, Prefetcher, for_network,
                                          iterate_batches)
from zerochess.train.data.mixture import (DataSpec, MixedSet, OpenedSet, combined_fingerprint,
                                          describe_difference, hold_in_memory, iterate_mixed,
                                          open_set, parse_data_specs, set_names)
from zerochess.train.losses import LossWeights, MetricSums, phase1_loss
from zerochess.train.supervised.config import SuperviseConfig
from zerochess.train.supervised.legalgen import legal_generation_test
from zerochess.train.supervised.teacher_metrics import TeacherSums
from zerochess.train.supervised.warmstart import initial_model, network_path

log = logging.getLogger("zerochess.train")

RESUME_FORMAT = "zerochess-train-state"
RESUME_VERSION = 1

#: AdamW betas of supervised runs: nanoGPT's (0.9, 0.95), whose shorter second-moment memory
#: (about 20 steps instead of 1000) follows the fast early changes of a run from scratch; the
#: self-play learner keeps torch's default (selfplay/learner.py says why).
BETAS = (0.9, 0.95)


class ResumeError(ValueError):
    """A run cannot be started or resumed as asked; the message says why and what to do."""


def lr_factor(step: int, total: int, cfg: SuperviseConfig) -> float:
    """Linear warm-up to 1, then cosine decay to min_lr_ratio at ``total`` steps."""
    warmup = max(1, min(cfg.warmup_steps, total // 5))
    if step < warmup:
        return (step + 1) / warmup
    return cosine((step - warmup) / max(1, total - warmup), cfg.min_lr_ratio)


def grad_norms(model: PolicyValueModel) -> dict[str, float]:
    """L2 gradient norms of the policy head, the value head and the shared trunk (§1.4.5:
    the two heads should stay within an order of magnitude of each other). The model names
    its heads, so this works for any architecture."""
    def norm(params) -> float:
        gs = [p.grad.detach().float().norm() for p in params if p.grad is not None]
        return float(torch.stack(gs).norm()) if gs else 0.0
    parts = model.head_modules()
    heads = {id(p) for m in parts.values() for p in m.parameters()}
    out = {f"grad_{name}_head": norm(m.parameters()) for name, m in parts.items()}
    out["grad_trunk"] = norm(p for p in model.parameters() if id(p) not in heads)
    return out


def open_sets(data, snapshot: bool = False, recorded: list[dict] | None = None) -> list[OpenedSet]:
    """The data sets ``data`` names (one path or spec, or a list of them; ``mixture.py``),
    loaded memory-mapped; ``recorded``, a resumed run's records, reads a snapshot's shards
    again."""
    specs = parse_data_specs(data)
    names = set_names(specs)
    recorded = recorded if recorded and len(recorded) == len(specs) else [None] * len(specs)
    return [open_set(spec, name, snapshot, rec) for spec, name, rec in zip(specs, names, recorded)]


def check_policy_distribution(data_dir, *sets: PositionSet) -> None:
    """Refuse the "sampler" policy target on data that holds only the played move."""
    if not all(d.has_policy_distribution for d in sets):
        raise ValueError(f"{data_dir}: policy_target 'sampler' needs a policy distribution, and "
                         "these phase-1 shards (format version 1) hold only the played move; "
                         "use policy_target 'played', or regenerate the data (format version 2 "
                         "or later)")


def loss_weights(cfg: SuperviseConfig) -> LossWeights:
    return LossWeights(cfg.policy_weight, cfg.value_weight, cfg.illegal_weight,
                       cfg.illegal_penalty, cfg.moves_left_weight)


def moves_left_tensor(b: Batch, model: PolicyValueModel, device) -> torch.Tensor | None:
    """The batch's moves-left targets on ``device`` when ``model`` has the head, else None."""
    if not model.config.moves_left or b.moves_left is None:
        return None
    return torch.from_numpy(b.moves_left).to(device, non_blocking=True)


def autocast_bf16(cfg: SuperviseConfig, device: torch.device) -> bool:
    """Whether the forward passes run under bf16 autocast: on a GPU with bf16 (``amp``), or
    on the CPU when asked (``cpu_bf16``: faster only where the CPU has native bf16)."""
    if device.type == "cuda":
        return cfg.amp and torch.cuda.is_bf16_supported()
    return device.type == "cpu" and cfg.cpu_bf16


class Trainer:
    """One phase-1 run in ``run_dir``; ``run()`` trains until the budget or stop step."""

    def __init__(self, cfg: SuperviseConfig, data_dir, run_dir: str | os.PathLike,
                 resume: bool = False) -> None:
        """``data_dir``: the data set(s), a path or spec or a list of them (``mixture.py``);
        None takes ``cfg.data``."""
        started = time.perf_counter()  # a budget (cfg.minutes) counts from here
        if data_dir is not None:
            data = data_dir if isinstance(data_dir, (list, tuple)) else [data_dir]
            cfg = cfg.replace(data=[str(d) for d in data])
        parse_data_specs(cfg.data)  # a bad --data is refused before anything is written
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        self.device = resolve_device(cfg.device)
        self.amp = autocast_bf16(cfg, self.device)
        resume_path = self.run_dir / "resume.pt"
        if not resume and resume_path.exists():
            raise ResumeError(f"{self.run_dir} already holds a run; pass --resume to continue "
                              "it or choose another run directory")
        saved = self._read_resume(resume_path) if resume else None
        self.sets = open_sets(cfg.data, cfg.snapshot, saved and saved.get("data_sets"))
        self.fingerprint = combined_fingerprint(self.sets)
        if saved is not None:
            self._check_data(saved, resume_path)
        self.sampler_target = cfg.policy_target == "sampler"
        if self.sampler_target:
            for s in self.sets:
                check_policy_distribution(s.spec.path, s.train, s.val)
        packed = hold_in_memory([s.train for s in self.sets] + [s.val for s in self.sets],
                                cfg.in_memory)
        n = len(self.sets)
        self.train_sets, self.val_sets = packed[:n], packed[n:]
        self.train_set: PositionSet | MixedSet = (
            self.train_sets[0] if n == 1 else
            MixedSet(self.train_sets, [s.spec.weight for s in self.sets]))
        self.val_set = self.val_sets[0]  # the first set's (a single set's: the run's)
        self.steps_per_epoch = len(self.train_set) // cfg.batch_size
        if self.steps_per_epoch == 0:
            raise ValueError(f"batch_size {cfg.batch_size} exceeds the {len(self.train_set)} "
                             f"training samples in {', '.join(str(s.spec.path) for s in self.sets)}")
        if n > 1:
            self.train_set.check_batch_size(cfg.batch_size)
        self.weights = loss_weights(cfg)
        torch.manual_seed(cfg.seed)
        self.model = initial_model(cfg).to(self.device)
        self.net_cfg = self.model.config
        self.opt = adamw(self.model, cfg.lr, cfg.weight_decay, BETAS)
        self.step, self.epoch, self.index = 0, 0, 0
        self.best_val = math.inf
        self.metrics_path = self.run_dir / "metrics.jsonl"
        self.log_path = self.run_dir / "train.log"
        attach_log(log, self.log_path)
        try:
            if saved is not None:
                self.total_steps = saved.get("total_steps") or self._fixed_total()
            else:
                self.metrics_path.write_text("")
                self.total_steps = (self._budget_total(started) if cfg.minutes
                                    else self._fixed_total())
            self.sched = torch.optim.lr_scheduler.LambdaLR(
                self.opt, lambda s: lr_factor(s, self.total_steps, cfg))
            if saved is not None:
                self._apply_resume(saved)
        except BaseException:
            detach_log(log, self.log_path)
            raise
        write_json_atomic(self.run_dir / "config.json",
                          {"supervise": cfg.to_dict(), "network": self.net_cfg.to_dict(),
                           "total_steps": self.total_steps, "data": self.data_label(),
                           "data_fingerprint": self.fingerprint,
                           "data_sets": [s.record() for s in self.sets]})

    def data_label(self) -> str | list[str]:
        """The data as config.json and checkpoints name it: the directory of a single set,
        else every set's PATH:WEIGHT."""
        if len(self.sets) == 1:
            return str(self.sets[0].spec.path)
        return [str(s.spec) for s in self.sets]

    def batches(self, start_epoch: int = 0, start_index: int = 0, start_step: int = 0):
        """The run's training batches from a data position on: one set's by epoch order
        (``batches.py``), several sets' mixed in proportion (``mixture.py``); with the
        threat flags in their tokens when the network reads them (``for_network``)."""
        cfg = self.cfg
        if isinstance(self.train_set, MixedSet):
            batches = iterate_mixed(self.train_set, cfg.batch_size, cfg.seed, start_step,
                                    self.sampler_target)
        else:
            batches = iterate_batches(self.train_set, cfg.batch_size, cfg.seed, start_epoch,
                                      start_index, self.sampler_target)
        return for_network(batches, self.net_cfg.threat_inputs)

    def _fixed_total(self) -> int:
        return self.cfg.steps or self.cfg.epochs * self.steps_per_epoch

    def _budget_total(self, started: float, probe_steps: int = 20) -> int:
        """The total steps that end the schedule with the ``cfg.minutes`` budget counted
        from ``started`` (at most ``cfg.steps``): ``probe_steps`` throwaway steps (fewer if
        they would take over 5% of the budget; at least 3) time a step (weights, AdamW and
        the RNG states are put back, so the run is the one ``steps`` = this total would
        give), one validation of the starting network times a validation (and is logged
        as step 0, where a warm start begins; the start is the first best.pt)."""
        cfg = self.cfg
        kept = (copy.deepcopy(self.model.state_dict()), copy.deepcopy(self.opt.state_dict()),
                rng_state())
        batches = self.batches()
        times: list[float] = []
        probe_end = time.perf_counter() + cfg.minutes * 60 / 20  # at most 5% of the budget
        while len(times) < 3 or (len(times) <= probe_steps and time.perf_counter() < probe_end):
            t = time.perf_counter()  # gather too: the loader thread may not hide it
            self._learn(next(batches), with_norms=False)
            times.append(time.perf_counter() - t)
        self.model.load_state_dict(kept[0])
        self.opt.load_state_dict(kept[1])
        set_rng_state(kept[2])
        step_s = float(np.median(times[1:]))  # the first step warms caches up
        t = time.perf_counter()
        start = self.validate()
        val_s = time.perf_counter() - t
        self._emit({"type": "val", "step": 0, "epoch": 0, **start})
        self.best_val = start["loss"]  # best.pt is the best network the run has seen,
        self.save_network("best.pt", start)  # the start included (a warm start may be it)
        every = cfg.val_every_steps or self.steps_per_epoch
        left = cfg.minutes * 60 - (time.perf_counter() - started) - val_s  # the last validation
        total = max(1, int(left / (step_s + val_s / every)))
        if cfg.steps:
            total = min(total, cfg.steps)
        log.info("budget %.1f min: %.4f s a step, %.2f s a validation every %d steps: "
                 "%d steps", cfg.minutes, step_s, val_s, every, total)
        return total

    # -- bookkeeping -------------------------------------------------------------------
    def _emit(self, record: dict) -> None:
        append_jsonl(self.metrics_path, record)

    def save_resume(self) -> None:
        save_state(self.run_dir / "resume.pt", RESUME_FORMAT, RESUME_VERSION, {
            "config": self.cfg.to_dict(), "data_fingerprint": self.fingerprint,
            "data_sets": [s.record() for s in self.sets],
            "model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
            "scheduler": self.sched.state_dict(), "rng": rng_state(),
            "step": self.step, "epoch": self.epoch, "index": self.index,
            "total_steps": self.total_steps, "best_val": self.best_val})

    def _read_resume(self, path: Path) -> dict:
        if not path.exists():
            raise ResumeError(f"{path}: nothing to resume (no resume.pt in the run directory)")
        s = load_state(path, RESUME_FORMAT, RESUME_VERSION, "training state", ResumeError)
        # may change on resume: they change where and how fast, not what is computed (the
        # data sets are compared by contents, _check_data)
        keep = {"stop_after_steps", "device", "threads", "prefetch", "in_memory", "data"}
        diff = self.cfg.changed_fields(s["config"], keep, legacy={"policy_target": "played",
                                                                  "snapshot": False,
                                                                  "moves_left": None,
                                                                  "moves_left_weight": 1.0,
                                                                  "qat": None,
                                                                  "cpu_bf16": False})
        if diff:
            raise ResumeError(f"{path}: config differs from the saved run in {diff}")
        return s

    def _check_data(self, s: dict, path: Path) -> None:
        """Refuse to resume on other data than the run's (other sets, contents or weights)."""
        if s["data_fingerprint"] == self.fingerprint:
            return
        why = (describe_difference(s["data_sets"], self.sets) if "data_sets" in s else
               f"the run was trained on other data than {self.data_label()}")
        raise ResumeError(f"{path}: cannot resume: {why}; resume with the run's data sets "
                          "(its config.json lists them) or start a new run")

    def _apply_resume(self, s: dict) -> None:
        self.model.load_state_dict(s["model"])
        self.opt.load_state_dict(s["optimizer"])
        self.sched.load_state_dict(s["scheduler"])
        set_rng_state(s["rng"])
        self.step, self.epoch, self.index = s["step"], s["epoch"], s["index"]
        self.best_val = s["best_val"]
        # Drop metrics logged after the saved step: they will be logged again.
        keep_jsonl(self.metrics_path, lambda r: r["step"] <= self.step)
        log.info("resumed at step %d of %d (epoch %d, batch %d)", self.step, self.total_steps,
                 self.epoch, self.index)

    def save_network(self, name: str, metrics: dict | None = None) -> Path:
        meta = {"step": self.step, "epoch": self.epoch, "data": self.data_label(),
                "data_fingerprint": self.fingerprint, "train_samples": len(self.train_set),
                "supervise": self.cfg.to_dict(), "metrics": metrics or {}}
        return save_checkpoint(self.run_dir / name, self.model, meta)

    # -- training ----------------------------------------------------------------------
    def _to_device(self, b: Batch):
        d = self.device
        target = None if b.target is None else torch.from_numpy(b.target).to(d, non_blocking=True)
        return (torch.from_numpy(b.tokens).to(d, non_blocking=True),
                torch.from_numpy(b.move).to(d, non_blocking=True),
                torch.from_numpy(b.wdl).to(d, non_blocking=True),
                torch.from_numpy(b.legal).to(d, non_blocking=True),
                torch.from_numpy(b.kind).to(d, non_blocking=True), target)

    def _forward(self, tokens):
        """(policy, value, plies left or None): one trunk pass for every head it has."""
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.amp):
            return self.model.forward_all(tokens)

    def train_step(self, b: Batch, with_norms: bool) -> dict[str, float]:
        out = self._learn(b, with_norms)
        self.sched.step()
        return out

    def _learn(self, b: Batch, with_norms: bool) -> dict[str, float]:
        """One optimizer step on ``b`` at the current learning rate (the schedule is the
        caller's)."""
        tokens, move, wdl, legal, _, target = self._to_device(b)
        self.model.train()
        policy, value, moves_left = self._forward(tokens)
        loss, parts = phase1_loss(policy, value, move, wdl, legal, self.weights, target,
                                  moves_left, moves_left_tensor(b, self.model, self.device))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        out = {"loss": float(loss.detach()), **{k: float(v) for k, v in parts.items()}}
        if with_norms:
            out.update(grad_norms(self.model))
        if self.cfg.grad_clip > 0:
            out["grad_total"] = float(torch.nn.utils.clip_grad_norm_(
                self.model.parameters(), self.cfg.grad_clip))
        self.opt.step()
        return out

    def validate(self) -> dict[str, float]:
        # a CPU run validates in fp32, as the engine plays and `train evaluate` measures
        out = validate_sets(self.model, [(s.name, s.spec.weight) for s in self.sets],
                            self.val_sets, self.cfg, self.device,
                            self.amp and self.device.type == "cuda")
        self.model.train()
        return out

    def _validate_and_checkpoint(self, epoch_end: bool) -> dict:
        metrics = self.validate()
        self._emit({"type": "val", "step": self.step, "epoch": self.epoch, **metrics})
        log.info("val step %d: %s", self.step, " ".join(f"{k}={v:.4g}" for k, v in metrics.items()))
        if metrics["loss"] < self.best_val:
            self.best_val = metrics["loss"]
            self.save_network("best.pt", metrics)
        if epoch_end and self.epoch % self.cfg.checkpoint_every_epochs == 0:
            self.save_network(f"epoch-{self.epoch:04d}.pt", metrics)
        return metrics

    def run(self, progress: Callable[[int, dict], None] | None = None) -> dict:
        """Train to ``total_steps`` (or ``stop_after_steps``); returns a summary.

        ``progress(steps_done, postfix)`` is called after every step (the CLI's tqdm bar).
        """
        cfg = self.cfg
        log.info("run %s: %s, %d params, %d train / %d val samples, %d steps (%d per epoch) on %s",
                 self.run_dir, self.net_cfg, param_count(self.model), len(self.train_set),
                 len(self.val_set), self.total_steps, self.steps_per_epoch, self.device)
        total_weight = sum(s.spec.weight for s in self.sets)
        for s, train, val in zip(self.sets, self.train_sets, self.val_sets):
            held = "in memory" if train.shards[0].source.get("kind") == "packed" else "memory-mapped"
            what = (f"snapshot of {len(s.shards['train']) + len(s.shards['val'])} shards"
                    if s.shards else "complete")
            log.info("data %s (%s): weight %.3g, %d train / %d val samples, %s, %s", s.name,
                     s.spec.path, s.spec.weight / total_weight, len(train), len(val), what, held)
        stop = min(self.total_steps, cfg.stop_after_steps or self.total_steps)
        loader = Prefetcher(self.batches(self.epoch, self.index, self.step), depth=cfg.prefetch)
        val: dict = {}
        window_t = window_wait = 0.0
        run_t = run_wait = 0.0
        window_n = 0
        start_step, wall0 = self.step, time.perf_counter()
        try:
            while self.step < stop:
                t0 = time.perf_counter()
                batch = next(loader)
                t1 = time.perf_counter()
                log_now = (self.step + 1) % cfg.log_every_steps == 0
                out = self.train_step(batch, with_norms=log_now)
                t2 = time.perf_counter()
                self.step += 1
                self.epoch, self.index = batch.epoch, batch.index + 1
                epoch_end = self.index == self.steps_per_epoch
                if epoch_end:
                    self.epoch, self.index = self.epoch + 1, 0
                window_t += t2 - t0
                window_wait += t1 - t0
                window_n += 1
                if log_now:
                    rec = {"type": "train", "step": self.step, "epoch": self.epoch,
                           "lr": self.sched.get_last_lr()[0], **out,
                           "samples_per_s": window_n * cfg.batch_size / window_t,
                           "loader_wait_share": window_wait / window_t}
                    self._emit(rec)
                    run_t, run_wait = run_t + window_t, run_wait + window_wait
                    window_t = window_wait = 0.0
                    window_n = 0
                do_val = (epoch_end or self.step == self.total_steps
                          or (cfg.val_every_steps and self.step % cfg.val_every_steps == 0))
                if do_val:
                    val = self._validate_and_checkpoint(epoch_end)
                if do_val or self.step % cfg.save_every_steps == 0 or self.step == stop:
                    self.save_resume()
                if progress:
                    progress(self.step, {"loss": out["loss"], **{k: val[k] for k in
                             ("legal_top1", "exact", "illegal_mass") if k in val}})
        finally:
            loader.close()
        run_t, run_wait = run_t + window_t, run_wait + window_wait
        if self.step == self.total_steps:
            self.save_network("final.pt", val)
        summary = {"step": self.step, "total_steps": self.total_steps, "finished":
                   self.step == self.total_steps, "best_val_loss": self.best_val,
                   "steps_this_run": self.step - start_step, "train_seconds": round(run_t, 2),
                   "wall_seconds": round(time.perf_counter() - wall0, 2),
                   "loader_wait_share": run_wait / run_t if run_t else 0.0, "val": val}
        log.info("stopped at step %d: %s", self.step, summary)
        detach_log(log, self.log_path)
        return summary


@torch.no_grad()
def set_metrics(model: torch.nn.Module, val_set: PositionSet, cfg: SuperviseConfig,
                device: torch.device, amp: bool = False) -> dict[str, float]:
    """The §1.5.3 metrics of ``model`` (in eval mode) on the first ``cfg.val_max_samples``
    of ``val_set`` (loss under cfg's weights and policy target), on teacher-labelled data
    the agreement with the teacher (``teacher_metrics``), with a moves-left head its loss
    and mean absolute error in plies (``moves_left_loss``, ``moves_left_mae``)."""
    weights = loss_weights(cfg)
    sampler = cfg.policy_target == "sampler"
    sums, teacher = MetricSums(weights), TeacherSums()
    n = min(len(val_set), cfg.val_max_samples)
    for start in range(0, n, cfg.batch_size):
        b = val_set.gather(np.arange(start, min(start + cfg.batch_size, n)), sampler)
        tokens = network_tokens(b.tokens, model.config.threat_inputs)  # what it reads
        t = [None if a is None else torch.from_numpy(a).to(device)
             for a in (tokens, b.move, b.wdl, b.legal, b.kind, b.target, b.best)]
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            policy, value, moves_left = model.forward_all(t[0])
        sums.update(policy, value, *t[1:6], moves_left, moves_left_tensor(b, model, device))
        if b.best is not None:
            teacher.update(policy, value, t[3], t[2], t[6])
    return {**sums.result(), **teacher.result()}


def legal_generation(model: torch.nn.Module, cfg: SuperviseConfig,
                     device: torch.device) -> dict[str, float]:
    """The legal-generation test's two rates (none when ``cfg.legal_gen_games`` is 0)."""
    if not cfg.legal_gen_games:
        return {}
    gen = legal_generation_test(model, cfg.legal_gen_games, cfg.legal_gen_moves,
                                seed=cfg.seed, device=device)
    return {"legal_gen_raw_illegal": gen["raw_illegal_rate"],
            "legal_gen_masked_illegal": gen["masked_illegal_rate"]}


@torch.no_grad()
def validate_model(model: torch.nn.Module, val_set: PositionSet, cfg: SuperviseConfig,
                   device: torch.device, amp: bool = False) -> dict[str, float]:
    """``set_metrics`` of one validation set, and the legal-generation test."""
    model.eval()
    return {**set_metrics(model, val_set, cfg, device, amp), **legal_generation(model, cfg, device)}


@torch.no_grad()
def validate_sets(model: torch.nn.Module, named: list[tuple[str, float]],
                  val_sets: list[PositionSet], cfg: SuperviseConfig, device: torch.device,
                  amp: bool = False) -> dict[str, float]:
    """The validation of a run on several sets: each set's metrics as ``NAME/metric``
    (``named``: each set's name and sampling weight), their weighted mean under the plain
    names (``loss`` among them: what best.pt follows, the objective the mixture trains),
    and the legal-generation test once. One set: ``validate_model``'s figures."""
    if len(val_sets) == 1:
        return validate_model(model, val_sets[0], cfg, device, amp)
    model.eval()
    per = [set_metrics(model, v, cfg, device, amp) for v in val_sets]
    weights = np.array([w for _, w in named], dtype=np.float64)
    weights /= weights.sum()
    common = [k for k in per[0] if all(k in p for p in per)]
    out = {k: float(sum(w * p[k] for w, p in zip(weights, per))) for k in common}
    for (name, _), p in zip(named, per):
        out.update({f"{name}/{k}": v for k, v in p.items()})
    return {**out, **legal_generation(model, cfg, device)}


def evaluate_checkpoint(path: str | os.PathLike, data, cfg: SuperviseConfig) -> dict[str, float]:
    """Validate a saved network (a path, or "default" / "zero") on the val split of the
    data set(s) ``data`` (a path or spec, or a list of them, as a run takes them), as a run
    would (to compare a new network with the shipped one on the same held-out samples); on
    teacher-labelled data with the teacher metrics, on several sets per set and combined."""
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    specs = parse_data_specs(data)
    sets = [open_set(spec, name, cfg.snapshot, with_train=False)
            for spec, name in zip(specs, set_names(specs))]
    if cfg.policy_target == "sampler":
        for s in sets:
            check_policy_distribution(s.spec.path, s.val)
    model, _ = load_checkpoint(network_path(str(path)))
    return validate_sets(model.to(device), [(s.name, s.spec.weight) for s in sets],
                         [s.val for s in sets], cfg, device)


def supervise(cfg: SuperviseConfig, data_dir, run_dir, resume: bool = False,
              progress: Callable[[int, dict], None] | None = None) -> dict:
    """Train (or resume) a phase-1 run; see Trainer."""
    return Trainer(cfg, data_dir, run_dir, resume=resume).run(progress)
