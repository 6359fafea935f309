"""Built-in extension namespaces: the ten general-purpose siddhi-execution extensions, and
siddhi-store-rdbms' ``rdbms:query``/``rdbms:cud`` stream processors.

Each module registers its functions, aggregators, windows and stream processors with the
registry under Siddhi's namespace (``str:``, ``math:``, ``time:``, ...) when imported.
Modules are named after their namespace (``str:`` lives in ``strings``).
"""
import importlib

_NAMESPACES = ("strings", "math", "time", "json", "map", "list", "regex", "unique", "reorder",
               "unitconversion", "rdbms")

for _name in _NAMESPACES:
    importlib.import_module(f"{__name__}.{_name}")
