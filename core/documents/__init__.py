"""The stored documents, one module per collection: its field names, its statuses (enums) and
its typed writes, the one place those names are spelt as strings (see docs/data-model.md)."""
