"""Events: the public class and the engine's slot-built kinds (RawEvent, RawGroupedEvent)."""
from __future__ import annotations

import pickle

import pytest
from srota.engine import Event, SiddhiManager, state_codec
from srota.engine.event import EXPIRED, RawEvent
from srota.engine.selector import GroupedEvent, RawGroupedEvent

TS = 1_700_000_000_000


def _raw(timestamp: int, data: tuple, type_: int = 0) -> RawEvent:
    e = RawEvent()
    e.timestamp, e.data, e.type = timestamp, data, type_
    return e


def test_a_raw_event_is_an_event_to_every_reader():
    e = _raw(TS, ("IBM", 100.0))
    assert isinstance(e, Event)
    assert e == Event(TS, ("IBM", 100.0)) and Event(TS, ("IBM", 100.0)) == e
    assert repr(e) == repr(Event(TS, ("IBM", 100.0))) == f"Event({TS}, ['IBM', 100.0])"
    assert not e.is_expired and _raw(TS, (), EXPIRED).is_expired


def test_a_raw_event_takes_no_arguments():
    # only the engine builds one, slot by slot; Event(ts, data) stays the public way
    with pytest.raises(TypeError):
        RawEvent(TS, ("IBM",))  # type: ignore[call-arg]


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_raw_event_pickles_as_an_event(protocol):
    back = pickle.loads(pickle.dumps(_raw(TS, ("IBM", 1.5), EXPIRED), protocol))
    assert type(back) is Event and back == Event(TS, ("IBM", 1.5), EXPIRED)


def test_state_keeps_a_raw_event_as_an_event():
    data = state_codec.dumps([_raw(TS, ("IBM", 1.5))])
    assert b"RawEvent" not in data
    back = state_codec.loads(data)
    assert type(back[0]) is Event and back[0] == Event(TS, ("IBM", 1.5))


def test_state_and_pickle_keep_a_raw_grouped_event_as_a_grouped_event():
    e = RawGroupedEvent()
    e.timestamp, e.data, e.type, e.group_key = TS, ("IBM", 3), 0, "IBM"
    for back in (state_codec.loads(state_codec.dumps(e)), pickle.loads(pickle.dumps(e))):
        assert type(back) is GroupedEvent
        assert (back.timestamp, back.data, back.type, back.group_key) == (TS, ("IBM", 3), 0, "IBM")


def test_output_events_restored_from_a_snapshot_are_events():
    # a window keeps the output events of the query before it; its snapshot restores them
    app = """
    define stream S (symbol string, price double);
    from S[price > 10] select symbol, price * 2 as p insert into M;
    from M#window.length(3) select symbol, sum(p) as total insert into Out;
    """
    manager = SiddhiManager()
    rt = manager.create_siddhi_app_runtime(app)
    rt.start()
    rt.get_input_handler("S").send_events([Event(TS + i, ("IBM", 20.0 + i)) for i in range(2)])
    snapshot = rt.snapshot()
    rt.shutdown()
    again = manager.create_siddhi_app_runtime(app)
    got: list[Event] = []
    again.add_callback("Out", got.extend)
    again.start()
    again.restore(snapshot)
    again.get_input_handler("S").send(("IBM", 30.0), TS + 5)
    assert [e.data for e in got] == [("IBM", 40.0 + 42.0 + 60.0)]
    again.shutdown()
