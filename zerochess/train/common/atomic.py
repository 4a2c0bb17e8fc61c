"""The package's atomic writer lives in ``zerochess.engine.atomic``; these names are re-exported
for train/supervised/trainer.py, which still imports them from here. New code imports from
``zerochess.engine.atomic``."""

from zerochess.engine.atomic import temporary_name, write_json_atomic, write_text_atomic

__all__ = ["temporary_name", "write_json_atomic", "write_text_atomic"]
