"""The benchmark of issue #8: `python -m bench` (or `make bench`). See README "Benchmark"."""
