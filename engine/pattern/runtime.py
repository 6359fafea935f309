"""One running pattern or sequence state machine (:class:`PatternRuntime`).

Everything mutable is created per instance: a partition instantiates one state machine per
key.  A pattern's stream receiver is generated whole when its states are plain
(:meth:`PatternRuntime._gen_receiver`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from srota.engine.event import CURRENT, EXPIRED, Event, StateEvent
from srota.engine.expression import error_at
from srota.engine.output import QueryOutput
from srota.engine.pattern.absent import (
    _AbsentLogicalPost,
    _AbsentLogicalPre,
    _AbsentStreamPost,
    _AbsentStreamPre,
)
from srota.engine.pattern.fastpaths import _Plan
from srota.engine.pattern.scope import Emit
from srota.engine.pattern.states import (
    _copy,
    _CountPost,
    _CountPre,
    _LogicalPost,
    _LogicalPre,
    _StreamPost,
    _StreamPre,
)
from srota.grammar.model import (
    AbsentStreamStateElement,
    CountStateElement,
    EveryStateElement,
    GroupStateElement,
    LogicalOperator,
    LogicalStateElement,
    NextStateElement,
    StreamStateElement,
)


@dataclass
class _Inner:
    """Siddhi's InnerStateRuntime: how init/reset/update/setup recurse over the tree."""

    kind: str
    first: Any
    last: Any
    children: tuple[_Inner, ...] = ()
    stream_key: tuple[str, bool, bool] | None = None

    def set_selector(self) -> None:
        if self.kind == "next":
            self.children[1].set_selector()
        elif self.kind == "logical":
            self.children[1].set_selector()
            self.children[0].set_selector()
        elif self.kind == "every":
            self.children[0].set_selector()
        else:
            self.last.to_selector = True

    def setup(self, receivers: dict[tuple[str, bool, bool], list[Any]]) -> None:
        if self.kind == "next":
            self.children[0].setup(receivers)
            self.children[1].setup(receivers)
        elif self.kind == "logical":
            self.children[1].setup(receivers)
            self.children[0].setup(receivers)
        elif self.kind == "every":
            self.children[0].setup(receivers)
        else:
            assert self.stream_key is not None
            receivers.setdefault(self.stream_key, []).append(self.first)

    def init(self) -> None:
        if self.kind == "next":
            self.children[0].init()
            self.children[1].init()
        elif self.kind == "logical":
            self.children[1].init()
            self.children[0].init()
        elif self.kind == "every":
            self.children[0].init()
        else:
            self.first.init()

    def reset(self) -> None:
        if self.kind == "next":
            self.children[1].reset()
            self.children[0].reset()
        elif self.kind == "logical":
            self.children[1].reset()
        else:  # stream, count and every reset their first processor (as Siddhi does)
            self.first.reset_state()

    def update(self) -> None:
        if self.kind == "next":
            self.children[0].update()
            self.children[1].update()
        elif self.kind == "logical":
            self.children[1].update()
        else:
            self.first.update_state()


