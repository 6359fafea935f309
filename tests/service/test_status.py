"""``statistics:`` in the service YAML, and ``srota status`` against a running service."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from srota.service.cli import main
from srota.service.config import ConfigError, load_config
from srota.service.host import ServiceHost

from tests.conftest import free_port

APP = """@app:name('Counted')
define stream In (id string, n long);
@info(name='big') from In[n > 4] select id insert into Big;
"""


def test_statistics_level_per_app_in_yaml(tmp_path: Path) -> None:
    cfg = tmp_path / "srota.yaml"
    cfg.write_text("statistics:\n  level: basic\n  interval: 5 sec\n  apps: {Quiet: off, Counted: detail}\n")
    config = load_config(cfg)
    assert config.statistics.level_of("Counted") == "detail" and config.statistics.level_of("Quiet") == "off"
    assert config.statistics.level_of("Other") == "basic" and config.statistics.interval_ms == 5000
    cfg.write_text("statistics: {level: loud}\n")
    with pytest.raises(ConfigError, match="statistics.level: expected off, basic or detail"):
        load_config(cfg)


async def test_srota_status_shows_apps_and_statistics(tmp_path: Path, capsys: Any) -> None:
    app = tmp_path / "counted.siddhi"
    app.write_text(APP)
    cfg = tmp_path / "srota.yaml"
    port = free_port()
    cfg.write_text(f"apps: [counted.siddhi]\nhttp: {{port: {port}}}\nstatistics: {{level: basic}}\n")
    config = load_config(cfg)
    host = ServiceHost(config, config.app_files())
    await host.start()
    try:
        runtime = host.apps["Counted"].runtime
        runtime.get_input_handler("In").send_rows([("a", i) for i in range(10)])
        code = await asyncio.to_thread(main, ["status", "--config", str(cfg)])
    finally:
        await host.stop()
    out = capsys.readouterr().out
    assert code == 0
    assert "app Counted: 1 queries" in out
    assert "query big: 10 in, 5 out" in out
