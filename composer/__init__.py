"""The composer API (`api` target): create, edit in place, cancel, list and preview
scheduled messages, and store rotations. `routes.handle_api` is the entry point."""