class PatternRuntime:
    """One instance of a pattern/sequence state machine (one per partition key)."""

    def __init__(self, plan: _Plan, ctx: Any, emit: Emit,
                 emit_chunks: Callable[[list[list[Any]]], None] | None = None) -> None:
        self.plan = plan
        self.ctx = ctx
        self.size = len(plan.states)
        self.counting = any(s.is_count for s in plan.states)   # chains to copy in clones
        self._emit = emit
        # Selects each chunk on its own and hands their rows on as one chunk (see _emit_group).
        self._emit_chunks = emit_chunks if emit_chunks is not None else _one_by_one(emit)
        self.dropped = 0
        self.pres: list[_StreamPre] = []
        self.startup: list[Any] = []
        self.receivers: dict[tuple[str, bool, bool], list[Any]] = {}
        self.top = self._build(plan.element, None, None, True, self.pres, None)
        if plan.within is not None:
            start_ids = tuple(p.state_id for p in self.pres if p.is_start)
            for p in self.pres:
                p.within = plan.within
                p.start_ids = start_ids
        self.top.first.last_post = self.top.last
        self.top.set_selector()
        self.top.setup(self.receivers)
        for p in self.pres:
            p.limit = plan.max_pending
        # The matches one event completed at one state, linked (id -> next) as Siddhi links
        # them until the end of the input chunk (see _cut_groups); kept only where something
        # cuts the links: the filtered forbidden side of 'not S[cond] and e2=...' (no 'for'),
        # which keeps its partial matches after e2 moved them on.  Not behind a selector with
        # group by: Siddhi's processGroupBy takes each match it passes out of its chunk
        # (ComplexEventChunk.remove, which unlinks it) and hands on a GroupedComplexEvent of
        # its own, so no link is left to cut and every row goes out.
        self.links: dict[int, StateEvent] = {}
        self.linked = any(isinstance(p, _AbsentLogicalPre) and p.is_and and p.waiting == -1
                          and p.cond is not None for p in self.pres) and not _groups(emit)
        self.top.init()

    # ------------------------------------------------------------------ build (StateInputStreamParser.parse)
    def _build(self, el: Any, pre: Any, post: Any, is_start: bool, pres: list[Any],
               logical: bool | None) -> _Inner:
        plan = self.plan
        seq = plan.sequence
        if isinstance(el, (StreamStateElement, AbsentStreamStateElement)):
            info = plan.states[plan.ids[id(el)]]
            absent = isinstance(el, AbsentStreamStateElement)
            if pre is None:
                pre = (_AbsentStreamPre(self, seq, _waiting(el)) if isinstance(el, AbsentStreamStateElement)
                       else _StreamPre(self, seq))
                if absent:
                    self.startup.append(pre)
            pre.state_id = info.state_id
            pre.is_start = is_start
            pre.cond = plan.conds[info.state_id]
            pre.scan = plan.scans.get(info.state_id)
            key = plan.keys.get(info.state_id)
            if key is not None and type(pre) is _StreamPre:
                pre.use_index(key)
            if post is None:
                post = _AbsentStreamPost() if absent else _StreamPost()
            post.state_id = info.state_id
            post.pre = pre
            pre.post = pre.last_post = post
            pres.append(pre)
            return _Inner("stream", pre, post, stream_key=(info.stream_id, info.is_inner, info.is_fault))
        if isinstance(el, NextStateElement):
            cur = self._build(el.first, pre, post, is_start, pres, None)
            nxt = self._build(el.next, pre, post, False, pres, None)
            cur.last.set_next_pre(nxt.first)
            return _Inner("next", cur.first, nxt.last, (cur, nxt))
        if isinstance(el, EveryStateElement):
            inner_pres: list[Any] = []
            inner = self._build(el.element, pre, post, is_start, inner_pres, None)
            inner.last.set_next_every_pre(inner.first)
            for p in inner_pres:
                p.within_every_pre = inner.first
            pres.extend(inner_pres)
            return _Inner("every", inner.first, inner.last, (inner,))
        if isinstance(el, LogicalStateElement):
            is_and = el.op is LogicalOperator.AND
            left, right = _sides(el)
            sides = []
            for side in (left, right):
                if isinstance(side, AbsentStreamStateElement):
                    p = _AbsentLogicalPre(self, seq, is_and, side.waiting_millis)
                    self.startup.append(p)
                    q: _LogicalPost = _AbsentLogicalPost(is_and)
                else:
                    p, q = _LogicalPre(self, seq, is_and), _LogicalPost(is_and)
                sides.append((p, q))
            (pre1, post1), (pre2, post2) = sides
            post1.partner_pre, post2.partner_pre = pre2, pre1
            post1.partner_post, post2.partner_post = post2, post1
            pre1.partner, pre2.partner = pre2, pre1
            inner2 = self._build(right, pre2, post2, is_start, pres, None)
            inner1 = self._build(left, pre1, post1, is_start, pres, None)
            return _Inner("logical", inner1.first, inner2.last, (inner1, inner2))
        if isinstance(el, CountStateElement):
            hi = el.max_count if el.max_count >= 0 else 1 << 31
            lo = max(el.min_count, 0)
            cpre = _CountPre(self, seq, lo, hi)
            cpost = _CountPost(lo, hi)
            inner = self._build(el.element, cpre, cpost, is_start, pres, None)
            return _Inner("count", inner.first, inner.last, stream_key=inner.stream_key)
        if isinstance(el, GroupStateElement):
            group_pres: list[Any] = []
            inner = self._build(el.element, pre, post, is_start, group_pres, None)
            if el.within_millis is not None:
                firsts = [inner.first]
                partner = getattr(inner.first, "partner", None)
                if partner is not None:
                    firsts.append(partner)
                start_ids = tuple(p.state_id for p in firsts)
                for p in group_pres:
                    p.within = el.within_millis
                    p.start_ids = start_ids
            pres.extend(group_pres)
            return inner
        raise error_at(f"unsupported pattern element {type(el).__name__}", el)

    # ------------------------------------------------------------------ receiving
    def receiver(self, key: tuple[str, bool, bool]) -> Callable[[list[Event]], None]:
        """The chunk receiver for one input stream of the pattern."""
        plan = self.plan
        if key not in plan.receivers:
            plan.receivers[key] = self._gen_receiver(key)
        make = plan.receivers[key]
        if make is not None:
            return make(self.pres, self._emit, _copy, StateEvent, self.ctx.fault_event, self._merge,
                        self._emit_groups, _late_times)
        return self._receiver(key)

    def _emit_group(self, group: list[StateEvent], late: frozenset[int] = frozenset()) -> None:
        """The matches one event completed at one state of a stream read by several states.

        Siddhi reads such a stream with a Pattern/SequenceMultiProcessStreamReceiver: it hands
        the selector each match on its own as the state processor returns it, while the
        output rate limiter gives what comes out to a ReturnEventHolder, which sends it on
        (callbacks, target stream) as one chunk per event and state processor, after the
        input chunk.  ``group`` holds copies made when the processor returned; ``late`` the
        ids of those whose partial match a later event of the chunk expired (_late_times).
        """
        if late and any(id(se) in late for se in group) and self._emit_captured([group], late):
            return
        if len(group) == 1:
            self._emit(group)
        else:
            self._emit_chunks([[se] for se in group])

    def _emit_groups(self, groups: list[list[StateEvent]], late: frozenset[int],
                     again: dict[int, int] | None) -> None:
        """Every group of one input chunk (see :meth:`_emit_group`), in order.

        ``again``: a state event stands in several groups (_late_times: each copy's original),
        so its rows must all go out as its last selection's (:meth:`_send_captured`).
        """
        if again is not None:
            if self._emit_captured(groups, late, again):
                return
            # (a rate limiter between: each of its copies selected as its last one)
            last = {again[id(c)]: c for group in groups for c in group}
            groups = [[last[again[id(c)]] for c in group] for group in groups]
        for group in groups:
            self._emit_group(group, late)

    def _emit_captured(self, groups: list[list[StateEvent]], late: frozenset[int],
                       origin: dict[int, int] | None = None) -> bool:
        """:meth:`_emit_group` for ``groups`` where the rows Siddhi sends differ from the
        selections: False where a rate limiter stands between the selector and the output,
        which this does not model (the caller emits the groups as usual).

        What the ReturnEventHolder sends on are the StateEvents themselves, with the rows the
        selector wrote into them (see :meth:`_send_captured`).
        """
        if not self._selects_directly():
            return False
        selections: list[list[list[Event]]] = []
        try:
            for group in groups:
                rows: list[list[Event]] = []
                selections.append(rows)
                self._select_each(group, rows)
        finally:  # (the rows selected before one raised go out)
            self._send_captured(groups, selections, late, origin)
        return True

    def _selects_directly(self) -> bool:
        """Whether the selector hands its rows straight to the query's output (no rate limiter
        between, which :meth:`_select_each` and :meth:`_send_captured` do not model)."""
        return isinstance(getattr(getattr(self._emit, "__self__", None), "next", None), QueryOutput)

    def _select_each(self, group: list[StateEvent], rows: list[list[Event]]) -> None:
        """Each state event of ``group`` selected on its own, its rows appended to ``rows``
        (none where it failed ``having``), as Siddhi's selector takes the matches of a
        ReturnEventHolder's chunk (only where :meth:`_selects_directly`)."""
        selector = self._emit.__self__  # type: ignore[attr-defined]
        output = selector.next
        pieces: list[list[Event]] = []
        selector.next = pieces.append
        try:
            for se in group:
                del pieces[:]
                self._emit([se])
                made = [row for piece in pieces for row in piece]
                rows.append(made if made else _refused(selector, se))
        finally:
            selector.next = output

    def _send_captured(self, groups: list[list[StateEvent]], selections: list[list[list[Event]]],
                       late: frozenset[int], origin: dict[int, int] | None = None,
                       cut: frozenset[int] = frozenset()) -> None:
        """The rows of ``selections`` (:meth:`_select_each` of each group) sent as Siddhi's
        ReturnEventHolder sends the StateEvents with the rows the selector wrote into them,
        one chunk per group.

        One that a later event of the input chunk expired (its ``within`` passed:
        ``StreamPreStateProcessor.expireEvents`` sets the type of the partial match it drops,
        and a logical state's two sides share theirs; ``late``) reaches the query callbacks as
        a removed event, and the target stream as a current one (``InsertIntoStreamCallback``
        turns it back).  Each goes out with its state event's time as the chunk leaves it
        (:func:`_late_times`).  One selected again for a later group (a count state that went
        on) holds the later row only: every row of it goes out with the last selection's
        values, its aggregates' too (``count()`` 2 and 2, not 1 and 2).  Each selection is of
        the match as it was then (``origin``: each copy's original): its group and what its
        aggregates add are that match's, behind a ``group by`` the first may count in another
        group than the last (1 and 1).  Where the last selection failed ``having``, Siddhi
        wrote its row all the same, and the earlier rows go out with its values
        (:func:`_refused`).  ``cut``: the copies whose rows were selected (their aggregates count
        them) but are not sent, as the links left them (:func:`_cut_groups`).
        """
        output = self._emit.__self__.next  # type: ignore[attr-defined]
        last_data: dict[int, Any] = {}
        rows_of: list[tuple[int, Event]] = []
        chunks: list[tuple[list[Event], set[int]]] = []
        for group, selected in zip(groups, selections, strict=False):
            chunk: list[Event] = []
            removed: set[int] = set()
            chunks.append((chunk, removed))
            for se, rows in zip(group, selected, strict=False):
                key = origin.get(id(se), id(se)) if origin is not None else id(se)
                for row in rows:
                    row.timestamp = se.timestamp
                    rows_of.append((key, row))
                    last_data[key] = row.data
                if isinstance(rows, _Refused):
                    last_data[key] = rows.data
                if id(se) in cut:
                    continue
                if id(se) in late:
                    removed.update(id(row) for row in rows)
                chunk += rows
        for key, row in rows_of:
            row.data = last_data[key]
        for chunk, removed in chunks:
            if chunk:
                output(chunk, removed)

    def _merge(self) -> bool:
        """Whether this chunk's matches may go to the selector as one chunk (see _Plan.merge)."""
        merge = self.plan.merge
        return merge is not None and merge()

    def _gen_receiver(self, key: tuple[str, bool, bool]) -> Callable[..., Any] | None:
        """A generated receiver doing :meth:`_receiver`'s work in one loop, or None.

        Only for patterns whose states on this stream are all plain (:class:`_StreamPre`).
        Per event, inline: the ``within`` test of each state's oldest partial match, the move
        of a new partial match into ``pending`` (and the index), the candidate loops of the
        conditions, and the hand-over of the partial matches that passed.  The processors
        are called for the rest (expiry, several new partial matches, other kinds of next
        state).  The source depends on the plan alone, so every instance (partition key)
        shares it; ``make(pres, emit, copy)`` binds one instance.
        """
        plan = self.plan
        procs = self.receivers[key]
        gen = plan.gen
        if plan.sequence or gen is None or any(type(p) is not _StreamPre for p in procs) \
                or any(p.state_id not in plan.tests for p in procs):
            return None
        order = procs if len(procs) == 1 else procs[::-1]
        multi = len(procs) > 1
        names = {id(p): f"_r_p{i}" for i, p in enumerate(self.pres)}
        body = [f"{names[id(p)]} = _r_pres[{i}]" for i, p in enumerate(self.pres)]
        copy = "_r_copy(_r_se)" if self.counting else "_r_SE(_r_se.timestamp, _r_se.events[:], _r_se.type)"
        loop = ["_r_groups = None" if multi else "_r_matched = None",
                "for _r_ev in _r_chunk:",
                "    if _r_ev.type != 0:",
                "        continue"]
        per_event = ["_r_now = _r_ev.timestamp", "_r_d = _r_ev.data"]
        for p in self.pres:
            per_event += self._expiry_lines(p, names)
        for p in procs:
            per_event += self._update_lines(p, names)
        for p in order:
            if not multi:
                per_event += self._process_lines(p, names)
                continue
            # A group per event and state (see _emit_group), copied now: Siddhi selects
            # these matches as the processor returns them (the originals: _late_times).
            per_event += ["_r_matched = None",
                          *self._process_lines(p, names),
                          "if _r_matched is not None:",
                          "    if len(_r_matched) > 1:  # (once each: see _unique)",
                          "        _r_matched = list({id(_r_se): _r_se for _r_se in _r_matched}.values())",
                          "    if _r_groups is None:",
                          "        _r_groups = []",
                          f"    _r_groups.append(([{copy} for _r_se in _r_matched], _r_matched))"]
        # One event that raises is faulted alone; the matches made so far (its own) stand.
        loop += ["    try:", *_indent(per_event, 2),
                 "    except Exception as _r_err:",
                 "        if len(_r_chunk) == 1:",
                 "            raise",
                 "        _r_fault(_r_ev, _r_err)"]
        if multi:
            # (all together where nothing can tell, as below; the groups are copies already)
            loop += ["if _r_groups is not None:",
                     "    _r_groups, _r_lt, _r_again = _r_late(_r_groups)",
                     "    if not _r_lt and (len(_r_groups) > 1 or len(_r_groups[0]) > 1) and _r_merge():",
                     "        try:",
                     "            _r_emit([_r_se for _r_g in _r_groups for _r_se in _r_g])",
                     "            return",
                     "        except Exception:",
                     "            pass  # group by group, as _emit_all says",
                     "    _r_groups_out(_r_groups, _r_lt, _r_again)"]
        else:
            # Each match goes to the selector on its own, as Siddhi's SingleProcessStreamReceiver
            # sends it after the chunk, copied then; together where nothing can tell (_emit_all).
            # (a match returned twice in a chunk goes once: see _unique)
            loop += ["if _r_matched is not None:",
                     "    if len(_r_matched) > 1:",
                     "        _r_matched = list({id(_r_se): _r_se for _r_se in _r_matched}.values())",
                     "    if len(_r_matched) > 1 and _r_merge():",
                     "        try:",
                     f"            _r_emit([{copy} for _r_se in _r_matched])",
                     "            return",
                     "        except Exception:",
                     "            pass  # one by one, as _emit_all says",
                     "    for _r_se in _r_matched:",
                     f"        _r_emit([{copy}])"]
        body += ["def _pattern_receive(_r_chunk):", *_indent(loop, 1), "return _pattern_receive"]
        return gen.function("_make_pattern_receive",
                            "_r_pres, _r_emit, _r_copy, _r_SE, _r_fault, _r_merge, _r_groups_out, _r_late", body)

    def _expiry_lines(self, p: Any, names: dict[int, str]) -> list[str]:
        """``p.expire_events(now)``, called only when it has something to do."""
        if p.within < 0:
            return []
        n = names[id(p)]
        if type(p) is not _StreamPre or any(self.plan.states[i].is_count for i in p.start_ids):
            return [f"{n}.expire_events(_r_now)"]
        starts = [i for i in p.start_ids if i != p.state_id]
        if not starts:
            # A partial match waiting in a plain state has no event of that state yet: when
            # it is the only start state, nothing waiting here can be past ``within``.
            return []
        # expire_events only acts when the oldest partial match is past ``within`` (it stops
        # at the first live one) or a new one (not moved in yet) is.
        w = p.within

        def late(se: str) -> str:   # _expired(se, now)
            return " or ".join(f"((_r_x := {se}.events[{i}]) is not None "
                               f"and not -{w} <= _r_x.timestamp - _r_now <= {w})" for i in starts)

        return [f"_r_pd = {n}.pending",
                f"if _r_pd and ({late('_r_pd[0]')}):",
                f"    {n}.expire_events(_r_now)",
                f"elif {n}.new_every:",
                f"    for _r_s in {n}.new_every:",
                f"        if {late('_r_s')}:",
                f"            {n}.expire_events(_r_now)",
                "            break"]

    def _update_lines(self, p: Any, names: dict[int, str]) -> list[str]:
        """``p.update_state()``; one new partial match (the usual case) is moved inline."""
        n = names[id(p)]
        lines = [f"_r_ne = {n}.new_every",
                 "if _r_ne:",
                 "    if len(_r_ne) == 1:",
                 "        _r_s = _r_ne.pop()",
                 f"        {n}.pending.append(_r_s)"]
        key = self.plan.keys.get(p.state_id) if p.index is not None else None
        if key is not None:
            # (the bucket's bound: made with it, raised by each partial match filed in it)
            made = [f"{n}.file_bound(_r_k, _r_s, True)"] if key.bound is not None else []
            grown = [f"{n}.file_bound(_r_k, _r_s, False)"] if key.bound is not None else []
            lines += [f"        _r_ix = {n}.index",
                      "        if _r_ix is not None:",
                      "            _r_v = _r_s.events",
                      "            try:",
                      f"                _r_k = {key.held}",
                      "                _r_b = _r_ix.get(_r_k)",
                      "            except TypeError:",
                      f"                {n}.index = None   # unhashable: scan the list from now on",
                      "            else:",
                      "                if _r_b is None:",
                      "                    _r_ix[_r_k] = [_r_s]",
                      *_indent(made, 5),
                      "                else:",
                      "                    _r_b.append(_r_s)",
                      *_indent(grown, 5)]
        if p.limit:   # the same bound for every instance of the plan
            lines += [f"        if len({n}.pending) > {p.limit}:", f"            {n}._bound()"]
        return lines + ["    else:", f"        {n}.update_state()"]

    def _process_lines(self, p: Any, names: dict[int, str]) -> list[str]:
        """``p.process_and_return(ev)``: the candidate loop, then the hand-over of the hits."""
        n = names[id(p)]
        key = self.plan.keys.get(p.state_id) if p.index is not None else None
        if key is None or key.found is None:
            test = self.plan.tests[p.state_id]
            lines = [f"_r_pd = {n}.pending",
                     "if _r_pd:",
                     *_indent(test.candidates("_r_pd"), 1)]
            if test.whole:
                lines += _indent(self._hit_lines(p, names, False, True), 1)
            else:
                lines += ["    if _r_hits is not None:", *_indent(self._hit_lines(p, names, False, False), 2)]
            return [*test.own, *_gated(test.gate, lines)]
        test = key.found
        collect = ["if _r_got:",
                   "    if _r_matched is None:",
                   "        _r_matched = []",
                   "    _r_matched += _r_got"]
        lines = ["try:",
                 f"    _r_cands = _r_ix.get(_r_key := {key.arriving})",
                 "except TypeError:",
                 "    _r_cands = None",
                 f"    _r_got = {n}.process_and_return(_r_ev)",
                 *_indent(collect, 1)]
        if key.bound is not None:
            # (none of the bucket's partial matches can pass: see _Bound)
            lines += [f"d{p.state_id} = _r_d",
                      f"if _r_cands is not None and {key.bound.skip(f'{n}.bounds')}:",
                      "    _r_cands = None"]
        lines += ["if _r_cands is not None:",
                 *_indent(test.candidates("_r_cands"), 1)]
        if test.whole:
            lines += _indent(self._hit_lines(p, names, True, True), 1)
        else:
            lines += ["    if _r_hits is not None:", *_indent(self._hit_lines(p, names, True, False), 2)]
        # The partial matches filed under the event's key are the only candidates (none can
        # pass when the key is null or NaN); without the index (an unhashable value was
        # seen) the processor scans them all.
        return [f"_r_ix = {n}.index",
                "if _r_ix is None:",
                f"    _r_got = {n}.process_and_return(_r_ev)",
                *_indent(collect, 1),
                f"elif {key.safe}:",
                *_indent(test.own, 1),
                *_indent(_gated(test.gate, lines), 1)]

    def _hit_lines(self, p: Any, names: dict[int, str], indexed: bool, all_pass: bool) -> list[str]:
        """``p._passed(_r_hits, ev)``, inline for a plain post processor (the usual case).

        Inline: what :meth:`_StreamPost.process` does for each hit, then its removal from
        ``pending`` (``_r_pd`` unless ``indexed``) and from the index bucket ``_r_cands``
        (filed under ``_r_key``); ``all_pass`` says every candidate is a hit.  The state's
        flag ends True, as after Siddhi's loop.
        """
        n = names[id(p)]
        q = p.post
        last = p.last_post
        nxt, again = q.next_pre, q.next_every_pre
        # ``returned`` is read by ``p`` from its last post processor: inline when that is
        # ``q`` itself, or a plain one whose own pre resets it at once (so ``p`` reads False).
        plain_return = last is q or (not q.to_selector and type(last) is _StreamPost
                                     and last.pre.last_post is last)
        if type(q) is not _StreamPost or q.callback_pre is not None or not plain_return:
            return [f"_r_got = {n}._passed(_r_hits, _r_ev)",
                    "if _r_got:",
                    "    if _r_matched is None:",
                    "        _r_matched = []",
                    "    _r_matched += _r_got"]
        lines = [f"{n}.state_changed = True",
                 "for e in _r_hits:",
                 "    e.timestamp = _r_now"]
        if q.to_selector and last is q:
            lines += ["    if _r_matched is None:",
                      "        _r_matched = [e]",
                      "    else:",
                      "        _r_matched.append(e)"]
        if nxt is not None:
            # A plain pattern state's add_state appends to its new partial matches.
            lines.append(f"    {names[id(nxt)]}.new_every.append(e)" if type(nxt) is _StreamPre
                         else f"    {names[id(nxt)]}.add_state(e)")
        if again is not None:
            if type(again).add_every_state is _StreamPre.add_every_state and not self.counting:
                # add_every_state: a copy with this state and the later ones empty.
                sid, size = again.state_id, self.size
                fresh = "[" + ", ".join(["None"] * (size - sid)) + "]"
                events = fresh if sid == 0 else f"e.events[:{sid}] + {fresh}"
                lines.append(f"    {names[id(again)]}.new_every.append(_r_SE(_r_now, {events}, 0))")
            else:
                lines.append(f"    {names[id(again)]}.add_every_state(e)")
        # Removal (list.remove finds e itself: StateEvent has no __eq__).
        if not indexed:
            if all_pass:
                return [*lines, "_r_pd.clear()"]
            return [*lines, "    _r_pd.remove(e)"]
        lines.append(f"    {n}.pending.remove(e)")
        key = self.plan.keys.get(p.state_id)
        gone = ["del _r_ix[_r_key]"]
        if key is not None and key.bound is not None:
            gone.append(f"{n}.bounds.pop(_r_key, None)")
        if all_pass:   # the whole bucket passed
            return [*lines, *gone]
        return [*lines,
                "    _r_cands.remove(e)",
                "if not _r_cands:",
                *_indent(gone, 1)]

    def _receiver(self, key: tuple[str, bool, bool]) -> Callable[[list[Event]], None]:
        procs = self.receivers[key]
        order = procs if len(procs) == 1 else procs[::-1]
        pres = self.pres
        top = self.top
        sequence = self.plan.sequence
        emit = self._emit
        single_update = procs[:1] if len(procs) == 1 else procs
        expiring = [p for p in pres if p.within >= 0]

        fault = self.ctx.fault_event
        if len(procs) > 1:
            return self._multi_receiver(order, expiring, single_update)

        def receive(chunk: list[Event]) -> None:
            matched: list[StateEvent] = []
            for ev in chunk:
                if ev.type != CURRENT:
                    continue
                try:
                    ts = ev.timestamp
                    for p in expiring:
                        p.expire_events(ts)
                    if sequence:
                        top.reset()
                        top.update()
                    else:
                        for p in single_update:
                            p.update_state()
                    for p in order:
                        got = p.process_and_return(ev)
                        if got:
                            matched.extend(got)
                except Exception as exc:
                    # this event alone: the matches made so far (its own included) stand
                    if len(chunk) == 1:
                        raise
                    fault(ev, exc)
            if len(matched) > 1:
                matched = _unique(matched)
            if len(matched) > 1 and self._merge() and self._emit_all(matched):
                return
            for se in matched:
                emit([_copy(se)])

        return receive

    def _multi_receiver(self, order: list[Any], expiring: list[Any],
                        updating: list[Any]) -> Callable[[list[Event]], None]:
        """:meth:`_receiver` for a stream read by several states: a group of outputs per event
        and state processor (see :meth:`_emit_group`)."""
        top = self.top
        sequence = self.plan.sequence
        fault = self.ctx.fault_event
        emit_groups = self._emit_groups
        links = self.links if self.linked else None

        def receive(chunk: list[Event]) -> None:
            pairs: list[tuple[list[StateEvent], list[StateEvent]]] = []
            # Behind links, each group selected as it is made, as Siddhi does (see _cut_groups)
            selections: list[list[list[Event]]] | None = (
                [] if links is not None and self._selects_directly() else None)
            if links:
                links.clear()   # left by a chunk that raised
            for ev in chunk:
                if ev.type != CURRENT:
                    continue
                try:
                    ts = ev.timestamp
                    for p in expiring:
                        p.expire_events(ts)
                    if sequence:
                        top.reset()
                        top.update()
                    else:
                        for p in updating:
                            p.update_state()
                    for p in order:
                        got = p.process_and_return(ev)
                        if got:
                            if len(got) > 1:  # (one state event twice in a pending list: once)
                                got = _unique(got)
                            copies = [_copy(se) for se in got]
                            pairs.append((copies, got))
                            if links is not None and len(got) > 1:
                                for a, b in zip(got, got[1:], strict=False):
                                    links[id(a)] = b
                            if selections is not None:
                                rows: list[list[Event]] = []
                                selections.append(rows)
                                self._select_each(copies, rows)
                                if links:
                                    _unlink_unselected(got, rows, links)
                except Exception as exc:
                    # this event alone: the matches made so far (its own included) stand
                    if len(chunk) == 1:
                        raise
                    fault(ev, exc)
            if not pairs:
                return
            cut = _cut_groups(pairs, links, selections) if links is not None else _NO_IDS
            groups, late, again = _late_times(pairs)
            if selections is not None:
                # each match selected when it was made; the rows of those the links no
                # longer reach are left out
                self._send_captured(groups, selections, late, again, cut)
                return
            if cut:
                # (a rate limiter between, which this does not model: the matches are cut
                # before they are selected)
                groups, late, again = _late_times(_uncut(pairs, cut))
            if not late and (len(groups) > 1 or len(groups[0]) > 1) and self._merge():
                try:   # all together where nothing can tell (see _emit_all)
                    self._emit([se for group in groups for se in group])
                    return
                except Exception:  # noqa: BLE001,S110 -- group by group, as _emit_all says
                    pass
            emit_groups(groups, late, again)

        return receive

    def _emit_all(self, matched: list[StateEvent]) -> bool:
        """Hand ``matched`` to the selector as one chunk; False if a row failed.

        Merging is planned only for a selector emitting a row per event into a stream
        (engine.coalesce.outputs_mergeable): it keeps no state and has emitted nothing when
        a row raises, so the caller sends the matches again one by one, and the rows before
        the failing one go on as they would have (the failing one raises as it would have).
        """
        try:
            self._emit([_copy(se) for se in matched])
        except Exception:  # noqa: BLE001 -- handled one by one by the caller
            return False
        return True

    def emit_now(self, se: StateEvent) -> None:
        """Output from a timer (absent states): straight to the selector."""
        self._emit([_copy(se)])

    def start(self) -> None:
        for p in self.startup:
            p.start()

    # ------------------------------------------------------------------ metrics and bounds
    @property
    def pending(self) -> int:
        """Partial matches currently held (for metrics)."""
        seen: set[int] = set()
        for p in self.pres:
            for se in p.pending:
                seen.add(id(se))
            for se in p.new_every:
                seen.add(id(se))
        return len(seen)

    def drop(self, pending: list[StateEvent], n: int) -> None:
        del pending[:n]
        self.dropped += n

    # ------------------------------------------------------------------ snapshots
    def snapshot_state(self) -> Any:
        return {"pres": [p.snapshot() for p in self.pres], "dropped": self.dropped}

    def restore_state(self, state: Any) -> None:
        for p, s in zip(self.pres, state["pres"], strict=False):
            p.restore(s)
        self.dropped = state.get("dropped", 0)


