"""optional.configuration as siddhi-io-kafka apps write it: Java client names, translated."""
from __future__ import annotations

import pytest
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from srota.connectors._kafka import KafkaSink, KafkaSource
from srota.grammar.errors import SiddhiAppCreationError

BASE = {"bootstrap.servers": "x:1", "topic.list": "t", "group.id": "g"}
JAAS = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
        'password="s3cr=t;x";')


def test_security_settings_become_the_connector_options():
    src = KafkaSource({**BASE, "optional.configuration":
                       f"security.protocol:SASL_PLAINTEXT,sasl.mechanism:SCRAM-SHA-512,sasl.jaas.config:{JAAS},"
                       "session.timeout.ms:6000,client.id:srota"})
    o = src.options
    assert (o["security.protocol"], o["sasl.mechanism"]) == ("SASL_PLAINTEXT", "SCRAM-SHA-512")
    assert (o["sasl.username"], o["sasl.password"]) == ("alice", "s3cr=t;x")
    assert src._extra == {"session_timeout_ms": 6000, "client_id": "srota"}
    kw = src._make_consumer  # the consumer is built from options + extra; check the security part
    from srota.connectors._kafka import _security_kwargs

    assert _security_kwargs(o)["sasl_plain_username"] == "alice"
    assert callable(kw)


def test_explicit_options_win_over_optional_configuration():
    src = KafkaSource({**BASE, "security.protocol": "SASL_SSL",
                       "optional.configuration": "security.protocol:SASL_PLAINTEXT"})
    assert src.options["security.protocol"] == "SASL_SSL"


def test_producer_names_that_differ_and_acks():
    sink = KafkaSink({"bootstrap.servers": "x:1", "topic": "t",
                      "optional.configuration": "batch.size:32768,linger.ms:5,compression.type:gzip,acks:1"})
    assert sink._extra == {"max_batch_size": 32768, "linger_ms": 5, "compression_type": "gzip"}
    assert sink.options["acks"] == "1"


def test_assignor_class_names():
    src = KafkaSource({**BASE, "optional.configuration":
                       "partition.assignment.strategy:org.apache.kafka.clients.consumer.RoundRobinAssignor"})
    assert src._extra["partition_assignment_strategy"] == (RoundRobinPartitionAssignor,)


def test_pem_stores_map_to_files_and_librdkafka_names():
    src = KafkaSource({**BASE, "optional.configuration":
                       "ssl.truststore.type:PEM,ssl.truststore.location:/certs/ca.pem,ssl.key.location:/k.pem"})
    assert (src.options["ssl.cafile"], src.options["ssl.keyfile"]) == ("/certs/ca.pem", "/k.pem")


@pytest.mark.parametrize("setting, reason", [
    ("ssl.truststore.location:/certs/truststore.jks", "convert it to PEM and use ssl.cafile"),
    ("retries:3", "request.timeout.ms"),
    ("value.deserializer:org.apache.kafka.common.serialization.StringDeserializer", "@map"),
    ("sasl.jaas.config:org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
     "OAuthBearerLoginModule has no equivalent"),
    ("no.such.setting:1", "no AIOKafkaConsumer equivalent"),
    ("ssl.endpoint.identification.algorithm:", "host name"),
])
def test_settings_without_an_equivalent_say_why(setting, reason):
    with pytest.raises(SiddhiAppCreationError, match=reason):
        KafkaSource({**BASE, "optional.configuration": setting})


def test_settings_the_java_client_does_not_know_are_ignored_with_a_warning():
    """As siddhi-io-kafka (the Java client warns "isn't a known config" and goes on): the
    ErrorHandlingTestCase app's producer settings deploy; the known ones still apply."""
    from structlog.testing import capture_logs

    with capture_logs() as logs:
        sink = KafkaSink({"bootstrap.servers": "x:1", "topic": "t", "optional.configuration":
                          "retry.backoff.ms:1,metadata.fetch.timeout.ms:10,request.timeout.ms:5,timeout.ms:10,"
                          "producer.type:async"})
    assert sink._extra == {"retry_backoff_ms": 1, "request_timeout_ms": 5}
    (warning,) = [e for e in logs if "ignored" in e["event"]]
    assert warning["settings"] == ["metadata.fetch.timeout.ms", "timeout.ms", "producer.type"]
