#!/usr/bin/env bash
# System packages the tests need: Mosquitto (MQTT broker), Java 17 (Spark), the SQLite, PostgreSQL
# and MariaDB JDBC jars (Spark jobs), PostgreSQL 15 and MariaDB 10.11 servers (rdbms store tests),
# Chromium (the playground's browser tests, driven by Playwright with executable_path).
# Installs only what is missing, so a second run costs nothing.
set -euo pipefail
need=()
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || need+=(mosquitto)
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
[ -f /usr/share/java/sqlite-jdbc.jar ] || need+=(libxerial-sqlite-jdbc-java)
[ -f /usr/share/java/postgresql.jar ] || need+=(libpostgresql-jdbc-java)
[ -f /usr/share/java/mariadb-java-client.jar ] || need+=(libmariadb-java)
[ -x /usr/lib/postgresql/15/bin/pg_ctl ] || need+=(postgresql-15)
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "installing system packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
