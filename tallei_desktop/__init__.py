"""Tallei desktop: a local, encrypted memory layer shared by every AI assistant."""

import os

__version__ = "0.1.0"

# numpy's OpenBLAS keeps its worker threads spinning between calls. Tallei's matrix work is small
# (a product over the vector index per recall), and on two cores the spinning threads took the CPU
# that the embedding model, SQLite and Python needed: with one BLAS thread a cold recall at 10,000
# memories took about two thirds of the time (docs/adr/0004-recall-quality.md). It must be set
# before numpy loads, which this package's first import precedes; a value already set wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
