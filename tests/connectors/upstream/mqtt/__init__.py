"""Ports of siddhi-io-mqtt's test suite (``component/src/test/java/io/siddhi/extension/io/mqtt``)."""
