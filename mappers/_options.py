"""Option checking for mappers: the engine's one implementation (see :mod:`engine.options`)."""
from srota.engine.options import annotation_options, creation_error, resolve_options

__all__ = ["annotation_options", "creation_error", "resolve_options"]
