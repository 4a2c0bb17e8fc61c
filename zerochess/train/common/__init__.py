"""Plumbing that supervised training, self-play and the data writers share, written once:
JSONL records, run logs, versioned state files, the optimizer and its schedule, worker
pools. Nothing here knows about chess or a data format. (The atomic writer and the device
chooser are the engine's: ``zerochess.atomic``, ``zerochess.neural.torch_evaluator``.)"""
