#!/usr/bin/env bash
# The reference engine for the differential tests (tests/differential): Siddhi 5.1.33's jars are in
# ../shared/siddhi-5.1.33; this puts beside them, in .cache/siddhi/lib (not committed), the
# dependency jars the PySiddhi 5.1.0 wheel ships (not its own siddhi-* jars, which are the older
# 5.1.7), and installs Debian's log4j2 and jaxb-api. Siddhi is used in tests only, never shipped.
# Does nothing where ../shared/siddhi-5.1.33 or Java is absent (the differential tests then skip
# and say why); a second run costs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=../shared/siddhi-5.1.33
CACHE=.cache/siddhi
PIP=${PIP:-.venv/bin/pip}
if [ ! -d "$SHARED" ]; then
  echo "siddhi-deps: $SHARED is absent; the differential tests will skip"
  exit 0
fi
if ! command -v javac >/dev/null 2>&1; then
  echo "siddhi-deps: no javac; the differential tests will skip"
  exit 0
fi
need=()
[ -f /usr/share/java/log4j-core.jar ] || need+=(liblog4j2-java)
[ -f /usr/share/java/jaxb-api.jar ] || need+=(libjaxb-api-java)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "installing system packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ! -f "$CACHE/lib/.complete" ]; then
  rm -rf "$CACHE/lib" "$CACHE/wheel"
  mkdir -p "$CACHE/lib" "$CACHE/wheel"
  "$PIP" download -q --no-deps pysiddhi==5.1.0 -d "$CACHE/wheel"
  python3 - "$CACHE" <<'PY'
import pathlib, sys, zipfile
cache = pathlib.Path(sys.argv[1])
wheel = next((cache / "wheel").glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        base = name.rsplit("/", 1)[-1]
        # The wheel's own siddhi-* jars are 5.1.7: the 5.1.33 ones come from ../shared.
        if "/target/lib/" in name and base.endswith(".jar") and not base.startswith("siddhi-"):
            (cache / "lib" / base).write_bytes(z.read(name))
PY
  rm -rf "$CACHE/wheel"
  touch "$CACHE/lib/.complete"
fi
echo "siddhi-deps: $(ls "$CACHE/lib" | wc -l) dependency jars in $CACHE/lib"
