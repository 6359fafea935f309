"""Kafka client settings as Siddhi apps write them, translated for aiokafka.

siddhi-io-kafka passes ``optional.configuration='key:value,key:value'`` to the Java client, so
apps carry the Java client's property names: ``security.protocol``, ``sasl.jaas.config``,
``batch.size``, ``ssl.truststore.location`` ...  :func:`translate_optional_configuration` maps each to
what aiokafka takes:

* settings the connector has an option for (security, SASL, TLS files, ``acks``) become that
  option, so they are checked and logged (redacted) like the option itself;
* settings aiokafka names differently are renamed (``batch.size`` -> ``max_batch_size``);
* the rest keep Kafka's name with dots as underscores (``session.timeout.ms`` ->
  ``session_timeout_ms``), and the caller checks that aiokafka has that argument;
* settings with no aiokafka equivalent are rejected with the reason and, where there is one,
  what to use instead (nothing is silently dropped);
* settings today's Java client does not know either (``metadata.fetch.timeout.ms``,
  ``producer.type`` ...) are ignored with a warning, as the Java client does.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Java property -> the connector option it sets (for both the source and the sink).
_TO_OPTION = {
    "security.protocol": "security.protocol",
    "sasl.mechanism": "sasl.mechanism",
    "sasl.username": "sasl.username",
    "sasl.password": "sasl.password",
    "ssl.key.password": "ssl.password",
    # librdkafka's names (apps written for Python or Go clients use them)
    "ssl.ca.location": "ssl.cafile",
    "ssl.certificate.location": "ssl.certfile",
    "ssl.key.location": "ssl.keyfile",
    "sasl.user": "sasl.username",
}
_SINK_OPTIONS = {"acks": "acks"}

# Java property -> aiokafka argument, where the name differs.
_RENAMED_PRODUCER = {"batch.size": "max_batch_size"}
_RENAMED_CONSUMER: dict[str, str] = {}

# Java properties with no aiokafka equivalent, and why (or what to use instead).
_NO_EQUIVALENT = {
    "key.deserializer": "payloads are decoded by the @map of the @source",
    "value.deserializer": "payloads are decoded by the @map of the @source",
    "key.serializer": "payloads are encoded by the @map of the @sink (the key is the sink's 'key' option)",
    "value.serializer": "payloads are encoded by the @map of the @sink",
    "retries": "aiokafka retries a failed send until request.timeout.ms; set that instead",
    "delivery.timeout.ms": "aiokafka bounds a send by request.timeout.ms; set that instead",
    "max.in.flight.requests.per.connection": "aiokafka keeps one request in flight per partition",
    "buffer.memory": "the service bounds buffered outputs with limits.sink_buffer",
    "receive.buffer.bytes": "aiokafka uses the operating system's socket buffers",
    "send.buffer.bytes": "aiokafka uses the operating system's socket buffers",
    "reconnect.backoff.ms": "aiokafka reconnects after retry.backoff.ms; set that instead",
    "reconnect.backoff.max.ms": "aiokafka reconnects after retry.backoff.ms; set that instead",
    "ssl.truststore.password": "Java keystores are not read here: use a PEM CA bundle (ssl.cafile)",
    "ssl.keystore.password": "Java keystores are not read here: use PEM files (ssl.certfile, ssl.keyfile)",
    "ssl.protocol": "Python's ssl module negotiates the newest TLS version both sides support",
    "ssl.enabled.protocols": "Python's ssl module negotiates the newest TLS version both sides support",
    "interceptor.classes": "Java interceptors cannot run here",
    "metric.reporters": "client metrics are not exported; the service's /metrics has its own",
    "sasl.login.callback.handler.class": "Java callback handlers cannot run here",
    "sasl.client.callback.handler.class": "Java callback handlers cannot run here",
}

# Properties today's Java client no longer knows (removed settings, the old Scala clients'):
# it warns "supplied but isn't a known config" and goes on, and so do these connectors, so that
# apps written for siddhi-io-kafka (whose docs show producer.type:async) keep deploying.
_JAVA_UNKNOWN = frozenset({
    "metadata.fetch.timeout.ms", "timeout.ms", "block.on.buffer.full", "producer.type",
    "queue.buffering.max.ms", "queue.buffering.max.messages", "batch.num.messages",
    "topic.metadata.refresh.interval.ms", "zookeeper.connect", "auto.commit.enable",
    "zookeeper.session.timeout.ms", "zookeeper.sync.time.ms",
})

_ASSIGNORS = {
    "org.apache.kafka.clients.consumer.rangeassignor": "range",
    "org.apache.kafka.clients.consumer.roundrobinassignor": "roundrobin",
    "org.apache.kafka.clients.consumer.stickyassignor": "sticky",
    "range": "range", "roundrobin": "roundrobin", "sticky": "sticky",
}

_JAAS_MODULE = re.compile(r"^\s*(?P<module>[\w.$]+)\s+(?:required|requisite|sufficient|optional)\b(?P<rest>.*)$",
                          re.S)
_JAAS_OPTION = re.compile(r"""(?P<key>[\w.]+)\s*=\s*(?:"(?P<dq>(?:[^"\\]|\\.)*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s;]+))""")


class TranslationError(ValueError):
    """A setting that cannot be translated; the message says why."""


@dataclass
class Translated:
    """What ``optional.configuration`` becomes."""

    #: Connector options to set (``security.protocol``, ``sasl.username`` ...).
    options: dict[str, str] = field(default_factory=dict)
    #: ``(aiokafka argument, raw value, the Kafka name it came from)``, for the caller to type-check.
    arguments: list[tuple[str, str, str]] = field(default_factory=list)
    #: Extra aiokafka arguments that are objects, not text (the partition assignors).
    objects: dict[str, object] = field(default_factory=dict)
    #: Settings the Java client does not know either, ignored (the caller warns about them).
    ignored: list[str] = field(default_factory=list)


def split_items(text: str) -> list[tuple[str, str]]:
    """``'k:v,k2:v2'`` -> ``[(k, v), (k2, v2)]`` (a value may hold ``:``; raises for an item without)."""
    out: list[tuple[str, str]] = []
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition(":")
        if not sep:
            raise TranslationError(f"optional.configuration item {item.strip()!r} is not key:value")
        out.append((key.strip(), value.strip()))
    return out


def translate_optional_configuration(text: str | None, role: str) -> Translated:
    """Translate ``optional.configuration`` for a ``"consumer"`` (source) or ``"producer"`` (sink)."""
    result = Translated()
    if not text:
        return result
    renamed = _RENAMED_PRODUCER if role == "producer" else _RENAMED_CONSUMER
    for key, value in split_items(text):
        lower = key.lower()
        if lower in _TO_OPTION:
            result.options[_TO_OPTION[lower]] = value
        elif role == "producer" and lower in _SINK_OPTIONS:
            if value.lower() not in ("all", "1", "0", "-1"):
                raise TranslationError(f"'{key}:{value}': acks must be all, 1 or 0")
            result.options[_SINK_OPTIONS[lower]] = value.lower()
        elif lower == "sasl.jaas.config":
            result.options.update(_jaas(value))
        elif lower in ("ssl.truststore.location", "ssl.keystore.location"):
            result.options.update(_keystore(lower, value, text))
        elif lower in ("ssl.truststore.type", "ssl.keystore.type"):
            if value.upper() != "PEM":
                raise TranslationError(f"'{key}:{value}': Java keystores are not read here; use PEM files "
                                       "(ssl.cafile, ssl.certfile, ssl.keyfile)")
        elif lower == "ssl.endpoint.identification.algorithm":
            if value.lower() not in ("https", ""):
                raise TranslationError(f"'{key}:{value}': only https (the default) is supported")
            if value == "":
                raise TranslationError(f"'{key}:' (no host name check) has no equivalent here: the "
                                       "broker's certificate must match its host name")
        elif lower == "partition.assignment.strategy" and role == "consumer":
            result.objects["partition_assignment_strategy"] = _assignors(value)
        elif lower in _JAVA_UNKNOWN:
            result.ignored.append(key)
        elif lower in _NO_EQUIVALENT:
            raise TranslationError(f"'{key}' has no aiokafka equivalent: {_NO_EQUIVALENT[lower]}")
        elif lower.startswith(("ssl.keystore.", "ssl.truststore.")):
            raise TranslationError(f"'{key}' has no equivalent: Java keystores are not read here; use "
                                   "PEM files (ssl.cafile, ssl.certfile, ssl.keyfile)")
        else:
            name = renamed.get(lower) or lower.replace(".", "_").replace("-", "_")
            result.arguments.append((name, value, key))
    return result


def _jaas(value: str) -> dict[str, str]:
    """``sasl.jaas.config``: the user name and password of a PLAIN or SCRAM login module."""
    m = _JAAS_MODULE.match(value)
    if m is None:
        raise TranslationError("sasl.jaas.config is not '<LoginModule> required key=\"value\" ...;'")
    module = m.group("module").rsplit(".", 1)[-1]
    opts = {o.group("key"): o.group("dq") if o.group("dq") is not None else
            o.group("sq") if o.group("sq") is not None else o.group("bare")
            for o in _JAAS_OPTION.finditer(m.group("rest"))}
    if module not in ("PlainLoginModule", "ScramLoginModule"):
        raise TranslationError(f"sasl.jaas.config with {module} has no equivalent here: use PLAIN or SCRAM "
                               "(sasl.mechanism, sasl.username, sasl.password)")
    out: dict[str, str] = {}
    if "username" in opts:
        out["sasl.username"] = opts["username"]
    if "password" in opts:
        out["sasl.password"] = opts["password"].replace('\\"', '"')
    return out


def _keystore(key: str, value: str, text: str) -> dict[str, str]:
    """A PEM trust store or key store maps to the TLS files; a Java (JKS/PKCS12) one does not."""
    kind_key = "ssl.truststore.type" if key == "ssl.truststore.location" else "ssl.keystore.type"
    types = {k.lower(): v for k, v in split_items(text)}
    if types.get(kind_key, "JKS").upper() != "PEM" and not value.lower().endswith((".pem", ".crt")):
        raise TranslationError(f"'{key}' names a Java keystore, which is not read here: convert it to "
                               f"PEM and use {'ssl.cafile' if 'trust' in key else 'ssl.certfile and ssl.keyfile'}")
    return {"ssl.cafile": value} if "trust" in key else {"ssl.certfile": value}


def _assignors(value: str) -> tuple[object, ...]:
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    classes = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
               "sticky": StickyPartitionAssignor}
    out = []
    for name in value.split(";") if ";" in value else [value]:
        short = _ASSIGNORS.get(name.strip().lower())
        if short is None:
            raise TranslationError(f"partition.assignment.strategy {name.strip()!r} has no equivalent "
                                   "(range, roundrobin and sticky have)")
        out.append(classes[short])
    return tuple(out)
