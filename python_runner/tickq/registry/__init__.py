"""The registry file: its model (model.py), its shape (registry.schema.json, checked by
shape.py), how it is read (parse.py) and built into the model (build.py), and durations."""

from tickq.registry.model import (
    AGENT_PREFIX,
    Agents,
    AgentTool,
    Kind,
    Problem,
    Registry,
    RegistryError,
    Settings,
    Step,
    default_agent_runner,
    env_digest,
)
from tickq.registry.parse import MAX_FILE_BYTES, load_registry, parse_registry

__all__ = [
    "AGENT_PREFIX", "MAX_FILE_BYTES", "AgentTool", "Agents", "Kind", "Problem", "Registry",
    "RegistryError", "Settings", "Step", "default_agent_runner", "env_digest", "load_registry",
    "parse_registry",
]
