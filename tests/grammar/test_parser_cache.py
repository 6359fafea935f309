"""lark's parser cache (a pickle) lives in a private per-user directory, never in /tmp."""
from __future__ import annotations

import os
import stat

from srota.grammar import parser


def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("SROTA_CACHE_DIR", str(tmp_path / "cache"))
    parser._lark.cache_clear()


def test_cache_goes_to_a_private_directory(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    try:
        assert parser.parse("define stream S (a int);").stream_definitions[0].id == "S"
    finally:
        parser._lark.cache_clear()
    cache = tmp_path / "cache"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].name.startswith("grammar-")
    path = parser._cache_file("grammar text")
    assert isinstance(path, str) and path.startswith(str(cache))
    assert not path.startswith("/tmp/.lark")


def test_an_open_directory_is_closed_and_a_planted_file_is_not_used(monkeypatch, tmp_path):
    _fresh(monkeypatch, tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o777)
    os.chmod(cache, 0o777)
    path = parser._cache_file("g")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert isinstance(path, str)
    with open(path, "wb") as f:
        f.write(b"planted")
    os.chmod(path, 0o666)  # writable by others: not trusted
    assert parser._cache_file("g") is False
