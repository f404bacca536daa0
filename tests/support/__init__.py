"""Programs and wrappers the tests run: the crash worker and the orchestrate wrapper."""
