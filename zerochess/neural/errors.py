"""The error raised for a network file that cannot be used.

A ``ValueError`` subclass, like the board's input errors (``zerochess.chess.errors``), so a
caller that only asks "was the input acceptable?" catches one type. It lives in a module of
its own, without torch, because the engine reads ``.onnx`` files where torch is not installed.
"""


class CheckpointError(ValueError):
    """A network file (``.pt`` checkpoint or ``.onnx`` network) cannot be used; the message
    names the file and the problem."""

    def __init__(self, path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
