"""Partition runtimes dropped when their partition moves are freed (the chaos soak's RSS bound):
nothing of the process (callbacks, scheduler threads, registries) keeps one alive."""
from __future__ import annotations

import gc
import threading
import weakref

from srota.engine import SiddhiAppRuntime, SiddhiManager
from srota.service.scaleout import PartitionRuntimes

# The soak app's stateful shapes, on in-memory tables: a grouped aggregate, a partitioned
# window, a pattern, a stream-table join and an upsert, plus a time window (scheduler timers).
APP = """
@app:name('Mem')
define stream In (id string, seq long, n long, ts long);
define table KeyState (id string, seq long, n long);
from In select id, sum(n) as total, count() as count group by id insert into Counts;
partition with (id of In) begin
    from In#window.length(5) select id, sum(n) as wsum insert into Windows;
end;
from In#window.time(1 min) select count() as c insert into Recent;
from every e1=In[n > 95] -> e2=In[id == e1.id and n < 5] select e1.id as id insert into Matches;
from In join KeyState on KeyState.id == In.id select In.id as id, KeyState.seq as prev insert into Joined;
from In select id, seq, n update or insert into KeyState on KeyState.id == id;
"""


def _live_runtimes() -> int:
    gc.collect()
    return sum(isinstance(o, SiddhiAppRuntime) for o in gc.get_objects())


def test_dropped_partition_runtimes_are_freed() -> None:
    # Other tests of the session may keep runtimes of their own alive: count this test's only.
    runtimes_before = _live_runtimes()
    runtimes = PartitionRuntimes(lambda p: SiddhiManager(shard_id=f"p{p}").create_siddhi_app_runtime(APP))
    seen: list[int] = []
    runtimes.add_callback("Counts", lambda events: seen.append(len(events)))
    threads_before = threading.active_count()
    refs = []
    states: dict[int, bytes] = {}
    seq = 0
    try:
        for cycle in range(30):
            p = cycle % 6
            rt = runtimes.create(p, states.get(p))
            refs.append(weakref.ref(rt))
            runtimes.current = p
            handler = runtimes.get_input_handler("In")
            for _ in range(5):
                rows = []
                for k in range(20):
                    seq += 1
                    rows.append((f"k{k}", seq, seq % 100, 1_700_000_000_000 + seq))
                handler.send_rows(rows)
            states[p] = rt.snapshot()
            runtimes.drop(p)
            del rt, handler
        gc.collect()
        assert seen, "the callback saw the partitions' outputs"
        assert [r for r in refs if r() is not None] == []
        assert _live_runtimes() <= runtimes_before + 1  # the template
        assert threading.active_count() <= threads_before
    finally:
        runtimes.shutdown()