def _late_times(pairs: list[tuple[list[StateEvent], list[StateEvent]]]
                ) -> tuple[list[list[StateEvent]], frozenset[int], dict[int, int] | None]:
    """The groups of copies, each with its original's timestamp as the chunk leaves it, the
    ids of the copies whose original a later event of the chunk expired, and, where a state
    event stands in several groups (matched again), each copy's original (by id).

    Siddhi's multi receiver hands the callbacks the matched StateEvents themselves after the
    input chunk: their rows were selected at the match, but a later event of the chunk that
    extends the same partial match (a count state that matched with none, say) moves its
    timestamp, and the row goes out with that later time; one that expires it (``within``)
    makes it a removed event for the query callbacks (see PatternRuntime._send_captured).

    A StateEvent matched again by a later event of the chunk (a count state that went on, as
    ``e1+`` taking the event after its first match) is one object in Siddhi: its selector
    selected each match as it was, and wrote the later match's row into that event's output
    data, over the first one's, so each of its rows goes out as the last match's
    (PatternRuntime._send_captured: the originals tell it which rows are one state event's).
    """
    again = len(pairs) > 1 and len({id(o) for _, originals in pairs for o in originals}) < sum(
        len(originals) for _, originals in pairs)
    origin: dict[int, int] | None = {} if again else None
    groups = []
    late: set[int] = set()
    for copies, originals in pairs:
        for c, o in zip(copies, originals, strict=True):
            c.timestamp = o.timestamp
            if o.type == EXPIRED and c.type == CURRENT:
                late.add(id(c))
            if origin is not None:
                origin[id(c)] = id(o)
        groups.append(copies)
    return groups, frozenset(late) if late else _NO_IDS, origin


