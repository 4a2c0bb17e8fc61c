"""Builds zerochess's Cython extensions.

Each extension is listed explicitly (as scikit-learn and gensim do) so that a new
hot module is a deliberate decision. Build requirements: setuptools, Cython 3, numpy.
Never torch: the native core must build without it.
"""

import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

COMPILE_ARGS = ["/O2"] if sys.platform == "win32" else ["-O3", "-fno-strict-aliasing"]
if os.environ.get("ZEROCHESS_NATIVE") == "1":
    # Opt-in: tuned for the build machine, not portable (never for wheels or PyInstaller).
    COMPILE_ARGS.append("-march=native")

DIRECTIVES = {
    "language_level": "3",
    "boundscheck": False,
    "wraparound": False,
    "cdivision": True,
    "initializedcheck": False,
    "nonecheck": False,
}


def ext(name):
    return Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[np.get_include()],
        extra_compile_args=COMPILE_ARGS,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


EXTENSIONS = [
    ext("zerochess.chess.board"),
    ext("zerochess.chess.encoding"),
    ext("zerochess.chess.threats"),
    ext("zerochess.search.tt"),
    ext("zerochess.search.tree"),
    ext("zerochess.search.mcts"),
]

setup(ext_modules=cythonize(EXTENSIONS, compiler_directives=DIRECTIVES))
