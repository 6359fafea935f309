"""siddhi-io-file's local-file suites (component/src/test/java/io/siddhi/extension/io/file), ported."""