#: No copy expired late (the common answer of _late_times, made once).
_NO_IDS: frozenset[int] = frozenset()


def _groups(emit: Emit) -> bool:
    """Whether ``emit`` is a selector's with ``group by``."""
    plan = getattr(getattr(emit, "__self__", None), "plan", None)
    return getattr(plan, "group_key", None) is not None


def _cut_groups(pairs: list[tuple[list[StateEvent], list[StateEvent]]], links: dict[int, StateEvent],
                selections: list[list[list[Event]]] | None = None) -> frozenset[int]:
    """The ids of the copies whose rows Siddhi does not send: those its links no longer reach
    from the first match of their group.

    Siddhi's multi receiver keeps what one event completed at one state as a linked list of
    the StateEvents themselves (a ReturnEventHolder's chunk), sent after the input chunk.  The
    forbidden side of ``not S[cond] and e2=...`` (no ``for``) keeps those same StateEvents
    among its partial matches: an event of S before the send (this one, as the later states
    on S run first, or a later one of the chunk) runs each through its filter with the ones
    linked after it, and the filter unlinks those that fail
    (:meth:`_AbsentLogicalPre._run_linked`): the group goes out as far as its links reach.

    Each match was selected as it was made, cut or not: its aggregates count it, and one that
    failed ``having`` was unlinked then (:func:`_unlink_unselected`), so the group starts at
    its first selected match (``selections``: each group's rows per match, where the
    matches were selected as they were made).  Where a rate limiter stands between the
    selector and the output, Srota selects only what is left (not modelled).  Links left
    after the send (Siddhi keeps them) are not kept: only such a filter reads them, and it
    only reads complete matches.
    """
    cut: set[int] = set()
    for k, (copies, originals) in enumerate(pairs):
        if len(originals) > 1:
            reached: set[int] = set()
            head = 0
            if selections is not None and k < len(selections):
                selected = selections[k]
                while head < len(selected) - 1 and not selected[head]:
                    head += 1
            x: StateEvent | None = originals[head]
            while x is not None and id(x) not in reached:
                reached.add(id(x))
                x = links.get(id(x))
            cut.update(id(c) for c, o in zip(copies, originals, strict=True) if id(o) not in reached)
    links.clear()
    return frozenset(cut) if cut else _NO_IDS


