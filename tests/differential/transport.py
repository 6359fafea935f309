"""Run a case with ``inMemory`` sources and sinks on Srota's service host, as the runner does on Siddhi.

A case that names ``topics`` or has ``publish`` steps goes through the real source, source
mapper, engine, sink mapper and sink path: each ``{"publish": topic, "message": text}`` is
published to the in-process broker, as Siddhi's tests publish to ``InMemoryBroker``, and what
the sinks publish to the case's ``topics`` is the answer, one row ``[0, [message]]`` per
message (a text as it is, bytes as their UTF-8 text, rows of the passThrough mapper as rows),
beside the stream callbacks' chunks.  Stream steps and on-demand queries run between the
publishes in their order; before each of them, and at the end, every published message is
waited for until the sources have taken it and the engine has handled it.
"""
from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

Answer = dict[str, Any]


def uses_transports(case: dict[str, Any]) -> bool:
    """Whether ``case`` publishes to a topic or reads one (and so needs the service host)."""
    return bool(case.get("topics")) or any("publish" in step for step in case.get("steps", ()))


def run_srota_service(case: dict[str, Any], timeout_s: float = 20.0) -> Answer:
    """Run ``case`` on a :class:`~srota.service.host.ServiceHost`; the answer has the runner's shape."""
    with tempfile.TemporaryDirectory(prefix="srota-difftest-") as tmp:
        return asyncio.run(_run(case, Path(tmp), timeout_s))


async def _run(case: dict[str, Any], tmp: Path, timeout_s: float) -> Answer:
    from srota.connectors._inmemory import broker
    from srota.service.config import HttpConfig, ServiceConfig
    from srota.service.host import ServiceHost

    from tests.differential.harness import plain_rows, record_failure, send_step, stream_callback

    outputs: list[dict[str, Any]] = []
    answer: Answer = {"id": case.get("id"), "error": None, "outputs": outputs, "created": True}
    config = ServiceConfig(http=HttpConfig(enabled=False), errors_database=str(tmp / "errors.db"))
    try:
        host = ServiceHost(config, app_texts=[case["app"]])
        await host.start()
    except Exception as exc:  # a rejected app is an answer
        answer.update(error=f"{type(exc).__name__}: {exc}", created=False)
        return answer
    subscriptions = [broker.subscribe(topic) for topic in case.get("topics", ())]
    readers = [asyncio.create_task(_read(sub, outputs)) for sub in subscriptions]
    published: set[str] = set()
    try:
        runtime = next(iter(host.runtimes.values()))
        for name in case.get("streams", ()):
            runtime.add_callback(name, stream_callback(name, outputs))
        async with asyncio.timeout(timeout_s):
            for step in case["steps"]:
                if "publish" in step:
                    await broker.publish(step["publish"], step["message"])
                    published.add(step["publish"])
                    continue
                await _settled(broker, published)
                if "query" in step:
                    found = runtime.query(step["query"])
                    outputs.append({"cb": "ondemand", "events": plain_rows(found, expired=False)})
                else:
                    send_step(runtime.get_input_handler(step["stream"]), step["events"])
            await _settled(broker, published)
    except TimeoutError:
        answer["error"] = "timeout"
    except Exception as exc:
        record_failure(answer, exc)
    finally:
        await host.stop()  # drains what the engine took and flushes the sinks
        await asyncio.sleep(0)
        for task in readers:
            task.cancel()
        for sub in subscriptions:
            _take_all(sub, outputs)
            broker.unsubscribe(sub)
    return answer


async def _settled(broker: Any, topics: set[str]) -> None:
    """Wait until every subscriber of ``topics`` (the sources) has taken what was published, and
    the engine has handled it: the sources deliver on the event loop, so a few turns of it after
    the queues empty see the last delivery through."""
    while any(broker.backlog(topic) for topic in topics):
        await asyncio.sleep(0.001)
    for _ in range(20):
        await asyncio.sleep(0)


async def _read(sub: Any, outputs: list[dict[str, Any]]) -> None:
    while True:
        payload, _props = await sub.queue.get()
        _record(sub.topic, payload, outputs)


def _take_all(sub: Any, outputs: list[dict[str, Any]]) -> None:
    while not sub.queue.empty():
        payload, _props = sub.queue.get_nowait()
        _record(sub.topic, payload, outputs)


def _record(topic: str, payload: Any, outputs: list[dict[str, Any]]) -> None:
    try:
        outputs.append(_message(topic, payload))
    except Exception as exc:  # shown as a message, so that no later one is lost with it
        outputs.append({"cb": f"topic:{topic}", "events": [[0, [f"$unreadable {payload!r}: {exc}"]]]})


def _message(topic: str, payload: Any) -> dict[str, Any]:
    """One published message as the runner writes it: a text, bytes as text, rows as rows."""
    from tests.differential.harness import _plain, plain_rows

    if isinstance(payload, (bytes, bytearray, memoryview)):
        try:
            payload = bytes(payload).decode("utf-8")
        except UnicodeDecodeError:
            import base64

            payload = "$bytes:" + base64.b64encode(bytes(payload)).decode()
    if isinstance(payload, str):
        return {"cb": f"topic:{topic}", "events": [[0, [payload]]]}
    # the passThrough sink's rows: a tuple (a TimedRow with its timestamp), or events
    items = payload if isinstance(payload, list) else [payload]
    rows = [[getattr(r, "timestamp", 0), _plain(r)] if isinstance(r, tuple) else plain_rows([r], expired=False)[0]
            for r in items]
    return {"cb": f"topic:{topic}", "events": rows}
