"""Ports of siddhi-io-kafka's test suite (``component/src/test/java/io/siddhi/extension/io/kafka``)."""