class _Refused(list[Event]):
    """The rows of a selection that ``having`` refused (none), with the row it refused in
    ``data``."""

    __slots__ = ("data",)
    data: Any


def _refused(selector: Any, se: StateEvent) -> list[Event]:
    """The rows of ``se``'s selection that made none: where ``having`` refused its row, a
    :class:`_Refused` holding that row.

    Siddhi's selector writes a match's row into the StateEvent before it tests ``having``, so
    a state event that went out earlier in the input chunk (a count state's match, made again
    by a later event) goes out with the refused row's values.  The row is made again from the
    event and, with aggregators, from their values now (the refused selection updated them
    as it made the row).  Not where ``order by``, ``offset`` or ``limit`` stand after the
    selection (its rows would not be the ones they kept).
    """
    plan = selector.plan
    if (plan.having is None and plan.having_add is None) or plan.post is not None:
        return []
    try:
        if not plan.factories:
            data = plan.project(se)
        else:
            states = selector.states.get(plan.group_key(se) if plan.group_key is not None else None)
            if states is None:
                return []
            data = plan.project_value(se, states)
    except Exception:  # noqa: BLE001 -- the selection itself raised nothing: keep its own rows
        return []
    refused = _Refused()
    refused.data = data
    return refused


def _uncut(pairs: list[tuple[list[StateEvent], list[StateEvent]]], cut: frozenset[int]
           ) -> list[tuple[list[StateEvent], list[StateEvent]]]:
    """``pairs`` without the copies in ``cut`` (and their originals)."""
    out = []
    for copies, originals in pairs:
        kept = [(c, o) for c, o in zip(copies, originals, strict=True) if id(c) not in cut]
        out.append(([c for c, _ in kept], [o for _, o in kept]))
    return out


