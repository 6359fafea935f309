"""Patterns (``->``) and sequences (``,``): the state machines of Siddhi's StateInputStream.

The package follows Siddhi's split of the work:

* :mod:`~srota.engine.pattern.planner` plans a ``StateInputStream`` (Siddhi's
  ``StateInputStreamParser``): one *pre* and one *post* state processor per stream state;
* :mod:`~srota.engine.pattern.every_scope`: how far a sequence's leading ``every`` reaches
  when the sequence holds an absent state (Siddhi's grammar);
* :mod:`~srota.engine.pattern.states`: the processors of stream, counting and logical states;
* :mod:`~srota.engine.pattern.absent`: absent states (``not S for t``), on the app scheduler;
* :mod:`~srota.engine.pattern.fastpaths`: the generated loops and the equality index of
  pending partial matches, planned on the expression model;
* :mod:`~srota.engine.pattern.runtime`: one running state machine (one per partition key);
* :mod:`~srota.engine.pattern.scope`: where ``e1.price`` and ``e1[last].price`` live.

Imports flow one way: ``planner -> runtime -> absent -> states -> fastpaths -> scope``
(and ``planner -> every_scope``).

Pending partial matches are bounded: ``within`` expires them as events arrive, and a maximum per
state (``@pattern(max.pending='N')`` on the query, ``@app:pattern(max.pending='N')`` on the app,
or ``ctx.pattern_max_pending``) drops the oldest ones, counted in
:attr:`~srota.engine.pattern.runtime.PatternRuntime.dropped`.
"""
from srota.engine.pattern.planner import plan_state_input
from srota.engine.pattern.runtime import PatternRuntime

__all__ = ["PatternRuntime", "plan_state_input"]
