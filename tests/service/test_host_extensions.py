"""import_extensions: built-in connectors and mappers register themselves, or say why not."""
from __future__ import annotations

import builtins

import pytest
from srota.service.host import import_extensions


def test_a_built_in_that_cannot_be_imported_is_reported_not_hidden(monkeypatch):
    import sys

    real_import = builtins.__import__
    monkeypatch.delitem(sys.modules, "srota.connectors._mqtt", raising=False)

    def fake_import(name, *args, **kwargs):
        if name == "aiomqtt":
            raise ImportError("No module named 'aiomqtt'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"srota\.connectors\._mqtt cannot be imported: No module named 'aiomqtt'"):
        import_extensions()


def test_every_built_in_imports():
    import_extensions()
