"""The single version of zerochess (read by setuptools and by the UCI `id name`)."""

__version__ = "0.1.0"
