"""Tests ported one for one from the siddhi-io connector suites (siddhi-io-mqtt, siddhi-io-kafka)."""
