"""Plumbing that supervised training, self-play and the data writers share, written once:
atomic file writes, JSONL records, run logs, versioned state files, the optimizer and its
schedule, the device choice. Nothing here knows about chess or a data format."""
