"""Training data: one versioned format for every source (format.py), random-play
generation, teacher labelling, data sets of shards (dataset.py), the reader that gathers
batches (batches.py) and the self-play replay window (replay.py)."""
