"""The targets: the HTTP entry points main.py wires, and the command-line tools. They hand
the kinds (targets.kinds) to the pipeline."""
