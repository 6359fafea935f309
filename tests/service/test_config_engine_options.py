"""Engine options in the service config: durations through the shared parser, script functions."""
from __future__ import annotations

from pathlib import Path

import pytest
from srota.service.config import ConfigError, load_config


def test_python_functions_switch(tmp_path: Path):
    cfg = tmp_path / "srota.yaml"
    assert load_config(None).limits.python_functions is True
    cfg.write_text("limits:\n  python_functions: false\n")
    assert load_config(cfg).limits.python_functions is False
    cfg.write_text("limits:\n  python_functions: maybe\n")
    with pytest.raises(ConfigError, match="limits.python_functions"):
        load_config(cfg)


def test_durations_use_the_grammar_parser(tmp_path: Path):
    cfg = tmp_path / "srota.yaml"
    cfg.write_text("persistence:\n  interval: 1 min 30 sec\nshutdown:\n  timeout: 100 ms\n")
    got = load_config(cfg)
    assert (got.persistence.interval_ms, got.shutdown_timeout_ms) == (90_000, 100)
    cfg.write_text("persistence:\n  interval: 30 sec 1 min\n")
    with pytest.raises(ConfigError, match="persistence.interval"):
        load_config(cfg)