def _unlink_unselected(group: list[StateEvent], rows: list[list[Event]], links: dict[int, StateEvent]) -> None:
    """Unlink the state events of ``group`` (linked in ``links``) whose selection made no
    row, as Siddhi's selector removes a match that fails ``having`` from its chunk
    (``ComplexEventChunk.remove``: the one before links to the one after, the removed one to
    nothing) before the forbidden side's filter walks the links."""
    previous: StateEvent | None = None
    for se, made in zip(group, rows, strict=False):
        if made:
            previous = se
            continue
        after = links.pop(id(se), None)
        if previous is not None:
            if after is None:
                links.pop(id(previous), None)
            else:
                links[id(previous)] = after


def _unique(matched: list[StateEvent]) -> list[StateEvent]:
    """``matched`` with each state event once, at its first place.

    Siddhi's SingleProcessStreamReceiver links the state events returned in a chunk into one
    list for the end of the chunk; adding one already in it closes a loop, which
    ComplexEventChunk.getLastEvent detaches: a match completed again by a later event of the
    chunk (``e1=C*, e2=A?``: each C meets e2's minimum of 0) goes out once.  So does a state
    event that one processAndReturn completes twice (its returned chunk is such a list): a
    sequence's logical state can hold the same one twice in its pending list, once as it
    skipped an optional state and once as it took an event there.
    """
    return list({id(se): se for se in matched}.values())


