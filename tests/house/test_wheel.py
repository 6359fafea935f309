"""The wheel installs one import namespace, ``srota``, and nothing else at the top level."""
from __future__ import annotations

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_installs_only_srota(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(dist), str(ROOT)], check=True, timeout=300)
    wheel = next(dist.glob("srota-*.whl"))
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"srota"}

    env = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    before = set(Path(site).iterdir())
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, str(wheel)],
                   check=True, timeout=300)
    added = {p.name for p in set(Path(site).iterdir()) - before}
    # (pip --target puts console scripts in bin/: the `srota` command)
    assert {a for a in added if not a.endswith(".dist-info")} - {"bin"} == {"srota"}
    assert {p.name for p in (Path(site) / "bin").iterdir()} == {"srota"}
    # The rooms are there under the namespace, with the grammar's data file.
    for room in ("engine", "grammar", "mappers", "connectors", "service"):
        assert (Path(site) / "srota" / room / "__init__.py").exists()
    assert (Path(site) / "srota" / "grammar" / "siddhi.lark").exists()
    # The playground's page, with its vendored editor and the editor's licences.
    static = Path(site) / "srota" / "service" / "playground_static"
    for name in ("index.html", "app.js", "siddhi.js", "plot.js", "style.css", "vendor/codemirror.js",
                 "vendor/LICENSE.codemirror.txt"):
        assert (static / name).exists(), name
    assert (Path(site) / "srota" / "engine" / "pattern" / "__init__.py").exists()
    assert (Path(site) / "srota" / "engine" / "extensions" / "__init__.py").exists()
