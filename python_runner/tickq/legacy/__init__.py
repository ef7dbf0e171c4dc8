"""Moving off an old orchestrator: its lines read as the shell would, imported, checked."""