def _one_by_one(emit: Emit) -> Callable[[list[list[Any]]], None]:
    """``emit_chunks`` for an ``emit`` that selects one chunk: the rows of each chunk apart."""
    def emit_chunks(chunks: list[list[Any]]) -> None:
        for chunk in chunks:
            emit(chunk)
    return emit_chunks


def _waiting(el: AbsentStreamStateElement) -> int:
    """How long ``not S for t`` waits (-1: no ``for``, it waits for the next state)."""
    return el.waiting_millis if el.waiting_millis is not None else -1


def _gated(gate: str | None, lines: list[str]) -> list[str]:
    """``lines`` under ``if gate:`` (the part of a condition testable once per event)."""
    return lines if gate is None else [f"if {gate}:", *_indent(lines, 1)]


def _indent(lines: Sequence[str], depth: int) -> list[str]:
    pad = "    " * depth
    return [pad + line for line in lines]


def _sides(el: LogicalStateElement) -> tuple[Any, Any]:
    """The two sides of a logical state as Siddhi orders them: an absent side always first.

    Siddhi's compiler builds ``present and not S`` as ``logicalNotAnd(not S, present)`` (and
    likewise for ``or``); which side comes first decides which processor leads the state.
    """
    left, right = _unwrap(el.left), _unwrap(el.right)
    if isinstance(right, AbsentStreamStateElement) and not isinstance(left, AbsentStreamStateElement):
        return right, left
    return left, right


def _unwrap(el: Any) -> Any:
    """A logical side may come wrapped in a group without ``within``."""
    while isinstance(el, GroupStateElement) and el.within_millis is None:
        el = el.element
    return el
