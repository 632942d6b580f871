"""The repository's own tools: they run from a checkout, and no wheel of the package holds
them (``pyproject.toml`` installs ``hetero_tutorial`` only)."""
