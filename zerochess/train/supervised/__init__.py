"""Supervised training (phase 1 and fine-tuning): a network learns from any data set in the
training-data format, whatever produced it (random play, self-play, a teacher engine)."""
