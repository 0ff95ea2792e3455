"""``server/events/hub.py`` ``Subscription``: a subscribed list is sent when due, then once for each
change (at once when forced, at most once a period for progress, always ending on the last state),
and never while nothing changes."""

from __future__ import annotations

import asyncio

from server.events.hub import EventHub, SocketClient, Subscription


class _Recorder:
    def __init__(self, delay: float = 0.0) -> None:
        self.times: list[float] = []
        self.delay = delay

    async def send(self) -> None:
        self.times.append(asyncio.get_running_loop().time())
        if self.delay:
            await asyncio.sleep(self.delay)


async def test_sent_when_due_then_only_on_change() -> None:
    loop = asyncio.get_running_loop()
    sent = _Recorder()
    t0 = loop.time()
    sub = Subscription(sent.send, due=0.1, period=0.2)
    await asyncio.sleep(0.6)
    assert len(sent.times) == 1 and 0.09 <= sent.times[0] - t0 < 0.3  # once, when due; no timer after
    sub.poke(force=True)
    await asyncio.sleep(0.05)
    assert len(sent.times) == 2  # a forced change goes at once
    sub.cancel()


async def test_progress_is_sent_at_most_once_a_period_and_the_last_state_always() -> None:
    sent = _Recorder()
    sub = Subscription(sent.send, due=0.0, period=0.3)
    await asyncio.sleep(0.05)
    assert len(sent.times) == 1
    for _ in range(20):  # 20 progress pokes within 0.2 s of the first send
        sub.poke()
        await asyncio.sleep(0.01)
    assert len(sent.times) == 1
    await asyncio.sleep(0.3)
    assert len(sent.times) == 2  # one send for all of them, a period after the last send
    assert sent.times[1] - sent.times[0] >= 0.29
    await asyncio.sleep(0.4)
    assert len(sent.times) == 2
    sub.cancel()


async def test_a_poke_while_a_send_runs_is_sent_after_it_and_cancel_stops_everything() -> None:
    sent = _Recorder(delay=0.1)
    sub = Subscription(sent.send, due=0.0, period=0.05)
    await asyncio.sleep(0.02)
    sub.poke(force=True)  # during the first send
    await asyncio.sleep(0.15)
    assert len(sent.times) == 2
    sub.poke(force=True)
    sub.cancel()
    await asyncio.sleep(0.2)
    assert len(sent.times) == 2 or len(sent.times) == 3 and sub.cancelled
    sub.poke(force=True)
    await asyncio.sleep(0.1)
    assert len(sent.times) <= 3


async def test_the_hub_pokes_only_the_clients_subscribed_to_the_topic() -> None:
    hub = EventHub()
    hub.bind_loop(asyncio.get_running_loop())
    tasks, sessions = _Recorder(), _Recorder()
    a = SocketClient(user_id=None, device_id="a", is_admin=True)
    b = SocketClient(user_id=None, device_id="b", is_admin=True)
    hub.connect(a)
    hub.connect(b)
    a.subscriptions["ScheduledTasksInfo"] = Subscription(tasks.send, due=0.0, period=10)
    b.subscriptions["Sessions"] = Subscription(sessions.send, due=0.0, period=10)
    await asyncio.sleep(0.05)
    assert (len(tasks.times), len(sessions.times)) == (1, 1)
    await asyncio.to_thread(hub.changed, "ScheduledTasksInfo")  # from another thread, as a scan does
    await asyncio.sleep(0.05)
    assert (len(tasks.times), len(sessions.times)) == (2, 1)
    assert a.queue.empty() and b.queue.empty()  # a change is not itself a message on the wire
    hub.disconnect(a)
    hub.changed("ScheduledTasksInfo")
    await asyncio.sleep(0.05)
    assert len(tasks.times) == 2
    hub.disconnect(b)
